"""The one source of status words for runs, background jobs, gist memories and trees.

A run or job is ``running`` until it ends ``done``, ``stopped`` (someone asked it to
stop), ``interrupted`` (its process went away: Ctrl-C, a killed process) or ``failed``.
A stored gist memory or tree is ``building`` until it is ``complete``; one that did not
finish keeps the run's end status, so a later build can resume it.
"""
from __future__ import annotations

from core.errors import Cancelled

RUNNING, DONE, STOPPED, INTERRUPTED, FAILED = "running", "done", "stopped", "interrupted", "failed"
BUILDING, COMPLETE = "building", "complete"
UNFINISHED = (BUILDING, STOPPED, INTERRUPTED, FAILED)  # a memory or tree that a build can resume


def ended(exc: BaseException) -> str:
    """The status of work that ended with ``exc``."""
    if isinstance(exc, Cancelled):
        return STOPPED
    if isinstance(exc, KeyboardInterrupt):
        return INTERRUPTED
    return FAILED
