"""The database: open with a path, migrate (``migrations.py``), work through sqlite-utils.

One connection is shared by the threads of a process behind a lock; WAL mode
and a busy timeout let the CLI and app sessions use the same file.

API keys are never written here: the LLM seam stores the model and base URL only.
"""
from __future__ import annotations

import array
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable

import sqlite_utils

from core.config import default_db_path
from core.errors import DatabaseError, NotFound
from core.status import BUILDING, COMPLETE, INTERRUPTED, RUNNING
from core.store.migrations import migrate, now, pending
from core.store.owners import current_owner, is_gone
from core.text.documents import Document, Paragraph
from core.trace import FALLBACK


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def loads(value: str | None, default: Any = None) -> Any:
    return json.loads(value) if value else default


INTERRUPTED_WHY = ("The process running it stopped (killed, crashed or restarted) before it finished; "
                   "what it made is kept. Resume it to finish.")


class Store:
    """Typed access to the database. Every public method takes the lock."""

    def __init__(self, db: sqlite_utils.Database, path: Path | None = None, *, read_only: bool = False):
        self.db = db
        self.path = path
        self.read_only = read_only
        self.lock = threading.RLock()
        with self.lock:
            if not read_only:
                migrate(db)

    def require_writable(self) -> None:
        """Refuse work that would write, in one sentence, when the database is read-only."""
        if self.read_only:
            raise DatabaseError(f"The database at {self.path} is read-only, so nothing can be built or asked "
                                "(what it holds can still be read).",
                                cli="Make the file writable, or choose another with --db.",
                                app="Make the file writable, or set GIST_MEMORY_DB to another location and "
                                    "restart the app.")

    # -- documents ---------------------------------------------------------------------
    def save_document(self, doc: Document) -> None:
        self.require_writable()
        with self.lock, self.db.conn:
            if self.db["documents"].count_where("id = ?", [doc.id]):
                return
            # "or ignore": another process saving the same document at the same moment saves the same rows.
            self.db["paragraphs"].insert_all(
                ({"doc_id": doc.id, "idx": i, "text": p.text, "words": p.words, "heading": int(p.heading)}
                 for i, p in enumerate(doc.paragraphs)), ignore=True)
            self.db["documents"].insert({
                "id": doc.id, "title": doc.title, "source": doc.source, "author": doc.author,
                "words": doc.words, "paragraphs": len(doc.paragraphs), "meta": _dumps(doc.meta),
                "created_at": now(),
            }, ignore=True)

    def get_document(self, doc_id: str) -> Document:
        with self.lock:
            rows = list(self.db["documents"].rows_where("id = ? or id like ?", [doc_id, f"{doc_id}%"], limit=2))
            if len(rows) != 1:
                hint = "it matches several documents; give more of it" if rows else "no such document"
                raise NotFound(f"Document {doc_id!r}: {hint}.", cli="List documents with `python -m core docs`.",
                               app="Open a document from the Library tab on the Read page.")
            row = rows[0]
            paragraphs = tuple(
                Paragraph(text=p["text"], words=p["words"], heading=bool(p["heading"]))
                for p in self.db["paragraphs"].rows_where("doc_id = ?", [row["id"]], order_by="idx")
            )
        return Document(id=row["id"], title=row["title"], paragraphs=paragraphs, source=row["source"] or "",
                        author=row["author"] or "", meta=loads(row["meta"], {}))

    def list_documents(self) -> list[dict]:
        with self.lock:
            return list(self.db.query(
                "select d.id, d.title, d.source, d.words, d.created_at, "
                f"(select count(*) from memories m where m.doc_id = d.id and m.status = '{COMPLETE}') as memories "
                "from documents d order by d.created_at desc"
            ))

    # -- gist memories -------------------------------------------------------------------
    def find_memory(self, doc_id: str, settings_key: str, statuses: Iterable[str] = (COMPLETE,)) -> dict | None:
        statuses = list(statuses)
        with self.lock:
            rows = list(self.db["memories"].rows_where(
                f"doc_id = ? and settings_key = ? and status in ({','.join('?' * len(statuses))})",
                [doc_id, settings_key, *statuses], order_by="id desc", limit=1,
            ))
        return rows[0] if rows else None

    def memories_for(self, doc_id: str, status: str | None = COMPLETE) -> list[dict]:
        with self.lock:
            where, args = ("doc_id = ?", [doc_id]) if status is None else ("doc_id = ? and status = ?", [doc_id, status])
            return list(self.db["memories"].rows_where(where, args, order_by="id desc"))

    def get_memory_row(self, memory_id: int) -> dict:
        with self.lock:
            try:
                return self.db["memories"].get(memory_id)
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No gist memory {memory_id}.", cli="List them with `python -m core docs`.",
                               app="Choose one of the document's gist memories.") from None

    def claim_memory(self, doc_id: str, settings_key: str, fields: dict, *, claim: str,
                     rebuild: bool = False) -> tuple[str, int | None]:
        """One build per memory, across threads and processes, decided in one write transaction:
        ``("complete", id)`` a finished memory to reuse (not when ``rebuild``); ``("busy", id)``
        another live build holds it; else the memory is claimed for ``claim``: ``("resume", id)``
        an unfinished one, or ``("new", id)``."""
        self.require_writable()
        with self.lock:
            conn = self.db.conn
            conn.execute("begin immediate")
            try:
                rows = list(self.db.query(
                    "select id, status, owner from memories where doc_id = ? and settings_key = ? order by id desc",
                    [doc_id, settings_key]))
                busy = next((r for r in rows if r["status"] == BUILDING and r["owner"] and r["owner"] != claim
                             and not is_gone(r["owner"].split("/")[0])), None)
                complete = next((r for r in rows if r["status"] == COMPLETE), None)
                unfinished = next((r for r in rows if r["status"] != COMPLETE), None)
                if busy is not None:
                    state, memory_id = "busy", busy["id"]
                elif complete is not None and not rebuild:
                    state, memory_id = "complete", complete["id"]
                elif unfinished is not None and not rebuild:
                    state, memory_id = "resume", unfinished["id"]
                    conn.execute("update memories set status = ?, owner = ? where id = ?",
                                 [BUILDING, claim, memory_id])
                else:
                    state = "new"
                    memory_id = self.db["memories"].insert({**fields, "status": BUILDING, "owner": claim,
                                                            "created_at": now()}).last_pk
                conn.execute("commit")
            except BaseException:
                conn.execute("rollback")
                raise
        return state, memory_id

    def create_memory(self, **fields) -> int:
        self.require_writable()
        with self.lock, self.db.conn:
            return self.db["memories"].insert({**fields, "created_at": now()}).last_pk

    def update_memory(self, memory_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["memories"].update(memory_id, fields)

    def clear_pages(self, memory_id: int) -> None:
        with self.lock, self.db.conn:
            self.db["pages"].delete_where("memory_id = ?", [memory_id])

    def save_page(self, memory_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["pages"].upsert({"memory_id": memory_id, **fields}, pk=("memory_id", "start"))

    def page_rows(self, memory_id: int) -> list[dict]:
        with self.lock:
            return list(self.db["pages"].rows_where("memory_id = ?", [memory_id], order_by="start"))

    # -- MemWalker memory trees ---------------------------------------------------------------
    def find_tree(self, doc_id: str, settings_key: str) -> dict | None:
        with self.lock:
            rows = list(self.db["trees"].rows_where("doc_id = ? and settings_key = ? and status = ?",
                                                    [doc_id, settings_key, COMPLETE], order_by="id desc", limit=1))
        return rows[0] if rows else None

    def trees_for(self, doc_id: str) -> list[dict]:
        with self.lock:
            return list(self.db["trees"].rows_where("doc_id = ? and status = ?", [doc_id, COMPLETE],
                                                    order_by="id desc"))

    def get_tree_row(self, tree_id: int) -> dict:
        with self.lock:
            try:
                return self.db["trees"].get(tree_id)
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No memory tree {tree_id}.", cli="Build one with `python -m core tree DOC_ID`.",
                               app="Build one on the Memory tree page.") from None

    def create_tree(self, **fields) -> int:
        self.require_writable()
        with self.lock, self.db.conn:
            return self.db["trees"].insert({**fields, "created_at": now()}).last_pk

    def finish_tree(self, tree_id: int, node_rows: Iterable[dict], **fields) -> None:
        """Store every node and mark the tree complete, in one transaction."""
        with self.lock, self.db.conn:
            self.db["tree_nodes"].delete_where("tree_id = ?", [tree_id])
            self.db["tree_nodes"].insert_all(
                {**n, "tree_id": tree_id, "children": _dumps(list(n["children"]))} for n in node_rows)
            self.db["trees"].update(tree_id, {**fields, "status": COMPLETE, "finished_at": now()})

    def update_tree(self, tree_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["trees"].update(tree_id, fields)

    def tree_node_rows(self, tree_id: int) -> list[dict]:
        with self.lock:
            rows = list(self.db["tree_nodes"].rows_where("tree_id = ?", [tree_id], order_by="node"))
        return [{**r, "children": loads(r["children"], [])} for r in rows]

    # -- runs and steps -----------------------------------------------------------------------
    def create_run(self, kind: str, **fields) -> int:
        self.require_writable()
        for key in ("options", "params"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = _dumps(fields[key])
        with self.lock, self.db.conn:
            return self.db["runs"].insert({"kind": kind, "status": RUNNING, "started_at": now(),
                                           "owner": current_owner(), **fields}).last_pk

    def finish_run(self, run_id: int, *, status: str, result: Any = None, error: str = "",
                   seconds: float | None = None, traceback: str | None = None, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["runs"].update(run_id, {
                "status": status, "result": _dumps(result) if result is not None else None,
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
                "data": _dumps(data), "seconds": seconds, "created_at": now(),
            })

    def get_run(self, run_id: int) -> dict:
        self.reconcile_runs()
        with self.lock:
            try:
                row = self.db["runs"].get(run_id)
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No run {run_id}.", cli="List runs with `python -m core runs`.",
                               app="Choose a run from the list on the Runs page.") from None
        return {**row, "options": loads(row["options"], []), "params": loads(row["params"], {}),
                "result": loads(row["result"])}

    def list_runs(self, kind: str | None = None, doc_id: str | None = None, limit: int = 200) -> list[dict]:
        self.reconcile_runs()
        where, args = [], []
        if kind:
            where.append("r.kind = ?"); args.append(kind)
        if doc_id:
            where.append("r.doc_id = ?"); args.append(doc_id)
        clause = f"where {' and '.join(where)}" if where else ""
        with self.lock:
            return list(self.db.query(
                "select r.id, r.kind, r.doc_id, d.title, r.method, r.engine, r.engine_label, r.model, r.question, "
                "r.status, r.started_at, r.seconds, r.memory_id "
                f"from runs r left join documents d on d.id = r.doc_id {clause} order by r.id desc limit ?",
                [*args, limit],
            ))

    def steps(self, run_id: int) -> list[dict]:
        with self.lock:
            rows = list(self.db["steps"].rows_where("run_id = ?", [run_id], order_by="seq, id"))
        return [{**r, "data": loads(r["data"], {})} for r in rows]

    # -- LLM calls ---------------------------------------------------------------------------------
    def cached_reply(self, cache_key: str) -> dict | None:
        """The first reply logged for ``cache_key`` that was not an error and not rejected."""
        with self.lock:
            rows = list(self.db["llm_calls"].rows_where(
                "cache_key = ? and cached = 0 and error is null and rejected is null", [cache_key],
                order_by="id", limit=1,
            ))
        return rows[0] if rows else None

    def reject_call(self, call_id: int) -> None:
        """Mark a logged reply unusable, and the reply it replayed if it was a replay, so the
        replay cache never serves it again; the row stays in the log."""
        with self.lock, self.db.conn:
            self.db.execute(
                "update llm_calls set rejected = 1 where id = ? or (cached = 0 and rejected is null and "
                "cache_key = (select cache_key from llm_calls where id = ?) and "
                "reply is (select reply from llm_calls where id = ?))", [call_id, call_id, call_id])

    def log_call(self, **fields) -> int:
        for key in ("params", "backend"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = _dumps(fields[key])
        with self.lock, self.db.conn:
            return self.db["llm_calls"].insert({**fields, "created_at": now()}).last_pk

    def calls(self, run_id: int | None = None, ids: Iterable[int] | None = None) -> list[dict]:
        with self.lock:
            if ids is not None:
                ids = list(ids)
                if not ids:
                    return []
                return list(self.db["llm_calls"].rows_where(
                    f"id in ({','.join('?' * len(ids))})", ids, order_by="id"))
            return list(self.db["llm_calls"].rows_where("run_id is ?", [run_id], order_by="id"))

    # -- embeddings ---------------------------------------------------------------------------------
    def cached_embeddings(self, keys: Iterable[str]) -> dict[str, list[float]]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, list[float]] = {}
        with self.lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                for row in self.db["embeddings"].rows_where(f"key in ({','.join('?' * len(chunk))})", chunk):
                    vector = array.array("f")
                    vector.frombytes(row["vector"])
                    if sys.byteorder != "little":
                        vector.byteswap()
                    found[row["key"]] = vector.tolist()
        return found

    def save_embeddings(self, rows: Iterable[tuple[str, list[float]]], *, model: str, backend: dict) -> None:
        stamp, where = now(), _dumps(backend)
        records = []
        for key, vector in rows:
            packed = array.array("f", vector)
            if sys.byteorder != "little":
                packed.byteswap()
            records.append({"key": key, "model": model, "backend": where, "dims": len(vector),
                            "vector": packed.tobytes(), "created_at": stamp})
        with self.lock, self.db.conn:
            self.db["embeddings"].upsert_all(records, pk="key")
    # -- evaluations -------------------------------------------------------------------------
    def add_eval_result(self, **fields) -> int:
        fields = {k: _dumps(v) if isinstance(v, (list, dict, tuple)) else v for k, v in fields.items()}
        with self.lock, self.db.conn:
            return self.db["eval_results"].insert({**fields, "created_at": now()}, replace=True).last_pk

    def eval_results(self, eval_id: int) -> list[dict]:
        with self.lock:
            rows = list(self.db["eval_results"].rows_where("eval_id = ?", [eval_id], order_by="id"))
        return [_eval_row(r) for r in rows]

    def eval_result(self, result_id: int) -> dict:
        with self.lock:
            try:
                return _eval_row(self.db["eval_results"].get(result_id))
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No evaluation result {result_id}.") from None

    def eval_memories(self, eval_id: int) -> list[dict]:
        """The gist memories an evaluation's answers read, one row per method and memory: ``method``,
        ``memory_id``, ``doc_id``, ``pages``, ``fallback_breaks`` and ``fallback_gists``."""
        with self.lock:
            return list(self.db.query(
                "with used as (select distinct e.method, r.memory_id from eval_results e join runs r "
                "on r.id = e.ask_run_id where e.eval_id = ? and r.memory_id is not null) "
                "select used.method, used.memory_id, m.doc_id, count(p.start) as pages, "
                "coalesce(sum(p.break_by = ?), 0) as fallback_breaks, coalesce(sum(p.gist_by = ?), 0) as fallback_gists "
                "from used join memories m on m.id = used.memory_id left join pages p on p.memory_id = used.memory_id "
                "group by used.method, used.memory_id order by used.method, used.memory_id",
                [eval_id, FALLBACK, FALLBACK]))

    def save_label(self, result_id: int, annotator: str, category: str, note: str) -> None:
        """One label per result and annotator; saving again replaces it."""
        row = {"result_id": result_id, "annotator": annotator, "category": category, "note": note,
               "updated_at": now()}
        with self.lock, self.db.conn:
            existing = list(self.db["labels"].rows_where("result_id = ? and annotator = ?", [result_id, annotator]))
            if existing:
                self.db["labels"].update(existing[0]["id"], row)
            else:
                self.db["labels"].insert(row)

    def labels(self, eval_id: int) -> list[dict]:
        with self.lock:
            return list(self.db.query(
                "select l.* from labels l join eval_results r on r.id = l.result_id where r.eval_id = ? "
                "order by l.result_id, l.annotator", [eval_id]))

    # -- Inspect and Runs at scale: light and paged queries ------------------------------------------
    def eval_results_version(self, eval_id: int) -> tuple[int, int]:
        """(count, last id) of an evaluation's results: changes whenever a result is added or
        replaced, so a screen can keep the results it loaded until then."""
        with self.lock:
            row = self.db.execute("select count(*), coalesce(max(id), 0) from eval_results where eval_id = ?",
                                  [eval_id]).fetchone()
        return int(row[0]), int(row[1])

    def labelled_results(self, eval_id: int) -> list[dict]:
        """Every label of an evaluation joined with its result (one row per result and annotator):
        the label's ``annotator``, ``category``, ``note`` and ``labelled_at`` beside the result's columns."""
        with self.lock:
            rows = list(self.db.query(
                "select r.*, l.annotator as label_annotator, l.category as label_category, l.note as label_note, "
                "l.updated_at as label_updated_at from labels l join eval_results r on r.id = l.result_id "
                "where r.eval_id = ? order by l.result_id, l.annotator", [eval_id]))
        out = []
        for row in rows:
            label = {k[len("label_"):]: row.pop(k) for k in list(row) if k.startswith("label_")}
            out.append({**_eval_row(row), "label": label})
        return out

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
                  limit: int = 50) -> list[dict]:
        """One page of runs, newest first, without the question runs an evaluation made (they are
        listed under their evaluation: ``eval_question_runs``); an evaluation's row says how many
        results it holds (``results``); a comparison is one row, its first run, with the ids and
        methods of all its runs (``group_ids``, ``group_methods``: comma-separated, in order)."""
        self.reconcile_runs()
        where, args = self._runs_where(kind, search, doc_id)
        with self.lock:
            return list(self.db.query(
                "select r.id, r.kind, r.doc_id, d.title, r.method, r.engine, r.engine_label, r.model, r.question, "
                "r.status, r.started_at, r.seconds, r.memory_id, r.ask_group, case when r.kind = 'eval' then "
                "(select count(*) from eval_results e where e.eval_id = r.id) end as results, "
                "(select group_concat(id, ',') from (select id from runs g where g.ask_group = r.ask_group "
                "order by id)) as group_ids, (select group_concat(method, ',') from (select method from runs g "
                "where g.ask_group = r.ask_group order by id)) as group_methods "
                f"from runs r left join documents d on d.id = r.doc_id where {where} "
                "order by r.id desc limit ? offset ?", [*args, limit, offset]))

    def count_runs(self, *, kind: str | None = None, search: str = "", doc_id: str | None = None) -> int:
        """How many runs ``runs_page`` pages through."""
        where, args = self._runs_where(kind, search, doc_id)
        with self.lock:
            return self.db.execute(f"select count(*) from runs r where {where}", args).fetchone()[0]

    def eval_question_runs(self, eval_id: int, *, offset: int = 0, limit: int = 50) -> list[dict]:
        """One page of the question runs an evaluation made, in the order they started."""
        with self.lock:
            return list(self.db.query(
                "select r.id, r.kind, r.doc_id, d.title, r.method, r.engine_label, r.question, r.status, "
                "r.started_at, r.seconds, e.id as result_id, e.run_index, e.question_id from (select ask_run_id "
                "from eval_results where eval_id = ? and ask_run_id is not null order by ask_run_id limit ? offset ?) "
                "page join eval_results e on e.ask_run_id = page.ask_run_id and e.eval_id = ? "
                "join runs r on r.id = page.ask_run_id left join documents d on d.id = r.doc_id "
                "order by page.ask_run_id", [eval_id, limit, offset, eval_id]))

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

    def eval_of_run(self, run_id: int) -> int | None:
        """The evaluation that made question run ``run_id`` (None for a question asked on its own)."""
        with self.lock:
            row = self.db.execute("select eval_id from eval_results where ask_run_id = ? limit 1", [run_id]).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        with self.lock:
            self.db.conn.close()


_WHERE = {"cli": "Choose another location with --db or the GIST_MEMORY_DB environment variable.",
          "app": "Set GIST_MEMORY_DB to another location and restart the app."}


def _check_ours(path: Path) -> None:
    """Refuse, without writing a byte, a file that is not one of our databases: not SQLite, or
    SQLite with tables but none of our migration history."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
            ours = "_migrations" in tables and bool(conn.execute(
                "select 1 from _migrations where name = 'm001_initial'").fetchone())
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        raise DatabaseError(f"{path} is not a database (it is not an SQLite file); it was left unchanged.",
                            **_WHERE) from None
    if tables and not ours:
        raise DatabaseError(f"{path} is an SQLite database made by another program, not a Gist Memory Explorer "
                            "database; it was left unchanged.", **_WHERE)


def _open_read_only(path: Path) -> Store:
    for uri in (f"file:{path}?mode=ro", f"file:{path}?immutable=1"):  # a WAL file may need the second
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            db = sqlite_utils.Database(conn)
            if pending(db):
                raise DatabaseError(f"The database at {path} is read-only and was made by an older version, so "
                                    "it cannot be brought up to date.", cli="Make the file writable once.",
                                    app="Make the file writable once and restart the app.")
            return Store(db, path, read_only=True)
        except sqlite3.OperationalError:
            continue
    raise DatabaseError(f"Cannot read the read-only database at {path}.", **_WHERE)


def open_db(path: str | Path | None = None, *, read_only: bool | None = None) -> Store:
    """Open (creating and migrating if needed) the database at ``path``, ``$GIST_MEMORY_DB``,
    or the default location; ``":memory:"`` for a throwaway one. A file that is not ours is
    refused untouched; a file this process cannot write opens read-only (``read_only`` forces it)."""
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        return Store(sqlite_utils.Database(conn))
    path = Path(path).expanduser() if path else default_db_path()
    exists = path.is_file() and path.stat().st_size > 0
    if exists:
        _check_ours(path)
        if read_only or (read_only is None and not os.access(path, os.W_OK)):
            return _open_read_only(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        conn.execute("pragma busy_timeout=30000")
        _use_wal(conn)
        conn.execute("pragma synchronous=normal")  # WAL stays consistent; commits need no fsync each
    except (OSError, sqlite3.Error) as exc:
        raise DatabaseError(f"Cannot open the database at {path} ({exc}).", **_WHERE) from None
    return Store(sqlite_utils.Database(conn), path)


WAL_WAIT_S = 30.0


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch a connection to WAL. SQLite answers "database is locked" at once, without its busy
    handler, when another process is creating or migrating the same new file: wait and try again."""
    deadline = time.monotonic() + WAL_WAIT_S
    while True:
        try:
            conn.execute("pragma journal_mode=wal")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _eval_row(row: dict) -> dict:
    return {**row, "options": loads(row["options"], []), "references": loads(row.pop("references_"), []),
            "pages_looked_up": loads(row["pages_looked_up"], []), "meta": loads(row["meta"], {})}
