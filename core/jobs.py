"""Builds that run in the background, so a user interface can watch and stop them.

A ``BuildJob`` runs ``build_memory`` on its own thread and keeps every progress
event; ``snapshot()`` gives a consistent copy to draw from while it runs. Jobs
live in a registry keyed by id, so whoever started one (a browser session) can
find it again and nobody else needs to know about it.
"""
from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field

from core.build import BuildEvent, BuildResult, BuildSettings, build_memory
from core.db import Store
from core.documents import Document
from core.errors import Cancelled, GistError
from core.readagent import Engine

RUNNING, DONE, STOPPED, FAILED = "running", "done", "stopped", "failed"


@dataclass
class Snapshot:
    status: str
    pages: list[dict]  # by start paragraph order: start, end, words, break_by, break_reason, gist, gist_by
    pages_gisted: int
    words_done: int
    total_words: int
    seconds: float
    result: BuildResult | None = None
    error: str = ""
    first_page_s: float | None = None  # seconds from start to the first pause point

    @property
    def finished(self) -> bool:
        return self.status != RUNNING


@dataclass
class BuildJob:
    id: int
    document: Document
    settings: BuildSettings
    engine_label: str
    cancel: threading.Event = field(default_factory=threading.Event)
    status: str = RUNNING
    result: BuildResult | None = None
    error: str = ""
    started: float = field(default_factory=time.perf_counter)
    ended: float | None = None
    first_page: float | None = None
    _pages: dict[int, dict] = field(default_factory=dict)
    _gisted: int = 0
    _words: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _first: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def on_event(self, event: BuildEvent) -> None:
        with self._lock:
            if self.first_page is None:
                self.first_page = time.perf_counter()
            self._pages[event.start] = {
                "start": event.start, "end": event.end, "words": event.words, "break_by": event.break_by,
                "break_reason": event.break_reason, "gist": event.gist, "gist_by": event.gist_by,
            }
            self._gisted, self._words = event.pages_gisted, event.words_paginated
        self._first.set()

    def stop(self) -> None:
        self.cancel.set()

    def wait_first_page(self, timeout: float) -> bool:
        """Block until the first pause point is chosen (or the build ends, or ``timeout``)."""
        deadline = time.monotonic() + timeout
        while not self._first.wait(0.02):
            if self.status != RUNNING or time.monotonic() > deadline:
                return False
        return True

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.status != RUNNING

    def snapshot(self) -> Snapshot:
        with self._lock:
            end = self.ended or time.perf_counter()
            return Snapshot(
                status=self.status, pages=[dict(self._pages[k]) for k in sorted(self._pages)],
                pages_gisted=self._gisted, words_done=self._words, total_words=self.document.words,
                seconds=end - self.started, result=self.result, error=self.error,
                first_page_s=None if self.first_page is None else self.first_page - self.started,
            )


KEEP_FINISHED = 50  # finished jobs kept for sessions that have not looked yet

_jobs: dict[int, "BuildJob | EvalJob"] = {}
_ids = itertools.count(1)
_registry_lock = threading.Lock()


def start_build(store: Store, document: Document, engine: Engine, settings: BuildSettings, *,
                concurrency: int = 8) -> BuildJob:
    """Start building ``document``'s gist memory on a background thread."""
    with _registry_lock:
        finished = [k for k, j in _jobs.items() if j.status != RUNNING]
        for k in finished[:-KEEP_FINISHED]:
            del _jobs[k]
        job = BuildJob(next(_ids), document, settings, engine.label)
        _jobs[job.id] = job

    def work():
        try:
            result = build_memory(store, document, engine, settings, concurrency=concurrency,
                                  progress=job.on_event, cancel=job.cancel)
            with job._lock:
                job.result, job.status = result, DONE
        except Cancelled as exc:
            with job._lock:
                job.status, job.error = STOPPED, str(exc)
        except GistError as exc:
            with job._lock:
                job.status, job.error = FAILED, str(exc)
        except Exception as exc:  # shown to the user; the build's run row keeps the details
            with job._lock:
                job.status, job.error = FAILED, f"The build failed: {type(exc).__name__}: {exc}"
        finally:
            with job._lock:
                job.ended = time.perf_counter()

    job._thread = threading.Thread(target=work, name=f"build-{job.id}", daemon=True)
    job._thread.start()
    return job


def get_job(job_id: int | None) -> "BuildJob | EvalJob | None":
    with _registry_lock:
        return _jobs.get(job_id) if job_id is not None else None


@dataclass
class EvalJob:
    """An evaluation on its own thread; ``done``/``total`` and the newest result for a progress view."""
    id: int
    label: str
    cancel: threading.Event = field(default_factory=threading.Event)
    status: str = RUNNING
    done: int = 0
    total: int = 0
    stage: str = "building"
    eval_id: int | None = None
    error: str = ""
    started: float = field(default_factory=time.perf_counter)
    _thread: threading.Thread | None = None

    def stop(self) -> None:
        self.cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return self.status != RUNNING


def start_eval(store: Store, engine: Engine, docs, methods: list[str], **kwargs) -> EvalJob:
    """Run ``core.evaluate.evaluate`` in the background (same arguments)."""
    from core.evaluate import evaluate

    with _registry_lock:
        job = EvalJob(next(_ids), f"{kwargs.get('dataset', '')}: {', '.join(methods)}")
        _jobs[job.id] = job

    def progress(p):
        job.done, job.total, job.stage, job.eval_id = p.done, p.total, p.stage, p.eval_id

    def work():
        try:
            job.eval_id = evaluate(store, engine, docs, methods, progress=progress, cancel=job.cancel, **kwargs)
            job.status = DONE
        except Cancelled as exc:
            job.status, job.error = STOPPED, str(exc)
        except GistError as exc:
            job.status, job.error = FAILED, str(exc)
        except Exception as exc:  # shown to the user; the evaluation's run row keeps the details
            job.status, job.error = FAILED, f"The evaluation failed: {type(exc).__name__}: {exc}"

    job._thread = threading.Thread(target=work, name=f"eval-{job.id}", daemon=True)
    job._thread.start()
    return job
