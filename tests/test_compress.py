"""Fitting a gist memory into a window: page merging (ReadAgent App. I), iterative gisting (G.3),
conditional gists (G.1), by a model (scripted, simulated server) and by the offline engine."""
import json

import pytest

from core import prompts
from core.engine import OFFLINE, make_engine
from core.llm.simulator import MODEL, SimulatedLLM, respond
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.compress import (NO, UNSURE, YES, MergeInput, memory_room, memory_tokens,
                                             merge_rule, parse_merge)
from core.methods.readagent.memory import latest_memory, load_memory
from core.methods.readagent.presets import choose_preset
from core.text.documents import load_path, parse_text

BOOK = "tests/data/books/pg1342_pride_and_prejudice.txt"


@pytest.mark.parametrize("reply, expected", [
    ("no", NO), ("No.", NO), ("NO, Page 2 continues the same scene.", NO), ("Yes", YES),
    ("Yes. Page 2 starts Chapter 5.", YES), ("**Yes**", YES), ("Not sure.", UNSURE), ("I am not sure", UNSURE),
    ("Unsure", UNSURE), ("<think>Page 2 could be new. Or no.</think>\nNo", NO), ("Answer: no", NO),
])
def test_merge_parser_reads_yes_no_or_not_sure(reply, expected):
    parsed = parse_merge(reply)
    assert parsed.ok and parsed.value == expected


@pytest.mark.parametrize("reply", [
    "", "   ", "Page 2", "Maybe.", "Yes or no?", "It does not start a new chapter",
    "<think>no</think>", "The answer is yes, no, or not sure.",
])
def test_merge_parser_refuses_malformed_replies(reply):
    assert not parse_merge(reply).ok


@pytest.mark.parametrize("page2, expected", [
    ("CHAPTER V.\n\nWithin a short walk of Longbourn lived a family", YES),
    ("Mr. Bennet was among the earliest of those who waited on Mr. Bingley.", NO),
])
def test_offline_merge_rule_keeps_chapters_apart(page2, expected):
    value, detail = merge_rule(MergeInput("the end of the page before", page2, (0, 1), ((0,), (1,))))
    assert value == expected and detail["reason"]


def test_the_merging_prompt_is_the_papers_word_for_word():
    text = prompts.PAGE_MERGE.format(previous_page="A", current_page="B")
    assert text.startswith("Given Page 1 and Page 2, please tell me whether Page 2 starts a new chapter/section/book "
                           "that is different from what\u2019s in Page 1. Please answer with yes, no, or not sure.")
    assert "Page 1:\nA\n\nPage 2:\nB" in text


def _chapters(n: int = 6, paragraphs: int = 8) -> str:
    out = []
    for c in range(1, n + 1):
        out.append(f"CHAPTER {c}.")
        for p in range(paragraphs):
            out.append(f"In chapter {c} part {p} the walkers crossed the field of barley near farm {c}{p} and "
                       f"spoke at length of the harvest, the weather, the rents and the letters from town. " * 3)
    return "\n\n".join(out)


def test_a_model_says_which_pages_merge_and_an_unusable_reply_keeps_them_apart(scripted, store):
    document = parse_text(_chapters(), title="Chapters")

    def handler(prompt):
        if prompt.startswith("Given Page 1 and Page 2"):
            page2 = prompt.split("\n\nPage 2:\n", 1)[1]
            if page2.startswith("CHAPTER 3"):
                return "Sure thing!"  # unusable twice: kept apart, traced as a fallback
            return respond(prompt)
        return respond(prompt)

    engine, backend = scripted(handler=handler)
    preset = choose_preset("auto", document.words).with_words(60, 200)
    full = build_memory(store, document, engine, BuildSettings(preset, fit=False))
    room_at = next(w for w in range(1024, 8192, 64) if memory_room(w, preset) > 0)
    window = max(room_at, 1024)
    result = build_memory(store, document, engine, BuildSettings(preset, fit_tokens=window))
    fit = result.fit
    assert fit["parent_id"] == full.memory_id and fit["memory_id"] != full.memory_id
    assert fit["merges"] > 0 and fit["pages_after"] < fit["pages_before"]
    memory = load_memory(store, result.memory_id)
    assert memory.parent_id == full.memory_id and memory.fit_tokens == window
    assert sorted(i for p in memory.pages for i in p.sources) == list(range(fit["pages_before"]))  # page history
    merged = [p for p in memory.pages if len(p.sources) > 1]
    assert merged and all("merged" in p.break_reason for p in merged)
    steps = store.steps(fit["run_id"])
    merges = [s.trace for s in steps if s.step == "page-merge"]
    assert {m.outcome for m in merges} >= {"model", "fallback"}
    assert all(m.value != NO for m in merges if m.outcome == "fallback")
    assert any(s.step == "regist" for s in steps) and steps[-1].step == "fit"
    assert any(p.startswith("Given Page 1 and Page 2") for p in backend.prompts)
    # chapters 2 and 3 never merge (the reply was unusable), nor any page across a chapter heading
    for page in memory.pages:
        text = document.span_text(page.start, page.end)
        assert text.count("CHAPTER") <= 1


