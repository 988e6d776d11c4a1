"""The OpenAI-compatible backend: the only module that imports ``openai``.

Works with anything that speaks chat completions: OpenAI, vLLM, Ollama,
llama.cpp's server, or ``python -m core simulate-llm``. Retries are ours
(the client's are switched off) so every retry is bounded, backed off, and
reported in the call log. A body that is not the endpoint's reply (not JSON, empty,
no ``choices``) is retried like a server error; a prompt longer than the server's
context window is named as such, with the setting that sizes prompts.
"""
from __future__ import annotations

import json
import os
import random
import re
import time
from urllib.parse import urlsplit, urlunsplit

import openai

from core.config import API_KEY_ENV, BASE_URL_ENV, CONTEXT_TOKENS_ENV, DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_ENV
from core.errors import ModelError
from core.llm.seam import Reply

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class UnreadableReply(Exception):
    """The server answered (HTTP 200) with a body that is not the endpoint's reply."""


_TOO_LONG = re.compile(
    r"context[ _-]?(?:length|size|window)|maximum context|exceeds? (?:the |its )?(?:available |model'?s? )?context|"
    r"prompt is too long|input is too long|too many (?:input )?tokens|n_ctx", re.I)


def too_long(error) -> bool:
    """Whether a server's error (a message, or an ``openai`` error with its code and body) says
    the prompt does not fit in the model's context window."""
    text = error if isinstance(error, str) else f"{error} {getattr(error, 'code', '')} {getattr(error, 'body', '')}"
    return bool(_TOO_LONG.search(text or ""))


def window_error(where: str, detail: str) -> ModelError:
    return ModelError(
        f"The prompt is longer than the model's context window at {where} ({detail[:300]}).",
        cli=f"Set --context-tokens N (or {CONTEXT_TOKENS_ENV}) to the window the server really has, so prompts "
            "are made to fit, or start the server with a larger one; finished work is kept.",
        app="Set \"Context window (tokens)\" in the sidebar's model settings to the window the server really has, "
            "so prompts are made to fit, or start the server with a larger one; finished work is kept.")


def _body_error(response) -> str:
    """The message of an ``{"error": ...}`` object sent with HTTP 200, or ""."""
    extra = getattr(response, "model_extra", None) or {}
    error = extra.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error) if error else ""


def completion_text(response) -> str:
    """The reply text of a chat completion; ``UnreadableReply`` when the body is not one."""
    if not hasattr(response, "choices"):
        shown = str(response).strip()[:80]
        raise UnreadableReply(f"the body is not JSON: {shown!r}" if shown else "the body is empty")
    if response.choices is None:
        error = _body_error(response)
        raise UnreadableReply(f"the body holds an error: {error}" if error else "the JSON has no 'choices'")
    if not response.choices:
        return ""
    message = getattr(response.choices[0], "message", None)
    content = getattr(message, "content", None) if message is not None else None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") if isinstance(p, dict) else str(getattr(p, "text", "")) for p in content)
    return content if isinstance(content, str) else ""


def _not_json(exc: Exception) -> str:
    body = (getattr(exc, "doc", None) or getattr(exc, "body", None) or "")
    shown = str(body).strip()[:80]
    return f"the body is not JSON: {shown!r}" if shown else "the body is empty"


