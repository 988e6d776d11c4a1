"""A build's timeline (Read and Runs) and the cost estimate of a model build (Read)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.charts import build_timeline
from components.ui import OFFLINE_TAG
from core.methods.readagent.estimate import Estimate, cost
from core.store import Store
from core.timeline import call_spans, step_spans, totals_by_step


def render_build_timeline(store: Store, run_id: int, *, key: str) -> None:
    """The run's model calls over time, coloured by step, with the tokens of each step beside;
    for a build that made no model call, its steps' timings, labelled as the offline engine's."""
    calls = [c for c in store.calls(run_id) if c.step]
    if calls:
        spans = call_spans(calls)
        title, what = "Model calls over time", "calls"
    else:
        spans = step_spans(store.steps(run_id))
        title, what = f"Steps over time ({OFFLINE_TAG}: no model calls)", "steps"
    if not spans:
        st.caption("This build recorded no model calls and no timed steps (it reused a memory already built).")
        return
    chart, table = st.columns([3, 2.2])
    chart.plotly_chart(build_timeline(spans, title), width="stretch", key=f"{key}_timeline")
    per_step = totals_by_step(spans)
    fields = ["calls", "seconds", "tokens in", "tokens out", "replayed"] if calls else ["calls", "seconds"]
    if calls and not any(row["replayed"] for row in per_step):
        fields.remove("replayed")
    # one column per step (few), one row per figure: it fits beside the chart
    totals = pd.DataFrame([{"": what if f == "calls" else f,
                            **{row["step"]: f"{row[f]:,.2f}" if f == "seconds" else f"{row[f]:,}" for row in per_step}}
                           for f in fields])
    table.dataframe(totals, hide_index=True, width="stretch", key=f"{key}_timeline_steps")
    lanes = 1 + max(s.lane for s in spans)
    end = max(s.end for s in spans)
    busy = sum(s.seconds for s in spans)
    table.caption(f"{len(spans)} {what} in {end:.1f} s, at most {lanes} at once (a lane each); "
                  f"{busy:.1f} s of {what} in all.")
    if not calls:
        st.caption(f"An {OFFLINE_TAG} build: the bars are the steps' own timings, not model calls.")


def estimate_table(estimate: Estimate, *, input_price: float | None = None, output_price: float | None = None,
                   actual: dict | None = None) -> pd.DataFrame:
    """The estimate of a model build, and after it the actual figures of its run (``actual``: the
    run's result, with ``pagination_calls`` and ``gist_calls`` counted from its log)."""
    rows = [("Pages", f"{estimate.pages:,} ({estimate.pages_low:,}–{estimate.pages_high:,})", "pages"),
            ("Pagination calls", f"{estimate.pagination_calls:,}", "pagination_calls"),
            ("Gist calls", f"{estimate.gist_calls:,}", "gist_calls"),
            ("Input tokens", f"{estimate.input_tokens:,}", "input_tokens"),
            ("Output tokens", f"{estimate.output_tokens:,}", "output_tokens")]
    expected = estimate.cost(input_price, output_price)
    table = [{"": name, "estimate": value, **({"actual": _figure((actual or {}).get(field))} if actual else {})}
             for name, value, field in rows]
    if expected is not None:
        spent = None
        if actual and actual.get("input_tokens") is not None:
            spent = cost(actual["input_tokens"], actual.get("output_tokens") or 0, input_price, output_price)
        table.append({"": "Cost", "estimate": f"{expected:,.4f}",
                      **({"actual": "—" if spent is None else f"{spent:,.4f}"} if actual else {})})
    return pd.DataFrame(table)


def _figure(value) -> str:
    return "—" if value is None else f"{value:,}"


def build_actuals(store: Store, run_id: int) -> dict:
    """A build run's actual figures for ``estimate_table``: its result, and its calls per step."""
    actual = dict(store.get_run(run_id).result or {})
    per_step = {row["step"]: row["calls"] for row in totals_by_step(call_spans(store.calls(run_id)))}
    actual["pagination_calls"] = per_step.get("pagination", 0)
    actual["gist_calls"] = per_step.get("gist", 0)
    return actual


def price_inputs(key: str) -> tuple[float, float]:
    """Prices per million input and output tokens (0: no price given)."""
    p1, p2 = st.columns(2)
    input_price = p1.number_input("Price per million input tokens", 0.0, 1000.0, step=0.1, format="%.3f",
                                  key=f"{key}_input_price", help="In your currency; 0 leaves the cost out.")
    output_price = p2.number_input("Price per million output tokens", 0.0, 1000.0, step=0.1, format="%.3f",
                                   key=f"{key}_output_price")
    return input_price, output_price
