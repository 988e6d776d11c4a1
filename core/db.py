"""The one database module: open with a path, migrate, work through sqlite-utils.

Schema changes are append-only migration functions (``m001_initial``,
``m002_...``) recorded in ``_migrations``; never edit one that has shipped.
One connection is shared by the threads of a process behind a lock; WAL mode
and a busy timeout let the CLI and app sessions use the same file.

API keys are never written here: the LLM seam stores the model and base URL only.
"""
from __future__ import annotations

import array
import datetime as dt
import json
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

import sqlite_utils

from core.config import default_db_path
from core.documents import Document, Paragraph
from core.errors import GistError, NotFound

MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = []


def migration(fn):
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    db["documents"].create(
        {"id": str, "title": str, "source": str, "author": str, "words": int, "paragraphs": int,
         "meta": str, "created_at": str},
        pk="id",
    )
    db["paragraphs"].create(
        {"doc_id": str, "idx": int, "text": str, "words": int, "heading": int},
        pk=("doc_id", "idx"), foreign_keys=[("doc_id", "documents", "id")],
    )
    db["memories"].create(
        {"id": int, "doc_id": str, "engine": str, "engine_label": str, "model": str, "preset": str,
         "min_words": int, "max_words": int, "hard_breaks": int, "settings": str, "settings_key": str,
         "status": str, "origin": str, "pages": int, "words": int, "gist_words": int,
         "compression_rate": float, "run_id": int, "created_at": str, "finished_at": str},
        pk="id", foreign_keys=[("doc_id", "documents", "id")],
    )
    db["memories"].create_index(["doc_id", "settings_key"])
    db["pages"].create(
        {"memory_id": int, "start": int, "end": int, "words": int, "break_by": str, "break_reason": str,
         "gist": str, "gist_words": int, "gist_by": str},
        pk=("memory_id", "start"), foreign_keys=[("memory_id", "memories", "id")],
    )
    db["runs"].create(
        {"id": int, "kind": str, "doc_id": str, "memory_id": int, "method": str, "engine": str,
         "engine_label": str, "model": str, "question": str, "options": str, "params": str,
         "status": str, "result": str, "error": str, "started_at": str, "finished_at": str,
         "seconds": float},
        pk="id",
    )
    db["runs"].create_index(["doc_id"])
    db["steps"].create(
        {"id": int, "run_id": int, "seq": int, "step": str, "outcome": str, "page": int,
         "data": str, "seconds": float, "created_at": str},
        pk="id", foreign_keys=[("run_id", "runs", "id")],
    )
    db["steps"].create_index(["run_id", "seq"])
    db["llm_calls"].create(
        {"id": int, "run_id": int, "doc_id": str, "step": str, "model": str, "backend": str,
         "prompt": str, "reply": str, "params": str, "cache_key": str, "cached": int,
         "duration_ms": int, "input_tokens": int, "output_tokens": int, "attempts": int,
         "retry_errors": str, "error": str, "created_at": str},
        pk="id",
    )
    db["llm_calls"].create_index(["cache_key"])
    db["llm_calls"].create_index(["run_id"])


@migration
def m002_memwalker_trees(db: sqlite_utils.Database) -> None:
    """MemWalker memory trees: one row per tree, one per node. Leaves keep their raw segment."""
    db["trees"].create(
        {"id": int, "doc_id": str, "memory_id": int, "origin": str, "engine": str, "engine_label": str,
         "model": str, "segment_tokens": int, "max_children": int, "settings": str, "settings_key": str,
         "status": str, "nodes": int, "leaves": int, "levels": int, "tokens": int, "run_id": int,
         "created_at": str, "finished_at": str},
        pk="id", foreign_keys=[("doc_id", "documents", "id")],
    )
    db["trees"].create_index(["doc_id", "settings_key"])
    db["tree_nodes"].create(
        {"tree_id": int, "node": int, "level": int, "idx": int, "parent": int, "children": str,
         "start": int, "end": int, "text": str, "tokens": int, "summary": str, "summary_tokens": int,
         "summary_by": str},
        pk=("tree_id", "node"), foreign_keys=[("tree_id", "trees", "id")],
    )


@migration
def m003_embeddings(db: sqlite_utils.Database) -> None:
    """Embedding vectors by (server, embedding model, text), so a document's pages are embedded
    once and every later question only embeds itself. Vectors are float32, little-endian."""
    db["embeddings"].create(
        {"key": str, "model": str, "backend": str, "dims": int, "vector": bytes, "created_at": str},
        pk="key",
    )


