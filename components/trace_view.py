"""The trace of a run: every step, every prompt and reply, what the parser made of it,
and any re-ask or fallback."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from components.ui import md, who
from core.store import Store
from core.store.records import LlmCall
from core.trace import StepTrace


def _calls(store: Store, steps: list[StepTrace]) -> dict[int, LlmCall]:
    ids = [a.call_id for s in steps for a in s.attempts if a.call_id]
    return {c.id: c for c in store.calls(ids=ids)} if ids else {}


def _title(n: int, step: StepTrace, by: str = "") -> str:
    page = f" · page {step.page}" if step.page is not None else ""
    return f"{n}. {step.step}{page} · {who(step.outcome, by)} · {step.seconds:.2f} s"


def render_step(step: StepTrace, calls: dict[int, LlmCall]) -> None:
    if step.fallback:
        st.warning(f"Fallback: {md(step.fallback)}")
    if not step.attempts:
        st.caption("No model call: " + ("decided by the offline engine (no LLM); its scores are below."
                                        if step.outcome == "offline" else "nothing to decide."))
    for n, attempt in enumerate(step.attempts, 1):
        call = calls.get(attempt.call_id)
        tokens = (f"{call.input_tokens} → {call.output_tokens} tokens · {call.duration_ms} ms" if call else "")
        cached = " · replayed from the cache" if attempt.cached else ""
        st.markdown(f"**Attempt {n}** {md(tokens)}{cached}")
        if call and call.retry_errors:
            st.caption("Retried after: " + md("; ".join(call.retry_errors)))
        prompt_tab, reply_tab = st.tabs(["Prompt", "Reply"])
        prompt_tab.code(call.prompt if call else "(prompt not logged)", language=None, wrap_lines=True, height=260)
        reply_tab.code(attempt.reply, language=None, wrap_lines=True)
        if attempt.problem:
            st.error(f"Could not use this reply: {md(attempt.problem)}")
        else:
            st.success("Parsed.")
        for note in attempt.notes:
            st.caption(f"Parser: {md(note)}")
    st.markdown("**Result**")
    value = json.dumps(step.value, ensure_ascii=False, default=str)
    if len(value) > 100:
        value = json.dumps(step.value, ensure_ascii=False, indent=1, default=str)
    st.code(value, language="json", wrap_lines=True)
    if step.detail:
        st.markdown("**Details**")
        st.code(json.dumps(step.detail, ensure_ascii=False, indent=1, default=str), language="json",
                wrap_lines=True, height=200)


def render_steps(store: Store, steps: list[StepTrace], *, by: str = "", expanded: bool = False) -> None:
    """A short run (a question): each step in its own expander."""
    calls = _calls(store, steps)
    for n, step in enumerate(steps, 1):
        with st.expander(_title(n, step, by), expanded=expanded):
            render_step(step, calls)


def render_step_table(store: Store, steps: list[StepTrace], *, key: str, by: str = "") -> None:
    """A long run (a build): a table of steps and one step opened at a time."""
    if not steps:
        st.caption("No steps were recorded.")
        return
    st.dataframe(pd.DataFrame([{
        "#": n, "step": s.step, "decided": who(s.outcome, by), "attempts": len(s.attempts),
        "seconds": round(s.seconds or 0, 3), "fallback": s.fallback,
    } for n, s in enumerate(steps, 1)]), hide_index=True, width="stretch", height=260, key=f"{key}_table")
    n = st.number_input("Open step #", 1, len(steps), 1, key=f"{key}_pick")
    st.markdown(f"**{md(_title(n, steps[n - 1], by))}**")
    render_step(steps[n - 1], _calls(store, [steps[n - 1]]))
