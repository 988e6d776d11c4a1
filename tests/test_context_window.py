"""Prompts always fit the model's context window.

The window is resolved once per engine (setting, environment, the server's ``/props``, a
table of hosted models, a default) and every model call keeps prompt + reply budget within
it: a step shrinks what it shows (pages, segments, working memory, context) or its reply
budget, and a prompt that still cannot fit is never sent but ends with a clear error naming
the window setting. A text with one 20,000-word paragraph is read under a 2,048-token
window by every method, with a scripted model and with the simulated server.
"""
import json
import random
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from core.decisions import Step, ask_model
from core.engine import make_engine
from core.errors import ContextWindowError, GistError, SettingError
from core.llm import window as window_module
from core.llm.seam import LLM
from core.llm.simulator import MODEL, SimulatedLLM, respond
from core.llm.window import (DEFAULT, DEFAULT_CONTEXT_TOKENS, ENV, SERVER, SETTING, TABLE, Window, describe, fits,
                             headroom, prompt_budget, resolve_window)
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.lookup import readagent_p, readagent_s
from core.methods.readagent.memory import load_memory
from core.methods.readagent.presets import PRESETS, choose_preset
from core.parsing import Parsed, bad
from core.store.records import LlmCall
from core.text.documents import MAX_PARAGRAPH_WORDS, PIECE_WORDS, parse_text, split_long_paragraph
from core.text.tokens import count_tokens
from tests.fakes import ScriptedBackend

WINDOW = 2048
METHODS = ["readagent-p", "readagent-s", "gistmem", "full", "memwalker", "segmentplus", "bm25", "first-words",
           "last-words"]
# ReadAgent's look-ups and GistMem show the whole gist memory in one prompt: a 20,000-word text has
# ~35 pages whose gists hold ~3,600 tokens, more than a 2,048-token window. The build fits the memory
# into the window (App. I page merging, G.3 iterative gisting); built without fitting, these end with
# the clear error.
NEED_THE_WHOLE_MEMORY = {"readagent-p", "readagent-s", "gistmem"}
QUESTION = Question("Who watched the alien by the river?", ("Casey", "Tommy", "Marta", "the sheriff"))


@pytest.fixture(autouse=True)
def _no_window_setting(monkeypatch):
    monkeypatch.delenv("GIST_MEMORY_CONTEXT_TOKENS", raising=False)


def long_paragraph(words: int = 20_000, seed: int = 7) -> str:
    """One paragraph of ``words`` words: plain sentences, no paragraph break anywhere."""
    rng = random.Random(seed)
    people = ["Casey", "Dameri", "Tommy", "the patrol", "the alien", "the sheriff", "Marta", "the crowd"]
    verbs = ["watched", "followed", "questioned", "ignored", "greeted", "chased", "helped", "feared"]
    places = ["by the river", "near the old mill", "in the town square", "at the landing site", "under the bridge",
              "behind the barn", "on the hill road", "inside the craft"]
    out: list[str] = []
    while len(out) < words:
        out += (f"{rng.choice(people).capitalize()} {rng.choice(verbs)} {rng.choice(people)} {rng.choice(places)} "
                f"while the {rng.choice(['wind', 'rain', 'night'])} {rng.choice(['rose', 'fell', 'passed'])}.").split()
    return " ".join(out[:words])


def largest_call(calls) -> tuple[int, str]:
    """(input tokens + reply budget, step) of the largest logged call."""
    return max((c.input_tokens + c.params["max_tokens"], c.step) for c in calls)


def every_call(store) -> list[LlmCall]:
    """Every logged model call, whatever run it belongs to."""
    return [LlmCall.from_row(row) for row in store.db["llm_calls"].rows]


def read_with_every_method(store, engine, document, fit: bool = True) -> dict[str, object]:
    """Build the gist memory, then ask with every method: for each, the largest call sent (or
    the error it ended with). Every logged call must fit the window."""
    build = build_memory(store, document, engine, BuildSettings(choose_preset("auto", document.words), fit=fit),
                         concurrency=4)
    calls = store.calls(build.run_id) + (store.calls(build.fit["run_id"]) if build.fit and build.fit["run_id"] else [])
    assert calls and all(c.input_tokens + c.params["max_tokens"] <= WINDOW for c in calls)
    found: dict[str, object] = {"build": largest_call(calls)}
    for method in METHODS:
        seen = {c.id for c in every_call(store)}
        try:
            result = ask(store, engine, document.id, QUESTION, method=method)
        except ContextWindowError as exc:
            found[method] = exc
        else:
            assert result.answer
            found[method] = largest_call([c for c in every_call(store) if c.id not in seen])
    for call in every_call(store):
        assert call.input_tokens + call.params["max_tokens"] <= WINDOW, (call.step, call.id)
    return found


