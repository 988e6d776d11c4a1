"""Running work side by side: one task group for every "run these concurrently,
stop everything on the first failure", and priority slots for model calls.

``TaskGroup`` runs tasks on at most ``limit`` threads; a task may add more tasks
(a page's gist is queued as soon as its pause point is chosen). When a task fails,
the group sets ``cancel`` (so running tasks can stop at their next check), drops the
tasks not yet started, waits for the running ones and raises the first error.
``run_all`` is the common case: a fixed list of jobs, results in order.
"""
from __future__ import annotations

import heapq
import itertools
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


class TaskGroup:
    def __init__(self, limit: int, *, cancel: threading.Event | None = None, name: str = "task"):
        self.cancel = cancel or threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max(1, limit), thread_name_prefix=name)
        self._futures: list[Future] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], *args) -> Future:
        future = self._pool.submit(fn, *args)
        with self._lock:
            self._futures.append(future)
        future.add_done_callback(self._on_done)
        return future

    def _on_done(self, future: Future) -> None:
        if not future.cancelled() and future.exception() is not None:
            self.cancel.set()

    def wait(self) -> None:
        """Wait for every task, including those added while waiting; raise the first error."""
        seen = 0
        while True:
            with self._lock:
                pending = self._futures[seen:]
                seen = len(self._futures)
            if not pending:
                return
            for future in pending:
                try:
                    future.result()
                except BaseException:
                    self._stop()
                    raise

    def _stop(self) -> None:
        self.cancel.set()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "TaskGroup":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.wait()
            else:
                self._stop()
        finally:
            self._pool.shutdown(wait=True)


def run_all(jobs: Sequence[Callable[[], T]], limit: int, *, cancel: threading.Event | None = None,
            on_done: Callable[[T], None] | None = None, name: str = "task") -> list[T]:
    """Run ``jobs`` at most ``limit`` at a time; results in the jobs' order. The first failure
    cancels the jobs not yet started and is raised. ``on_done`` sees each result as it comes."""
    def run(job: Callable[[], T]) -> T:
        result = job()
        if on_done is not None:
            on_done(result)
        return result

    if limit <= 1 or len(jobs) <= 1:
        return [run(job) for job in jobs]
    with TaskGroup(min(limit, len(jobs)), cancel=cancel, name=name) as group:
        futures = [group.submit(run, job) for job in jobs]
    return [f.result() for f in futures]


class Slots:
    """At most ``n`` holders at once; waiters are served lowest key first."""

    def __init__(self, n: int):
        self.free = max(1, n)
        self.cond = threading.Condition()
        self.waiting: list[tuple] = []
        self.counter = itertools.count()

    @contextmanager
    def take(self, key: tuple):
        with self.cond:
            ticket = (*key, next(self.counter))
            heapq.heappush(self.waiting, ticket)
            while self.free == 0 or self.waiting[0] != ticket:
                self.cond.wait()
            heapq.heappop(self.waiting)
            self.free -= 1
            self.cond.notify_all()
        try:
            yield
        finally:
            with self.cond:
                self.free += 1
                self.cond.notify_all()
