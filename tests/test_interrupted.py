"""A run whose process dies (kill -9) is shown as interrupted and resumes without repeating a call."""
import json
import os
import signal
import subprocess
import sys
import time

from core.engine import make_engine
from core.llm.simulator import MODEL, SimulatedLLM
from core.resume import resume_run
from core.status import INTERRUPTED
from core.store import open_db
from core.methods.readagent.memory import load_memory
from core.store.owners import current_owner, is_gone
from tests.conftest import ROOT, book


def test_an_owner_is_gone_only_when_its_process_is():
    assert not is_gone(current_owner()) and not is_gone(None) and not is_gone("elsewhere:1:1")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    host = current_owner().rsplit(":", 2)[0]
    stat = open(f"/proc/{child.pid}/stat").read()
    owner = f"{host}:{child.pid}:{stat[stat.rindex(')') + 2:].split()[19]}"
    assert not is_gone(owner)
    child.kill()
    child.wait()
    assert is_gone(owner)


def test_a_killed_build_shows_as_interrupted_and_resumes_without_repeating_a_call(tmp_path):
    db = tmp_path / "killed.db"
    with SimulatedLLM(latency_ms=40) as sim:
        opts = ["--engine", "openai", "--model", MODEL, "--base-url", sim.base_url, "--concurrency", "2"]
        proc = subprocess.Popen([sys.executable, "-m", "core", "build", str(book("alice")), "--preset", "quality",
                                 "--db", str(db), *opts], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sim.stats.completed < 12:  # some pages paginated and gisted
            assert proc.poll() is None and time.monotonic() < deadline, "the build ended before it was killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

        store = open_db(db)
        [run] = store.list_runs(kind="build")
        assert run.status == INTERRUPTED
        assert "stopped (killed, crashed or restarted)" in store.get_run(run.id).error
        [memory] = store.memories_for(run.doc_id, status=None)
        assert memory.status == INTERRUPTED and store.page_count(memory.id)  # what was made is kept
        logged = {c.prompt for c in store.calls(run_id=run.id) if c.reply is not None}

        before = sim.stats.completed
        engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01)
        result = resume_run(store, run.id, engine)
        asked_again = sim.prompts[before:]
        assert not logged & set(asked_again), "a logged reply was asked for again"
        assert result.memory_id == memory.id and result.cached_calls >= len(logged)
        doc = store.get_document(run.doc_id)
        pages = load_memory(store, result.memory_id, doc).pages
        assert [p.start for p in pages][0] == 0 and pages[-1].end == len(doc.paragraphs)
        assert all(a.end == b.start for a, b in zip(pages, pages[1:]))  # every paragraph in one page
        assert json.dumps(store.get_run(result.run_id).status) == '"done"'
