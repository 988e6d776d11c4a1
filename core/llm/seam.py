"""The LLM seam: one small protocol used by every method.

A ``Backend`` turns a prompt into text (``openai_backend.py`` is the real
one; tests use a scripted fake). ``LLM`` wraps a backend and is what methods
call: it logs every call as one row (step, run, document, model, prompt,
reply, parameters, duration, tokens, cache hit or not) and replays a logged
reply when the same (model, parameters, prompt) was asked before, so a rebuild
costs no model calls and an interrupted build resumes where it stopped.

Replies are sanitised before anything reads or stores them (``sanitise``: no lone
surrogates, no control characters but newline and tab). A reply the step could not
use is marked rejected (``LLM.reject``) and never replayed: the same prompt asks the
model again next time, while accepted replies replay exactly.
"""
from __future__ import annotations

import hashlib
import json
import re
import datetime as dt
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from core.errors import GistError, ModelError
from core.store import Store
from core.text.documents import count_words
from core.text.tokens import count_tokens


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def wall_clock() -> str:
    """Now, as calls record their start (UTC ISO, milliseconds, like ``created_at``)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def sanitise(text: str | None) -> str:
    """``text`` safe to parse, show and store: a lone surrogate (which UTF-8 cannot encode)
    becomes U+FFFD, a surrogate pair the character it encodes, CR LF and CR a newline, and
    other control characters (C0 but newline and tab, DEL, C1) are dropped."""
    if not text:
        return ""
    if not text.isascii():
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


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


@dataclass(frozen=True)
class Embeddings:
    """Vectors for some texts, and the logged calls (rows in llm_calls) that made or replayed them."""
    vectors: list[list[float]]
    model: str
    call_ids: tuple[int, ...]
    made: int  # texts embedded by the server now
    cached: int  # texts whose vectors came from the cache


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

    def add_embedding(self, *, cached: bool, input_tokens: int, words: int) -> None:
        with self._lock:
            if cached:
                self.cached += 1
            else:
                self.calls += 1
            self.input_tokens += input_tokens
            self.prompt_words += words

    def as_dict(self) -> dict:
        return {"llm_calls": self.calls, "cached_calls": self.cached, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "prompt_words": self.prompt_words}


class LLM:
    """Logging, replaying front of a backend. ``bind`` gives a copy for one run."""

    def __init__(self, backend: Backend, store: Store, *, temperature: float = 0.0, max_tokens: int = 512,
                 use_cache: bool = True, run_id: int | None = None, doc_id: str | None = None, sample: int = 0,
                 context_tokens: int | None = None):
        self.backend = backend
        self.context_tokens = context_tokens  # the model's window (prompt + reply); None: not known yet
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

    def _copy(self, **changes) -> "LLM":
        settings = {"temperature": self.temperature, "max_tokens": self.max_tokens, "use_cache": self.use_cache,
                    "run_id": self.run_id, "doc_id": self.doc_id, "sample": self.sample,
                    "context_tokens": self.context_tokens}
        return LLM(self.backend, self.store, **{**settings, **changes})

    def bind(self, *, run_id: int | None, doc_id: str | None) -> "LLM":
        return self._copy(run_id=run_id, doc_id=doc_id)

    def with_sample(self, sample: int) -> "LLM":
        return self._copy(sample=sample)

    def cache_key(self, prompt: str, params: dict) -> str:
        blob = json.dumps({"backend": self.backend.identity(), "params": params, "prompt": prompt}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def complete(self, prompt: str, *, step: str, max_tokens: int | None = None) -> Completion:
        params = {"temperature": self.temperature, "max_tokens": max_tokens or self.max_tokens}
        key = self.cache_key(prompt, {**params, "sample": self.sample} if self.sample else params)
        common = {"run_id": self.run_id, "doc_id": self.doc_id, "step": step, "model": self.model,
                  "backend": self.backend.identity(), "prompt": prompt, "params": params, "cache_key": key,
                  "started_at": wall_clock()}
        started = time.perf_counter()
        if self.use_cache:
            hit = self.store.cached_reply(key)
            if hit is not None:
                seconds = time.perf_counter() - started
                text = sanitise(hit.reply)
                call_id = self.store.log_call(**common, reply=text, cached=1, attempts=0,
                                              duration_ms=int(seconds * 1000), input_tokens=hit.input_tokens,
                                              output_tokens=hit.output_tokens)
                completion = Completion(text, hit.input_tokens, hit.output_tokens, True, seconds, call_id)
                self.usage.add(completion, prompt)
                return completion
        try:
            reply = self.backend.complete(prompt, temperature=params["temperature"], max_tokens=params["max_tokens"])
        except GistError as exc:
            self.store.log_call(**common, reply=None, cached=0, attempts=None,
                                duration_ms=int((time.perf_counter() - started) * 1000), error=sanitise(str(exc)))
            raise
        seconds = time.perf_counter() - started
        text = sanitise(reply.text)
        input_tokens = count_tokens(prompt, self.model)
        output_tokens = count_tokens(text, self.model)
        call_id = self.store.log_call(**common, reply=text, cached=0, attempts=reply.attempts,
                                      duration_ms=int(seconds * 1000), input_tokens=input_tokens,
                                      output_tokens=output_tokens,
                                      retry_errors=json.dumps(list(reply.errors)) if reply.errors else None)
        completion = Completion(text, input_tokens, output_tokens, False, seconds, call_id)
        self.usage.add(completion, prompt)
        return completion

    def reject(self, completion: Completion) -> None:
        """The step could not use this reply: never replay it. The same prompt asks the model
        again next time (in this run or a later one); the reply stays in the call log."""
        self.store.reject_call(completion.call_id)

    EMBED_BATCH = 64  # texts per embeddings request

    def embed(self, texts: Sequence[str], *, model: str, step: str = "embed") -> Embeddings:
        """Embedding vectors for ``texts`` with the server's embedding ``model``. Vectors already
        made for the same server, model and text are reused; every request (and each replay)
        is logged as one call whose prompt holds the texts."""
        embed = getattr(self.backend, "embed", None)
        if embed is None:
            raise ModelError(f"The {self.backend.identity().get('kind', 'model')} backend cannot make embeddings.",
                             cli="Use an OpenAI-compatible server (--engine openai) for the embedding baseline.",
                             app="Choose an OpenAI-compatible server in the sidebar for the embedding baseline.")
        identity = {**self.backend.identity(), "embedding_model": model}
        identity.pop("model", None)
        keys = [hashlib.sha256(json.dumps({"backend": identity, "text": t}, sort_keys=True).encode()).hexdigest()
                for t in texts]
        found = self.store.cached_embeddings(keys) if self.use_cache else {}
        common = {"run_id": self.run_id, "doc_id": self.doc_id, "step": step, "model": model,
                  "backend": self.backend.identity(), "params": {"embedding_model": model},
                  "started_at": wall_clock()}
        call_ids: list[int] = []
        reused = [t for k, t in zip(keys, texts) if k in found]
        if reused:
            tokens = sum(count_tokens(t) for t in reused)
            call_ids.append(self.store.log_call(**common, prompt="\n\n".join(reused),
                                                reply=f"{len(reused)} vectors from the cache", cached=1, attempts=0,
                                                duration_ms=0, input_tokens=tokens, output_tokens=0))
            self.usage.add_embedding(cached=True, input_tokens=tokens, words=sum(count_words(t) for t in reused))
        missing = list(dict.fromkeys((k, t) for k, t in zip(keys, texts) if k not in found))
        for start in range(0, len(missing), self.EMBED_BATCH):
            chunk = missing[start:start + self.EMBED_BATCH]
            chunk_texts = [t for _, t in chunk]
            prompt = "\n\n".join(chunk_texts)
            common["started_at"] = wall_clock()
            started = time.perf_counter()
            try:
                vectors = embed(chunk_texts, model=model)
            except GistError as exc:
                self.store.log_call(**common, prompt=prompt, reply=None, cached=0, attempts=None,
                                    duration_ms=int((time.perf_counter() - started) * 1000), error=str(exc))
                raise
            tokens = sum(count_tokens(t) for t in chunk_texts)
            call_ids.append(self.store.log_call(
                **common, prompt=prompt, reply=f"{len(vectors)} vectors of {len(vectors[0])} dimensions", cached=0,
                attempts=1, duration_ms=int((time.perf_counter() - started) * 1000), input_tokens=tokens,
                output_tokens=0))
            self.usage.add_embedding(cached=False, input_tokens=tokens, words=count_words(prompt))
            made = [(k, v) for (k, _), v in zip(chunk, vectors)]
            self.store.save_embeddings(made, model=model, backend=identity)
            found.update(made)
        return Embeddings([found[k] for k in keys], model, tuple(call_ids), made=len(missing),
                          cached=len(texts) - len(missing))