def check_every_method(found: dict[str, object], fit: bool = True) -> None:
    for method in METHODS:
        if method in NEED_THE_WHOLE_MEMORY and not fit:
            error = found[method]
            assert isinstance(error, ContextWindowError), (method, error)
            assert "whole gist memory" in str(error) and "App. I" in str(error)
            assert "--context-tokens" in error.for_cli() and "Context window (tokens)" in error.for_app()
        else:
            tokens, _ = found[method]
            assert tokens <= WINDOW - headroom(WINDOW), (method, found[method])
    print("\nlargest call (input tokens + reply budget) under a 2,048-token window: "
          + ", ".join(f"{m} {v[0]} ({v[1]})" if isinstance(v, tuple) else f"{m}: error" for m, v in found.items()))


@pytest.fixture(scope="module")
def long_document():
    document = parse_text(long_paragraph(), title="One long paragraph")
    assert document.meta["split_paragraphs"] == 1 and len(document.paragraphs) > 40
    return document


def test_every_method_fits_a_2048_token_window_with_a_scripted_model(scripted, store, long_document):
    engine, backend = scripted(handler=respond, context_tokens=WINDOW)
    found = read_with_every_method(store, engine, long_document)
    check_every_method(found)
    assert backend.prompts  # the model was asked


def test_every_method_fits_a_2048_token_window_with_the_simulated_server(store, long_document):
    with SimulatedLLM(context_tokens=WINDOW) as sim:
        engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01)
        assert engine.context_tokens == WINDOW and engine.context_tokens.source == SERVER
        found = read_with_every_method(store, engine, long_document)
    check_every_method(found)


def test_a_memory_built_without_fitting_ends_with_the_clear_error(scripted, store, long_document):
    engine, _ = scripted(handler=respond, context_tokens=WINDOW)
    check_every_method(read_with_every_method(store, engine, long_document, fit=False), fit=False)


# --- the window: where it comes from -----------------------------------------------------------------

class FakeLlamaCpp:
    """A llama.cpp server's ``GET /props`` (and nothing else), on a free port."""

    def __init__(self, props: dict | None, status: int = 200, key: str | None = None):
        self.props, self.status, self.key, self.seen = props, status, key, []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.seen.append((self.path, self.headers.get("Authorization")))
                ok = fake.key is None or self.headers.get("Authorization") == f"Bearer {fake.key}"
                status = fake.status if ok else 401
                body = json.dumps(fake.props if self.path == "/props" and status == 200 else {"error": "no"}).encode()
                self.send_response(status if self.path == "/props" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class Backend:
    def __init__(self, base_url: str, model: str = "some-model"):
        self.base_url, self.model = base_url, model


def test_resolve_window_reads_llama_cpps_props_with_the_key():
    with FakeLlamaCpp({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 4}, key="k") as server:
        backend = Backend(server.base_url)
        backend.api_key = "k"
        window = resolve_window(backend)
    assert window == 2048 and window.source == SERVER and describe(window) == "window 2,048 tokens (from the server)"
    assert server.seen[0] == ("/props", "Bearer k")  # beside /v1, not under it


def test_a_top_level_n_ctx_counts_and_a_failing_server_is_ignored(monkeypatch):
    monkeypatch.delenv("GIST_MEMORY_CONTEXT_TOKENS", raising=False)
    with FakeLlamaCpp({"n_ctx": 3000}) as server:
        assert resolve_window(Backend(server.base_url)) == 3000
    with FakeLlamaCpp({}, status=500) as server:
        assert resolve_window(Backend(server.base_url)).source == DEFAULT
    closed = FakeLlamaCpp({})
    closed.server.server_close()  # nothing listens there
    assert resolve_window(Backend(closed.base_url)) == DEFAULT_CONTEXT_TOKENS


@pytest.mark.parametrize("given, env, n_ctx, model, port, expected", [
    (8192, "6000", 2048, "gpt-4o", None, (8192, SETTING)),  # the setting first
    (None, "6000", 2048, "gpt-4o", None, (6000, ENV)),  # then the environment
    (None, None, 2048, "gpt-4o", None, (2048, SERVER)),  # then what the server says
    (None, None, None, "gpt-4o-mini", None, (128_000, TABLE)),  # then a hosted model's published window
    (None, None, None, "gpt-4o-2024-08-06", None, (128_000, TABLE)),
    (None, None, None, "gpt-4.1-mini", None, (1_047_576, TABLE)),
    (None, None, None, "gpt-3.5-turbo", None, (16_385, TABLE)),
    (None, None, None, "meta-llama/Llama-3.1-8B-Instruct", None, (131_072, TABLE)),
    (None, None, None, "llama3.1", 11434, (DEFAULT_CONTEXT_TOKENS, DEFAULT)),  # Ollama gives it its own num_ctx
    (None, None, None, "my-finetune", None, (DEFAULT_CONTEXT_TOKENS, DEFAULT)),  # else the default
])
def test_the_window_is_resolved_in_order(monkeypatch, given, env, n_ctx, model, port, expected):
    if env:
        monkeypatch.setenv("GIST_MEMORY_CONTEXT_TOKENS", env)
    else:
        monkeypatch.delenv("GIST_MEMORY_CONTEXT_TOKENS", raising=False)
    monkeypatch.setattr(window_module, "server_window", lambda base_url, model="", api_key=None: n_ctx)
    base_url = f"http://127.0.0.1:{port or 8080}/v1"
    window = resolve_window(Backend(base_url, model), given)
    assert (int(window), window.source) == expected and isinstance(window, int)


def test_openais_own_api_is_not_asked_and_a_bad_setting_is_refused(monkeypatch):
    asked = []
    monkeypatch.setattr(window_module, "_get_json", lambda *a: asked.append(a))
    assert resolve_window(Backend("https://api.openai.com/v1", "gpt-4o")) == 128_000 and not asked
    with pytest.raises(SettingError) as raised:
        resolve_window(Backend("http://x/v1"), 10)
    assert raised.value.for_cli().startswith("--context-tokens must be")
    monkeypatch.setenv("GIST_MEMORY_CONTEXT_TOKENS", "lots")
    with pytest.raises(GistError, match="GIST_MEMORY_CONTEXT_TOKENS must be"):
        resolve_window(Backend("http://x/v1"))


def test_the_simulator_says_a_large_window_so_its_figures_do_not_change(store):
    with SimulatedLLM() as sim:
        engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url)
    assert engine.context_tokens == 131_072 and engine.context_tokens.source == SERVER


