"""Settings that come from the environment.

The database location is the one setting every entry point shares: ``--db`` on
the command line, ``GIST_MEMORY_DB`` in the environment, else a file in the
user's data folder.
"""
from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "GIST_MEMORY_DB"
BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"
MODEL_ENV = "GIST_MEMORY_MODEL"
EMBEDDING_MODEL_ENV = "GIST_MEMORY_EMBEDDING_MODEL"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
CONTEXT_TOKENS_ENV = "GIST_MEMORY_CONTEXT_TOKENS"  # the model's context window, when the server cannot say
GGUF_ENV = "GIST_MEMORY_GGUF"  # the local engine's model file


def default_db_path() -> Path:
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data_home / "gist-memory-explorer" / "gist_memory.db"


def cache_dir() -> Path:
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "gist-memory-explorer"
