"""Who makes the decisions: an engine is a small value, the offline rules or a model.

``Engine`` holds a key (what stored memories and runs record), a label (how the
screens and the command line name it) and the model seam, or none for the offline
engine. Methods never ask which it is: they call ``engine.decide(step, inputs)``
(see ``core/decisions.py``), and ask ``engine.workers(n)`` how many calls may run
at once (the offline engine works inline).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

from core.config import MODEL_ENV
from core.decisions import DEFAULT_REASKS, Step, decide
from core.errors import GistError, ModelError

if TYPE_CHECKING:
    from core.llm.seam import LLM, Embeddings
    from core.store import Store
    from core.trace import Decision

OFFLINE_KEY = "offline"
OFFLINE_LABEL = "Offline engine (no LLM)"
KINDS = ("offline", "openai", "local")
_NO_USAGE = {"llm_calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0, "prompt_words": 0}


@dataclass(frozen=True)
class Engine:
    key: str  # identifies the decision maker in stored memories ("offline", "openai:model@url")
    label: str  # how the app and the command line name it
    llm: "LLM | None" = None  # the model seam; None for the offline engine
    max_reasks: int = DEFAULT_REASKS

    @property
    def offline(self) -> bool:
        return self.llm is None

    @property
    def model(self) -> str | None:
        return self.llm.model if self.llm is not None else None

    @property
    def context_tokens(self) -> int | None:
        """The model's context window (prompt + reply), None for the offline engine."""
        return self.llm.context_tokens if self.llm is not None else None

    def decide(self, step: Step, inputs) -> "Decision":
        return decide(self, step, inputs)

    def can_decide(self, step: Step) -> bool:
        return self.llm is not None or step.rule is not None

    def workers(self, requested: int) -> int:
        """How many decisions may run at once: the offline engine decides inline."""
        return 1 if self.llm is None else max(1, requested)

    def bind(self, *, run_id: int | None, doc_id: str | None) -> "Engine":
        """A copy whose model calls are logged under this run and document."""
        if self.llm is None:
            return self
        return replace(self, llm=self.llm.bind(run_id=run_id, doc_id=doc_id))

    def with_sample(self, sample: int) -> "Engine":
        """Run ``sample`` > 0 of an evaluation asks the model afresh (its own cache entries)."""
        if self.llm is None or sample == 0:
            return self
        return replace(self, llm=self.llm.with_sample(sample))

    def usage(self) -> dict:
        return dict(_NO_USAGE) if self.llm is None else self.llm.usage.as_dict()

    def embed(self, texts: Sequence[str], *, model: str) -> "Embeddings":
        if self.llm is None:
            raise ModelError(
                "The offline engine makes no embeddings.",
                cli="Use --engine openai --model M [--base-url URL] (and --embedding-model), or the bm25 "
                    "baseline, which works offline.",
                app="Choose an OpenAI-compatible server in the sidebar (OpenAI, vLLM and Ollama serve "
                    "/v1/embeddings), or use BM25 top-k, which works offline.")
        return self.llm.embed(texts, model=model)


OFFLINE = Engine(OFFLINE_KEY, OFFLINE_LABEL)


def require_model(model: str | None) -> str:
    if not model:
        raise ModelError("No model configured.",
                         cli="Pass --model (and --base-url for a local server), set GIST_MEMORY_MODEL, or use "
                             "--engine offline.",
                         app="Type the model's name in the sidebar's model settings, or choose the offline engine.")
    return model


def model_engine(llm: "LLM", *, max_reasks: int = DEFAULT_REASKS) -> Engine:
    identity = llm.backend.identity()
    where = identity.get("base_url", "")
    return Engine(f"openai:{identity.get('model')}@{where}", f"{identity.get('model')} at {where}", llm, max_reasks)


def make_engine(kind: str, store: "Store", *, model: str | None = None, base_url: str | None = None,
                api_key: str | None = None, timeout: float = 120.0, max_retries: int = 4,
                backoff: float = 1.0, use_cache: bool = True, temperature: float = 0.0,
                context_tokens: int | None = None, gguf: str | None = None, threads: int | None = None) -> Engine:
    """``offline`` needs nothing; ``openai`` talks to any OpenAI-compatible server; ``local``
    starts llama.cpp's server in this process (``gguf``: the model file, ``threads``: CPU
    threads) and talks to it the same way. ``context_tokens`` overrides the model's window."""
    if kind == "offline":
        return OFFLINE
    if kind not in ("openai", "local"):
        raise GistError(f"Unknown engine {kind!r}; choose one of {', '.join(KINDS)}.")
    from core.llm.openai_backend import OpenAIBackend
    from core.llm.seam import LLM

    from core.llm.window import resolve_window

    if kind == "local":
        from core.llm.local import local_server

        server = local_server(gguf, threads=threads)
        model, base_url, api_key = server.model, server.base_url, "not-needed"
        context_tokens = context_tokens or server.context_tokens
    backend = OpenAIBackend(require_model(model or os.environ.get(MODEL_ENV)), base_url, api_key,
                            timeout=timeout, max_retries=max_retries, backoff=backoff)
    return model_engine(LLM(backend, store, temperature=temperature, use_cache=use_cache,
                            context_tokens=resolve_window(backend, context_tokens)))