@migration
def m004_evaluation(db: sqlite_utils.Database) -> None:
    """Evaluation results (one row per question, method and run) and annotators' labels."""
    db["eval_results"].create(
        {"id": int, "eval_id": int, "run_index": int, "doc_id": str, "question_id": str, "method": str,
         "ask_run_id": int, "question": str, "options": str, "gold": str, "references_": str, "answer": str,
         "choice": str, "correct": int, "rating": str, "rouge1": float, "rouge2": float, "rougeL": float,
         "compression_rate": float, "lookups": int, "pages_looked_up": str, "response_words": int,
         "words_consumed": int, "llm_calls": int, "fallbacks": int, "answered": int, "error": str,
         "meta": str, "created_at": str},
        pk="id", foreign_keys=[("eval_id", "runs", "id")],
    )
    db["eval_results"].create_index(["eval_id", "run_index", "method", "question_id"], unique=True)
    db["labels"].create(
        {"id": int, "result_id": int, "annotator": str, "category": str, "note": str, "updated_at": str},
        pk="id", foreign_keys=[("result_id", "eval_results", "id")],
    )
    db["labels"].create_index(["result_id", "annotator"], unique=True)


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied."""
    if "_migrations" not in db.table_names():
        db["_migrations"].create({"name": str, "applied_at": str}, pk="name")
    done = {row["name"] for row in db["_migrations"].rows}
    applied = []
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        with db.conn:
            fn(db)
            db["_migrations"].insert({"name": fn.__name__, "applied_at": now()})
        applied.append(fn.__name__)
    return applied


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def loads(value: str | None, default: Any = None) -> Any:
    return json.loads(value) if value else default


class Store:
    """Typed access to the database. Every public method takes the lock."""

    def __init__(self, db: sqlite_utils.Database, path: Path | None = None):
        self.db = db
        self.path = path
        self.lock = threading.RLock()
        with self.lock:
            migrate(db)

    # -- documents ---------------------------------------------------------------------
    def save_document(self, doc: Document) -> None:
        with self.lock, self.db.conn:
            if self.db["documents"].count_where("id = ?", [doc.id]):
                return
            self.db["documents"].insert({
                "id": doc.id, "title": doc.title, "source": doc.source, "author": doc.author,
                "words": doc.words, "paragraphs": len(doc.paragraphs), "meta": _dumps(doc.meta),
                "created_at": now(),
            })
            self.db["paragraphs"].insert_all(
                {"doc_id": doc.id, "idx": i, "text": p.text, "words": p.words, "heading": int(p.heading)}
                for i, p in enumerate(doc.paragraphs)
            )

    def get_document(self, doc_id: str) -> Document:
        with self.lock:
            rows = list(self.db["documents"].rows_where("id = ? or id like ?", [doc_id, f"{doc_id}%"], limit=2))
            if len(rows) != 1:
                hint = "it matches several documents; give more of it" if rows else "no such document"
                raise NotFound(f"Document {doc_id!r}: {hint}. List documents with `python -m core docs`.")
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
                "(select count(*) from memories m where m.doc_id = d.id and m.status = 'complete') as memories "
                "from documents d order by d.created_at desc"
            ))

    # -- gist memories -------------------------------------------------------------------
    def find_memory(self, doc_id: str, settings_key: str, statuses: Iterable[str] = ("complete",)) -> dict | None:
        statuses = list(statuses)
        with self.lock:
            rows = list(self.db["memories"].rows_where(
                f"doc_id = ? and settings_key = ? and status in ({','.join('?' * len(statuses))})",
                [doc_id, settings_key, *statuses], order_by="id desc", limit=1,
            ))
        return rows[0] if rows else None

    def memories_for(self, doc_id: str, status: str | None = "complete") -> list[dict]:
        with self.lock:
            where, args = ("doc_id = ?", [doc_id]) if status is None else ("doc_id = ? and status = ?", [doc_id, status])
            return list(self.db["memories"].rows_where(where, args, order_by="id desc"))

    def get_memory_row(self, memory_id: int) -> dict:
        with self.lock:
            try:
                return self.db["memories"].get(memory_id)
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No gist memory {memory_id}. List them with `python -m core docs`.") from None

    def create_memory(self, **fields) -> int:
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
            rows = list(self.db["trees"].rows_where("doc_id = ? and settings_key = ? and status = 'complete'",
                                                    [doc_id, settings_key], order_by="id desc", limit=1))
        return rows[0] if rows else None

    def trees_for(self, doc_id: str) -> list[dict]:
        with self.lock:
            return list(self.db["trees"].rows_where("doc_id = ? and status = 'complete'", [doc_id],
                                                    order_by="id desc"))

    def get_tree_row(self, tree_id: int) -> dict:
        with self.lock:
            try:
                return self.db["trees"].get(tree_id)
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No memory tree {tree_id}. Build one with `python -m core tree DOC_ID`.") from None

    def create_tree(self, **fields) -> int:
        with self.lock, self.db.conn:
            return self.db["trees"].insert({**fields, "created_at": now()}).last_pk

    def finish_tree(self, tree_id: int, node_rows: Iterable[dict], **fields) -> None:
        """Store every node and mark the tree complete, in one transaction."""
        with self.lock, self.db.conn:
            self.db["tree_nodes"].delete_where("tree_id = ?", [tree_id])
            self.db["tree_nodes"].insert_all(
                {**n, "tree_id": tree_id, "children": _dumps(list(n["children"]))} for n in node_rows)
            self.db["trees"].update(tree_id, {**fields, "status": "complete", "finished_at": now()})

    def update_tree(self, tree_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["trees"].update(tree_id, fields)

    def tree_node_rows(self, tree_id: int) -> list[dict]:
        with self.lock:
            rows = list(self.db["tree_nodes"].rows_where("tree_id = ?", [tree_id], order_by="node"))
        return [{**r, "children": loads(r["children"], [])} for r in rows]

    # -- runs and steps -----------------------------------------------------------------------
    def create_run(self, kind: str, **fields) -> int:
        for key in ("options", "params"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = _dumps(fields[key])
        with self.lock, self.db.conn:
            return self.db["runs"].insert({"kind": kind, "status": "running", "started_at": now(), **fields}).last_pk

    def finish_run(self, run_id: int, *, status: str, result: Any = None, error: str = "",
                   seconds: float | None = None, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["runs"].update(run_id, {
                "status": status, "result": _dumps(result) if result is not None else None,
                "error": error or None, "finished_at": now(), "seconds": seconds, **fields,
            })

    def add_step(self, run_id: int, seq: int, step: str, outcome: str, data: dict,
                 seconds: float = 0.0, page: int | None = None) -> None:
        with self.lock, self.db.conn:
            self.db["steps"].insert({
                "run_id": run_id, "seq": seq, "step": step, "outcome": outcome, "page": page,
                "data": _dumps(data), "seconds": seconds, "created_at": now(),
            })

    def get_run(self, run_id: int) -> dict:
        with self.lock:
            try:
                row = self.db["runs"].get(run_id)
            except sqlite_utils.db.NotFoundError:
                raise NotFound(f"No run {run_id}. List runs with `python -m core runs`.") from None
        return {**row, "options": loads(row["options"], []), "params": loads(row["params"], {}),
                "result": loads(row["result"])}

    def list_runs(self, kind: str | None = None, doc_id: str | None = None, limit: int = 200) -> list[dict]:
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
        with self.lock:
            rows = list(self.db["llm_calls"].rows_where(
                "cache_key = ? and cached = 0 and error is null", [cache_key], order_by="id", limit=1,
            ))
        return rows[0] if rows else None

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

    def close(self) -> None:
        with self.lock:
            self.db.conn.close()


def open_db(path: str | Path | None = None) -> Store:
    """Open (creating and migrating if needed) the database at ``path``,
    ``$GIST_MEMORY_DB``, or the default location. ``":memory:"`` for a throwaway one."""
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        return Store(sqlite_utils.Database(conn))
    path = Path(path).expanduser() if path else default_db_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        conn.execute("pragma journal_mode=wal")
        conn.execute("pragma busy_timeout=30000")
        conn.execute("pragma synchronous=normal")  # WAL stays consistent; commits need no fsync each
    except (OSError, sqlite3.Error) as exc:
        raise GistError(
            f"Cannot open the database at {path} ({exc}). Choose another location with --db "
            "or the GIST_MEMORY_DB environment variable."
        ) from None
    return Store(sqlite_utils.Database(conn), path)


def _eval_row(row: dict) -> dict:
    return {**row, "options": loads(row["options"], []), "references": loads(row.pop("references_"), []),
            "pages_looked_up": loads(row["pages_looked_up"], []), "meta": loads(row["meta"], {})}
