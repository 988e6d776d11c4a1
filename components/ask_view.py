"""One answered question: the answer, which pages were re-read (in order), the context
exactly as sent, and the trace."""
from __future__ import annotations

import re
from typing import Callable

import streamlit as st

from components.trace_view import render_steps
from components.ui import esc, legend, md, model_name, offline_tag
from core.store import Store
from core.methods.ask import AskResult
from core.prompts import LETTERS
from core.text.documents import Document
from core.trace import StepTrace

_PAGE_TAG = re.compile(r"^<Page (\d+)>$", re.M)


def page_strip_html(n_pages: int, looked_up: list[int], *, css: str = "reread", who: str = "re-read") -> str:
    order = {p: i for i, p in enumerate(looked_up, 1)}
    cells = []
    for i in range(n_pages):
        if i in order:
            cells.append(f'<div class="gme-cell {css}" title="Page {i}: {who}, look-up #{order[i]}">'
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


def render_walk(store: Store, result: AskResult, n_pages: int | None, *, narrow: bool = False) -> None:
    """MemWalker: the path walked, drawn on its tree (the view Memory tree shows), and each step."""
    from components.walk_view import render_tree, render_walk_steps
    from core.methods.memwalker.tree import load_tree

    walk = result.details
    tree = load_tree(store, walk.tree.tree_id)
    visits = walk.trajectory
    outcome = "answered" if walk.answered else "no answer"
    strayed = " · strayed and recovered" if walk.strayed_and_recovered else (" · strayed" if walk.strayed else "")
    if walk.tree.built_now:
        st.caption(f"This document had no memory tree for these settings, so MemWalker built one first: "
                   f"{walk.tree.nodes} nodes, {walk.tree.build_llm_calls} model calls"
                   + (f" (run #{walk.tree.build_run_id})" if walk.tree.build_run_id else "")
                   + ". Later questions reuse it.")
    st.markdown(f"**Path walked**: {len(visits)} steps · {walk.reverts} reverts · {outcome}{strayed} · "
                f"{100 * walk.share_read:.0f}% of the text read")
    render_tree(tree, visits, key=f"walk{result.run.id}", narrow=narrow)
    render_walk_steps(tree, visits)


def render_notes(store: Store, result: AskResult, n_pages: int | None, *, narrow: bool = False) -> None:
    """Segment+: one note per segment, kept or removed by the filter, then merged."""
    import pandas as pd

    details = result.details
    notes = details.notes
    cells = "".join(
        f'<div class="gme-cell{" reread" if n.kept else ""}" title="Segment {n.segment}: '
        f'{"kept" if n.kept else "removed"}"><span>{n.segment}</span>'
        f'<span class="order">{"keep" if n.kept else "drop"}</span></div>' for n in notes)
    st.markdown(f"**Segment notes**: {sum(n.kept for n in notes)} of {len(notes)} kept · "
                f"{details.merge_rounds} merge rounds · final note {details.final_note_words} words"
                + (" · every note was removed" if details.all_removed else ""))
    st.html(f'<div class="gme-strip">{cells}</div>')
    st.dataframe(pd.DataFrame([{
        "segment": n.segment, "filter": "Keep" if n.kept else "Remove", "why": n.reason, "evidence": n.evidence,
        "reasoning": n.reasoning, "note by": n.note_by,
    } for n in notes]), hide_index=True, width="stretch", height=min(400, 40 + 35 * len(notes)))


# The paper's demo: which of the paper's runs a method is compared with (``paper_lookup`` keys).
PAPER_PAGES = {"lookup": ("readagent_pages", "ReadAgent with PaLM 2-L"),
               "retrieval": ("neural_retrieval_pages", "neural retrieval")}


def render_paper_pages(result: AskResult, n_pages: int | None, paper: dict | None) -> None:
    """The pages the paper's own run re-read, on a strip beside this run's."""
    if not (paper and n_pages and result.details.kind in PAPER_PAGES):
        return
    key, who = PAPER_PAGES[result.details.kind]
    st.markdown(f"**Pages re-read in the paper** ({who}, chose ({md(paper.get(key.replace('pages', 'choice')) or '?')}))")
    st.html(page_strip_html(n_pages, paper[key], css="paper", who="re-read in the paper"))


def dropped_for_room(steps: list[StepTrace]) -> list[tuple[list[int], str]]:
    """The pages a look-up asked for that stayed gists because their raw text would not fit the
    model's window, with the trace's sentence saying so (ReadAgent-P's budget, -S's early stop)."""
    return [(list(s.detail["not_expanded"]), s.detail.get("fitted", "")) for s in steps if s.detail.get("not_expanded")]


def render_pages_reread(order: str):
    """ReadAgent's look-ups and the retrievals: the pages re-read on a strip of the whole document."""
    def render(store: Store, result: AskResult, n_pages: int | None, *, narrow: bool = False) -> None:
        if n_pages:
            st.markdown(f"**Pages re-read** ({order})")
            st.html(page_strip_html(n_pages, result.reading.pages_looked_up))
        for pages, why in dropped_for_room(result.steps):
            st.warning(f"Dropped for room: page{'s' if len(pages) > 1 else ''} {pages} stayed gists. {md(why)}")
    return render


# How each method's details are drawn, by their kind (``Details.kind``); a new method adds one entry.
# Each takes the store, the result, the document's page count and ``narrow`` (drawn in half the width).
DETAIL_VIEWS: dict[str, Callable[..., None]] = {
    "walk": render_walk,
    "notes": render_notes,
    "lookup": render_pages_reread("in look-up order"),
    "retrieval": render_pages_reread("numbered by rank"),
}


def answer_line(result: AskResult) -> str:
    options, answer = result.question.options, result.answer
    if options and answer.choice:
        idx = LETTERS.index(answer.choice)
        return f"({answer.choice}) {options[idx] if idx < len(options) else ''}"
    if options:
        return f"No option chosen. The reply was: {answer.text}"
    return answer.text


def verdict(result: AskResult, gold: dict | None) -> str:
    """"correct", "wrong" or "" (no gold answer for this question)."""
    if gold and gold.get("gold") and result.question.options:
        return "correct" if result.answer.choice == gold["gold"] else "wrong"
    return ""


def comparison_html(results: list[AskResult], gold: dict | None = None) -> str:
    """Every method's answer and figures in one table, a row a method (all text escaped; long
    answers wrap, nothing is cut)."""
    head = ("<tr><th>Method</th><th>Answer</th><th>Words in context</th><th>Compression</th>"
            "<th>Pages re-read</th><th>Model calls</th><th>Tokens in / out</th><th>Run</th></tr>")
    rows = []
    for r in results:
        mark = verdict(r, gold)
        badge = {"correct": '<span class="gme-tag reread">correct</span>',
                 "wrong": '<span class="gme-tag fallback">wrong</span>'}.get(mark, "")
        read, used = r.reading, r.usage
        rows.append(
            f'<tr class="{mark}"><td class="method">{esc(r.run.method_label)}</td>'
            f'<td class="answer">{badge}{offline_tag() if r.run.engine == "offline" else ""}{esc(answer_line(r))}</td>'
            f"<td>{read.words_in_context:,}</td><td>{read.compression_rate:.1f}%</td><td>{read.lookups}</td>"
            f'<td title="{used.cached_calls} replayed from the cache">{used.llm_calls}</td>'
            f"<td>{used.input_tokens:,} / {used.output_tokens:,}</td><td>#{r.run.id}</td></tr>")
    return f'<table class="gme-compare">{head}{"".join(rows)}</table>'


def render_ask_result(store: Store, result: AskResult, *, n_pages: int | None, gold: dict | None = None,
                      key: str, compact: bool = False, paper: dict | None = None, narrow: bool = False) -> None:
    """One method's answer in full: who answered, the answer, its figures, what it read (the page
    strip, the walk or the notes), the paper's own look-ups beside ours, the context sent (once)
    and the trace. ``compact``: the answer and figures are already in a comparison table above; ``narrow``:
    drawn in half the page's width (two answers side by side)."""
    run, read, used = result.run, result.reading, result.usage
    st.markdown(f"#### {md(run.method_label)}")
    st.caption(f"Look-ups and answer: {md(run.engine_label)}"
               + (f" · gists: {md(result.memory.label)}" if result.memory and result.memory.label else "")
               + f" · run #{run.id}")
    if not compact:
        offline = offline_tag() if run.engine == "offline" else ""
        st.html(f'<div class="gme-answer">{offline}{esc(answer_line(result))}</div>')
        if verdict(result, gold) == "correct":
            st.success(f"Correct: the answer is ({gold['gold']}).")
        elif verdict(result, gold) == "wrong":
            st.error(f"Not correct: the answer is ({gold['gold']}).")
        elif gold and gold.get("answers"):
            st.caption("Reference answer: " + md(" / ".join(gold["answers"])))
    tokens = (f"{used.cached_calls} replayed from the cache; {used.input_tokens:,} input and "
              f"{used.output_tokens:,} output tokens")
    figures = st.container(horizontal=True, gap="large")  # wraps when the column is narrow (Inspect, side by side)
    figures.metric("Words in context", f"{read.words_in_context:,}", width="content")
    figures.metric("Compression rate", f"{read.compression_rate:.1f}%", width="content")
    figures.metric("Pages re-read", read.lookups, width="content")
    figures.metric("Model calls", used.llm_calls, help=tokens, width="content")
    view = DETAIL_VIEWS.get(result.details.kind)
    if view is not None:
        view(store, result, n_pages, narrow=narrow)
    render_paper_pages(result, n_pages, paper)
    with st.expander("Context sent to the model for the answer", expanded=False):
        st.html(context_html(read.context, read.expanded))
    st.markdown("**Trace**")
    render_steps(store, result.steps, by=model_name(run.engine_label))


def render_comparison(store: Store, document: Document, results: list[AskResult], *, key: str) -> None:
    """One question answered by one or more methods, as Ask shows it and Runs reopens it: the
    paper's own look-ups, a report to download, every method's answer in one table, the words
    each read, then a tab a method for what it read and its trace."""
    from components import charts
    from core.report import report_html
    from core.samples import find_question, paper_lookup

    run_ids = [r.run.id for r in results]
    questions = document.meta.get("questions") or []
    question = results[0].question
    gold = find_question(questions, question.text)  # quote style and spacing aside
    paper = paper_lookup(document, question.text)
    if paper:
        st.info(f"In the paper, ReadAgent with PaLM 2-L re-read pages {', '.join(map(str, paper['readagent_pages']))} "
                f"and chose ({paper['readagent_choice']}); neural retrieval read pages "
                f"{', '.join(map(str, paper['neural_retrieval_pages']))} and chose ({paper['neural_retrieval_choice']}).")
    st.html('<div id="ask-answers"></div>')  # where a new answer brings the eye (pages/ask.py)
    st.subheader(md(question.text))
    st.download_button("Download report (HTML)", report_html(store, run_ids),
                       file_name=f"report-runs-{'-'.join(map(str, run_ids))}.html", mime="text/html",
                       key=f"{key}_report",
                       help="One self-contained file: answers, pages re-read, the walk, the context and the trace. "
                            "It opens offline.")
    st.html(comparison_html(results, gold))
    if gold and gold.get("gold") and question.options:
        st.caption(f"The answer is ({gold['gold']}).")
    elif gold and gold.get("answers"):
        st.caption("Reference answer: " + md(" / ".join(gold["answers"])))
    if len(results) > 1:
        st.plotly_chart(charts.words_in_context(results), width="stretch", key=f"{key}_words_chart")
    legend()
    pages_of = {r.memory.id: store.page_count(r.memory.id) for r in results if r.memory}
    # Ask's tab is in the URL too, so a reload (or a link) opens the method that was being read.
    tabs = st.tabs([f"{r.run.method_label} · #{r.run.id}" for r in results], key=f"{key}_result_tab",
                   **({"bind": "query-params"} if key == "ask" else {}))
    for tab, result in zip(tabs, results):
        with tab:
            render_ask_result(store, result, n_pages=pages_of.get(result.memory.id) if result.memory else None,
                              gold=gold, key=f"{key}{result.run.id}", compact=True, paper=paper)
