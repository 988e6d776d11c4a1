"""Lists of documents and runs."""
from __future__ import annotations

import streamlit as st


def render_documents(documents: list[dict]) -> None:
    if not documents:
        st.info("No documents yet. Build one with `python -m core build PATH`.")
        return
    st.dataframe(
        [{"id": d["id"], "title": d["title"], "words": d["words"], "gist memories": d["memories"]} for d in documents],
        hide_index=True, use_container_width=True,
    )