def _embeddings_body(response):
    if not hasattr(response, "data"):
        shown = str(response).strip()[:80]
        raise UnreadableReply(f"the body is not JSON: {shown!r}" if shown else "the body is empty")
    if response.data is None:
        error = _body_error(response)
        raise UnreadableReply(f"the body holds an error: {error}" if error else "the JSON has no 'data'")
    return response


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
                    f"No API key for {self.base_url}.",
                    cli=f"Set {API_KEY_ENV}, point --base-url at a local server, or use --engine offline.",
                    app=f"Type a key in the sidebar's model settings (or set {API_KEY_ENV}), point \"Base URL\" "
                        "at a local server, or choose the offline engine.")
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

    def _request(self, create, model: str, endpoint: str, read=lambda response: response):
        """Call ``create()`` with our bounded retries; returns (``read(response)``, attempts,
        errors). ``read`` raises ``UnreadableReply`` for a body that is not the endpoint's reply,
        which is retried like a server error. Errors a retry cannot fix become a ModelError
        saying what to check."""
        errors: list[str] = []
        where = redact_url(self.base_url)
        unreadable = 0
        for attempt in range(self.max_retries + 1):
            try:
                return read(create()), attempt + 1, errors
            except openai.AuthenticationError:
                raise ModelError(f"The server at {where} rejected the API key.",
                                 cli=f"Check {API_KEY_ENV}.",
                                 app="Check the key typed in the sidebar's model settings.") from None
            except openai.PermissionDeniedError:
                raise ModelError(f"The API key is not allowed to use model {model!r} at {where}.",
                                 cli="Choose another model or key.",
                                 app="Choose another model or key in the sidebar.") from None
            except openai.NotFoundError:
                raise ModelError(f"The server at {where} has no model {model!r} (or no {endpoint} endpoint).",
                                 cli="Check --model and --base-url (it usually ends in /v1).",
                                 app="Check the model name and \"Base URL\" in the sidebar (it usually ends in "
                                     "/v1); Test connection lists the server's models.") from None
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if too_long(exc):
                    raise window_error(where, str(exc)) from None
                raise ModelError(f"The server at {where} refused the request: {exc}. "
                                 "The prompt may be longer than the model's context window.") from None
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                if status is not None and status != 429 and too_long(exc):
                    raise window_error(where, str(exc)) from None
                if status is not None and status < 500 and status not in (408, 409, 429):
                    raise ModelError(f"The server at {where} answered HTTP {status}: {exc}.") from None
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                if attempt == self.max_retries:
                    break
                self._wait(attempt, exc)
                continue
            except (json.JSONDecodeError, openai.APIResponseValidationError, UnreadableReply) as exc:
                detail = str(exc) if isinstance(exc, UnreadableReply) else _not_json(exc)
                if too_long(detail):
                    raise window_error(where, detail) from None
                unreadable += 1
                errors.append(f"UnreadableReply: {detail[:200]}")
                if attempt == self.max_retries:
                    break
                self._wait(attempt, exc)
                continue
        last = errors[-1] if errors else "no reply"
        if unreadable and last.startswith("UnreadableReply"):
            raise ModelError(
                f"The server at {where} did not send a usable {endpoint} reply in {len(errors)} attempts (last: "
                f"{last.split(': ', 1)[1]}).",
                cli="Check that --base-url is the server's OpenAI-compatible address (it usually ends in /v1); "
                    "finished work is kept and will be reused.",
                app="Check that \"Base URL\" in the sidebar is the server's OpenAI-compatible address (it usually "
                    "ends in /v1); finished work is kept and will be reused.")
        if "APIConnectionError" in last or "APITimeoutError" in last:
            raise ModelError(
                f"Could not reach the model server at {where} after {len(errors)} attempts ({last}).",
                cli="Check that it is running and that --base-url is right; run the same command again to resume.",
                app="Check that it is running and that \"Base URL\" in the sidebar is right; what was finished "
                    "is kept, so the work resumes where it stopped.")
        raise ModelError(
            f"The model server at {where} kept failing ({len(errors)} attempts; last: {last}).",
            cli="Try again later or lower --concurrency; finished work is kept and will be reused.",
            app="Try again later or with fewer concurrent model calls; finished work is kept and will be reused.")

    def complete(self, prompt: str, *, temperature: float, max_tokens: int) -> Reply:
        text, attempts, errors = self._request(
            lambda: self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                temperature=temperature,
                max_tokens=max_tokens,
            ), self.model, "chat-completions", completion_text)
        return Reply(text=text, attempts=attempts, errors=tuple(errors))

    def embed(self, texts: list[str], *, model: str | None = None) -> list[list[float]]:
        """One embedding vector per text, in order, from the server's /embeddings endpoint.
        The model is ``model``, else ${GIST_MEMORY_EMBEDDING_MODEL}, else text-embedding-3-small."""
        model = model or os.environ.get(EMBEDDING_MODEL_ENV) or DEFAULT_EMBEDDING_MODEL
        if not texts:
            return []
        response, _, _ = self._request(
            lambda: self._client.embeddings.create(model=model, input=list(texts), encoding_format="float"),
            model, "embeddings", _embeddings_body)
        data = sorted(response.data or [], key=lambda d: d.index)
        vectors = [list(map(float, d.embedding)) for d in data if isinstance(d.embedding, list)]
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) != 1 or not vectors[0]:
            raise ModelError(
                f"The server at {redact_url(self.base_url)} returned {len(vectors)} usable embeddings for "
                f"{len(texts)} texts with model {model!r}. Check that it serves embeddings (POST /v1/embeddings).",
                cli=f"Set the embedding model with --embedding-model or {EMBEDDING_MODEL_ENV}.",
                app="Set the embedding model in the method's settings.")
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
