"""What every part of the store shares: the one connection and its lock, refusing writes to a
read-only database, and reading one row by its key or saying it is not there."""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import sqlite_utils

from core.errors import DatabaseError, NotFound


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class Tables:
    """The database's connection (``db``), shared by the threads of a process behind ``lock``.
    Every public method of a part of the store takes the lock."""
    db: sqlite_utils.Database
    path: Path | None
    read_only: bool
    lock: threading.RLock

    def require_writable(self) -> None:
        """Refuse work that would write, in one sentence, when the database is read-only."""
        if self.read_only:
            raise DatabaseError(f"The database at {self.path} is read-only, so nothing can be built or asked "
                                "(what it holds can still be read).",
                                cli="Make the file writable, or choose another with --db.",
                                app="Make the file writable, or set GIST_MEMORY_DB to another location and "
                                    "restart the app.")

    def row(self, table: str, key: Any, missing: NotFound) -> dict:
        """The row of ``table`` whose primary key is ``key``; ``missing`` is raised when there is none."""
        with self.lock:
            try:
                return self.db[table].get(key)
            except sqlite_utils.db.NotFoundError:
                raise missing from None
