"""Which process a run belongs to, and whether that process is still there.

A run records its owner as ``host:pid:start`` (``start``: the process's start time, so a
reused pid is not mistaken for the owner). A run still ``running`` whose owner is gone
(killed with ``kill -9``, crashed, the machine restarted) is *interrupted*: the store
says so the next time it lists or opens runs, and the run can be resumed. A run owned by
another host cannot be checked and is left as it is.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux), else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[19]  # field 22, counted after the command name


def current_owner() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or ''}"


def is_gone(owner: str | None) -> bool:
    """True when ``owner`` ran on this host and that process no longer exists."""
    if not owner:
        return False
    try:
        host, pid_text, start = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False
    if start:
        return _start_time(pid) != start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
