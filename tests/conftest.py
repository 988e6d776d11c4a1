from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data"
CORE_DATA = ROOT / "core" / "data"
BOOK_DIRS = (DATA / "books", CORE_DATA)  # the books the tests read, shipped in the repo

from core.engine import model_engine  # noqa: E402
from core.llm.seam import LLM  # noqa: E402
from core.store import open_db  # noqa: E402
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
        return model_engine(LLM(backend, store, use_cache=use_cache, **llm_kw)), backend
    return make


@pytest.fixture
def app(tmp_path, monkeypatch):
    """The app (``streamlit.testing`` AppTest, first run done) on a database of its own."""
    from streamlit.testing.v1 import AppTest

    from components.state import get_store

    monkeypatch.setenv("GIST_MEMORY_DB", str(tmp_path / "app.db"))
    get_store.clear()  # each test gets the database of its own environment
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    yield at.run()
    get_store.clear()


def cli(capsys, *args, db):
    """``python -m core ARGS --db DB``, run in-process: its exit status and what it printed."""
    from types import SimpleNamespace

    from core.cli.main import main

    code = main([*args, "--db", str(db)])
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def cli_json(capsys, *args, db):
    """``cli`` with ``--json``: the JSON it printed (the command must succeed)."""
    import json

    proc = cli(capsys, *args, "--json", db=db)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def sim():
    from core.llm.simulator import SimulatedLLM

    with SimulatedLLM(hang_s=2.0) as server:
        yield server


def book(name: str) -> Path:
    """A Project Gutenberg book shipped with the repo (``alice``, ``off_course``, ``frankenstein``,
    ``pride_and_prejudice``)."""
    matches = sorted(m for d in BOOK_DIRS for m in d.glob(f"*{name}*.txt"))
    assert matches, f"no book matching {name!r} in {', '.join(map(str, BOOK_DIRS))}"
    return matches[0]
