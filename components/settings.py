"""The sidebar: which engine makes the decisions, a connection test, the database in use."""
from __future__ import annotations

import streamlit as st

from components.state import EngineSettings, engine_settings, get_store, has_env_key, set_engine_settings
from core.config import API_KEY_ENV
from core.errors import GistError
from core.offline import LABEL as OFFLINE_LABEL

ENGINE_CHOICES = {"offline": f"{OFFLINE_LABEL}", "openai": "OpenAI-compatible server"}


def render_settings() -> None:
    current = engine_settings()
    st.sidebar.subheader("Model")
    kind = st.sidebar.radio("Engine", list(ENGINE_CHOICES), format_func=ENGINE_CHOICES.get,
                            index=list(ENGINE_CHOICES).index(current.kind), key="engine_kind")
    if kind == "offline":
        st.sidebar.caption("No LLM: pause points, gists, look-ups and answers come from lexical rules. "
                           "A real baseline, not a model.")
        new = EngineSettings("offline", current.base_url, current.model, current.api_key)
    else:
        base_url = st.sidebar.text_input("Base URL", current.base_url, key="engine_base_url",
                                         help="OpenAI, vLLM, Ollama or llama.cpp server, e.g. http://localhost:11434/v1")
        model = st.sidebar.text_input("Model", current.model, key="engine_model")
        key_help = (f"Left empty, {API_KEY_ENV} from the environment is used." if has_env_key()
                    else "Kept in this browser session only, never saved. Local servers accept any key.")
        api_key = st.sidebar.text_input("API key", current.api_key, type="password", key="engine_api_key",
                                        help=key_help)
        new = EngineSettings("openai", base_url.strip(), model.strip(), api_key.strip())
        st.sidebar.caption("Replies are cached per model and server: switching either never reuses "
                           "another model's replies.")
        if st.sidebar.button("Test connection", key="test_connection"):
            _test_connection(new)
    if new != current:
        set_engine_settings(new)
    store = get_store()
    st.sidebar.caption(f"Database: `{store.path or 'in memory'}`")


def _test_connection(settings: EngineSettings) -> None:
    from core.openai_backend import OpenAIBackend

    try:
        if not settings.model:
            raise GistError("Type the model name first (the server's id for it).")
        backend = OpenAIBackend(settings.model, settings.base_url or None, settings.api_key or None,
                                timeout=10.0, max_retries=0)
        models = backend.list_models()
    except GistError as exc:
        st.sidebar.error(str(exc))
        return
    if settings.model in models:
        st.sidebar.success(f"Connected. The server offers {settings.model}.")
    else:
        offered = ", ".join(models[:8]) or "none"
        st.sidebar.warning(f"Connected, but the server does not list {settings.model!r}. It offers: {offered}.")
