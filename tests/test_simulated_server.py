"""Full builds and questions through the real ``openai`` client against the simulated server."""
import json
import threading

import pytest

from core.methods.readagent.build import BuildSettings, build_memory
from core.text.documents import load_path, parse_text
from core.engine import make_engine
from core.errors import Cancelled
from core.methods.readagent.memory import load_memory
from core.methods.ask import ask
from core.methods.readagent.presets import PRESETS
from core.methods.base import Question
from core import prompts
from core.llm.simulator import RESPONDERS, MODEL, SimulatedLLM, respond, step_of, template_of, window_from_prompt
from tests.conftest import CORE_DATA, book

OFF_COURSE = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())
QUESTION = next(q for q in OFF_COURSE["questions"] if q["question_unique_id"] == "30035_SLGX7NNR_3")


def engine(store, sim, **kw):
    return make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01, timeout=1.0, **kw)


def test_simulated_replies_follow_each_prompts_format(store, sim):
    doc = parse_text(OFF_COURSE["article"], title="Off Course")
    result = build_memory(store, doc, engine(store, sim), BuildSettings(PRESETS["quality"]), concurrency=4)
    memory = load_memory(store, result.memory_id)
    assert result.llm_calls > 0 and result.fallback_breaks == 0
    assert all(p.break_by in ("model", "rule") and p.gist_by == "model" for p in memory.pages)
    q = Question(QUESTION["question"], tuple(QUESTION["options"]))
    for method in ("readagent-p", "readagent-s", "gistmem", "full"):
        answer = ask(store, engine(store, sim), doc.id, q, method=method)
        assert answer.answer.choice in "ABCD" and all(s.outcome == "model" for s in answer.steps)
    free = ask(store, engine(store, sim), doc.id, Question("Who met the alien first?"), method="readagent-p")
    assert free.answer.text and free.answer.choice is None


def test_pagination_prompt_round_trips_through_the_simulator():
    from core.text.documents import Paragraph
    from core.methods.readagent.pagination import make_window
    from core import prompts

    paragraphs = [Paragraph(" ".join([f"w{i}"] * 100), 100) for i in range(12)]
    window = make_window(paragraphs, 6, 12, PRESETS["quality"], tuple(p.text for p in paragraphs[:6]))
    prompt = prompts.PAGINATION.format(preceding=window.preceding, passage=window.passage(),
                                       following=window.following)
    rebuilt = window_from_prompt(prompt)
    assert rebuilt.labels == window.labels and rebuilt.end == window.end
    assert rebuilt.paragraphs[-(window.end - window.labels[0]):] == window.paragraphs[-(window.end - window.labels[0]):]
    assert respond(prompt).startswith("Break point: <")


def test_build_survives_injected_faults(store):
    with SimulatedLLM(fault_rate=0.3, seed=7, hang_s=1.5) as sim:
        doc = parse_text(OFF_COURSE["article"], title="Off Course")
        result = build_memory(store, doc, engine(store, sim, max_retries=6), BuildSettings(PRESETS["quality"]),
                              concurrency=4)
        assert set(sim.stats.faults) >= {"429", "500"} and sum(sim.stats.faults.values()) >= 4
    memory = load_memory(store, result.memory_id)
    assert result.pages == len(memory.pages) >= 4
    # malformed replies were re-asked or fell back, and the trace says which
    outcomes = {s.outcome for s in store.steps(result.run_id)}
    assert outcomes <= {"model", "re-asked", "fallback", "rule"}
    retried = [c for c in store.calls(run_id=result.run_id) if c.retry_errors]
    assert retried, "retries are visible in the call log"


def test_concurrency_is_respected_and_used(store):
    with SimulatedLLM(latency_ms=30) as sim:
        doc = load_path(book("alice"))
        build_memory(store, doc, engine(store, sim), BuildSettings(PRESETS["quality"]), concurrency=6)
        assert sim.stats.max_in_flight == 6


def test_an_interrupted_build_resumes_without_repeating_calls(store, sim):
    doc = load_path(book("alice"))
    cancel = threading.Event()

    def stop_midway(event):
        if event.pages_gisted >= 10:
            cancel.set()

    with pytest.raises(Cancelled):
        build_memory(store, doc, engine(store, sim), BuildSettings(PRESETS["quality"]), concurrency=4,
                     progress=stop_midway, cancel=cancel)
    made = sim.stats.completed
    resumed = build_memory(store, doc, engine(store, sim), BuildSettings(PRESETS["quality"]), concurrency=4)
    assert resumed.cached_calls == made
    assert resumed.llm_calls == sim.stats.completed - made > 0
    again = build_memory(store, doc, engine(store, sim), BuildSettings(PRESETS["quality"]), rebuild=True)
    assert again.llm_calls == 0 and again.pages == resumed.pages


@pytest.mark.parametrize("template", prompts.ALL, ids=lambda t: t.name)
def test_the_simulator_routes_every_prompt_template_to_its_responder(template):
    """Rewording a prompt can never misroute it silently: every template, formatted, reaches the
    responder registered for it, even when the text in it quotes every other prompt."""
    quoted = "\n".join(["A document that quotes prompts:", *(other.text for other in prompts.ALL), "The end."])
    for filler in ("some text", quoted):
        prompt = template.format(**{key: filler for key in template.keys})
        assert template_of(prompt).text == template.text  # (the movie gist differs only in its token cap)
        name, _ = step_of(prompt)
        assert RESPONDERS[template.name].__name__.strip("_") == name
