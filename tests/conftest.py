from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
BOOKS = SHARED / "books"

from core.db import open_db  # noqa: E402
from core.llm import LLM  # noqa: E402
from core.llm_engine import LLMEngine  # noqa: E402
from tests.fakes import ScriptedBackend  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path, monkeypatch):
    """Tests never touch the user's database or keys."""
    monkeypatch.setenv("GIST_MEMORY_DB", str(tmp_path / "default.db"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GIST_MEMORY_MODEL", "GIST_MEMORY_EMBEDDING_MODEL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def store():
    s = open_db(":memory:")
    yield s
    s.close()


@pytest.fixture
def scripted(store):
    """scripted(replies, handler=None) -> (engine, backend). The replay cache is off unless
    asked for (use_cache=True), so each test's queue is what the engine sees."""
    def make(replies=(), handler=None, use_cache=False, embedder=None, **llm_kw):
        backend = ScriptedBackend(replies, handler=handler, embedder=embedder)
        return LLMEngine(LLM(backend, store, use_cache=use_cache, **llm_kw)), backend
    return make


@pytest.fixture
def sim():
    from core.simulator import SimulatedLLM

    with SimulatedLLM(hang_s=2.0) as server:
        yield server


def book(name: str) -> Path:
    matches = sorted(BOOKS.glob(f"*{name}*.txt"))
    if not matches:
        pytest.skip(f"shared data not found: {name}")
    return matches[0]
