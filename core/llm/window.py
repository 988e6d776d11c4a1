"""The model's context window: how many tokens a prompt and its reply may hold together.

Resolved once per engine, first found wins:

1. the user's setting (``--context-tokens``, the app's "Context window (tokens)");
2. ``GIST_MEMORY_CONTEXT_TOKENS``;
3. what the server says: llama.cpp's ``GET /props`` (``default_generation_settings.n_ctx``,
   the window of one slot), or vLLM's ``max_model_len`` in ``GET /v1/models``; asked with a
   short timeout, any failure ignored;
4. a small table of hosted models whose windows are published (OpenAI's, and Llama 3.1
   when it is not served by a local Ollama, which gives every model its own smaller
   ``num_ctx`` whatever the model could hold);
5. else a conservative default (4,096 tokens).

``resolve_window`` returns a ``Window``: an ``int`` (the tokens) that also says where the
figure came from, so the app and the command line can show "window 2,048 tokens (from the
server)". Prompts are sized with ``prompt_budget``: the window less the reply's budget and a
little headroom for the chat template the server wraps around a prompt and for the model's
tokenizer counting a few more tokens than tiktoken does.
"""
from __future__ import annotations

import json
import math
import os
import re
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from core.config import CONTEXT_TOKENS_ENV
from core.text.tokens import count_tokens

DEFAULT_CONTEXT_TOKENS = 4096  # conservative: Ollama's default window is smaller than most models'
PROPS_TIMEOUT_S = 2.0  # asking the server is a courtesy: a slow or silent one is skipped
HEADROOM_SHARE = 0.05  # of the window, kept free for the chat template and tokenizer differences
HEADROOM_MIN = 32

# Where a window's figure came from, as the screens say it.
SETTING, ENV, SERVER, TABLE, DEFAULT = "setting", "env", "server", "table", "default"
SOURCES = {
    SETTING: "your setting",
    ENV: f"from {CONTEXT_TOKENS_ENV}",
    SERVER: "from the server",
    TABLE: "the model's published window",
    DEFAULT: "the default; the server did not say",
}

# Published context windows (prompt + reply), by model name. Only models whose window does not
# depend on who serves them; matched on the whole name, a dated snapshot ("-2024-08-06") allowed.
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    (r"gpt-4\.1(?:-mini|-nano)?", 1_047_576),
    (r"gpt-4o(?:-mini)?", 128_000),
    (r"chatgpt-4o-latest", 128_000),
    (r"gpt-4-turbo(?:-preview)?", 128_000),
    (r"gpt-4", 8_192),
    (r"gpt-3\.5-turbo(?:-0125|-1106)?", 16_385),
)
_DATED = r"(?:-\d{4}-\d{2}-\d{2}|-\d{4})?"
# Open-weight models: their window is the model's only where the server gives it all (not Ollama).
OPEN_WINDOWS: tuple[tuple[str, int], ...] = (
    (r"(?:meta-llama/)?(?:meta-)?llama-?3\.1[\w.:-]*", 131_072),
    (r"(?:meta-llama/)?(?:meta-)?llama-?3\.2-(?:1|3)b[\w.:-]*", 131_072),
)
OLLAMA_PORT = 11434


class Window(int):
    """A context window in tokens (use it as an ``int``) that knows where its figure came from."""

    source: str

    def __new__(cls, tokens: int, source: str = SETTING) -> "Window":
        window = super().__new__(cls, int(tokens))
        window.source = source
        return window

    @property
    def tokens(self) -> int:
        return int(self)

    def describe(self) -> str:
        """'window 2,048 tokens (from the server)'."""
        return f"window {int(self):,} tokens ({SOURCES.get(self.source, self.source)})"

    def __repr__(self) -> str:
        return f"Window({int(self)}, {self.source!r})"


def describe(window: int | None) -> str:
    """How the screens name a window; "" for none (the offline engine)."""
    if not window:
        return ""
    return window.describe() if isinstance(window, Window) else f"window {int(window):,} tokens"


def resolve_window(backend, given: int | None = None, *, source: str = SETTING) -> Window:
    """The window for ``backend`` (see the module docstring). ``given`` is the user's setting
    (``source`` says otherwise when a caller passes a figure it learnt elsewhere)."""
    if given:
        return Window(_positive(given), source)
    if os.environ.get(CONTEXT_TOKENS_ENV):
        return Window(_positive(os.environ[CONTEXT_TOKENS_ENV], env=True), ENV)
    base_url = getattr(backend, "base_url", "") or ""
    model = getattr(backend, "model", "") or ""
    said = server_window(base_url, model, _api_key(backend))
    if said:
        return Window(said, SERVER)
    known = table_window(model, base_url)
    if known:
        return Window(known, TABLE)
    return Window(DEFAULT_CONTEXT_TOKENS, DEFAULT)


MIN_CONTEXT_TOKENS = 256


