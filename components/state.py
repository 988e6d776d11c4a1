"""What a browser session holds: its engine settings, its document, its memory and its runs.

The database is shared by every session (one cached ``Store``); everything a user
is working on lives in ``st.session_state``, so two sessions never see each
other's document, build or question.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from core.config import API_KEY_ENV, BASE_URL_ENV, MODEL_ENV
from core.db import Store, open_db
from core.documents import Document
from core.engines import make_engine
from core.offline import LABEL as OFFLINE_LABEL
from core.readagent import Engine


@st.cache_resource
def get_store() -> Store:
    return open_db()


@dataclass(frozen=True)
class EngineSettings:
    kind: str = "offline"  # "offline" | "openai"
    base_url: str = ""
    model: str = ""
    api_key: str = ""  # typed in this session only; never stored

    @property
    def label(self) -> str:
        if self.kind == "offline":
            return OFFLINE_LABEL
        return f"{self.model or '(no model)'} at {self.base_url or os.environ.get(BASE_URL_ENV, '')}"


def engine_settings() -> EngineSettings:
    if "engine_settings" not in st.session_state:
        st.session_state.engine_settings = EngineSettings(
            base_url=os.environ.get(BASE_URL_ENV, "http://localhost:8000/v1"),
            model=os.environ.get(MODEL_ENV, ""),
        )
    return st.session_state.engine_settings


def set_engine_settings(settings: EngineSettings) -> None:
    st.session_state.engine_settings = settings


def current_engine(store: Store) -> Engine:
    """The engine the user chose (raises a GistError that says what to fix)."""
    s = engine_settings()
    if s.kind == "offline":
        return make_engine("offline", store)
    return make_engine("openai", store, model=s.model or None, base_url=s.base_url or None,
                       api_key=s.api_key or None, timeout=60.0)


def has_env_key() -> bool:
    return bool(os.environ.get(API_KEY_ENV))


def current_document(store: Store) -> Document | None:
    doc_id = st.session_state.get("doc_id")
    if not doc_id:
        return None
    cached = st.session_state.get("_document")
    if cached is not None and cached.id == doc_id:
        return cached
    document = store.get_document(doc_id)
    st.session_state._document = document
    return document


def open_document(document: Document, memory_id: int | None = None) -> None:
    """Make ``document`` this session's document (its newest memory is chosen on the pages)."""
    if st.session_state.get("doc_id") != document.id:
        for key in ("memory_id", "job_id", "ask_runs", "ask_question"):
            st.session_state.pop(key, None)
    st.session_state.doc_id = document.id
    st.session_state._document = document
    if memory_id is not None:
        st.session_state.memory_id = memory_id


def memory_label(row: dict) -> str:
    return (f"{row['engine_label']} · {row['preset']} {row['min_words']}–{row['max_words']} words · "
            f"{row['pages']} pages")


def choose_memory(store: Store, document: Document, *, key: str) -> int | None:
    """A picker of the document's finished gist memories; the choice is kept across pages."""
    rows = store.memories_for(document.id)
    if not rows:
        return None
    ids = [r["id"] for r in rows]
    if st.session_state.get("memory_id") not in ids:
        st.session_state.memory_id = ids[0]
    labels = {r["id"]: memory_label(r) for r in rows}
    chosen = st.selectbox("Gist memory", ids, index=ids.index(st.session_state.memory_id),
                          format_func=labels.get, key=key)
    st.session_state.memory_id = chosen
    return chosen


def require_document(store: Store) -> Document:
    """This session's document, or a note pointing to the Read page (and the page stops)."""
    document = current_document(store)
    if document is None:
        st.info("Open a document on the **Read** page first.")
        st.stop()
    return document


def choose_evaluation(store: Store, *, key: str, empty: str) -> int:
    """A picker of stored evaluations, newest first; the choice is kept across pages."""
    evals = store.list_runs(kind="eval")
    if not evals:
        st.info(empty)
        st.stop()
    ids = [e["id"] for e in evals]
    if st.session_state.get("eval_id") not in ids:
        st.session_state.eval_id = ids[0]
    labels = {e["id"]: f"#{e['id']} · {e['question']} · {e['method']} · {e['engine_label']} · {e['status']}"
              for e in evals}
    chosen = st.selectbox("Evaluation", ids, index=ids.index(st.session_state.eval_id), format_func=labels.get,
                          key=key)
    st.session_state.eval_id = chosen
    return chosen
