"""A run's life in the database, and reading a run back whole.

Every build, tree, question and evaluation is a run: created ``running``, its model
calls logged under it, and ended ``done``, ``stopped``, ``interrupted`` or ``failed``
with its usage, its error and, when the failure was a bug rather than something the
user can fix, the traceback. ``run()`` is that lifecycle, written once.
"""
from __future__ import annotations

import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from core.errors import GistError
from core.status import DONE, FAILED, RUNNING, ended
from core.store.store import Store, loads

if TYPE_CHECKING:
    from core.engine import Engine


@dataclass
class Run:
    """A run under way: its id, the engine bound to it (its model calls are logged under
    the run), and what to do if it ends early (``on_end(status)``)."""
    store: Store
    id: int
    engine: "Engine"
    started: float = field(default_factory=time.perf_counter)
    on_end: list[Callable[[str], None]] = field(default_factory=list)
    finished: bool = False

    @property
    def seconds(self) -> float:
        return round(time.perf_counter() - self.started, 3)

    def finish(self, result: Any, **fields) -> None:
        self.store.finish_run(self.id, status=DONE, result=result, seconds=self.seconds, **fields)
        self.finished = True


@contextmanager
def run(store: Store, kind: str, engine: "Engine", *, resume: int | None = None, **fields) -> Iterator[Run]:
    """Create (or, with ``resume``, reopen) a run, yield it, and record how it ended. A run
    left without ``finish`` is finished ``done`` with no result."""
    if resume is None:
        run_id = store.create_run(kind, engine=engine.key, engine_label=engine.label, model=engine.model, **fields)
    else:
        run_id = resume
        store.update_run(run_id, status=RUNNING, error=None)
    handle = Run(store, run_id, engine.bind(run_id=run_id, doc_id=fields.get("doc_id")))
    try:
        yield handle
    except BaseException as exc:
        status = ended(exc)
        unexpected = status == FAILED and not isinstance(exc, GistError)
        store.finish_run(run_id, status=status, error=str(exc) or type(exc).__name__, seconds=handle.seconds,
                         result=handle.engine.usage(), traceback=traceback.format_exc() if unexpected else None)
        for callback in handle.on_end:
            callback(status)
        raise
    if not handle.finished:
        handle.finish(None)


def run_trace(store: Store, run_id: int) -> dict:
    """Everything needed to show what happened in a run, exactly as it happened."""
    run_row = store.get_run(run_id)
    steps = store.steps(run_id)
    calls = {c["id"]: {**c, "params": loads(c["params"], {}), "backend": loads(c["backend"], {})}
             for c in store.calls(run_id=run_id)}
    return {"run": run_row, "steps": steps, "calls": calls}
