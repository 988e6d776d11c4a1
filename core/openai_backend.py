"""The OpenAI-compatible backend: the only module that imports ``openai``.

Works with anything that speaks chat completions: OpenAI, vLLM, Ollama,
llama.cpp's server, or ``python -m core simulate-llm``. Retries are ours
(the client's are switched off) so every retry is bounded, backed off, and
reported in the call log.
"""
from __future__ import annotations

import os
import random
import time
from urllib.parse import urlsplit, urlunsplit

import openai

from core.config import API_KEY_ENV, BASE_URL_ENV, DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_ENV
from core.errors import ModelError
from core.llm import Reply

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def redact_url(url: str) -> str:
    """Drop any user:password@ from a URL before it is stored or shown."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        parts = parts._replace(netloc=host)
    return urlunsplit(parts).rstrip("/")


class OpenAIBackend:
    """Chat completions through the ``openai`` client."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: float = 120.0, max_retries: int = 4, backoff: float = 1.0, sleep=time.sleep):
        self.model = model
        self.base_url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        key = api_key or os.environ.get(API_KEY_ENV)
        if not key:
            if self.base_url == DEFAULT_BASE_URL:
                raise ModelError(
                    f"No API key for {self.base_url}. Set {API_KEY_ENV} (or type a key in the app's model "
                    "settings), point --base-url at a local server, or use --engine offline."
                )
            key = "not-needed"  # local servers (Ollama, vLLM, llama.cpp) usually take any key
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0)

    def identity(self) -> dict:
        return {"kind": "openai-compatible", "model": self.model, "base_url": redact_url(self.base_url)}

    def _wait(self, attempt: int, exc: Exception) -> None:
        delay = self.backoff * (2 ** attempt) * (0.5 + random.random() / 2)
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after:
            try:
                delay = max(delay, min(float(retry_after), 60.0))
            except ValueError:
                pass
        self._sleep(delay)

    def _request(self, create, model: str, endpoint: str):
        """Call ``create()`` with our bounded retries; returns (response, attempts, errors).
        Errors a retry cannot fix become a ModelError saying what to check."""
        errors: list[str] = []
        where = redact_url(self.base_url)
        for attempt in range(self.max_retries + 1):
            try:
                return create(), attempt + 1, errors
            except openai.AuthenticationError:
                raise ModelError(
                    f"The server at {where} rejected the API key. Check {API_KEY_ENV} or the key typed in "
                    "the model settings."
                ) from None
            except openai.PermissionDeniedError:
                raise ModelError(
                    f"The API key is not allowed to use model {model!r} at {where}. "
                    "Choose another model or key."
                ) from None
            except openai.NotFoundError:
                raise ModelError(
                    f"The server at {where} has no model {model!r} (or no {endpoint} endpoint). "
                    "Check --model and --base-url (it usually ends in /v1)."
                ) from None
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                raise ModelError(f"The server at {where} refused the request: {exc}. "
                                 "The prompt may be longer than the model's context window.") from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                if status is not None and status < 500 and status not in (408, 409, 429):
                    raise ModelError(f"The server at {where} answered HTTP {status}: {exc}.") from None
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                if attempt == self.max_retries:
                    break
                self._wait(attempt, exc)
                continue
        last = errors[-1] if errors else "no reply"
        if "APIConnectionError" in last or "APITimeoutError" in last:
            raise ModelError(
                f"Could not reach the model server at {where} after {len(errors)} attempts ({last}). "
                "Check that it is running and that --base-url is right; the build can be resumed."
            )
        raise ModelError(
            f"The model server at {where} kept failing ({len(errors)} attempts; last: {last}). "
            "Try again later or lower --concurrency; finished work is kept and will be reused."
        )

    def complete(self, prompt: str, *, temperature: float, max_tokens: int) -> Reply:
        response, attempts, errors = self._request(
            lambda: self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                temperature=temperature,
                max_tokens=max_tokens,
            ), self.model, "chat-completions")
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice is not None else ""
        return Reply(text=text, attempts=attempts, errors=tuple(errors))

    def embed(self, texts: list[str], *, model: str | None = None) -> list[list[float]]:
        """One embedding vector per text, in order, from the server's /embeddings endpoint.
        The model is ``model``, else ${GIST_MEMORY_EMBEDDING_MODEL}, else text-embedding-3-small."""
        model = model or os.environ.get(EMBEDDING_MODEL_ENV) or DEFAULT_EMBEDDING_MODEL
        if not texts:
            return []
        response, _, _ = self._request(
            lambda: self._client.embeddings.create(model=model, input=list(texts), encoding_format="float"),
            model, "embeddings")
        data = sorted(response.data or [], key=lambda d: d.index)
        vectors = [list(map(float, d.embedding)) for d in data if isinstance(d.embedding, list)]
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) != 1 or not vectors[0]:
            raise ModelError(
                f"The server at {redact_url(self.base_url)} returned {len(vectors)} usable embeddings for "
                f"{len(texts)} texts with model {model!r}. Check that it serves embeddings (POST /v1/embeddings) "
                f"and set the embedding model with {EMBEDDING_MODEL_ENV}."
            )
        return vectors

    def list_models(self) -> list[str]:
        """Model ids the server offers (for the app's 'test connection')."""
        try:
            return sorted(m.id for m in self._client.models.list())
        except openai.AuthenticationError:
            raise ModelError(f"The server at {redact_url(self.base_url)} rejected the API key.") from None
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise ModelError(f"Could not reach {redact_url(self.base_url)}. Is the server running?") from None
        except openai.APIError as exc:
            raise ModelError(f"The server at {redact_url(self.base_url)} could not list models: {exc}") from None
