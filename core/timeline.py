"""A build's timeline: each model call (or, for the offline engine, each step) as a span from its
start to its end, in seconds from the first start, with concurrent spans put on separate lanes.

Pure functions over logged calls or steps; the app draws them (components/charts.py).
"""
from __future__ import annotations

import datetime as dt
import heapq
from dataclasses import dataclass

from core.store.records import LlmCall, Step


@dataclass(frozen=True)
class Span:
    """One call or step: ``start`` and ``end`` in seconds since the run's first start."""
    id: int
    step: str
    start: float
    end: float
    lane: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False
    failed: bool = False

    @property
    def seconds(self) -> float:
        return self.end - self.start


def _moment(text: str | None) -> float | None:
    if not text:
        return None
    stamp = dt.datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp()


def assign_lanes(intervals: list[tuple[float, float]]) -> list[int]:
    """A lane for each (start, end), in input order: the lowest lane free when the span starts, so
    spans on one lane never overlap (a span may start the moment another ends) and the number of
    lanes is the most spans running at once."""
    lanes = [0] * len(intervals)
    free: list[int] = []  # lanes whose last span has ended, lowest first
    busy: list[tuple[float, int]] = []  # (end, lane)
    used = 0
    for i in sorted(range(len(intervals)), key=lambda i: (intervals[i][0], intervals[i][1], i)):
        start, end = intervals[i]
        while busy and busy[0][0] <= start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, used = used, used + 1
        lanes[i] = lane
        heapq.heappush(busy, (max(start, end), lane))
    return lanes


def _spans(raw: list[tuple[LlmCall | Step, float, float]], **fields) -> list[Span]:
    if not raw:
        return []
    origin = min(start for _, start, _ in raw)
    intervals = [(start - origin, end - origin) for _, start, end in raw]
    lanes = assign_lanes(intervals)
    return [Span(lane=lane, start=round(a, 3), end=round(b, 3), **{k: f(row) for k, f in fields.items()})
            for (row, _, _), (a, b), lane in zip(raw, intervals, lanes)]


def call_spans(calls: list[LlmCall]) -> list[Span]:
    """Spans of logged model calls: from ``started_at`` (or, in calls logged before calls recorded
    it, ``created_at`` less the duration) for ``duration_ms``."""
    raw = []
    for call in calls:
        ended = _moment(call.created_at)
        seconds = call.duration_ms / 1000
        started = _moment(call.started_at)
        if started is None:
            if ended is None:
                continue
            started = ended - seconds
        raw.append((call, started, started + seconds))
    return _spans(raw, id=lambda c: c.id, step=lambda c: c.step or "call", input_tokens=lambda c: c.input_tokens,
                  output_tokens=lambda c: c.output_tokens, cached=lambda c: c.cached, failed=lambda c: bool(c.error))


def step_spans(steps: list[Step]) -> list[Span]:
    """Spans of a run's steps, each ending when it was recorded and lasting its ``seconds``: the
    timeline of a build that made no model call."""
    raw = []
    for step in steps:
        ended = _moment(step.created_at)
        if ended is not None:
            raw.append((step, ended - step.seconds, ended))
    return _spans(raw, id=lambda s: s.id, step=lambda s: s.step or "step")


def totals_by_step(spans: list[Span]) -> list[dict]:
    """Per step, in order of first appearance: spans, seconds, input and output tokens, replays."""
    out: dict[str, dict] = {}
    for s in spans:
        row = out.setdefault(s.step, {"step": s.step, "calls": 0, "seconds": 0.0, "tokens in": 0,
                                      "tokens out": 0, "replayed": 0})
        row["calls"] += 1
        row["seconds"] = round(row["seconds"] + s.seconds, 3)
        row["tokens in"] += s.input_tokens
        row["tokens out"] += s.output_tokens
        row["replayed"] += int(s.cached)
    return list(out.values())
