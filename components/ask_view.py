"""One answered question: the answer, which pages were re-read (in order), the context
exactly as sent, and the trace."""
from __future__ import annotations

import re
from typing import Callable

import streamlit as st

from components.trace_view import render_steps
from components.ui import esc, md, model_name
from core.store import Store
from core.methods.ask import AskResult
from core.prompts import LETTERS

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


def render_walk(store: Store, result: AskResult, n_pages: int | None) -> None:
    """MemWalker: the path walked, drawn on its tree, and each step with the model's reasoning."""
    import pandas as pd

    from components.tree_view import node_label, tree_graph_html
    from core.methods.memwalker.tree import load_tree

    walk = result.details
    tree = load_tree(store, walk.tree["tree_id"])
    visits = walk.trajectory
    outcome = "answered" if walk.answered else "no answer"
    strayed = " · strayed and recovered" if walk.strayed_and_recovered else (" · strayed" if walk.strayed else "")
    st.markdown(f"**Path walked**: {len(visits)} steps · {walk.reverts} reverts · {outcome}{strayed} · "
                f"{100 * walk.share_read:.0f}% of the text read")
    st.iframe(tree_graph_html(tree, visits=visits, levels=None if len(tree.nodes) <= 80 else 2, height=420),
              height=460)
    st.dataframe(pd.DataFrame([{
        "#": n, "node": node_label(tree, v["node"]), "shown": v["kind"], "move": v["move"],
        "to": node_label(tree, v["to"]) if v.get("to") is not None else "", "reasoning": v.get("reasoning", ""),
    } for n, v in enumerate(visits, 1)]), hide_index=True, width="stretch")


def render_notes(store: Store, result: AskResult, n_pages: int | None) -> None:
    """Segment+: one note per segment, kept or removed by the filter, then merged."""
    import pandas as pd

    details = result.details
    notes = details.notes
    cells = "".join(
        f'<div class="gme-cell{" reread" if n["kept"] else ""}" title="Segment {n["segment"]}: '
        f'{"kept" if n["kept"] else "removed"}"><span>{n["segment"]}</span>'
        f'<span class="order">{"keep" if n["kept"] else "drop"}</span></div>' for n in notes)
    st.markdown(f"**Segment notes**: {sum(n['kept'] for n in notes)} of {len(notes)} kept · "
                f"{details.merge_rounds} merge rounds · final note {details.final_note_words} words"
                + (" · every note was removed" if details.all_removed else ""))
    st.html(f'<div class="gme-strip">{cells}</div>')
    st.dataframe(pd.DataFrame([{
        "segment": n["segment"], "filter": "Keep" if n["kept"] else "Remove", "why": n.get("reason", ""),
        "evidence": n.get("evidence", ""), "reasoning": n.get("reasoning", ""), "note by": n.get("note_by", ""),
    } for n in notes]), hide_index=True, width="stretch", height=min(400, 40 + 35 * len(notes)))


def dropped_for_room(steps: list[dict]) -> list[tuple[list[int], str]]:
    """The pages a look-up asked for that stayed gists because their raw text would not fit the
    model's window, with the trace's sentence saying so (ReadAgent-P's budget, -S's early stop)."""
    return [(list(s["detail"]["not_expanded"]), s["detail"].get("fitted", ""))
            for s in steps if (s.get("detail") or {}).get("not_expanded")]


def render_pages_reread(order: str):
    """ReadAgent's look-ups and the retrievals: the pages re-read on a strip of the whole document."""
    def render(store: Store, result: AskResult, n_pages: int | None) -> None:
        if n_pages:
            st.markdown(f"**Pages re-read** ({order})")
            st.html(page_strip_html(n_pages, result.pages_looked_up))
        for pages, why in dropped_for_room(result.steps):
            st.warning(f"Dropped for room: page{'s' if len(pages) > 1 else ''} {pages} stayed gists. {md(why)}")
    return render


# How each method's details are drawn, by their kind (``Details.kind``); a new method adds one entry.
DETAIL_VIEWS: dict[str, Callable[[Store, AskResult, int | None], None]] = {
    "walk": render_walk,
    "notes": render_notes,
    "lookup": render_pages_reread("in look-up order"),
    "retrieval": render_pages_reread("numbered by rank"),
}


def answer_line(result: AskResult) -> str:
    if result.options and result.choice:
        idx = LETTERS.index(result.choice)
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
    view = DETAIL_VIEWS.get(result.details.kind)
    if view is not None:
        view(store, result, n_pages)
    with st.expander("Context sent to the model for the answer", expanded=False):
        st.html(context_html(result.context, result.expanded))
        st.code(result.context, language=None, wrap_lines=True, height=240)
    st.markdown("**Trace**")
    render_steps(store, result.steps, by=model_name(result.engine_label))
