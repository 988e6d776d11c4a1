"""What a browser session holds: its engine settings, its document, its memory and its runs.

The database is shared by every session (one cached ``Store``); everything a user
is working on lives in ``st.session_state``, so two sessions never see each
other's document, build or question.

Session keys are prefixed by their owner and initialised with ``setdefault``: each page's
own (``read_``, ``mem_``, ``ask_``, ``tree_``, ``ev_``, ``in_``, ``runs_``) are read and
written by that page (and Inspect's by ``components.inspect_view``); the sidebar's are
``engine_``. What several pages share is ``app_``, and only the functions here touch it:
the open document (``app_doc_id``, ``app_document``, and ``app_doc_token``, which changes
whenever another document is opened so a page can tell its own state is about an earlier
one), the gist memory chosen (``app_memory_id``) and the evaluation chosen (``app_eval_id``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from core.config import API_KEY_ENV, BASE_URL_ENV, MODEL_ENV
from core.status import COMPLETE, FAILED, INTERRUPTED, STOPPED
from core.store import Store, open_db
from core.store.records import Memory
from core.text.documents import Document
from core.engine import OFFLINE_LABEL, Engine, make_engine
from core.llm.local import describe as describe_local, local_server

LOCAL_TIMEOUT_S = 600.0  # a model on this machine's CPU may take minutes for a long prompt


@st.cache_resource
def get_store() -> Store:
    return open_db()


@dataclass(frozen=True)
class EngineSettings:
    kind: str = "offline"  # "offline" | "openai" | "local"
    base_url: str = ""
    model: str = ""
    api_key: str = ""  # typed in this session only; never stored
    gguf: str = ""  # local: the GGUF model file; empty: $GIST_MEMORY_GGUF, else the bundled tiny model
    threads: int = 0  # local: CPU threads; 0: llama.cpp's default (all cores)
    context_tokens: int = 0  # openai and local: the model's window (prompt + reply); 0: automatic

    @property
    def label(self) -> str:
        if self.kind == "offline":
            return OFFLINE_LABEL
        if self.kind == "local":
            return describe_local(self.gguf or None)
        return f"{self.model or '(no model)'} at {self.base_url or os.environ.get(BASE_URL_ENV, '')}"


def engine_settings() -> EngineSettings:
    return st.session_state.setdefault("engine_settings", EngineSettings(
        base_url=os.environ.get(BASE_URL_ENV, "http://localhost:8000/v1"),
        model=os.environ.get(MODEL_ENV, ""),
    ))


def set_engine_settings(settings: EngineSettings) -> None:
    st.session_state.engine_settings = settings


def current_engine(store: Store) -> Engine:
    """The engine the user chose (raises a GistError that says what to fix)."""
    s = engine_settings()
    if s.kind == "offline":
        return make_engine("offline", store)
    if s.kind == "local":
        # Started (or found running) with this session's window first, so its slots hold it.
        local_server(s.gguf or None, threads=s.threads or None, context_tokens=s.context_tokens or None)
        return make_engine("local", store, gguf=s.gguf or None, threads=s.threads or None,
                           context_tokens=s.context_tokens or None, timeout=LOCAL_TIMEOUT_S)
    return make_engine("openai", store, model=s.model or None, base_url=s.base_url or None,
                       api_key=s.api_key or None, timeout=60.0, context_tokens=s.context_tokens or None)


def has_env_key() -> bool:
    return bool(os.environ.get(API_KEY_ENV))


def _shared() -> None:
    """The keys every page shares, initialised once per session."""
    for key, value in (("app_doc_id", None), ("app_document", None), ("app_doc_token", 0),
                       ("app_memory_id", None), ("app_eval_id", None)):
        st.session_state.setdefault(key, value)


def current_document(store: Store) -> Document | None:
    _shared()
    doc_id = st.session_state.app_doc_id
    if not doc_id:
        return None
    cached = st.session_state.app_document
    if cached is not None and cached.id == doc_id:
        return cached
    document = store.get_document(doc_id)
    st.session_state.app_document = document
    return document


def open_document(document: Document, memory_id: int | None = None) -> None:
    """Make ``document`` this session's document (its newest memory is chosen on the pages)."""
    _shared()
    if st.session_state.app_doc_id != document.id:
        st.session_state.app_memory_id = None
        st.session_state.app_doc_token += 1  # what pages hold about the previous document is theirs to drop
    st.session_state.app_doc_id = document.id
    st.session_state.app_document = document
    if memory_id is not None:
        st.session_state.app_memory_id = memory_id


