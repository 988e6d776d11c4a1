"""Long work in the background, so a user interface can watch it and stop it.

A ``Job`` runs one function on its own thread: a gist memory build, a memory tree, an
evaluation. The function gets the job, reports progress into ``job.progress`` (an
object of its own kind that knows how to give a consistent snapshot) and checks
``job.cancel``. Jobs live in a registry keyed by id, so whoever started one (a browser
session) can find it again and nobody else needs to know about it.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from core.errors import GistError
from core.status import DONE, FAILED, RUNNING, ended

KEEP_FINISHED = 50  # finished jobs kept for sessions that have not looked yet


@dataclass
class Job:
    id: int
    kind: str  # "build", "tree", "eval"
    label: str
    progress: Any = None  # what the work reports as it goes (kind-specific)
    cancel: threading.Event = field(default_factory=threading.Event)
    status: str = RUNNING
    result: Any = None
    exception: BaseException | None = None
    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None
    _thread: threading.Thread | None = None

    @property
    def finished(self) -> bool:
        return self.status != RUNNING

    @property
    def error(self) -> str:
        return str(self.exception) if self.exception is not None else ""

    @property
    def seconds(self) -> float:
        return (self.ended or time.perf_counter()) - self.started

    def stop(self) -> None:
        self.cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.finished


_jobs: dict[int, Job] = {}
_ids = itertools.count(1)
_registry_lock = threading.Lock()


def start_job(kind: str, label: str, work: Callable[[Job], Any], *, progress: Any = None) -> Job:
    """Run ``work(job)`` on a background thread; its return value becomes ``job.result``."""
    with _registry_lock:
        finished = [k for k, j in _jobs.items() if j.finished]
        for k in finished[:-KEEP_FINISHED]:
            del _jobs[k]
        job = Job(next(_ids), kind, label, progress)
        _jobs[job.id] = job

    def target() -> None:
        try:
            job.result = work(job)
            status = DONE
        except GistError as exc:
            job.exception, status = exc, ended(exc)
        except Exception as exc:  # a bug: shown to the user, and the run row keeps the traceback
            job.exception, status = exc, FAILED
        job.ended = time.perf_counter()
        job.status = status

    job._thread = threading.Thread(target=target, name=f"{kind}-{job.id}", daemon=True)
    job._thread.start()
    return job


def find_job(kind: str, match: Callable[[Job], bool]) -> Job | None:
    """A running job of ``kind`` that ``match`` accepts (so a second request can attach to it)."""
    with _registry_lock:
        return next((j for j in _jobs.values() if j.kind == kind and not j.finished and match(j)), None)


def get_job(job_id: int | None) -> Job | None:
    with _registry_lock:
        return _jobs.get(job_id) if job_id is not None else None
