"""What a link reopens: the open document, its gist memory and each page's own view live in the
URL (``st.query_params``) as ids of rows in the database, so a reload or a shared link (on the
same database) shows the same screen.

``doc`` and ``memory`` are written on every page; a page adds its own with ``publish`` (Ask:
``runs``, its answers; Memory tree: ``tree``). Ask's question, options and methods are widgets
bound to the URL by their own keys. ``restore`` runs once per session, before any page: it opens
the document the URL names and hands each page its values through ``from_url``.
"""
from __future__ import annotations

import streamlit as st

from components.state import chosen_memory, current_document, open_document
from core.errors import GistError
from core.store import Store

DOC, MEMORY = "doc", "memory"


def _ints(text: str | None) -> list[int]:
    return [int(p) for p in (text or "").split(",") if p.strip().isdigit()]


def restore(store: Store) -> None:
    """Once per session: open the document and memory the URL names, and keep the rest for pages."""
    if st.session_state.get("app_url_restored"):
        return
    st.session_state.app_url_restored = True
    params = {k: st.query_params.get(k) for k in st.query_params}
    st.session_state.app_url = params
    if not params.get(DOC) or current_document(store) is not None:
        return
    try:
        document = store.get_document(params[DOC])
    except GistError:  # a link to another database, or a document deleted since
        return
    memories = {m.id for m in store.memories_for(document.id)}
    memory = next((m for m in _ints(params.get(MEMORY)) if m in memories), None)
    open_document(document, memory)


def from_url(name: str) -> str | None:
    """A page's value from the URL this session was opened with, handed over once."""
    return (st.session_state.get("app_url") or {}).pop(name, None)


def ids_from_url(name: str) -> list[int]:
    return _ints(from_url(name))


def publish(**values) -> None:
    """Write this view into the URL: the open document and memory, and a page's own ``values``
    (ids or lists of ids; ``None`` removes one)."""
    document = st.session_state.get("app_document")
    values = {DOC: document.id if document is not None else None, MEMORY: chosen_memory(), **values}
    for name, value in values.items():
        text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else "" if value is None else str(value)
        if text and st.query_params.get(name) != text:
            st.query_params[name] = text
        elif not text and name in st.query_params:
            del st.query_params[name]
