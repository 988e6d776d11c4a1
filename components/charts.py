"""The figures of the Ask, Evaluate and Inspect screens (plotly), one function each; pages only
place them. Methods keep one colour on every chart."""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from components.ui import REREAD, esc
from core.methods.registry import METHODS
from core.store.records import EvalResult

PALETTE = px.colors.qualitative.Safe
COLORS = {m.label: PALETTE[i % len(PALETTE)] for i, m in enumerate(METHODS.values())}  # same colour everywhere


def words_in_context(results) -> go.Figure:
    """Ask, several methods side by side: the words each put in its context."""
    fig = go.Figure(go.Bar(x=[r.run.method_label for r in results], y=[r.reading.words_in_context for r in results],
                           text=[f"CR {r.reading.compression_rate:.0f}%" for r in results], textposition="outside",
                           marker_color="#5c7cfa"))
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=40, b=10), title="Words in context per method",
                      yaxis_title="words")
    return fig


def score_of(summary: list[dict]) -> tuple[str, str]:
    """The headline score of an evaluation (its key and label): accuracy, LR-2, or ROUGE-L."""
    if not any("rouge1" in r for r in summary):
        return "accuracy", "accuracy %"
    return ("lr2", "LR-2 %") if any(r.get("lr2") is not None for r in summary) else ("rougeL", "ROUGE-L")


def tradeoff(summary: list[dict]) -> go.Figure | None:
    """The paper's trade-off: the score against the compression rate, one point per method."""
    score, label = score_of(summary)
    trade = pd.DataFrame([{"method": r["method_label"], "compression rate %": r["compression_rate"], label: r.get(score)}
                          for r in summary if r.get(score) is not None])
    if trade.empty:
        return None
    fig = px.scatter(trade, x="compression rate %", y=label, text="method", color="method",
                     color_discrete_map=COLORS, title=f"{label} vs compression rate (the paper's trade-off)")
    fig.update_traces(textposition="top center", marker_size=12)
    low, high = trade[label].min(), trade[label].max()
    pad = max(2.0, (high - low) * 0.25)
    fig.update_layout(height=380, showlegend=False, xaxis_range=[-8, 108], yaxis_range=[low - pad, high + pad])
    return fig


def lookup_counts(rows: list[EvalResult]) -> pd.DataFrame:
    """Questions per whole number of look-ups and method, every count from 0 to the most made
    (zeros included, so no bar is missing)."""
    answered = [r for r in rows if not r.error and r.lookups is not None]
    if not answered:
        return pd.DataFrame(columns=["method", "look-ups", "questions"])
    top = max(int(r.lookups) for r in answered)
    methods = list(dict.fromkeys(METHODS[r.method].label for r in answered))
    counts = {(m, n): 0 for m in methods for n in range(top + 1)}
    for r in answered:
        counts[(METHODS[r.method].label, int(r.lookups))] += 1
    return pd.DataFrame([{"method": m, "look-ups": n, "questions": c} for (m, n), c in counts.items()])


def lookups_per_question(rows: list[EvalResult]) -> go.Figure | None:
    """How many look-ups each question took, per method: one bar per whole number, 0 included."""
    counts = lookup_counts(rows)
    if counts.empty:
        return None
    fig = px.bar(counts, x="look-ups", y="questions", color="method", barmode="group", title="Look-ups per question",
                 color_discrete_map=COLORS)
    top = int(counts["look-ups"].max())
    fig.update_layout(height=380, bargap=0.15)
    fig.update_xaxes(tickmode="linear", tick0=0, dtick=1, range=[-0.6, top + 0.6])
    return fig


def accuracy_per_document(rows: list[EvalResult], titles: dict[str, str]) -> go.Figure | None:
    per_doc = pd.DataFrame([{"document": titles.get(r.doc_id, r.doc_id), "method": METHODS[r.method].label,
                             "correct": r.correct} for r in rows if r.correct is not None])
    if per_doc.empty:
        return None
    acc = per_doc.groupby(["document", "method"], as_index=False)["correct"].mean()
    acc["accuracy %"] = 100 * acc["correct"]
    fig = px.bar(acc, x="document", y="accuracy %", color="method", barmode="group", title="Accuracy per document",
                 color_discrete_map=COLORS)
    fig.update_layout(height=380)
    return fig


