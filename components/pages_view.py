"""A document as pages: raw text, the pause point that ends each page (and who chose it),
and the gist beside it. Used while a build runs and for a finished memory. ``page_navigator``
moves through a long book: a range picker, "go to page", and a search of texts and gists whose
matches are listed as pages and marked in the pages shown."""
from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go
import streamlit as st

from components.ui import GIST, RAW, esc, md, offline_tag, show_me, who
from core.methods.base import compression_rate
from core.store.records import Page
from core.text.search import find_spans, search_pages

MATCHES_LISTED = 20
FOLLOW_WORDS = 120  # of each page while a build runs


def marked(text: str, spans: list[tuple[int, int]] | tuple = ()) -> str:
    """``text`` as HTML with each span wrapped in <mark>: every piece escaped on its own, so the
    marks are the only tags and escaping can never make or break a match."""
    out, at = [], 0
    for start, end in spans:
        out.append(f"{esc(text[at:start])}<mark>{esc(text[start:end])}</mark>")
        at = end
    return "".join(out) + esc(text[at:])


def reading_text(page: Page) -> str:
    """A page's text as this screen shows it: a blank line between paragraphs."""
    return page.text.replace("\n", "\n\n")


def opening(text: str, words: int) -> str:
    """The first ``words`` words of ``text`` (its paragraphs kept), with "…" when there is more."""
    kept, count = [], 0
    for paragraph in text.split("\n\n"):
        n = len(paragraph.split())
        if count + n > words:
            kept.append(" ".join(paragraph.split()[:max(0, words - count)]) + " …")
            break
        kept.append(paragraph)
        count += n
    return "\n\n".join(kept)


def pages_html(pages: Sequence[Page], first: int, last: int, by: str = "", pending: str = "gist on its way…",
               query: str = "", target: int | None = None, words: int | None = None) -> str:
    """Pages ``first``..``last`` (inclusive indexes into ``pages``) as one HTML block; matches of
    ``query`` marked, page ``target`` outlined; ``words``: only each page's opening words (while a
    build runs, so a page is drawn the moment it is decided)."""
    out = []
    for i in range(first, min(last, len(pages) - 1) + 1):
        p = pages[i]
        text = reading_text(p) if words is None else opening(reading_text(p), words)
        raw = marked(text, find_spans(text, query))
        if p.gist:
            offline = offline_tag() if p.gist_by == "offline" else ""
            gist = (f'<div class="gme-gist"><span class="gme-tag gist">gist</span>{offline}'
                    f'{marked(p.gist, find_spans(p.gist, query))}</div>')
        else:
            gist = f'<div class="gme-gist pending">{esc(pending)}</div>'
        reason = f" — {esc(p.break_reason)}" if p.break_reason else ""
        tag = p.break_by if p.break_by in ("fallback", "offline") else "raw"
        here = " target" if i == target else ""
        out.append(
            f'<div class="gme-page{here}" id="page-{i}"><div class="gme-raw"><span class="gme-tag raw">Page {i}</span>'
            f'{p.words} words<br>{raw}</div>{gist}</div>'
            f'<div class="gme-break"><span class="gme-tag {tag}">pause point</span>'
            f'<b>Page {i} ends here</b> · {esc(who(p.break_by, by))}{reason}</div>'
        )
    return "".join(out)


