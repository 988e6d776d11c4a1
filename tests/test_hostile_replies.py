"""Replies that are validated before they count, end to end: builds and questions against
servers that refuse, echo the prompt, answer another step's question, or always say the same
thing. No such reply is stored as the model's, and none is replayed by a later run."""
import json

import pytest

from core import prompts
from core.engine import make_engine, model_engine
from core.llm.seam import LLM
from core.llm.simulator import MODEL, SimulatedLLM
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.memory import load_memory
from core.methods.readagent.presets import PRESETS
from core.parsing import other_answer, refusal
from core.text.documents import load_path, parse_text
from core.trace import FALLBACK, MODEL as BY_MODEL, REASKED, RULE
from tests.conftest import CORE_DATA, book
from tests.fakes import ScriptedBackend
from tests.test_llm import BodyServer, chat

OFF_COURSE = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())
QUALITY = BuildSettings(PRESETS["quality"])
QUESTION = next(q for q in OFF_COURSE["questions"] if q["question_unique_id"] == "30035_SLGX7NNR_3")
CHOICE = Question(QUESTION["question"], tuple(QUESTION["options"]))
GIST_OPENING = prompts.GIST.text.split("{")[0].strip()[:30]


def off_course():
    return parse_text(OFF_COURSE["article"], title="Off Course")


def server_engine(store, base_url, model="m"):
    return make_engine("openai", store, model=model, base_url=base_url, backoff=0.001, timeout=5.0)


def rejected_replies(store) -> set[str]:
    return {r["reply"] for r in store.db["llm_calls"].rows_where("rejected = 1")}


def test_a_server_always_answering_break_point_999_gets_no_gist_stored(store):
    """From a server that always answers "Break point: <999>", 56 of 57 gists were that string."""
    with BodyServer([chat("Break point: <999>")]) as server:
        engine = server_engine(store, server.base_url)
        document = off_course()
        result = build_memory(store, document, engine, QUALITY)
        memory = load_memory(store, result.memory_id)
        assert memory.pages and all(p.gist_by == FALLBACK for p in memory.pages)
        assert not any(p.gist == "Break point: <999>" or "999" in p.gist for p in memory.pages)
        assert all(p.break_by in (FALLBACK, RULE) for p in memory.pages)  # <999> is never one of the labels
        gist_steps = [s for s in store.steps(result.run_id) if s.step == "gist"]
        assert all(s.outcome == FALLBACK and len(s.trace.attempts) == 2 for s in gist_steps)
        assert all("pause-point label" in a.problem for s in gist_steps for a in s.trace.attempts)

        # every one of those replies is rejected: a rebuild asks the server again and replays none
        asked = server.requests
        rebuilt = build_memory(store, document, engine, QUALITY, rebuild=True)
        assert rebuilt.cached_calls == 0 and rebuilt.llm_calls == server.requests - asked == result.llm_calls
        assert all(p.gist_by == FALLBACK for p in load_memory(store, rebuilt.memory_id).pages)

        # and a question gets no decision from it either
        store.save_document(document)
        answer = ask(store, engine, document.id, CHOICE, method="readagent-p")
        assert answer.answer.choice is None and all(s.outcome == FALLBACK for s in answer.steps)


def _is_hostile(gist: str) -> bool:
    return (not gist.strip() or refusal(gist) or bool(other_answer(gist)) or gist.startswith(GIST_OPENING)
            or gist.lower().startswith(("hmm", "you are given", "please shorten the following passage")))


