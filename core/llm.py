"""The LLM seam: one small protocol used by every method.

A ``Backend`` turns a prompt into text (``core/openai_backend.py`` is the real
one; tests use a scripted fake). ``LLM`` wraps a backend and is what methods
call: it logs every call as one row (step, run, document, model, prompt,
reply, parameters, duration, tokens, cache hit or not) and replays a logged
reply when the same (model, parameters, prompt) was asked before, so a rebuild
costs no model calls and an interrupted build resumes where it stopped.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

from core.db import Store
from core.documents import count_words
from core.errors import GistError, ModelError
from core.tokens import count_tokens


@dataclass(frozen=True)
class Reply:
    """What a backend returns for one logical call (after its own retries)."""
    text: str
    attempts: int = 1
    errors: tuple[str, ...] = ()


class Backend(Protocol):
    model: str

    def identity(self) -> dict:
        """What makes two backends' replies interchangeable (model, server). Never the key."""

    def complete(self, prompt: str, *, temperature: float, max_tokens: int) -> Reply:
        ...


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    cached: bool
    seconds: float
    call_id: int


@dataclass
class Usage:
    """Counters for one run; safe to update from several threads."""
    calls: int = 0  # calls made to the model now
    cached: int = 0  # calls answered from the replay cache
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_words: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, completion: Completion, prompt: str) -> None:
        with self._lock:
            if completion.cached:
                self.cached += 1
            else:
                self.calls += 1
            self.input_tokens += completion.input_tokens
            self.output_tokens += completion.output_tokens
            self.prompt_words += count_words(prompt)

    def as_dict(self) -> dict:
        return {"llm_calls": self.calls, "cached_calls": self.cached, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "prompt_words": self.prompt_words}


class LLM:
    """Logging, replaying front of a backend. ``bind`` gives a copy for one run."""

    def __init__(self, backend: Backend, store: Store, *, temperature: float = 0.0, max_tokens: int = 512,
                 use_cache: bool = True, run_id: int | None = None, doc_id: str | None = None, sample: int = 0):
        self.backend = backend
        self.store = store
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.use_cache = use_cache
        self.run_id = run_id
        self.doc_id = doc_id
        # Repeated runs of an evaluation: sample k > 0 has its own replay-cache entries, so a
        # second run asks the model again instead of replaying the first (the model never sees it).
        self.sample = sample
        self.usage = Usage()

    @property
    def model(self) -> str:
        return self.backend.model

    def bind(self, *, run_id: int | None, doc_id: str | None) -> "LLM":
        return LLM(self.backend, self.store, temperature=self.temperature, max_tokens=self.max_tokens,
                   use_cache=self.use_cache, run_id=run_id, doc_id=doc_id, sample=self.sample)

    def with_sample(self, sample: int) -> "LLM":
        return LLM(self.backend, self.store, temperature=self.temperature, max_tokens=self.max_tokens,
                   use_cache=self.use_cache, run_id=self.run_id, doc_id=self.doc_id, sample=sample)

    def cache_key(self, prompt: str, params: dict) -> str:
        blob = json.dumps({"backend": self.backend.identity(), "params": params, "prompt": prompt}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def complete(self, prompt: str, *, step: str, max_tokens: int | None = None) -> Completion:
        params = {"temperature": self.temperature, "max_tokens": max_tokens or self.max_tokens}
        key = self.cache_key(prompt, {**params, "sample": self.sample} if self.sample else params)
        common = {"run_id": self.run_id, "doc_id": self.doc_id, "step": step, "model": self.model,
                  "backend": self.backend.identity(), "prompt": prompt, "params": params, "cache_key": key}
        started = time.perf_counter()
        if self.use_cache:
            hit = self.store.cached_reply(key)
            if hit is not None:
                seconds = time.perf_counter() - started
                call_id = self.store.log_call(**common, reply=hit["reply"], cached=1, attempts=0,
                                              duration_ms=int(seconds * 1000), input_tokens=hit["input_tokens"],
                                              output_tokens=hit["output_tokens"])
                completion = Completion(hit["reply"], hit["input_tokens"], hit["output_tokens"], True, seconds, call_id)
                self.usage.add(completion, prompt)
                return completion
        try:
            reply = self.backend.complete(prompt, temperature=params["temperature"], max_tokens=params["max_tokens"])
        except GistError as exc:
            self.store.log_call(**common, reply=None, cached=0, attempts=None,
                                duration_ms=int((time.perf_counter() - started) * 1000), error=str(exc))
            raise
        seconds = time.perf_counter() - started
        input_tokens = count_tokens(prompt, self.model)
        output_tokens = count_tokens(reply.text, self.model)
        call_id = self.store.log_call(**common, reply=reply.text, cached=0, attempts=reply.attempts,
                                      duration_ms=int(seconds * 1000), input_tokens=input_tokens,
                                      output_tokens=output_tokens,
                                      retry_errors=json.dumps(list(reply.errors)) if reply.errors else None)
        completion = Completion(reply.text, input_tokens, output_tokens, False, seconds, call_id)
        self.usage.add(completion, prompt)
        return completion


def require_model(model: str | None) -> str:
    if not model:
        raise ModelError(
            "No model configured. Pass --model (and --base-url for a local server), set GIST_MEMORY_MODEL, "
            "or use --engine offline."
        )
    return model
