"""Background work: one job type for builds and evaluations, watched while it runs, stopped,
resumed, and finished."""
import threading

from core.engine import OFFLINE, make_engine
from core.errors import Cancelled, GistError
from core.jobs import get_job, start_job
from core.llm.simulator import SimulatedLLM
from core.methods.readagent.build import BuildSettings, start_build
from core.methods.readagent.memory import load_memory
from core.methods.readagent.presets import PRESETS
from core.status import DONE, FAILED, STOPPED
from core.text.documents import load_path
from tests.conftest import book


def test_a_background_build_reports_pages_then_its_result(store):
    doc = load_path(book("alice"))
    job = start_build(store, doc, OFFLINE, BuildSettings(PRESETS["quality"]))
    assert get_job(job.id) is job
    assert job.wait(60)
    assert job.status == DONE and job.finished
    progress = job.progress
    memory = load_memory(store, job.result.memory_id)
    assert [(p.start, p.end, p.gist) for p in progress.pages()] == \
        [(p.start, p.end, p.gist) for p in memory.pages]
    assert progress.words_done == doc.words
    assert progress.first_page_s is not None and progress.first_page_s <= job.seconds


def test_stopping_keeps_what_was_built_and_resuming_repeats_no_call(store):
    doc = load_path(book("alice"))
    settings = BuildSettings(PRESETS["quality"])
    with SimulatedLLM(latency_ms=30) as sim:
        def engine():
            return make_engine("openai", store, model="gme-simulator", base_url=sim.base_url, backoff=0.01)

        job = start_build(store, doc, engine(), settings, concurrency=2)
        while job.progress.pages_gisted < 3:
            assert not job.wait(0.05) or job.status != DONE, "finished before it could be stopped"
        job.stop()
        assert job.wait(30)
        assert job.status == STOPPED and "stopped" in job.error and "Resume build" in job.exception.for_app()
        made = sim.stats.completed
        pages_then = len(job.progress.pages())
        resumed = start_build(store, doc, engine(), settings, concurrency=2)
        assert resumed.wait(60)
        result = resumed.result
        assert result.cached_calls == made
        assert result.llm_calls == sim.stats.completed - made
        assert result.pages >= pages_then


def test_a_job_says_how_it_ended():
    release = threading.Event()

    def bug(job):
        raise ZeroDivisionError("division by zero")

    def user_error(job):
        raise GistError("The file is empty.")

    def stoppable(job):
        release.wait(5)
        if job.cancel.is_set():
            raise Cancelled("Stopped; what was made is kept.")
        return "never"

    failed, refused = start_job("build", "bug", bug), start_job("build", "empty", user_error)
    stopped = start_job("eval", "long", stoppable)
    stopped.stop()
    release.set()
    for job in (failed, refused, stopped):
        assert job.wait(5)
    assert failed.status == FAILED and isinstance(failed.exception, ZeroDivisionError)
    assert refused.status == FAILED and refused.error == "The file is empty."
    assert stopped.status == STOPPED and stopped.result is None