def test_a_fifty_percent_malformed_build_stores_no_hostile_gist_and_a_rebuild_brings_none_back(store):
    """At a 50% fault rate, 12 of 145 gists of a book were refusals, labels or "Hmm, let me think"."""
    document = load_path(book("alice"))
    with SimulatedLLM(fault_rate=0.5, faults=("malformed",), seed=11) as sim:
        engine = server_engine(store, sim.base_url, MODEL)
        first = build_memory(store, document, engine, QUALITY, concurrency=8)
        assert sim.stats.faults["malformed"] >= 40
        pages = load_memory(store, first.memory_id).pages
        by_model = [p for p in pages if p.gist_by in (BY_MODEL, REASKED)]
        assert by_model and not [p.gist for p in by_model if _is_hostile(p.gist)]
        outcomes = {s.outcome for s in store.steps(first.run_id)}
        assert REASKED in outcomes  # malformed replies were re-asked ...
        problems = [a for s in store.steps(first.run_id) for a in s.trace.attempts if a.problem]
        assert problems and all(store.calls(ids=[a.call_id])[0].rejected for a in problems)
        rejected = rejected_replies(store)
        assert rejected

        # Rebuilt with a healthy server: accepted replies replay, rejected ones are asked again.
        sim.fault_rate = 0.0
        rebuilt = build_memory(store, document, engine, QUALITY, rebuild=True, concurrency=8)
        steps = store.steps(rebuilt.run_id)
        replayed = [a for s in steps for a in s.trace.attempts if a.cached]
        assert replayed and all(not a.problem and a.reply not in rejected for a in replayed)
        assert all(s.outcome in (BY_MODEL, RULE) for s in steps)
        assert not {p.gist for p in load_memory(store, rebuilt.memory_id).pages} & rejected
        assert rebuilt.llm_calls > 0  # the rejected prompts went to the model again

        # ... and once everything was accepted, replay is exact: no model call at all.
        again = build_memory(store, document, engine, QUALITY, rebuild=True, concurrency=8)
        assert again.llm_calls == 0 and again.pages == rebuilt.pages
        assert [p.gist for p in load_memory(store, again.memory_id).pages] == \
               [p.gist for p in load_memory(store, rebuilt.memory_id).pages]


def test_an_echoed_example_is_not_a_decision(store):
    """A look-up of Page [8] and an answer of (C), both the prompt's own examples, were
    accepted with outcome "model"; now they are re-asked and then fall back."""
    document = off_course()
    store.save_document(document)
    build_memory(store, document, make_engine("offline", store), QUALITY)  # gists to look up in

    def handler(prompt: str) -> str:
        if prompt.startswith("The following text is what you remember"):
            return "I want to look up Page [8] to ..."
        return 'For example, if (C) is correct, answer with "Answer: (C) ..."'

    backend = ScriptedBackend(handler=handler)
    engine = model_engine(LLM(backend, store))
    offline_memory = store.find_memory(document.id, QUALITY.key("offline")).id
    answer = ask(store, engine, document.id, CHOICE, method="readagent-p", memory_id=offline_memory)
    assert answer.answer.choice is None
    lookup, response = answer.steps[0], answer.steps[-1]
    assert lookup.outcome == FALLBACK and all("example" in a.problem for a in lookup.attempts)
    assert response.outcome == FALLBACK and all("repeats" in a.problem for a in response.attempts)


@pytest.mark.parametrize("reply", ["", "I'm sorry, but I can't help with that request.",
                                   "Break point: <99999>\nBecause it is late.",
                                   "Hmm, let me think about this carefully before I decide."])
def test_each_malformed_reply_of_the_simulator_is_re_asked(store, reply):
    """The simulator's malformed replies, one at a time, to a gist: re-asked, then the model's gist."""
    document = off_course()
    with SimulatedLLM() as sim:
        engine = server_engine(store, sim.base_url, MODEL)
        calls = []
        original = engine.llm.backend.complete

        def first_hostile(prompt, **kw):  # the first gist reply is the hostile one
            result = original(prompt, **kw)
            if prompt.startswith(GIST_OPENING) and not calls:
                calls.append(prompt)
                return type(result)(reply, result.attempts, result.errors)
            return result

        engine.llm.backend.complete = first_hostile
        result = build_memory(store, document, engine, QUALITY)
    gists = [s for s in store.steps(result.run_id) if s.step == "gist"]
    hostile = [s for s in gists if s.trace.attempts[0].reply == reply]
    assert len(hostile) == 1 and hostile[0].outcome == REASKED
    assert all(p.gist != reply for p in load_memory(store, result.memory_id).pages)