def test_offline_fitting_is_labelled_offline_and_shortens_gists_again(store):
    document = load_path(BOOK)
    preset = choose_preset("auto", document.words)
    result = build_memory(store, document, OFFLINE, BuildSettings(preset, fit_tokens=4096))
    fit = result.fit
    assert fit["fits"] and fit["tokens_after"] <= fit["room"] < fit["tokens_before"]
    assert fit["gisted_again"] > 0
    steps = store.steps(fit["run_id"])
    assert {s.outcome for s in steps if s.step in ("page-merge", "regist", "gist-again")} == {"offline"}
    again = [s.trace for s in steps if s.step == "gist-again"]
    assert all("G.3" in a.detail["iterative"] for a in again)
    memory = latest_memory(store, document, OFFLINE.key)
    assert memory.memory_id == result.memory_id and any(p.gist_rounds for p in memory.pages)
    # built again with the same settings: both memories are reused, nothing is decided twice
    again_result = build_memory(store, document, OFFLINE, BuildSettings(preset, fit_tokens=4096))
    assert again_result.memory_id == result.memory_id and again_result.fit["reused"]


def test_a_whole_book_under_a_4096_token_window_through_the_simulated_server_fits_and_can_be_asked(store):
    document = load_path(BOOK)
    with SimulatedLLM(context_tokens=4096) as sim:
        engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01)
        assert engine.context_tokens == 4096
        result = build_memory(store, document, engine, BuildSettings(choose_preset("auto", document.words)),
                              concurrency=4)
        fit = result.fit
        assert fit["fits"] and fit["pages_after"] <= fit["pages_before"] and fit["tokens_after"] <= fit["room"]
        memory = load_memory(store, result.memory_id)
        assert memory_tokens(memory, MODEL) <= memory_room(4096, choose_preset("auto", document.words), MODEL)
        answer = ask(store, engine, document.id, Question("Whom does Elizabeth Bennet marry?"), method="readagent-p")
        assert answer.answer.text and answer.memory.id == result.memory_id
        for call in store.db["llm_calls"].rows:
            assert call["input_tokens"] + json.loads(call["params"])["max_tokens"] <= 4096


def test_conditional_gists_are_a_memory_of_their_own(scripted, store):
    document = parse_text(_chapters(3), title="Chapters")
    engine, backend = scripted(handler=respond)
    preset = choose_preset("auto", document.words).with_words(60, 200)
    plain = build_memory(store, document, engine, BuildSettings(preset, fit=False))
    question = "What did farm 21 grow?"
    conditional = build_memory(store, document, engine, BuildSettings(preset, fit=False, conditional=question))
    assert conditional.memory_id != plain.memory_id and conditional.conditional == question
    assert load_memory(store, conditional.memory_id).conditional == question
    assert any("Question:\n" + question in p for p in backend.prompts)
    # a plain question is asked of the unconditional memory
    assert latest_memory(store, document, engine.key).memory_id == plain.memory_id
    offline = build_memory(store, document, OFFLINE, BuildSettings(preset, conditional=question))
    steps = [s.trace for s in store.steps(offline.run_id) if s.step == "gist"]
    assert steps and all(s.outcome == "offline" and s.detail["conditional"] == question for s in steps)


def test_ask_shows_the_pages_dropped_for_room():
    from components.ask_view import dropped_for_room
    from core.trace import MODEL, StepTrace

    steps = [StepTrace("lookup", MODEL, detail={"not_expanded": [4, 9], "fitted": "pages [4, 9] stay gists: ..."}),
             StepTrace("answer", MODEL), StepTrace("lookup-sequential", MODEL)]
    assert dropped_for_room(steps) == [([4, 9], "pages [4, 9] stay gists: ...")]
    assert dropped_for_room([StepTrace("lookup", MODEL, detail={"max_pages": 5})]) == []


def fit_screen(db_path: str, memory_id: int, window) -> None:
    from components.fit_view import render_fit
    from core.methods.readagent.memory import load_memory
    from core.store import open_db

    render_fit(load_memory(open_db(db_path), memory_id), window, None, "gme-simulator")


def test_the_read_screen_shows_the_merges_and_whether_the_memory_fits(tmp_path):
    from streamlit.testing.v1 import AppTest

    from components.fit_view import merge_rows
    from core.store import open_db

    db_path = str(tmp_path / "fit.db")
    store = open_db(db_path)
    document = parse_text(_chapters(4), title="Chapters")
    preset = choose_preset("auto", document.words).with_words(60, 200)
    result = build_memory(store, document, OFFLINE, BuildSettings(preset, fit_tokens=1024))
    memory = load_memory(store, result.memory_id)
    rows = merge_rows(memory)
    assert rows and any("," in r["original pages"] for r in rows)
    at = AppTest.from_function(fit_screen, args=(db_path, result.memory_id, None), default_timeout=30).run()
    assert not at.exception
    assert at.metric[0].label == "Fits the window" and "fits" in at.metric[0].delta
    assert any("offline engine (no LLM)" in c.value for c in at.caption)
    assert any("merges of original pages (App. I)" in c.value for c in at.caption)
    small = AppTest.from_function(fit_screen, args=(db_path, result.memory_id, 512), default_timeout=30).run()
    assert "does not fit" in small.metric[0].delta
