"""A document as pages: raw text, the pause point that ends each page (and who chose it),
and the gist beside it. Used while a build runs and for a finished memory."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from components.ui import GIST, RAW, esc, offline_tag, who
from core.text.documents import Document
from core.methods.base import compression_rate
from core.methods.readagent.memory import GistMemory


def memory_pages(memory: GistMemory) -> list[dict]:
    return [{"start": p.start, "end": p.end, "words": p.words, "break_by": p.break_by,
             "break_reason": p.break_reason, "gist": p.gist, "gist_by": p.gist_by} for p in memory.pages]


def pages_html(document: Document, pages: list[dict], first: int, last: int, by: str = "",
               pending: str = "gist on its way…") -> str:
    """Pages ``first``..``last`` (inclusive indexes into ``pages``) as one HTML block."""
    out = []
    for i in range(first, min(last, len(pages) - 1) + 1):
        p = pages[i]
        raw = esc("\n\n".join(q.text for q in document.paragraphs[p["start"]:p["end"]]))
        if p.get("gist"):
            offline = offline_tag() if p.get("gist_by") == "offline" else ""
            gist = f'<div class="gme-gist"><span class="gme-tag gist">gist</span>{offline}{esc(p["gist"])}</div>'
        else:
            gist = f'<div class="gme-gist pending">{esc(pending)}</div>'
        reason = f" — {esc(p['break_reason'])}" if p.get("break_reason") else ""
        tag = "fallback" if p.get("break_by") == "fallback" else ("offline" if p.get("break_by") == "offline" else "raw")
        out.append(
            f'<div class="gme-page" id="page-{i}"><div class="gme-raw"><span class="gme-tag raw">Page {i}</span>'
            f'{p["words"]} words<br>{raw}</div>{gist}</div>'
            f'<div class="gme-break"><span class="gme-tag {tag}">pause point</span>'
            f'<b>Page {i} ends here</b> · {esc(who(p.get("break_by", ""), by))}{reason}</div>'
        )
    return "".join(out)


def render_pages(document: Document, pages: list[dict], *, key: str, by: str = "", follow: bool = False,
                 per_view: int = 12, pending: str = "gist on its way…") -> None:
    """The pages with a range picker for long documents; ``follow`` shows the newest pages."""
    if not pages:
        return
    n = len(pages)
    if n <= per_view:
        first = 0
    elif follow:
        first = max(0, n - per_view)
        st.caption(f"Showing the newest pages ({first}–{n - 1} of {n}).")
    else:
        starts = list(range(0, n, per_view))
        first = st.selectbox("Pages", starts, key=key,
                             format_func=lambda s: f"Pages {s}–{min(s + per_view, n) - 1} of {n}")
    st.html(pages_html(document, pages, first, first + per_view - 1, by, pending))


def pages_chart(pages: list[dict], document_words: int) -> go.Figure:
    xs = list(range(len(pages)))
    gist_words = sum(len((p.get("gist") or "").split()) for p in pages)
    fig = go.Figure([
        go.Bar(x=xs, y=[p["words"] for p in pages], name="words per page", marker_color=RAW),
        go.Bar(x=xs, y=[len((p.get("gist") or "").split()) for p in pages], name="gist words per page",
               marker_color=GIST),
    ])
    fig.update_layout(
        barmode="overlay", height=300, margin=dict(l=10, r=10, t=40, b=10), bargap=0.15,
        title=f"Words per page and per gist — compression rate {compression_rate(gist_words, document_words):.1f}%",
        xaxis_title="page", yaxis_title="words", legend=dict(orientation="h", y=-0.25),
    )
    fig.data[1].update(opacity=0.9)
    return fig
