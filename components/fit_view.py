"""Whether a gist memory fits a model's window, and how it was fitted (ReadAgent App. I, G.3):
which original pages became one page, and which gists were gisted again."""
from __future__ import annotations

import streamlit as st

from components.ui import md
from core.llm.window import describe
from core.methods.readagent.compress import memory_room, memory_tokens
from core.methods.readagent.memory import GistMemory
from core.methods.readagent.presets import PRESETS, choose_preset


def merge_rows(memory: GistMemory) -> list[dict]:
    """One row per page that holds several original pages or whose gist was gisted again."""
    return [{"page": p.index, "original pages": ", ".join(str(i) for i in p.sources) or str(p.index),
             "words": p.words, "gist words": p.gist_words, "gisted again": p.gist_rounds, "gist by": p.gist_by}
            for p in memory.pages if len(p.sources) > 1 or p.gist_rounds]


def render_fit(memory: GistMemory, window: int | None, model: str | None, engine_label: str) -> None:
    """The "fits the window" figure against ``window`` (the chosen model's; None: the offline
    engine, which has none), and the memory's merges."""
    preset = PRESETS.get(memory.preset) or choose_preset("auto", memory.words)
    tokens = memory_tokens(memory, model)
    target = window or memory.fit_tokens
    if target:
        room = memory_room(target, preset, model)
        verdict = "fits" if tokens <= room else "does not fit"
        whose = f"{md(engine_label)}'s {describe(target)}" if window else (
            f"a {target:,}-token window (offline engine (no LLM): it has no window of its own)")
        st.metric("Fits the window", f"{tokens:,} / {room:,} tokens", delta=verdict,
                  delta_color="normal" if tokens <= room else "inverse",
                  help="Tokens of the gist memory as ReadAgent shows it, against the room it has beside the "
                       "look-up instructions, a question and the answer. Fitting a memory "
                       "aims at a third less, so that a look-up has room to re-read pages.")
        st.caption(f"Gist memory {verdict} in {whose}.")
    else:
        st.caption(f"Gist memory: {tokens:,} tokens. The offline engine (no LLM) has no window to fit.")
    if memory.conditional:
        st.caption(f"Conditional ReadAgent (App. G.1): gisted for the question {md(memory.conditional)!s}")
    if memory.parent_id:
        rows = merge_rows(memory)
        merged = sum(1 for r in rows if "," in r["original pages"])
        st.caption(f"Fitted to a {memory.fit_tokens or 0:,}-token window from memory {memory.parent_id}: "
                   f"{merged} pages are merges of original pages (App. I); "
                   f"{sum(r['gisted again'] for r in rows)} gists were gisted again (App. G.3).")
        if rows:
            st.dataframe(rows, hide_index=True, key=f"fit_rows_{memory.memory_id}")
