"""Chaos: a build against a server that rate-limits, errs, hangs past the client's timeout and
answers with bodies that are not JSON, killed mid-way and resumed, ends with the memory an
undisturbed build makes, every retry traced, and no answered call asked again."""
import os
import signal
import subprocess
import sys
import time
from collections import Counter

from core.engine import make_engine
from core.llm.simulator import MODEL, SimulatedLLM
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.presets import PRESETS
from core.methods.readagent.memory import load_memory
from core.resume import resume_run
from core.store import open_db
from core.text.documents import load_path
from tests.conftest import ROOT, book

FAULTS = ("429", "500", "timeout", "badbody")


def pages_of(store, memory_id):
    return [(p.start, p.end, p.break_by, p.gist, p.gist_by) for p in load_memory(store, memory_id).pages]


def test_a_faulty_server_and_a_kill_leave_the_memory_an_undisturbed_build_makes(tmp_path):
    document = load_path(book("off_course"))
    settings = BuildSettings(PRESETS["quality"])
    with SimulatedLLM() as calm:
        store = open_db(tmp_path / "calm.db")
        calm_engine = make_engine("openai", store, model=MODEL, base_url=calm.base_url)
        undisturbed = pages_of(store, build_memory(store, document, calm_engine, settings).memory_id)

    db = tmp_path / "chaos.db"
    with SimulatedLLM(fault_rate=0.3, faults=FAULTS, seed=5, hang_s=3.0, latency_ms=30) as sim:
        sim.script = ["ok", "timeout", "ok", "badbody", "429", "ok", "500"]  # every kind at least once, early
        opts = ["--engine", "openai", "--model", MODEL, "--base-url", sim.base_url, "--timeout", "0.5",
                "--retries", "10", "--concurrency", "2"]
        proc = subprocess.Popen([sys.executable, "-m", "core", "build", str(book("off_course")), "--preset",
                                 "quality", "--db", str(db), *opts], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while sim.stats.completed < 8:
            assert proc.poll() is None and time.monotonic() < deadline, "the build ended before it was killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

        store = open_db(db)
        [killed] = store.list_runs(kind="build")
        assert killed.status == "interrupted"
        engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, timeout=0.5, max_retries=10,
                             backoff=0.01)
        result = resume_run(store, killed.id, engine)
        faults = dict(sim.stats.faults)

    assert pages_of(store, result.memory_id) == undisturbed  # as if nothing had happened
    calls = [c for run in (killed.id, result.run_id) for c in store.calls(run_id=run)
             if c.reply is not None and not c.cached]
    answered = Counter(c.prompt for c in calls)
    assert max(answered.values()) == 1, "a call answered before the kill was asked again"
    retried = [c for c in calls if c.retry_errors]
    kinds = Counter(e.split(":")[0] for c in retried for e in c.retry_errors)
    assert set(faults) >= {"429", "500", "timeout", "badbody"}
    assert retried and sum(kinds.values()) >= sum(faults.values()) // 2  # retries are in the call log
    assert result.fallback_breaks == result.fallback_gists == 0
    print(f"chaos: {len(calls)} model calls answered, {sum(kinds.values())} retries logged ({dict(kinds)}), "
          f"faults injected {faults}, {result.cached_calls} replayed after the kill, 0 asked again")