def test_budget_helpers():
    assert prompt_budget(2048, 64) == 2048 - 64 - headroom(2048) and headroom(2048) >= 32
    assert fits("a short prompt", 64, 2048) and not fits("word " * 3000, 64, 2048) and fits("x" * 9, 1, None)
    window = Window(2048, SETTING)
    assert window + 1 == 2049 and f"{window:,}" == "2,048" and window.describe() == "window 2,048 tokens (your setting)"


# --- a step's prompt that cannot fit is never sent ------------------------------------------------------

def _step(**kw) -> Step:
    return Step(name="probe", prompt=lambda i: i, parse=lambda reply, i: Parsed(reply) if reply == "ok" else bad("no"),
                fallback=lambda i, attempts: ("fallback", "no usable reply"), rule=None, **kw)


def _llm(store, replies, window=WINDOW) -> tuple[LLM, ScriptedBackend]:
    backend = ScriptedBackend(replies)
    return LLM(backend, store, use_cache=False, context_tokens=window), backend


def test_a_prompt_too_long_for_the_window_is_not_sent_and_names_the_setting(store):
    llm, backend = _llm(store, ["ok"])
    with pytest.raises(ContextWindowError) as raised:
        ask_model(llm, _step(too_long=lambda i: "This probe cannot shrink."), "word " * 2500)
    assert backend.prompts == [] and store.db["llm_calls"].count == 0
    message = str(raised.value)
    assert "window 2,048 tokens" in message and "not sent" in message and "This probe cannot shrink." in message
    assert "--context-tokens" in raised.value.for_cli()
    assert "Context window (tokens)" in raised.value.for_app()


def test_the_reply_budget_shrinks_to_the_room_left_down_to_the_steps_floor(store):
    prompt = "word " * 1700  # leaves about 250 tokens of a 2,048-token window
    llm, backend = _llm(store, ["ok"])
    decision = ask_model(llm, _step(max_tokens=lambda i: 512, min_tokens=64), prompt)
    sent = backend.params[0]["max_tokens"]
    assert 64 <= sent < 512 and count_tokens(prompt, llm.model) + sent + headroom(WINDOW) <= WINDOW
    assert "reply budget cut from 512" in decision.trace.detail["reply_tokens"]
    llm, backend = _llm(store, ["ok"])
    with pytest.raises(ContextWindowError):
        ask_model(llm, _step(max_tokens=lambda i: 512, min_tokens=400), prompt)
    assert backend.prompts == []


def test_a_reask_that_would_not_fit_is_skipped_and_the_trace_says_so(store):
    prompt = "word " * 1780
    llm, backend = _llm(store, ["not it " * 60, "ok"])
    decision = ask_model(llm, _step(max_tokens=lambda i: 64), prompt, max_reasks=1)
    assert len(backend.prompts) == 1 and decision.trace.outcome == "fallback"
    assert "not re-asked" in decision.trace.detail["reask_skipped"]