def pages_reread(results: list[EvalResult], method_label: str, current: int | None = None,
                 most: int = 40) -> go.Figure | None:
    """Inspect: which pages one method re-read, across one document's questions; the row of the
    result ``current`` (the case open) is named and framed. With more than ``most`` questions, the
    ``most`` around the current one are drawn."""
    if not any(r.pages_looked_up for r in results):
        return None
    at = next((i for i, r in enumerate(results) if r.id == current), None)
    start = 0 if len(results) <= most or at is None else max(0, min(at - most // 2, len(results) - most))
    window = results[start:start + most]
    n_pages = max(max(r.pages_looked_up or [0]) for r in window) + 1
    z = [[1 if p in (r.pages_looked_up or []) else 0 for p in range(n_pages)] for r in window]
    names = [f"Q{start + i + 1}" + (" ◀ this case" if r.id == current else "") for i, r in enumerate(window)]
    hover = [[esc(r.question[:80]) for _ in range(n_pages)] for r in window]
    fig = go.Figure(go.Heatmap(z=z, x=list(range(n_pages)), y=names, customdata=hover, showscale=False,
                               colorscale=[[0, "#f1f3f5"], [1, REREAD]], xgap=1, ygap=1,
                               hovertemplate="%{y} · page %{x}<br>%{customdata}<extra></extra>"))
    if at is not None and start <= at < start + len(window):
        row = at - start
        fig.add_shape(type="rect", x0=-0.5, x1=n_pages - 0.5, y0=row - 0.5, y1=row + 0.5,
                      line=dict(color="#e8590c", width=3), fillcolor="rgba(0,0,0,0)")
    shown = "" if len(window) == len(results) else f" ({len(window)} of {len(results)} questions)"
    fig.update_layout(height=140 + 20 * len(window), margin=dict(l=10, r=10, t=40, b=10),
                      title=f"Pages re-read by {method_label} across this document's questions{shown}",
                      xaxis_title="page", yaxis_autorange="reversed")
    return fig


def labels_by_category(counts: list[dict], categories: list[str] | None = None) -> go.Figure | None:
    """Inspect: how many labels each failure category got, stacked by method (categories in the
    annotators' order, then any others)."""
    if not counts:
        return None
    order = [c for c in categories or [] if any(x["category"] == c for x in counts)]
    order += sorted({x["category"] for x in counts} - set(order))
    fig = go.Figure()
    for method in dict.fromkeys(x["method"] for x in counts):
        label = METHODS[method].label if method in METHODS else method
        mine = {x["category"]: x["labels"] for x in counts if x["method"] == method}
        fig.add_trace(go.Bar(name=label, x=[esc(c) for c in order], y=[mine.get(c, 0) for c in order],
                             marker_color=COLORS.get(label)))
    top = max(sum(x["labels"] for x in counts if x["category"] == c) for c in order)
    fig.update_layout(barmode="stack", height=340, margin=dict(l=10, r=10, t=40, b=10),
                      title="Labels by category and method", yaxis_title="labels", legend_title_text="")
    fig.update_yaxes(tickformat="d", rangemode="tozero", tick0=0, dtick=max(1, round(top / 5)))  # whole labels
    return fig


STEP_COLORS = {"pagination": "#4c6ef5", "gist": "#37b24d", "merge": "#f59f00", "regist": "#ae3ec9",
               "split": "#868e96", "lookup": "#e8590c", "answer": "#d6336c"}


def build_timeline(spans, title: str = "Model calls over time") -> go.Figure:
    """A build's timeline: one horizontal bar per call (or step) from its start to its end,
    coloured by step; calls running at once sit on separate lanes (``core.timeline.Span``s)."""
    fig = go.Figure()
    steps = list(dict.fromkeys(s.step for s in spans))
    for i, step in enumerate(steps):
        mine = [s for s in spans if s.step == step]
        fig.add_trace(go.Bar(
            name=esc(step), orientation="h", base=[s.start for s in mine],
            x=[max(s.seconds, 0.001) for s in mine], y=[s.lane for s in mine],
            marker_color=STEP_COLORS.get(step, PALETTE[i % len(PALETTE)]),
            marker_line_width=0, width=0.8,
            customdata=[[s.id, s.seconds, s.input_tokens, s.output_tokens,
                         " (replayed)" if s.cached else " (failed)" if s.failed else ""] for s in mine],
            hovertemplate=(f"{esc(step)} #%{{customdata[0]}}%{{customdata[4]}}<br>%{{base:.2f}} s → "
                           "+%{customdata[1]:.2f} s<br>%{customdata[2]} in · %{customdata[3]} out tokens"
                           "<extra></extra>")))
    lanes = 1 + max((s.lane for s in spans), default=0)
    # The title on the first line, the legend on its own line under it, above the bars: never on each other.
    fig.update_layout(barmode="overlay", height=min(580, 175 + 18 * lanes), margin=dict(l=10, r=10, t=72, b=10),
                      title=dict(text=title, y=0.98, yanchor="top"), xaxis_title="seconds from the first call",
                      yaxis_title="lane", legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
                      legend_title_text="", bargap=0.1)
    fig.update_yaxes(autorange="reversed", tickmode="linear", tick0=0, dtick=max(1, lanes // 8),
                     range=[lanes - 0.5, -0.5])
    fig.update_xaxes(rangemode="tozero")
    return fig
