"""Background builds: watched while they run, stopped, resumed, and finished."""
from core.build import BuildSettings
from core.documents import load_path
from core.engines import make_engine
from core.jobs import DONE, STOPPED, get_job, start_build
from core.memory import load_memory
from core.offline import OfflineEngine
from core.presets import PRESETS
from core.simulator import SimulatedLLM
from tests.conftest import book


def test_a_background_build_reports_pages_then_its_result(store):
    doc = load_path(book("alice"))
    job = start_build(store, doc, OfflineEngine(), BuildSettings(PRESETS["quality"]))
    assert get_job(job.id) is job
    assert job.wait(60)
    snap = job.snapshot()
    assert snap.status == DONE and snap.finished
    memory = load_memory(store, snap.result.memory_id)
    assert [(p["start"], p["end"], p["gist"]) for p in snap.pages] == [(p.start, p.end, p.gist) for p in memory.pages]
    assert snap.words_done == doc.words == snap.total_words
    assert snap.first_page_s is not None and snap.first_page_s <= snap.seconds


def test_stopping_keeps_what_was_built_and_resuming_repeats_no_call(store):
    doc = load_path(book("alice"))
    settings = BuildSettings(PRESETS["quality"])
    with SimulatedLLM(latency_ms=30) as sim:
        def engine():
            return make_engine("openai", store, model="gme-simulator", base_url=sim.base_url, backoff=0.01)

        job = start_build(store, doc, engine(), settings, concurrency=2)
        while job.snapshot().pages_gisted < 3:
            assert not job.wait(0.05) or job.status != DONE, "finished before it could be stopped"
        job.stop()
        assert job.wait(30)
        stopped = job.snapshot()
        assert stopped.status == STOPPED and "resume" in stopped.error
        made = sim.stats.completed
        resumed = start_build(store, doc, engine(), settings, concurrency=2)
        assert resumed.wait(60)
        result = resumed.snapshot().result
        assert result.cached_calls == made
        assert result.llm_calls == sim.stats.completed - made
        assert result.pages >= len(stopped.pages)