def page_navigator(texts: list[tuple[str, str]], *, key: str, per_view: int,
                   linked: int | None = None) -> tuple[int, int | None, str]:
    """Go to a page, search the texts and gists (``(text, gist)`` by page), and pick a range of
    ``per_view`` pages. Returns the first page to show, the page gone to (or None) and the query.
    ``linked`` is a page a link asked for, gone to once."""
    n = len(texts)
    target_key, goto_key, note_key = f"{key}_target", f"{key}_goto", f"{key}_note"

    def go(page: int) -> None:
        asked = int(page)
        page = max(0, min(n - 1, asked))
        if page != asked:
            st.session_state[note_key] = (f"There is no page {asked}: this memory has pages 0–{n - 1}. "
                                          f"Showing page {page}.")
        st.session_state[key] = page - page % per_view
        st.session_state[target_key] = page
        st.session_state[goto_key] = page
        show_me(f"page-{page}")  # brought into view once it is drawn

    if st.session_state.get(goto_key, 0) > n - 1:  # another memory, with fewer pages, since
        st.session_state[goto_key] = n - 1
    if st.session_state.get(key, 0) >= n:
        st.session_state[key] = 0
    if linked is not None and 0 <= linked < n and target_key not in st.session_state:
        go(linked)
    c1, c2, c3 = st.columns([1, 0.5, 3], vertical_alignment="bottom")
    # No upper bound on the field: a page past the end is said so, not just outlined in red.
    c1.number_input(f"Go to page (0–{n - 1})", 0, None, key=goto_key, step=1,
                    on_change=lambda: go(st.session_state[goto_key]))
    c2.button("Go", key=f"{key}_go", on_click=lambda: go(st.session_state[goto_key]))
    query = c3.text_input("Search the text and the gists", key=f"{key}_search",
                          placeholder="a name, a place, a phrase…").strip()
    if st.session_state.get(note_key):
        st.warning(st.session_state.pop(note_key))
    if query:
        result = search_pages(texts, query, limit=MATCHES_LISTED)
        if not result.matches:
            st.caption(f"No page holds “{md(result.query)}” in its text or its gist.")
        else:
            shown = f" The first {len(result.matches)} are listed." if result.cut else ""
            st.caption(f"“{md(result.query)}”: {result.hits} match{'es' if result.hits != 1 else ''} on "
                       f"{result.pages} page{'s' if result.pages != 1 else ''}.{shown} Choose a page to show it.")
            with st.container(height=min(320, 46 * len(result.matches) + 10), key=f"{key}_matches"):
                for m in result.matches:
                    b, quote = st.columns([1, 7], vertical_alignment="center")
                    b.button(f"Page {m.page}", key=f"{key}_hit{m.page}", on_click=go, args=(m.page,),
                             type="primary" if m.page == st.session_state.get(target_key) else "secondary")
                    counts = " · ".join(x for x in (f"{m.in_text} in the text" if m.in_text else "",
                                                    f"{m.in_gist} in the gist" if m.in_gist else "") if x)
                    tag = '<span class="gme-tag gist">gist</span>' if m.where == "gist" else ""
                    quote.html(f'<div class="gme-hit">{tag}{marked(m.snippet, m.spans)}'
                               f' <span class="gme-hit-count">{counts}</span></div>')
    first = 0
    if n > per_view:
        first = st.selectbox("Pages", list(range(0, n, per_view)), key=key,
                             format_func=lambda s: f"Pages {s}–{min(s + per_view, n) - 1} of {n}")
    target = st.session_state.get(target_key)
    if target is not None and not first <= target < first + per_view:
        target = None  # the reader picked another range since
    return first, target, query


def render_pages(pages: Sequence[Page], *, key: str, by: str = "", follow: bool = False, per_view: int = 12,
                 pending: str = "gist on its way…", linked: int | None = None) -> int | None:
    """The pages with a way to move through them; ``follow`` shows the newest pages instead.
    Returns the page gone to, if any (for the URL)."""
    if not pages:
        return None
    n = len(pages)
    if follow:
        first = max(0, n - per_view)
        if first:
            st.caption(f"The newest pages ({first}–{n - 1} of {n}), each page's opening; the whole text of every "
                       "page is shown when the build ends.")
        st.html(pages_html(pages, first, first + per_view - 1, by, pending, words=FOLLOW_WORDS))
        return None
    texts = [(reading_text(p), p.gist) for p in pages]
    first, target, query = page_navigator(texts, key=key, per_view=per_view, linked=linked)
    if target is not None:
        st.caption(f"Page {target} is outlined, brought into view.")
    st.html(pages_html(pages, first, first + per_view - 1, by, pending, query=query, target=target))
    return target


def pages_chart(pages: Sequence[Page], document_words: int) -> go.Figure:
    xs = list(range(len(pages)))
    gist_words = sum(len(p.gist.split()) for p in pages)
    fig = go.Figure([
        go.Bar(x=xs, y=[p.words for p in pages], name="words per page", marker_color=RAW),
        go.Bar(x=xs, y=[len(p.gist.split()) for p in pages], name="gist words per page", marker_color=GIST),
    ])
    fig.update_layout(
        barmode="overlay", height=300, margin=dict(l=10, r=10, t=40, b=10), bargap=0.15,
        title=f"Words per page and per gist — compression rate {compression_rate(gist_words, document_words):.1f}%",
        xaxis_title="page", yaxis_title="words", legend=dict(orientation="h", y=-0.25),
    )
    fig.data[1].update(opacity=0.9)
    return fig
