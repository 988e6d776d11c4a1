"""One answered question: the answer, which pages were re-read (in order), the context
exactly as sent, and the trace."""
from __future__ import annotations

import re

import streamlit as st

from components.trace_view import render_steps
from components.ui import esc, md, model_name
from core.db import Store
from core.methods import AskResult

_PAGE_TAG = re.compile(r"^<Page (\d+)>$", re.M)


def page_strip_html(n_pages: int, looked_up: list[int]) -> str:
    order = {p: i for i, p in enumerate(looked_up, 1)}
    cells = []
    for i in range(n_pages):
        if i in order:
            cells.append(f'<div class="gme-cell reread" title="Page {i}: re-read, look-up #{order[i]}">'
                         f'<span>{i}</span><span class="order">#{order[i]}</span></div>')
        else:
            cells.append(f'<div class="gme-cell" title="Page {i}: gist only"><span>{i}</span></div>')
    return f'<div class="gme-strip">{"".join(cells)}</div>'


def context_html(context: str, expanded: list[int]) -> str:
    """The context as sent, each ``<Page i>`` block coloured as gist or re-read raw page."""
    parts = _PAGE_TAG.split(context)
    if len(parts) == 1:  # no page tags: full text or another method's context
        return f'<div class="gme-ctx raw">{esc(context)}</div>'
    out = [f'<div class="gme-ctx">{esc(parts[0])}</div>'] if parts[0].strip() else []
    expanded = set(expanded)
    for number, body in zip(parts[1::2], parts[2::2]):
        i = int(number)
        kind, tag = ("raw", '<span class="gme-tag reread">re-read: raw page</span>') if i in expanded else \
            ("gist", '<span class="gme-tag gist">gist</span>')
        out.append(f'<div class="gme-ctx {kind}"><b>&lt;Page {i}&gt;</b> {tag}\n{esc(body.strip())}</div>')
    return "".join(out)


def render_walk(store: Store, result: AskResult) -> None:
    """MemWalker: the path walked, drawn on its tree, and each step with the model's reasoning."""
    import pandas as pd

    from components.tree_view import node_label, tree_graph_html
    from core.memwalker import load_tree

    extra = result.extra
    tree = load_tree(store, extra["tree"]["tree_id"])
    visits = extra.get("trajectory") or []
    st.session_state.tree_walk = {"tree_id": tree.tree_id, "trajectory": visits, "question": result.question}
    outcome = "answered" if extra.get("answered") else "no answer"
    strayed = " · strayed and recovered" if extra.get("strayed_and_recovered") else (
        " · strayed" if extra.get("strayed") else "")
    st.markdown(f"**Path walked**: {len(visits)} steps · {extra.get('reverts', 0)} reverts · {outcome}{strayed} · "
                f"{100 * extra.get('share_read', 0):.0f}% of the text read")
    st.iframe(tree_graph_html(tree, visits=visits, levels=None if len(tree.nodes) <= 80 else 2, height=420),
              height=460)
    st.dataframe(pd.DataFrame([{
        "#": n, "node": node_label(tree, v["node"]), "shown": v["kind"], "move": v["move"],
        "to": node_label(tree, v["to"]) if v.get("to") is not None else "", "reasoning": v.get("reasoning", ""),
    } for n, v in enumerate(visits, 1)]), hide_index=True, width="stretch")


def render_notes(result: AskResult) -> None:
    """Segment+: one note per segment, kept or removed by the filter, then merged."""
    import pandas as pd

    extra = result.extra
    notes = extra.get("notes") or []
    cells = "".join(
        f'<div class="gme-cell{" reread" if n["kept"] else ""}" title="Segment {n["segment"]}: '
        f'{"kept" if n["kept"] else "removed"}"><span>{n["segment"]}</span>'
        f'<span class="order">{"keep" if n["kept"] else "drop"}</span></div>' for n in notes)
    st.markdown(f"**Segment notes**: {sum(n['kept'] for n in notes)} of {len(notes)} kept · "
                f"{extra.get('merge_rounds', 0)} merge rounds · final note {extra.get('final_note_words', 0)} words"
                + (" · every note was removed" if extra.get("all_removed") else ""))
    st.html(f'<div class="gme-strip">{cells}</div>')
    st.dataframe(pd.DataFrame([{
        "segment": n["segment"], "filter": "Keep" if n["kept"] else "Remove", "why": n.get("reason", ""),
        "evidence": n.get("evidence", ""), "reasoning": n.get("reasoning", ""), "note by": n.get("note_by", ""),
    } for n in notes]), hide_index=True, width="stretch", height=min(400, 40 + 35 * len(notes)))


def answer_line(result: AskResult) -> str:
    if result.options and result.choice:
        idx = "ABCDEFGHIJ".index(result.choice)
        option = result.options[idx] if idx < len(result.options) else ""
        return f"({result.choice}) {option}"
    if result.options:
        return f"No option chosen. The reply was: {result.answer}"
    return result.answer


def render_ask_result(store: Store, result: AskResult, *, n_pages: int | None, gold: dict | None = None,
                      key: str, compact: bool = False) -> None:
    st.markdown(f"#### {md(result.method_label)}")
    st.caption(f"Look-ups and answer: {md(result.engine_label)}"
               + (f" · gists: {md(result.memory_label)}" if result.memory_label else "")
               + f" · run #{result.run_id}")
    st.html(f'<div class="gme-answer">{esc(answer_line(result))}</div>')
    if gold and gold.get("gold") and result.options:
        if result.choice == gold["gold"]:
            st.success(f"Correct: the answer is ({gold['gold']}).")
        else:
            st.error(f"Not correct: the answer is ({gold['gold']}).")
    elif gold and gold.get("answers"):
        st.caption("Reference answer: " + md(" / ".join(gold["answers"])))
    tokens = (f"{result.cached_calls} replayed from the cache; {result.input_tokens:,} input and "
              f"{result.output_tokens:,} output tokens")
    if compact:  # three or more side by side: a table row fits where four metrics do not
        st.html(f'<table class="gme-figures"><tr><td>Words in context</td><td>{result.words_in_context:,}</td></tr>'
                f'<tr><td>Compression rate</td><td>{result.compression_rate:.1f}%</td></tr>'
                f'<tr><td>Pages re-read</td><td>{len(result.pages_looked_up)}</td></tr>'
                f'<tr><td>Model calls</td><td title="{esc(tokens)}">{result.llm_calls}</td></tr></table>')
    else:
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Words in context", f"{result.words_in_context:,}")
        c2.metric("Compression rate", f"{result.compression_rate:.1f}%")
        c3.metric("Pages re-read", len(result.pages_looked_up))
        c4.metric("Model calls", result.llm_calls, help=tokens)
    if result.method == "memwalker":
        render_walk(store, result)
    elif result.method == "segmentplus":
        render_notes(result)
    elif n_pages and result.method not in ("first-words", "last-words", "full"):
        order = {"readagent-s": "in look-up order", "bm25": "numbered by rank",
                 "embedding": "numbered by rank"}.get(result.method, "numbered in the order chosen")
        st.markdown(f"**Pages re-read** ({order})")
        st.html(page_strip_html(n_pages, result.pages_looked_up))
    with st.expander("Context sent to the model for the answer", expanded=False):
        st.html(context_html(result.context, result.expanded))
        st.code(result.context, language=None, wrap_lines=True, height=240)
    st.markdown("**Trace**")
    render_steps(store, result.steps, by=model_name(result.engine_label))
