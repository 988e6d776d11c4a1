"""Shared look: one palette for "gist", "raw page" and "re-read", and escaping.

Everything that came from a document or a model goes through ``esc`` before it
is put in HTML; Markdown is only used for our own words.
"""
from __future__ import annotations

import html
import json
import re

import streamlit as st

from core.errors import GistError

GIST = "#b7791f"  # amber: gists
GIST_BG = "#fdf3dc"
RAW = "#3b5bdb"  # blue: raw page text
RAW_BG = "#edf2ff"
REREAD = "#2b8a3e"  # green: pages re-read (looked up)
REREAD_BG = "#d3f9d8"
MUTED = "#868e96"
PAPER = "#7048e8"  # violet: pages the paper's own run re-read

CSS = f"""
<style>
/* The width the window has: at 1280 px beside the sidebar the default padding left ~820 px for content. */
.st-key-gme_nav a {{ padding-top: 0.3rem; padding-bottom: 0.3rem; }}  /* the page list, as Streamlit spaces its own */
[data-testid="stMain"]:focus {{ outline: none; }}  /* a click on blank space is not a focus worth framing */
[data-testid="stMainBlockContainer"] {{ padding-left: 1.5rem; padding-right: 1.5rem; padding-top: 2.5rem;
  max-width: none; }}
.gme-legend span {{ margin-right: 1.2em; font-size: 0.85rem; }}
.gme-swatch {{ display: inline-block; width: 0.9em; height: 0.9em; border-radius: 2px; vertical-align: -1px;
  margin-right: 0.35em; }}
.gme-page {{ scroll-margin-top: 1rem; display: grid; grid-template-columns: 3fr 2fr; gap: 0.8rem; margin: 0.2rem 0; }}
.gme-raw {{ background: {RAW_BG}; border-left: 4px solid {RAW}; padding: 0.5rem 0.7rem; max-height: 16rem;
  overflow-y: auto; white-space: pre-wrap; font-size: 0.88rem; line-height: 1.45; border-radius: 4px; }}
.gme-gist {{ background: {GIST_BG}; border-left: 4px solid {GIST}; padding: 0.5rem 0.7rem; font-size: 0.9rem;
  border-radius: 4px; white-space: pre-wrap; }}
.gme-gist.pending {{ color: {MUTED}; font-style: italic; }}
.gme-page.target {{ outline: 3px solid #f59f00; outline-offset: 3px; border-radius: 4px; }}
.gme-page.target .gme-raw {{ max-height: none; }}  /* the page gone to is read whole, its matches in sight */
.gme-raw mark, .gme-gist mark, .gme-hit mark, .gme-text mark {{ background: #ffe066; padding: 0 1px; border-radius: 2px; }}
.gme-hit {{ font-size: 0.86rem; line-height: 1.35; }} .gme-hit-count {{ color: {MUTED}; font-size: 0.75rem; white-space: nowrap; }}
.gme-text {{ white-space: pre-wrap; font-size: 0.88rem; line-height: 1.45; }}
.gme-break {{ border-top: 2px dashed {MUTED}; margin: 0.35rem 0 0.9rem 0; padding-top: 0.2rem; font-size: 0.8rem;
  color: #495057; }}
.gme-break b {{ color: #212529; }}
.gme-tag {{ display: inline-block; padding: 0 0.4em; border-radius: 3px; font-size: 0.75rem; font-weight: 600;
  margin-right: 0.4em; color: white; }}
.gme-tag.gist {{ background: {GIST}; }} .gme-tag.raw {{ background: {RAW}; }} .gme-tag.reread {{ background: {REREAD}; }}
.gme-tag.fallback {{ background: #e03131; }} .gme-tag.offline {{ background: {MUTED}; }}
.gme-strip {{ display: flex; flex-wrap: wrap; gap: 3px; margin: 0.3rem 0 0.6rem 0; }}
.gme-cell {{ min-width: 2.1rem; height: 2.1rem; border-radius: 4px; background: {GIST_BG}; border: 1px solid {GIST};
  font-size: 0.72rem; display: flex; flex-direction: column; align-items: center; justify-content: center;
  color: #495057; }}
.gme-cell.reread {{ background: {REREAD}; border-color: {REREAD}; color: white; font-weight: 700; }}
.gme-cell.paper {{ background: {PAPER}; border-color: {PAPER}; color: white; font-weight: 700; }}
.gme-cell .order {{ font-size: 0.68rem; }}
.gme-ctx {{ margin: 0.15rem 0; padding: 0.35rem 0.6rem; border-radius: 4px; white-space: pre-wrap; font-size: 0.85rem; }}
.gme-ctx.gist {{ background: {GIST_BG}; border-left: 4px solid {GIST}; }}
.gme-ctx.raw {{ background: {REREAD_BG}; border-left: 4px solid {REREAD}; max-height: 14rem; overflow-y: auto; }}
.gme-compare {{ width: 100%; border-collapse: collapse; font-size: 0.88rem; table-layout: auto; }}
.gme-compare th {{ text-align: left; font-weight: 600; border-bottom: 2px solid #dee2e6; padding: 0.3rem 0.45rem;
  vertical-align: bottom; }}
.gme-compare td {{ padding: 0.35rem 0.45rem; border-bottom: 1px solid #e9ecef; vertical-align: top;
  overflow-wrap: anywhere; }}
.gme-compare td:not(.answer):not(.method) {{ text-align: right; white-space: nowrap; }}
.gme-compare td.method {{ font-weight: 600; white-space: nowrap; }}
.gme-compare td.answer {{ min-width: 12rem; white-space: pre-wrap; }}
.gme-compare tr.correct td.answer {{ background: {REREAD_BG}; }}
.gme-steps {{ width: 100%; border-collapse: collapse; font-size: 0.88rem; }}
.gme-steps th {{ text-align: left; font-weight: 600; border-bottom: 2px solid #dee2e6; padding: 0.3rem 0.45rem; }}
.gme-steps td {{ padding: 0.35rem 0.45rem; border-bottom: 1px solid #e9ecef; vertical-align: top; overflow-wrap: anywhere; }}
.gme-steps td.node {{ font-weight: 600; white-space: nowrap; }} .gme-steps tr.revert td {{ color: #c92a2a; }}
.gme-answer {{ font-size: 1.05rem; padding: 0.6rem 0.8rem; border-radius: 6px; background: #f1f3f5;
  white-space: pre-wrap; }}
</style>
"""


