"""A build's timeline (lanes of concurrent calls) and the estimate of a model build."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from core.methods.readagent.estimate import (GIST_SHARE, PAGINATION_REPLY_TOKENS, TOKENS_PER_WORD, cost,
                                             estimate_build)
from core.methods.readagent.presets import PRESETS
from core.store.records import LlmCall, Step
from core.timeline import assign_lanes, call_spans, step_spans, totals_by_step
from core.trace import StepTrace


@pytest.mark.parametrize("intervals, lanes", [
    ([], []),
    ([(0, 1)], [0]),
    ([(0, 1), (1, 2), (2, 3)], [0, 0, 0]),  # back to back: one lane
    ([(0, 2), (1, 3)], [0, 1]),  # overlapping: two lanes
    ([(0, 2), (0, 1), (1, 3), (2, 4), (5, 6)], [1, 0, 0, 1, 0]),  # a freed lane is reused, lowest first
    ([(0, 10), (1, 2), (3, 4), (5, 6)], [0, 1, 1, 1]),  # one long call beside short ones
    ([(0, 1), (0, 1), (0, 1), (0, 1)], [0, 1, 2, 3]),  # four at once: four lanes
    ([(2, 3), (0, 1)], [0, 0]),  # input order does not matter
    ([(0, 0), (0, 0)], [0, 0]),  # zero-length spans never block a lane
])
def test_lanes(intervals, lanes):
    assert assign_lanes(intervals) == lanes


def test_lanes_never_overlap_and_are_as_few_as_the_most_at_once():
    import random
    rng = random.Random(3)
    intervals = [(s, s + rng.uniform(0.1, 3)) for s in (rng.uniform(0, 20) for _ in range(200))]
    lanes = assign_lanes(intervals)
    for lane in set(lanes):
        mine = sorted(iv for iv, ln in zip(intervals, lanes) if ln == lane)
        assert all(a[1] <= b[0] for a, b in zip(mine, mine[1:]))
    most = max(sum(1 for s, e in intervals if s <= t < e) for t, _ in intervals)
    assert len(set(lanes)) == most


CALLS = [
    LlmCall(id=1, step="pagination", started_at="2026-01-01T00:00:00.000+00:00",
            created_at="2026-01-01T00:00:01.000+00:00", duration_ms=1000, input_tokens=900, output_tokens=20),
    LlmCall(id=2, step="gist", started_at="2026-01-01T00:00:01.000+00:00",
            created_at="2026-01-01T00:00:03.000+00:00", duration_ms=2000, input_tokens=500, output_tokens=90),
    LlmCall(id=3, step="pagination", started_at="2026-01-01T00:00:01.000+00:00",
            created_at="2026-01-01T00:00:02.500+00:00", duration_ms=1500, input_tokens=800, output_tokens=30),
    # logged before calls recorded their start: created_at less the duration
    LlmCall(id=4, step="gist", started_at=None, created_at="2026-01-01T00:00:04.000+00:00",
            duration_ms=500, input_tokens=400, output_tokens=80, cached=True),
    LlmCall(id=5, step="gist", created_at=None, duration_ms=10),  # no time at all: left out
]


def test_call_spans_from_logged_calls():
    spans = call_spans(CALLS)
    assert [(s.id, s.step, s.start, s.end, s.lane) for s in spans] == [
        (1, "pagination", 0.0, 1.0, 0), (2, "gist", 1.0, 3.0, 1), (3, "pagination", 1.0, 2.5, 0),
        (4, "gist", 3.5, 4.0, 0)]
    assert spans[3].cached and not spans[0].cached
    assert totals_by_step(spans) == [
        {"step": "pagination", "calls": 2, "seconds": 2.5, "tokens in": 1700, "tokens out": 50, "replayed": 0},
        {"step": "gist", "calls": 2, "seconds": 2.5, "tokens in": 900, "tokens out": 170, "replayed": 1}]


def test_step_spans_of_an_offline_build():
    steps = [Step(7, 1, 0, "pagination", "offline", None, StepTrace("pagination", "offline"), 0.25,
                  "2026-01-01T00:00:00.250"),
             Step(8, 1, 1, "gist", "offline", None, StepTrace("gist", "offline"), 0.5, "2026-01-01T00:00:01.000")]
    assert [(s.step, s.start, s.end, s.lane) for s in step_spans(steps)] == [
        ("pagination", 0.0, 0.25, 0), ("gist", 0.5, 1.0, 0)]
    assert call_spans([]) == [] and step_spans([]) == []


@pytest.mark.parametrize("words, preset, pages, low, high, pagination", [
    (0, "quality", 0, 0, 0, 0),
    (300, "quality", 1, 1, 2, 0),  # shorter than a page: one gist, no pagination call
    (440, "quality", 1, 1, 2, 0),
    (441, "quality", 2, 1, 2, 1),
    (26_449, "quality", 61, 45, 95, 60),  # (280 + 600) / 2 = 440 words a page
    (26_449, "narrativeqa", 16, 9, 53, 15),  # (500 + 3000) / 2 = 1750
    (80_000, "narrativeqa-movie", 100, 80, 134, 99),  # (600 + 1000) / 2 = 800
])
def test_estimate_calls(words, preset, pages, low, high, pagination):
    e = estimate_build(words, PRESETS[preset])
    assert (e.pages, e.pages_low, e.pages_high, e.pagination_calls, e.gist_calls) == (pages, low, high, pagination,
                                                                                       pages)
    assert e.calls == pagination + pages
    assert e.pages_low <= e.pages <= e.pages_high


def test_estimate_tokens_follow_the_windows():
    preset = PRESETS["quality"]
    e = estimate_build(44_000, preset)
    assert e.pages == 100 and e.pagination_calls == 99
    # every word is gisted once; each pagination prompt holds a window of max_words, the previous page and
    # the look-ahead: far more input than the text itself, and outputs about GIST_SHARE of it
    text_tokens = TOKENS_PER_WORD * 44_000
    window = TOKENS_PER_WORD * (600 + 440 + 150)
    assert 99 * window + text_tokens < e.input_tokens < 99 * (window + 400) + text_tokens + 100 * 100
    assert e.output_tokens == round(99 * PAGINATION_REPLY_TOKENS + GIST_SHARE * text_tokens)
    # a longer text costs more; a preset with bigger pages asks fewer calls for the same text
    assert estimate_build(88_000, preset).input_tokens > e.input_tokens
    assert estimate_build(44_000, PRESETS["narrativeqa"]).calls < e.calls


@pytest.mark.parametrize("inp, out, pin, pout, expected", [
    (1_000_000, 0, 2.5, 10, 2.5),
    (0, 1_000_000, 2.5, 10, 10.0),
    (500_000, 100_000, 3, 15, 3.0),
    (1000, 1000, None, None, None),  # no price: no cost
    (1000, 1000, 0, 0, None),
    (2_000_000, 0, 1, None, 2.0),
])
def test_cost(inp, out, pin, pout, expected):
    got = cost(inp, out, pin, pout)
    assert got is None if expected is None else math.isclose(got, expected)


def test_timeline_figure_has_a_bar_per_call_coloured_by_step():
    from components.charts import build_timeline
    fig = build_timeline(call_spans(CALLS))
    assert [t.name for t in fig.data] == ["pagination", "gist"]
    assert list(fig.data[0].base) == [0.0, 1.0] and list(fig.data[0].x) == [1.0, 1.5]
    assert list(fig.data[0].y) == [0, 0] and list(fig.data[1].y) == [1, 0] and fig.data[0].orientation == "h"
    assert fig.data[0].marker.color != fig.data[1].marker.color


def test_timeline_figure_escapes_step_names():
    from components.charts import build_timeline
    fig = build_timeline(call_spans([replace(CALLS[0], step="<b>x</b>")]))
    assert "<b>" not in fig.data[0].name


def test_cli_build_estimate_builds_nothing(tmp_path, capsys):
    import json

    from core.cli.main import main
    from tests.conftest import book

    db = tmp_path / "e.db"
    assert main(["build", str(book("alice")), "--estimate", "--preset", "quality", "--input-price", "2.5",
                 "--output-price", "10", "--json", "--db", str(db)]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = estimate_build(out["words"], PRESETS["quality"])
    assert out["calls"] == expected.calls and out["input_tokens"] == expected.input_tokens
    assert math.isclose(out["cost"], expected.cost(2.5, 10))
    assert not db.exists()  # nothing stored
