"""The build pipeline with a scripted model: concurrency, progress, reuse, stop and resume."""
import re
import threading
import time

import pytest

from core.methods.readagent.build import BuildProgress, BuildSettings, Slots, build_memory
from core.text.documents import parse_text
from core.errors import Cancelled, ModelError
from core.llm.seam import LLM
from core.engine import model_engine
from core.methods.readagent.memory import load_memory
from core.methods.readagent.presets import PRESETS
from tests.fakes import ScriptedBackend

QUALITY = BuildSettings(PRESETS["quality"])


def chapters(n=3, paragraphs=12, words=60):
    parts = []
    for c in range(n):
        parts.append(f"Chapter {c + 1}")
        parts += [" ".join([f"c{c}p{p}"] * words) for p in range(paragraphs)]
    return parse_text("\n\n".join(parts), title="Three Chapters")


def model_reply(prompt: str) -> str:
    """Pagination: the first label offered. Gist: the first ten words."""
    if "numbered labels" in prompt:
        first = re.search(r"^<(\d+)>$", prompt, re.M).group(1)
        return f"Break point: <{first}>\nBecause it is the first natural pause."
    page = prompt.split("Passage:\n", 1)[1]
    return " ".join(page.split()[:10])


def engine_for(store, **kw):
    backend = ScriptedBackend(handler=kw.pop("handler", model_reply))
    return model_engine(LLM(backend, store)), backend


def test_build_with_a_model_records_every_step(store):
    doc = chapters()
    engine, backend = engine_for(store)
    result = build_memory(store, doc, engine, QUALITY, concurrency=4)
    memory = load_memory(store, result.memory_id)
    assert result.pages == len(memory.pages) > 3
    assert result.llm_calls == len(backend.prompts) and result.cached_calls == 0
    assert all(p.break_by in ("model", "rule") and p.gist_by == "model" for p in memory.pages)
    assert all(p.gist_words == 10 for p in memory.pages)
    assert result.fallback_breaks == 0
    steps = store.steps(result.run_id)
    assert sum(s.step == "gist" for s in steps) == result.pages
    asked = [s for s in steps if s.step == "pagination" and s.outcome == "model"]
    assert asked and all(s.trace.attempts[0].call_id for s in asked)
    run = store.get_run(result.run_id)
    assert run.status == "done" and run.result["pages"] == result.pages


def test_chapters_are_paginated_independently(store):
    doc = chapters()
    result = build_memory(store, doc, engine_for(store)[0], QUALITY, concurrency=4)
    pages = load_memory(store, result.memory_id).pages
    heading_at = {i for i, p in enumerate(doc.paragraphs) if p.heading}
    assert heading_at <= {p.start for p in pages}  # every chapter starts a page


def test_rebuilding_makes_no_model_calls(store):
    doc = chapters()
    engine, backend = engine_for(store)
    first = build_memory(store, doc, engine, QUALITY)
    calls = len(backend.prompts)
    reused = build_memory(store, doc, engine, QUALITY)
    assert reused.reused and reused.memory_id == first.memory_id and reused.llm_calls == 0
    rebuilt = build_memory(store, doc, engine, QUALITY, rebuild=True)
    assert rebuilt.llm_calls == 0 and rebuilt.cached_calls == calls and len(backend.prompts) == calls
    assert rebuilt.pages == first.pages and rebuilt.gist_words == first.gist_words


def test_other_settings_build_another_memory(store):
    doc = chapters()
    engine, _ = engine_for(store)
    a = build_memory(store, doc, engine, QUALITY)
    b = build_memory(store, doc, engine, BuildSettings(PRESETS["quality"].with_words(200, 500)))
    c = build_memory(store, doc, engine, BuildSettings(PRESETS["quality"], hard_breaks=False))
    assert len({a.memory_id, b.memory_id, c.memory_id}) == 3


def test_progress_reports_pages_as_they_are_chosen(store):
    doc = chapters()
    events = []
    result = build_memory(store, doc, engine_for(store)[0], QUALITY, concurrency=3, progress=events.append)
    pages = [e for e in events if e.kind == "page"]
    gists = [e for e in events if e.kind == "gist"]
    assert len(pages) == len(gists) == result.pages
    assert pages[-1].pages_found <= result.pages and max(e.pages_gisted for e in events) == result.pages
    assert max(e.words_paginated for e in events) == doc.words == events[0].total_words
    assert all(e.page.break_by and not e.page.gist for e in pages) and all(e.page.gist for e in gists)