def test_without_a_window_nothing_changes(store):
    llm, backend = _llm(store, ["ok"], window=None)
    decision = ask_model(llm, _step(), "word " * 5000)
    assert decision.value == "ok" and backend.params[0]["max_tokens"] == 512


# --- each method's own way out -------------------------------------------------------------------------------

def test_a_very_long_paragraph_is_split_between_sentences_and_the_build_says_so(scripted, store):
    text = long_paragraph(20_000)
    pieces = split_long_paragraph(text)
    assert " ".join(pieces) == text and all(len(p.split()) <= PIECE_WORDS for p in pieces)
    assert all(p.endswith(".") for p in pieces[:-1])  # cut between sentences
    no_stops = " ".join(f"w{i % 97}" for i in range(5000))  # no sentence end at all: cut between words
    assert all(len(p.split()) <= PIECE_WORDS for p in split_long_paragraph(no_stops))
    short = parse_text("First paragraph here.\n\n" + " ".join(["word"] * MAX_PARAGRAPH_WORDS))
    assert "split_paragraphs" not in short.meta and len(short.paragraphs) == 2  # not over the limit: untouched
    document = parse_text("A short opening.\n\n" + text)
    assert document.meta["split_paragraphs"] == 1
    engine, _ = scripted(handler=respond, context_tokens=WINDOW)
    result = build_memory(store, document, engine, BuildSettings(PRESETS["quality"]))
    split = [s for s in store.steps(result.run_id) if s.step == "split"]
    assert len(split) == 1 and "split between sentences" in split[0].trace.detail["reason"]


def test_pagination_windows_stop_before_the_prompt_would_not_fit(scripted, store):
    document = parse_text("\n\n".join(long_paragraph(300, seed=s) for s in range(40)), title="Many paragraphs")
    engine, _ = scripted(handler=respond, context_tokens=1024)
    result = build_memory(store, document, engine, BuildSettings(PRESETS["narrativeqa"]))
    steps = store.steps(result.run_id)
    assert any("fitted" in s.trace.detail for s in steps if s.step == "pagination")
    for call in store.calls(result.run_id):
        assert call.input_tokens + call.params["max_tokens"] <= 1024
    memory = load_memory(store, result.memory_id, document)
    assert max(p.words for p in memory.pages) < 3000  # the preset's 3,000-word pages do not fit in 1,024 tokens


@pytest.fixture
def small_book(scripted, store):
    """A 3,000-word text whose gist memory fits a 2,048-token window but whose pages do not all."""
    document = parse_text("\n\n".join(long_paragraph(150, seed=s) for s in range(20)), title="Twenty paragraphs")
    engine, _ = scripted(handler=respond, context_tokens=WINDOW)
    built = build_memory(store, document, engine, BuildSettings(PRESETS["quality"]))
    return engine, load_memory(store, built.memory_id, document)


def test_readagent_p_expands_the_pages_that_fit_and_says_which_stay_gists(small_book):
    engine, memory = small_book
    engine.llm.backend.replies = ["I want to look up Page [0, 1, 2, 3, 4] to answer."]
    output = readagent_p(engine, memory, QUESTION, PRESETS["quality"], max_pages=5)
    lookup = output.steps[0]
    assert output.pages_looked_up == [0, 1, 2, 3, 4] and 0 < len(output.expanded) < 5
    assert lookup.detail["not_expanded"] == [p for p in [0, 1, 2, 3, 4] if p not in output.expanded]
    assert "stay gists" in lookup.detail["fitted"]


def test_readagent_s_stops_expanding_when_the_next_page_would_not_fit(small_book):
    engine, memory = small_book
    engine.llm.backend.replies = ["Page 0", "Page 1", "Page 2", "Page 3", "Page 4", "STOP"]
    output = readagent_s(engine, memory, QUESTION, PRESETS["quality"], max_steps=6)
    assert 0 < len(output.pages_looked_up) < 5
    last_lookup = [s for s in output.steps if s.step == "lookup-sequential"][-1]
    assert last_lookup.detail["not_expanded"] and "look-ups stop" in last_lookup.detail["fitted"]


def test_full_text_is_cut_with_one_sentence_saying_so(scripted, store, long_document):
    engine, _ = scripted(["Answer: (A) Casey"], context_tokens=WINDOW)
    store.save_document(long_document)
    result = ask(store, engine, long_document.id, QUESTION, method="full")
    assert result.reading.context.rstrip().endswith("do not fit in the model's context window.]")
    assert "[The text is cut here: the " in result.reading.context
    assert result.reading.words_in_context < long_document.words
