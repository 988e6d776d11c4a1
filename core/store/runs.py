"""Runs and their steps: a run's life in the database, the lists of runs, and reading a run back whole.

Every build, tree, question and evaluation is a run: created ``running``, its model
calls logged under it, and ended ``done``, ``stopped``, ``interrupted`` or ``failed``
with its usage, its error and, when the failure was a bug rather than something the
user can fix, the traceback. ``run()`` is that lifecycle, written once.
"""
from __future__ import annotations

import time
import traceback
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from core.errors import GistError, NotFound
from core.status import BUILDING, DONE, FAILED, INTERRUPTED, RUNNING, ended
from core.store.base import Tables, dumps
from core.store.migrations import now
from core.store.owners import current_owner, is_gone
from core.store.records import EvalQuestionRun, LlmCall, Run, RunListing, Step

if TYPE_CHECKING:
    from core.engine import Engine
    from core.store.store import Store

INTERRUPTED_WHY = ("The process running it stopped (killed, crashed or restarted) before it finished; "
                   "what it made is kept. Resume it to finish.")
_LISTED = ("r.id, r.kind, r.doc_id, d.title, r.method, r.engine, r.engine_label, r.model, r.question, r.status, "
           "r.started_at, r.seconds, r.memory_id")


class Runs(Tables):
    def create_run(self, kind: str, **fields) -> int:
        self.require_writable()
        for key in ("options", "params"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = dumps(fields[key])
        with self.lock, self.db.conn:
            return self.db["runs"].insert({"kind": kind, "status": RUNNING, "started_at": now(),
                                           "owner": current_owner(), **fields}).last_pk

    def finish_run(self, run_id: int, *, status: str, result: Any = None, error: str = "",
                   seconds: float | None = None, traceback: str | None = None, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["runs"].update(run_id, {
                "status": status, "result": dumps(result) if result is not None else None,
                "error": error or None, "traceback": traceback, "finished_at": now(), "seconds": seconds,
                **fields,
            })

    def reconcile_runs(self) -> list[int]:
        """Mark runs whose process is gone as interrupted (their memory or tree too, so a build
        resumes them); returns their ids. Called whenever runs are listed or opened."""
        if self.read_only:
            return []
        with self.lock:
            running = list(self.db.query("select id, owner from runs where status = ?", [RUNNING]))
            gone = [r["id"] for r in running if is_gone(r["owner"])]
            if not gone:
                return []
            marks = ",".join("?" * len(gone))
            with self.db.conn:
                self.db.execute(f"update runs set status = ?, error = coalesce(error, ?), finished_at = ? "
                                f"where id in ({marks})", [INTERRUPTED, INTERRUPTED_WHY, now(), *gone])
                self.db.execute(f"update memories set status = ? where status = ? and id in "
                                f"(select memory_id from runs where kind = 'build' and id in ({marks}))",
                                [INTERRUPTED, BUILDING, *gone])
                self.db.execute(f"update trees set status = ? where status = ? and run_id in ({marks})",
                                [INTERRUPTED, BUILDING, *gone])
        return gone

    def update_run(self, run_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["runs"].update(run_id, fields)

    def add_step(self, run_id: int, seq: int, step: str, outcome: str, data: dict,
                 seconds: float = 0.0, page: int | None = None) -> None:
        with self.lock, self.db.conn:
            self.db["steps"].insert({
                "run_id": run_id, "seq": seq, "step": step, "outcome": outcome, "page": page,
                "data": dumps(data), "seconds": seconds, "created_at": now(),
            })

    def get_run(self, run_id: int) -> Run:
        self.reconcile_runs()
        return Run.from_row(self.row("runs", run_id, NotFound(
            f"No run {run_id}.", cli="List runs with `python -m core runs`.",
            app="Choose a run from the list on the Runs page.")))

    def steps(self, run_id: int) -> list[Step]:
        with self.lock:
            rows = list(self.db["steps"].rows_where("run_id = ?", [run_id], order_by="seq, id"))
        return [Step.from_row(r) for r in rows]

    # -- lists of runs ------------------------------------------------------------------------------
    def list_runs(self, kind: str | None = None, doc_id: str | None = None, limit: int = 200) -> list[RunListing]:
        """Runs, newest first: every run of ``kind`` and ``doc_id`` (an evaluation's question runs too)."""
        self.reconcile_runs()
        where, args = [], []
        if kind:
            where.append("r.kind = ?"); args.append(kind)
        if doc_id:
            where.append("r.doc_id = ?"); args.append(doc_id)
        clause = f"where {' and '.join(where)}" if where else ""
        with self.lock:
            rows = list(self.db.query(f"select {_LISTED} from runs r left join documents d on d.id = r.doc_id "
                                      f"{clause} order by r.id desc limit ?", [*args, limit]))
        return [RunListing.from_row(r) for r in rows]

    # An evaluation's question runs are listed under it; a comparison (one question, several
    # methods: ``ask_group``) is listed once, as its first run.
    _TOP_LEVEL = ("(r.kind != 'ask' or not exists (select 1 from eval_results e where e.ask_run_id = r.id)) and "
                  "(r.ask_group is null or r.id = (select min(g.id) from runs g where g.ask_group = r.ask_group))")

    def _runs_where(self, kind: str | None, search: str, doc_id: str | None = None) -> tuple[str, list]:
        where, args = [self._TOP_LEVEL], []
        if kind:
            where.append("r.kind = ?"); args.append(kind)
        if doc_id:
            where.append("r.doc_id = ?"); args.append(doc_id)
        if search:
            where.append("(r.question like ? or r.method like ? or r.engine_label like ? or r.doc_id like ? "
                         "or r.doc_id in (select id from documents where title like ?))")
            args += [f"%{search}%"] * 5
        return " and ".join(where), args

    def runs_page(self, *, kind: str | None = None, search: str = "", doc_id: str | None = None, offset: int = 0,
                  limit: int = 50) -> list[RunListing]:
        """One page of runs, newest first, without the question runs an evaluation made (they are
        listed under their evaluation: ``eval_question_runs``); an evaluation's row says how many
        results it holds (``results``); a comparison is one row, its first run, with the ids and
        methods of all its runs (``group_ids``, ``group_methods``)."""
        self.reconcile_runs()
        where, args = self._runs_where(kind, search, doc_id)
        with self.lock:
            rows = list(self.db.query(
                f"select {_LISTED}, case when r.kind = 'eval' then "
                "(select count(*) from eval_results e where e.eval_id = r.id) end as results, "
                "(select group_concat(id, ',') from (select id from runs g where g.ask_group = r.ask_group "
                "order by id)) as group_ids, (select group_concat(method, ',') from (select method from runs g "
                "where g.ask_group = r.ask_group order by id)) as group_methods "
                f"from runs r left join documents d on d.id = r.doc_id where {where} "
                "order by r.id desc limit ? offset ?", [*args, limit, offset]))
        return [RunListing.from_row(r) for r in rows]

    def count_runs(self, *, kind: str | None = None, search: str = "", doc_id: str | None = None) -> int:
        """How many runs ``runs_page`` pages through."""
        where, args = self._runs_where(kind, search, doc_id)
        with self.lock:
            return self.db.execute(f"select count(*) from runs r where {where}", args).fetchone()[0]

    def eval_question_runs(self, eval_id: int, *, offset: int = 0, limit: int = 50) -> list[EvalQuestionRun]:
        """One page of the question runs an evaluation made, in the order they started."""
        with self.lock:
            rows = list(self.db.query(
                "select r.id, r.kind, r.doc_id, d.title, r.method, r.question, r.status, r.seconds, e.id as result_id, "
                "e.run_index from (select ask_run_id from eval_results where eval_id = ? and ask_run_id is not null "
                "order by ask_run_id limit ? offset ?) page join eval_results e on e.ask_run_id = page.ask_run_id "
                "and e.eval_id = ? join runs r on r.id = page.ask_run_id left join documents d on d.id = r.doc_id "
                "order by page.ask_run_id", [eval_id, limit, offset, eval_id]))
        return [EvalQuestionRun.from_row(r) for r in rows]

    def count_eval_question_runs(self, eval_id: int) -> int:
        with self.lock:
            return self.db.execute("select count(*) from eval_results where eval_id = ? and ask_run_id is not null",
                                   [eval_id]).fetchone()[0]

    def group_runs(self, run_id: int) -> list[int]:
        """The runs of the comparison ``run_id`` belongs to, in order (just ``[run_id]`` if none)."""
        with self.lock:
            rows = self.db.execute("select g.id from runs r join runs g on g.ask_group = r.ask_group "
                                   "where r.id = ? order by g.id", [run_id]).fetchall()
        return [row[0] for row in rows] or [run_id]


# --- a run's lifecycle ----------------------------------------------------------------------------

@dataclass
class ActiveRun:
    """A run under way: its id, the engine bound to it (its model calls are logged under
    the run), and what to do if it ends early (``on_end(status)``)."""
    store: "Store"
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
def run(store: "Store", kind: str, engine: "Engine", *, resume: int | None = None, **fields) -> Iterator[ActiveRun]:
    """Create (or, with ``resume``, reopen) a run, yield it, and record how it ended. A run
    left without ``finish`` is finished ``done`` with no result."""
    if resume is None:
        run_id = store.create_run(kind, engine=engine.key, engine_label=engine.label, model=engine.model, **fields)
    else:
        run_id = resume
        store.update_run(run_id, status=RUNNING, error=None)
    handle = ActiveRun(store, run_id, engine.bind(run_id=run_id, doc_id=fields.get("doc_id")))
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


@dataclass(frozen=True)
class RunTrace:
    """Everything needed to show what happened in a run, exactly as it happened."""
    run: Run
    steps: list[Step]
    calls: dict[int, LlmCall]

    def as_json(self) -> dict:
        return {"run": asdict(self.run),
                "steps": [{**{k: v for k, v in asdict(s).items() if k != "trace"}, "data": s.trace.to_dict()}
                          for s in self.steps],
                "calls": {i: asdict(c) for i, c in self.calls.items()}}


def run_trace(store: "Store", run_id: int) -> RunTrace:
    return RunTrace(store.get_run(run_id), store.steps(run_id), {c.id: c for c in store.calls(run_id=run_id)})