def _positive(value, *, env: bool = False) -> int:
    from core.errors import GistError, SettingError

    try:
        tokens = int(str(value).strip())
    except (TypeError, ValueError):
        tokens = None
    if tokens is None or tokens < MIN_CONTEXT_TOKENS:
        requirement = f"a whole number of tokens, at least {MIN_CONTEXT_TOKENS}"
        if env:
            raise GistError(f"{CONTEXT_TOKENS_ENV} must be {requirement} (got {value!r}).")
        raise SettingError("context_tokens", value, requirement, "a prompt and its reply must fit in it")
    return tokens


def _api_key(backend) -> str | None:
    client = getattr(backend, "_client", None)
    return getattr(client, "api_key", None) or getattr(backend, "api_key", None)


def _server_root(base_url: str) -> str:
    """llama.cpp's native routes live beside ``/v1``, not under it."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _get_json(url: str, api_key: str | None, timeout: float):
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def server_window(base_url: str, model: str = "", api_key: str | None = None,
                  timeout: float = PROPS_TIMEOUT_S) -> int | None:
    """The window the server at ``base_url`` says it gives a call, or None: llama.cpp's
    ``GET /props`` (one slot's ``n_ctx``), else vLLM's ``max_model_len`` for ``model`` in
    ``GET /v1/models``. OpenAI's own API says neither and is not asked."""
    parts = urlsplit(base_url or "")
    if parts.scheme not in ("http", "https") or parts.hostname in (None, "api.openai.com"):
        return None
    try:
        props = _get_json(f"{_server_root(base_url)}/props", api_key, timeout)
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        n_ctx = (settings or {}).get("n_ctx") or props.get("n_ctx")
        if n_ctx and int(n_ctx) > 0:
            return int(n_ctx)
    except (urllib.error.URLError, OSError, ValueError, TypeError, AttributeError):
        pass
    try:
        listed = _get_json(f"{base_url.rstrip('/')}/models", api_key, timeout)
        for entry in (listed.get("data") or []) if isinstance(listed, dict) else []:
            if isinstance(entry, dict) and entry.get("max_model_len") and (not model or entry.get("id") == model):
                return int(entry["max_model_len"])
    except (urllib.error.URLError, OSError, ValueError, TypeError, AttributeError):
        pass
    return None


def table_window(model: str, base_url: str = "") -> int | None:
    """A hosted model's published window, or None. Open-weight models (Llama 3.1) only when
    not served by Ollama, whose window is its own ``num_ctx`` (a few thousand tokens)."""
    name = (model or "").strip().lower()
    for pattern, tokens in KNOWN_WINDOWS:
        if re.fullmatch(pattern + _DATED, name):
            return tokens
    if urlsplit(base_url or "").port == OLLAMA_PORT:
        return None
    for pattern, tokens in OPEN_WINDOWS:
        if re.fullmatch(pattern, name):
            return tokens
    return None


# --- fitting prompts -----------------------------------------------------------------------------

def headroom(window: int) -> int:
    """Tokens kept free in every call: the chat template around the prompt, and the model's
    tokenizer counting differently from tiktoken."""
    return max(HEADROOM_MIN, math.ceil(window * HEADROOM_SHARE))


def prompt_budget(window: int, reply_tokens: int) -> int:
    """The most tokens (tiktoken) a prompt may have so that it and a reply of ``reply_tokens``
    fit in ``window``."""
    return window - reply_tokens - headroom(window)


REASK_TOKENS = 64  # the re-ask's own words and the problem it names, beside the reply it shows


def input_budget(window: int, reply_tokens: int) -> int:
    """The most tokens a step's prompt should be made of when a method sizes what goes into it:
    ``prompt_budget`` less room for one re-ask (which repeats the prompt with the unusable
    reply), so a re-ask usually fits too. One that does not is skipped, and the trace says so."""
    return prompt_budget(window, reply_tokens) - min(reply_tokens, 128) - REASK_TOKENS


def fits(prompt: str, reply_tokens: int, window: int | None, model: str | None = None) -> bool:
    """Whether ``prompt`` and a reply of ``reply_tokens`` fit in ``window`` (None: no window)."""
    return window is None or count_tokens(prompt, model) <= prompt_budget(window, reply_tokens)


def room(prompt_without: str, reply_tokens: int, window: int | None, model: str | None = None) -> int | None:
    """Tokens left for what is still to go into a prompt that is ``prompt_without`` so far
    (None: no window, no limit)."""
    if window is None:
        return None
    return prompt_budget(window, reply_tokens) - count_tokens(prompt_without, model)


def cut_to_tokens(text: str, tokens: int, *, from_end: bool = False, model: str | None = None) -> str:
    """The longest start (or end) of ``text`` with at most ``tokens`` tokens, cut between words."""
    if tokens <= 0:
        return ""
    if count_tokens(text, model) <= tokens:
        return text
    words = text.split(" ")
    low, high = 0, len(words)
    while low < high:  # the most words that fit
        mid = (low + high + 1) // 2
        piece = " ".join(words[-mid:] if from_end else words[:mid])
        if count_tokens(piece, model) <= tokens:
            low = mid
        else:
            high = mid - 1
    if low == 0:
        return ""
    return " ".join(words[-low:] if from_end else words[:low])
