"""A scripted model for unit tests: queue replies, assert on the prompts received.

An empty queue fails loudly, naming the prompt that found it empty.
"""
from __future__ import annotations

import threading
from typing import Callable

from core.llm.seam import Reply


class ScriptedBackend:
    def __init__(self, replies=(), *, handler: Callable[[str], str] | None = None, model: str = "scripted-model",
                 embedder: Callable[[list[str]], list[list[float]]] | None = None):
        self.replies = list(replies)  # str, Exception (raised), or callable(prompt) -> str
        self.handler = handler  # used when the queue is empty, if given
        self.embedder = embedder  # embed(texts) -> vectors, for the embedding baseline
        self.embedded: list[list[str]] = []  # texts of each embed call
        self.model = model
        self.prompts: list[str] = []
        self.params: list[dict] = []
        self._lock = threading.Lock()

    def identity(self) -> dict:
        return {"kind": "scripted", "model": self.model}

    def complete(self, prompt: str, *, temperature: float, max_tokens: int) -> Reply:
        with self._lock:
            self.prompts.append(prompt)
            self.params.append({"temperature": temperature, "max_tokens": max_tokens})
            if self.replies:
                reply = self.replies.pop(0)
            elif self.handler is not None:
                reply = self.handler
            else:
                raise AssertionError(f"ScriptedBackend: no reply queued for prompt:\n{prompt[:600]}")
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            reply = reply(prompt)
        return Reply(reply)

    def embed(self, texts: list[str], *, model: str) -> list[list[float]]:
        if self.embedder is None:
            raise AssertionError("ScriptedBackend: no embedder given for embed()")
        with self._lock:
            self.embedded.append(list(texts))
        return self.embedder(list(texts))


class Gate:
    """Holds each call it wraps until ``n`` are in flight at once, then lets all go on: a test of
    a concurrency limit that depends on no timing. ``most`` is the most calls seen at once."""

    def __init__(self, n: int, timeout: float = 30.0):
        self.n, self.timeout = n, timeout
        self.now = self.most = 0
        self._cond = threading.Condition()

    def wrap(self, fn: Callable) -> Callable:
        def held(*args, **kwargs):
            with self._cond:
                self.now += 1
                self.most = max(self.most, self.now)
                self._cond.notify_all()
                self._cond.wait_for(lambda: self.most >= self.n, timeout=self.timeout)
            try:
                return fn(*args, **kwargs)
            finally:
                with self._cond:
                    self.now -= 1
        return held
