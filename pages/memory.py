"""Gist memory: the memory as the model sees it, page by page, and exports."""
import pandas as pd
import streamlit as st

from components.entry import through_app
from components.pages_view import marked, page_navigator
from components.state import choose_memory, get_store, require_document
from components.ui import md, model_name, short_who
from core.methods.readagent.export import memory_json, memory_markdown
from core.methods.readagent.memory import with_pages
from core.methods.base import compression_rate
from core.text.search import find_spans

through_app()

store = get_store()
st.title("Gist memory")
document = require_document(store)
chosen = choose_memory(store, document, key="mem_memory")
if chosen is None:
    st.info(f"{md(document.title)} has no finished gist memory yet. Build one on the **Read** page.")
    st.stop()
memory = with_pages(store, chosen, document)

st.caption(f"{md(document.title)} · {len(memory.pages)} pages · {document.words:,} words → "
           f"{memory.gist_words:,} gist words · compression rate {memory.compression_rate:.1f}% · "
           f"gists by {md(memory.engine_label)}")
d1, d2, _ = st.columns([1, 1, 3])
stem = "".join(c if c.isalnum() else "_" for c in document.title.lower()).strip("_")[:40] or document.id
d1.download_button("Export JSON", memory_json(memory, document), f"{stem}_gist_memory.json",
                   "application/json", key="mem_export_json")
d2.download_button("Export Markdown", memory_markdown(memory, document), f"{stem}_gist_memory.md",
                   "text/markdown", key="mem_export_md")

st.subheader("Pages")
# The gist first, where the eye lands; who chose each pause point, and why, at the end (the full
# reason shows in the cell when it is opened, and in the export).
by = model_name(memory.engine_label)
table = pd.DataFrame([{
    "page": p.index, "gist": p.gist, "words": p.words, "gist words": p.gist_words,
    "compression %": round(compression_rate(p.gist_words, p.words), 1),
    "gist by": short_who(p.gist_by, by), "pause point by": short_who(p.break_by, by), "reason": p.break_reason,
} for p in memory.pages])
st.dataframe(table, hide_index=True, width="stretch", key="mem_pages_table", column_config={
    "page": st.column_config.NumberColumn("page", width=50),
    "gist": st.column_config.TextColumn("gist", width=330),  # every column fits at 1280 px
    "words": st.column_config.NumberColumn("words", width=60),
    "gist words": st.column_config.NumberColumn("gist words", width=70),
    "compression %": st.column_config.NumberColumn("compression %", width=90),
    "gist by": st.column_config.TextColumn("gist by", width=110),
    "pause point by": st.column_config.TextColumn("pause point by", width=110),
    "reason": st.column_config.TextColumn("reason", width="small",
                                          help="Why the pause point was put there, as its chooser said"),
})

st.subheader("Raw pages")
per_view = 20
first, target, query = page_navigator([(p.text, p.gist) for p in memory.pages], key="mem_raw_range",
                                      per_view=per_view)
for p in memory.pages[first:first + per_view]:
    spans = find_spans(p.text, query)
    found = f" · {len(spans)} match{'es' if len(spans) != 1 else ''}" if spans else ""
    with st.expander(f"Page {p.index} · {p.words} words{found} · {md(p.gist[:90])}",
                     expanded=p.index == target):
        if spans:
            st.html(f'<div class="gme-text">{marked(p.text, spans)}</div>')
        else:
            st.text(p.text)

st.subheader("As the model sees it")
st.caption("The gist memory exactly as it is put in the look-up and answer prompts.")
st.code(memory.context(), language=None, wrap_lines=True, height=420)