def esc(text: object) -> str:
    """Text as HTML that displays it literally (a document's <script> stays text)."""
    return html.escape(str(text), quote=True)


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:")


_AUTOLINK = re.compile(r"(?i)(://|\bwww\.|@)")  # where Markdown would turn bare text into a link
_JOINER = "\u2060"  # an invisible word joiner: breaks the link, not the reading


def md(text: object) -> str:
    """Text for a Markdown string (labels, captions, warnings) that displays literally: every
    Markdown character escaped, and bare URLs and addresses kept from becoming links."""
    text = _AUTOLINK.sub(lambda m: _JOINER + m.group(1)[0] + _JOINER + m.group(1)[1:], " ".join(str(text).split()))
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in text)


def inject_css() -> None:
    st.html(CSS)


def legend() -> None:
    st.html(
        '<div class="gme-legend">'
        f'<span><i class="gme-swatch" style="background:{GIST}"></i>gist</span>'
        f'<span><i class="gme-swatch" style="background:{RAW}"></i>raw page</span>'
        f'<span><i class="gme-swatch" style="background:{REREAD}"></i>re-read (looked up)</span></div>'
    )


BREAK_WORDS = {
    "model": "chosen by the model", "re-asked": "chosen by the model after a re-ask",
    "fallback": "fallback (no usable reply)", "offline": "chosen by the offline engine (no LLM)",
    "rule": "end of the text or a chapter", "paper": "from the ReadAgent paper (PaLM 2-L)",
}


def who(outcome: str, by: str = "") -> str:
    """How a decision was made, in words; ``by`` names the model (never "the model" for a simulator)."""
    if by and outcome in ("model", "re-asked"):
        return f"chosen by {by}" + (" after a re-ask" if outcome == "re-asked" else "")
    return BREAK_WORDS.get(outcome or "", outcome or "not yet")


OFFLINE_TAG = "offline engine (no LLM)"


def offline_tag() -> str:
    """The mark every answer and gist the offline engine wrote carries: never taken for a model's."""
    return f'<span class="gme-tag offline">{OFFLINE_TAG}</span>'


def written_by(outcome: str, by: str = "") -> str:
    """Who wrote a gist or an answer, in words."""
    return {"offline": f"written by the {OFFLINE_TAG}", "fallback": "fallback (no usable reply)",
            "paper": "quoted from the ReadAgent paper (PaLM 2-L)",
            "model": f"written by {by or 'the model'}",
            "re-asked": f"written by {by or 'the model'} after a re-ask"}.get(outcome or "", outcome or "")


def short_who(outcome: str, by: str = "") -> str:
    """Who made a decision, in the fewest words (a table's cell): the model's name, "offline engine"..."""
    return {"offline": "offline engine", "fallback": "fallback", "paper": "the paper (PaLM 2-L)",
            "rule": "end of text", "model": by or "the model",
            "re-asked": f"{by or 'the model'}, re-asked"}.get(outcome or "", outcome or "")


def model_name(engine_label: str) -> str:
    """"gpt-4o at https://..." -> "gpt-4o"."""
    return (engine_label or "").split(" at ")[0]


# Settings every page can be told about, named as the sidebar names them; a page adds its own.
SIDEBAR_LABELS = {"context_tokens": "Context window (tokens)"}


def error_text(exc: BaseException, labels: dict[str, str] | None = None) -> str:
    """An error as this app says it: a core error with the app's next step (settings named as the
    screen names them, ``labels``); anything else is a bug, said plainly (the run keeps the traceback)."""
    if isinstance(exc, GistError):  # messages can quote a server or a document: shown literally
        return md(exc.for_app({**SIDEBAR_LABELS, **(labels or {})}))
    return md(f"Something went wrong ({type(exc).__name__}: {exc}). The run's trace keeps the details.")


SCROLL = "app_scroll_to"  # the element id of what a user just asked to see (a page, a case, a run)
# Runs in a frame of this same origin: waits (up to 3 s) for the element, then scrolls it to the top.
_SCROLL_SCRIPT = """<script>(function () {
  let tries = 0;
  const look = () => {
    const el = window.parent.document.getElementById(%s);
    if (el) { el.scrollIntoView({block: "start", behavior: "smooth"}); return; }
    if (++tries < 60) setTimeout(look, 50);
  };
  look();
})();</script>"""


def show_me(element_id: str) -> None:
    """Ask for ``element_id`` to be brought into view once this run has drawn it."""
    st.session_state[SCROLL] = element_id


def bring_into_view(element_id: str | None = None) -> None:
    """Scroll ``element_id`` into view now (something the page is about to draw there, such as a
    progress line), or, without one, what the user just asked to see, once (app.py calls it after
    the page ran)."""
    element_id = element_id or st.session_state.pop(SCROLL, None)
    if element_id:
        st.iframe(_SCROLL_SCRIPT % json.dumps(element_id), height=1)
