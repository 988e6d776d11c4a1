"""The database: open with a path, migrate (``migrations.py``), work through sqlite-utils.

``Store`` is the one entry point (``open_db``): one connection shared by the threads of a
process behind one lock, with its methods in parts by topic (documents, memories and their
pages, trees, runs and their steps, model calls, evaluations), each handing out records
(``records.py``). WAL mode and a busy timeout let the CLI and app sessions use the same file.

API keys are never written here: the LLM seam stores the model and base URL only.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import sqlite_utils

from core.config import default_db_path
from core.errors import DatabaseError
from core.store.calls import Calls
from core.store.documents import Documents
from core.store.evaluations import Evaluations
from core.store.memories import Memories
from core.store.migrations import migrate, pending
from core.store.runs import Runs
from core.store.trees import Trees


class Store(Documents, Memories, Trees, Runs, Calls, Evaluations):
    """Typed access to the database. Every public method takes the lock."""

    def __init__(self, db: sqlite_utils.Database, path: Path | None = None, *, read_only: bool = False):
        self.db = db
        self.path = path
        self.read_only = read_only
        self.lock = threading.RLock()
        with self.lock:
            if not read_only:
                migrate(db)

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
