"""Choosing who makes the decisions: the offline engine or a model."""
from __future__ import annotations

import os

from core.config import MODEL_ENV
from core.db import Store
from core.errors import GistError
from core.llm import LLM, require_model
from core.offline import OfflineEngine
from core.readagent import Engine

ENGINES = ("offline", "openai")


def make_engine(kind: str, store: Store, *, model: str | None = None, base_url: str | None = None,
                api_key: str | None = None, timeout: float = 120.0, max_retries: int = 4,
                backoff: float = 1.0, use_cache: bool = True, temperature: float = 0.0) -> Engine:
    """``offline`` needs nothing; ``openai`` talks to any OpenAI-compatible server."""
    if kind == "offline":
        return OfflineEngine()
    if kind == "openai":
        from core.llm_engine import LLMEngine
        from core.openai_backend import OpenAIBackend

        backend = OpenAIBackend(require_model(model or os.environ.get(MODEL_ENV)), base_url, api_key,
                                timeout=timeout, max_retries=max_retries, backoff=backoff)
        return LLMEngine(LLM(backend, store, temperature=temperature, use_cache=use_cache))
    raise GistError(f"Unknown engine {kind!r}; choose one of {', '.join(ENGINES)}.")