def document_token() -> int:
    """Changes whenever another document is opened: a page keeps it beside state that belongs to
    the document open at the time (a build, the last answers) and drops that state when it differs."""
    _shared()
    return st.session_state.app_doc_token


def chosen_memory() -> int | None:
    """The gist memory last chosen (or built) for the open document, if any."""
    _shared()
    return st.session_state.app_memory_id


def set_memory(memory_id: int | None) -> None:
    """Choose a gist memory of the open document (``None``: the newest, on the next picker)."""
    _shared()
    st.session_state.app_memory_id = memory_id


def memory_label(memory: Memory, pages: int | None = None) -> str:
    """A memory as the picker names it; ``pages``: how many it holds so far, when it is unfinished."""
    fitted = f" · fitted to {memory.fit_tokens:,} tokens" if memory.fit_tokens else ""
    conditional = " · conditional on a question" if memory.conditional else ""
    return (f"{memory.engine_label} · {memory.preset} {memory.min_words}–{memory.max_words} words · "
            f"{memory.pages if pages is None else pages} pages{fitted}{conditional}")


PARTIAL = "stopped, partial"


def choose_memory(store: Store, document: Document, *, key: str, partial: bool = False) -> Memory | None:
    """A picker of the document's finished gist memories; the choice (kept across pages) is returned.
    ``partial``: memories whose build stopped before the end are offered too, labelled so."""
    _shared()
    memories = store.memories_for(document.id, status=None if partial else COMPLETE)
    memories = [m for m in memories if m.status in (COMPLETE, STOPPED, INTERRUPTED, FAILED)]
    if not memories:
        return None
    ids = [m.id for m in memories]
    if st.session_state.app_memory_id not in ids:
        st.session_state.app_memory_id = ids[0]
    labels = {m.id: memory_label(m) if m.status == COMPLETE else
              f"{PARTIAL} · {memory_label(m, store.page_count(m.id))}" for m in memories}
    # The session's choice wins over what this picker held last (a build just finished chose its
    # memory); a choice made in the picker becomes the session's before the page reruns.
    st.session_state[key] = st.session_state.app_memory_id
    chosen = st.selectbox("Gist memory", ids, format_func=labels.get, key=key,
                          on_change=lambda: st.session_state.update(app_memory_id=st.session_state[key]))
    st.session_state.app_memory_id = chosen
    return next(m for m in memories if m.id == chosen)


def require_document(store: Store) -> Document:
    """This session's document, or a note pointing to the Read page (and the page stops)."""
    document = current_document(store)
    if document is None:
        st.info("Open a document on the **Read** page first.")
        st.stop()
    return document


def choose_evaluation(store: Store, *, key: str, empty: str) -> int:
    """A picker of stored evaluations, newest first; the choice is kept across pages."""
    _shared()
    evals = store.list_runs(kind="eval")
    if not evals:
        st.info(empty)
        st.stop()
    ids = [e.id for e in evals]
    if st.session_state.app_eval_id not in ids:
        st.session_state.app_eval_id = ids[0]
    labels = {e.id: f"#{e.id} · {e.question} · {e.method} · {e.engine_label} · {e.status}" for e in evals}
    chosen = st.selectbox("Evaluation", ids, index=ids.index(st.session_state.app_eval_id), format_func=labels.get,
                          key=key)
    st.session_state.app_eval_id = chosen
    return chosen


def open_evaluation(eval_id: int) -> None:
    """Make ``eval_id`` the evaluation Evaluate and Inspect open."""
    _shared()
    st.session_state.app_eval_id = eval_id
