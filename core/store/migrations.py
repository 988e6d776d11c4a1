"""Schema changes: append-only migration functions recorded in ``_migrations``.

A migration that has shipped is history: it is never edited, renamed or renumbered;
a change is a new migration at the end. One migration did ship under two names
(the evaluation tables were ``m003_evaluation`` for one commit before becoming
``m004_evaluation``): ``also_recorded_as`` lets a database made then open today.
``tests/test_store.py`` opens a database made by every shipped schema and migrates it.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable

import sqlite_utils


@dataclass(frozen=True)
class Migration:
    fn: Callable[[sqlite_utils.Database], None]
    also_recorded_as: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.fn.__name__


MIGRATIONS: list[Migration] = []


def migration(*also_recorded_as: str):
    def register(fn):
        MIGRATIONS.append(Migration(fn, also_recorded_as))
        return fn
    return register


@migration()
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


@migration()
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


@migration()
def m003_embeddings(db: sqlite_utils.Database) -> None:
    """Embedding vectors by (server, embedding model, text), so a document's pages are embedded
    once and every later question only embeds itself. Vectors are float32, little-endian."""
    db["embeddings"].create(
        {"key": str, "model": str, "backend": str, "dims": int, "vector": bytes, "created_at": str},
        pk="key",
    )


@migration("m003_evaluation")  # its name in commit 2c80d28
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


@migration()
def m005_run_tracebacks(db: sqlite_utils.Database) -> None:
    """The traceback of a run that failed unexpectedly (a bug, not a user error), for whoever debugs it."""
    db["runs"].add_column("traceback", str)


@migration()
def m006_run_owner(db: sqlite_utils.Database) -> None:
    """Which process runs a run (``host:pid:start``), so a run whose process died shows as interrupted."""
    db["runs"].add_column("owner", str)
    db["runs"].create_index(["status"])


@migration()
def m007_rejected_replies(db: sqlite_utils.Database) -> None:
    """A logged reply the step could not use (a refusal, an echo, a wrong format) is marked
    rejected, so the replay cache never serves it again as if it were fine."""
    db["llm_calls"].add_column("rejected", int)


@migration()
def m008_memory_owner(db: sqlite_utils.Database) -> None:
    """Which build holds a memory while it is built, so two builds never write the same memory."""
    db["memories"].add_column("owner", str)


@migration()
def m009_runs_and_results_at_scale(db: sqlite_utils.Database) -> None:
    """Runs lists evaluations' question runs under their evaluation (a run is one if ``ask_run_id``
    names it), pages through an evaluation's question runs, and lists runs of one kind, newest
    first, without reading every row."""
    db["eval_results"].create_index(["ask_run_id"])
    db["eval_results"].create_index(["eval_id", "ask_run_id"])
    db["runs"].create_index(["kind", "id"])


@migration()
def m010_page_history(db: sqlite_utils.Database) -> None:
    """Page merging (ReadAgent App. I) and iterative gisting (App. G.3) make a memory from another:
    a memory says which one it was made from (``parent_id``) and the window it was fitted to; each
    page says which of the parent's pages it holds (``sources``, a JSON list of page indexes) and
    how many times its gist was gisted again (``gist_rounds``)."""
    db["memories"].add_column("parent_id", int)
    db["memories"].add_column("fit_tokens", int)
    db["pages"].add_column("sources", str)
    db["pages"].add_column("gist_rounds", int)


@migration()
def m011_call_start_times(db: sqlite_utils.Database) -> None:
    """A build's timeline draws each model call from its start to its end: a call records when it
    was sent (``started_at``, UTC ISO, milliseconds); ``created_at`` stays the time it was logged.
    Older rows have no start; readers take ``created_at`` less ``duration_ms``."""
    db["llm_calls"].add_column("started_at", str)


@migration()
def m012_ask_groups(db: sqlite_utils.Database) -> None:
    """A question asked with several methods at once (one Ask click) is one comparison: its
    question runs share an ``ask_group`` (a random token), so Runs lists and reopens them together."""
    db["runs"].add_column("ask_group", str)
    db["runs"].create_index(["ask_group"])


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def pending(db: sqlite_utils.Database) -> list[Migration]:
    """The migrations a database has not had yet."""
    done = {row["name"] for row in db["_migrations"].rows} if "_migrations" in db.table_names() else set()
    return [m for m in MIGRATIONS if m.name not in done and not done & set(m.also_recorded_as)]


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply the migrations not yet recorded, all in one write transaction (two processes opening
    a new database at once: the second waits, then finds nothing left to do); return the names applied."""
    if "_migrations" in db.table_names() and not pending(db):
        return []
    conn = db.conn
    conn.execute("begin immediate")
    try:
        if "_migrations" not in db.table_names():
            db.execute("create table _migrations (name text primary key, applied_at text)")
        applied = []
        for m in pending(db):
            m.fn(db)
            db.execute("insert into _migrations (name, applied_at) values (?, ?)", [m.name, now()])
            applied.append(m.name)
        conn.execute("commit")
    except BaseException:
        conn.execute("rollback")
        raise
    return applied