def test_the_pages_drawn_while_building_are_the_pages_stored(store):
    doc = chapters()
    progress = BuildProgress(doc)
    result = build_memory(store, doc, engine_for(store)[0], QUALITY, concurrency=3, progress=progress)
    assert progress.pages() == load_memory(store, result.memory_id).pages  # text, gist and index alike


def test_calls_never_exceed_the_concurrency_limit(store):
    doc = chapters(n=6)
    cond = threading.Condition()
    state = {"now": 0, "max": 0, "full": False}

    def slow(prompt):
        with cond:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            state["full"] = state["full"] or state["now"] == 3
            cond.notify_all()
            cond.wait_for(lambda: state["full"], timeout=5)  # the first calls wait until three are in flight
        time.sleep(0.005)  # long enough for a fourth call, if the limit let one through, to overlap
        with cond:
            state["now"] -= 1
        return model_reply(prompt)

    build_memory(store, doc, engine_for(store, handler=slow)[0], QUALITY, concurrency=3)
    assert state["max"] == 3


def test_stopping_and_resuming_repeats_no_model_call(store):
    doc = chapters(n=2)
    cancel = threading.Event()
    engine, backend = engine_for(store)

    def stop_after_three_pages(event):
        if event.kind == "gist" and event.pages_gisted >= 3:
            cancel.set()

    with pytest.raises(Cancelled, match="stopped") as stopped:
        build_memory(store, doc, engine, QUALITY, concurrency=1, progress=stop_after_three_pages, cancel=cancel)
    assert "resume" in stopped.value.for_cli() and "Resume build" in stopped.value.for_app()
    made_before = len(backend.prompts)
    row = store.memories_for(doc.id, status=None)[0]
    assert row.status == "stopped" and store.page_count(row.id)  # finished pages are kept
    resumed = build_memory(store, doc, engine, QUALITY, concurrency=1)
    assert resumed.memory_id == row.id
    assert resumed.cached_calls == made_before
    assert resumed.llm_calls == len(backend.prompts) - made_before
    fresh = build_memory(store, doc, engine_for(store)[0], QUALITY, rebuild=True)
    assert resumed.pages == fresh.pages and resumed.gist_words == fresh.gist_words


def test_a_failing_model_stops_the_build_and_keeps_the_work(store):
    doc = chapters(n=1)
    calls = {"n": 0}

    def flaky(prompt):
        calls["n"] += 1
        if calls["n"] == 3:
            raise ModelError("The model server kept failing.")
        return model_reply(prompt)

    with pytest.raises(ModelError):
        build_memory(store, doc, engine_for(store, handler=flaky)[0], QUALITY, concurrency=1)
    row = store.memories_for(doc.id, status=None)[0]
    assert row.status == "failed"
    result = build_memory(store, doc, engine_for(store)[0], QUALITY, concurrency=1)
    assert result.memory_id == row.id and result.cached_calls == 2


def test_pagination_fallbacks_are_counted(store):
    doc = chapters(n=1)
    engine, _ = engine_for(store, handler=lambda p: "no idea" if "numbered labels" in p else model_reply(p))
    result = build_memory(store, doc, engine, QUALITY)
    memory = load_memory(store, result.memory_id)
    assert result.fallback_breaks == sum(p.break_by == "fallback" for p in memory.pages) > 0
    assert all("largest page" in p.break_reason for p in memory.pages if p.break_by == "fallback")


def test_slots_serve_the_most_urgent_waiter_first():
    slots = Slots(1)
    order = []

    def wait_then_record(key):
        with slots.take((key,)):
            order.append(key)

    with slots.take((0,)):
        threads = [threading.Thread(target=wait_then_record, args=(k,)) for k in (3, 1, 2)]
        for t in threads:
            t.start()
        while True:  # all three are waiting when the slot frees
            with slots.cond:
                if len(slots.waiting) == 3:
                    break
            time.sleep(0.001)
    for t in threads:
        t.join()
    assert order == [1, 2, 3]
