"""The LLM seam: one row per call, replay cache, tokens, keys never stored; the OpenAI backend's
retries and errors against the simulated server, and against servers sending what no server should."""
import json

import pytest

from core.errors import ModelError
from core.llm.seam import LLM, sanitise
from core.llm.openai_backend import OpenAIBackend, redact_url
from core.llm.simulator import MODEL, SimulatedLLM
from tests.fakes import ScriptedBackend


def test_every_call_is_one_logged_row(store):
    backend = ScriptedBackend(["a reply"])
    llm = LLM(backend, store, run_id=None, doc_id="doc1")
    completion = llm.complete("Please shorten the following passage.\n\nPassage:\nHello world.", step="gist")
    row = store.calls(ids=[completion.call_id])[0]
    assert row.step == "gist" and row.doc_id == "doc1" and row.model == "scripted-model"
    assert row.reply == "a reply" and not row.cached and row.attempts == 1
    assert row.input_tokens > 5 and row.output_tokens == 2
    assert row.params["temperature"] == 0.0 and row.params["max_tokens"] == 512
    assert llm.usage.calls == 1 and llm.usage.cached == 0


def test_same_model_params_prompt_is_replayed_without_a_call(store):
    backend = ScriptedBackend(["first"])  # a second real call would fail: the queue is empty
    llm = LLM(backend, store)
    llm.complete("same prompt", step="gist")
    again = llm.bind(run_id=None, doc_id=None).complete("same prompt", step="gist")
    assert again.text == "first" and again.cached
    assert len(backend.prompts) == 1
    rows = store.calls(ids=[again.call_id])
    assert rows[0].cached


@pytest.mark.parametrize("change", ["model", "max_tokens", "prompt"])
def test_a_different_model_parameter_or_prompt_is_not_replayed(store, change):
    LLM(ScriptedBackend(["old"]), store).complete("prompt", step="s")
    backend = ScriptedBackend(["new"], model="other-model" if change == "model" else "scripted-model")
    llm = LLM(backend, store)
    completion = llm.complete("prompt 2" if change == "prompt" else "prompt", step="s",
                              max_tokens=100 if change == "max_tokens" else None)
    assert completion.text == "new" and not completion.cached


def test_cache_can_be_switched_off(store):
    LLM(ScriptedBackend(["one"]), store).complete("p", step="s")
    assert LLM(ScriptedBackend(["two"]), store, use_cache=False).complete("p", step="s").text == "two"


def test_failed_call_is_logged_with_its_error_and_not_replayed(store):
    llm = LLM(ScriptedBackend([ModelError("server down"), "ok"]), store)
    with pytest.raises(ModelError):
        llm.complete("p", step="s")
    assert llm.complete("p", step="s").text == "ok"
    errors = [r.error for r in store.calls(run_id=None)]
    assert errors == ["server down", ""]


def test_redact_url_drops_credentials():
    assert redact_url("https://user:secret@host.example:8080/v1/") == "https://host.example:8080/v1"
    assert redact_url("http://localhost:11434/v1") == "http://localhost:11434/v1"


def _backend(sim, **kw):
    return OpenAIBackend(MODEL, sim.base_url, kw.pop("api_key", None), backoff=0.01, **kw)


def test_backend_answers_through_the_real_client(sim):
    reply = _backend(sim).complete("Please shorten the following passage.\n\nPassage:\nThe cat sat. It was warm.",
                                   temperature=0, max_tokens=64)
    assert reply.text and reply.attempts == 1


@pytest.mark.parametrize("fault", ["429", "500", "timeout"])
def test_backend_retries_rate_limits_server_errors_and_timeouts(sim, fault):
    sim.script = [fault, fault]
    reply = _backend(sim, timeout=0.5).complete("Please shorten the following passage.\n\nPassage:\nHi there.",
                                                temperature=0, max_tokens=32)
    assert reply.attempts == 3 and len(reply.errors) == 2


def test_backend_gives_up_after_bounded_retries(sim):
    sim.script = ["500"] * 3
    with pytest.raises(ModelError, match="kept failing"):
        _backend(sim, max_retries=2).complete("x", temperature=0, max_tokens=8)
    assert sim.stats.requests == 3


def test_bad_key_is_a_clear_error():
    with SimulatedLLM(api_key="right-key") as sim:
        with pytest.raises(ModelError, match="rejected the API key"):
            _backend(sim, api_key="wrong-key").complete("x", temperature=0, max_tokens=8)
        assert _backend(sim, api_key="right-key").list_models() == [MODEL]


def test_unreachable_server_is_a_clear_error():
    backend = OpenAIBackend("m", "http://127.0.0.1:9/v1", backoff=0.01, max_retries=1, timeout=1)
    with pytest.raises(ModelError, match="Could not reach"):
        backend.complete("x", temperature=0, max_tokens=8)


def test_no_key_for_openai_says_what_to_do_in_each_front_end():
    with pytest.raises(ModelError, match="No API key") as caught:
        OpenAIBackend("gpt-4o-mini")
    assert "OPENAI_API_KEY" in caught.value.for_cli() and "--base-url" in caught.value.for_cli()
    assert "sidebar" in caught.value.for_app() and "--" not in caught.value.for_app()


def test_api_key_is_never_written_to_the_database(sim, tmp_path):
    from core.store import open_db

    secret = "sk-test-THIS-MUST-NOT-BE-STORED"
    path = tmp_path / "k.db"
    store = open_db(path)
    backend = OpenAIBackend(MODEL, sim.base_url.replace("http://", f"http://user:{secret}@"), secret, backoff=0.01)
    LLM(backend, store).complete("Please shorten the following passage.\n\nPassage:\nHello.", step="gist")
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("k.db*"))
    assert secret.encode() not in raw


# --- hostile servers: bodies that are not chat completions, broken text, prompts too long -------------

class BodyServer:
    """A real HTTP server answering every POST with the next scripted (status, content type, body);
    the last one repeats. ``with BodyServer([(200, "application/json", b"not json")]) as server:``."""

    def __init__(self, bodies):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.bodies = list(bodies)
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.requests += 1
                status, ctype, body = server.bodies.pop(0) if len(server.bodies) > 1 else server.bodies[0]
                body = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def chat(content: str) -> tuple[int, str, dict]:
    return 200, "application/json", {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": content}}]}


NOT_COMPLETIONS = [
    ("not JSON", (200, "application/json", b"Internal error, please retry"), "not JSON"),
    ("empty body", (200, "application/json", b""), "empty"),
    ("HTML page", (200, "text/html", b"<html><body>Welcome to nginx!</body></html>"), "not JSON"),
    ("no choices", (200, "application/json", {}), "no 'choices'"),
    ("error object", (200, "application/json", {"error": {"message": "model is loading"}}), "model is loading"),
]


@pytest.mark.parametrize("body, detail", [(b, d) for _, b, d in NOT_COMPLETIONS],
                         ids=[name for name, _, _ in NOT_COMPLETIONS])
def test_a_body_that_is_not_a_completion_is_retried_then_one_sentence(body, detail):
    with BodyServer([body]) as server:
        backend = OpenAIBackend("m", server.base_url, backoff=0.001, max_retries=2)
        with pytest.raises(ModelError) as caught:
            backend.complete("x", temperature=0, max_tokens=8)
        assert server.requests == 3  # retried like a 500
    message = str(caught.value)
    assert "did not send a usable chat-completions reply in 3 attempts" in message and detail in message
    assert "\n" not in message and message.count(". ") == 0 and message.endswith(".")
    assert "--base-url" in caught.value.for_cli() and "sidebar" in caught.value.for_app()


def test_a_body_that_is_not_a_completion_then_a_good_one_is_a_reply():
    with BodyServer([(200, "application/json", b""), chat("Dameri lands.")]) as server:
        reply = OpenAIBackend("m", server.base_url, backoff=0.001).complete("x", temperature=0, max_tokens=8)
    assert reply.text == "Dameri lands." and reply.attempts == 2 and "empty" in reply.errors[0]


def test_an_embeddings_body_that_is_not_json_is_a_model_error():
    with BodyServer([(200, "application/json", b"oops")]) as server:
        with pytest.raises(ModelError, match="did not send a usable embeddings reply"):
            OpenAIBackend("m", server.base_url, backoff=0.001, max_retries=1).embed(["a"], model="e")


TOO_LONG = [
    ("vLLM", 400, {"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you "
                   "requested 5200 tokens (4688 in the messages, 512 in the completion).", "code": 400}),
    ("llama.cpp", 400, {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                  "increasing it", "type": "exceed_context_size_error"}}),
    ("OpenAI", 400, {"error": {"message": "Please reduce the length of the messages.", "type": "invalid_request_error",
                               "code": "context_length_exceeded"}}),
    ("as a 500", 500, {"error": {"message": "prompt is too long (5000 tokens, n_ctx 4096)"}}),
    ("in a 200", 200, {"error": {"message": "input exceeds the context window"}}),
]


@pytest.mark.parametrize("status, body", [(s, b) for _, s, b in TOO_LONG], ids=[n for n, _, _ in TOO_LONG])
def test_a_prompt_longer_than_the_window_names_the_window_setting(status, body):
    with BodyServer([(status, "application/json", body)]) as server:
        with pytest.raises(ModelError) as caught:
            OpenAIBackend("m", server.base_url, backoff=0.001).complete("x" * 100, temperature=0, max_tokens=8)
        assert server.requests == 1  # a retry cannot make it fit
    error = caught.value
    assert "longer than the model's context window" in str(error)
    assert "--context-tokens" in error.for_cli() and "GIST_MEMORY_CONTEXT_TOKENS" in error.for_cli()
    assert '"Context window (tokens)"' in error.for_app() and "--" not in error.for_app()


@pytest.mark.parametrize("content, stored", [
    ("Dameri \ud800lands.", "Dameri \ufffdlands."),  # a lone surrogate: UTF-8 cannot encode it
    ("Casey\udfff", "Casey\ufffd"),
    ("bell\x07 and escape\x1b[0m and nul\x00.", "bell and escape[0m and nul."),
    ("line one\r\nline two\rthree\tfour", "line one\nline two\nthree\tfour"),
    ("emoji \U0001F600 kept", "emoji \U0001F600 kept"),
])
def test_replies_are_sanitised_before_they_are_parsed_or_stored(store, content, stored):
    with BodyServer([chat(content)]) as server:
        llm = LLM(OpenAIBackend("m", server.base_url, backoff=0.001), store)
        completion = llm.complete("prompt", step="gist")
    assert completion.text == stored
    assert store.calls(ids=[completion.call_id])[0].reply == stored
    replay = llm.complete("prompt", step="gist")
    assert replay.cached and replay.text == stored


def test_a_replayed_reply_is_sanitised_too(store):
    llm = LLM(ScriptedBackend(), store)
    store.log_call(run_id=None, doc_id=None, step="gist", model="scripted-model", backend=llm.backend.identity(),
                   prompt="p", reply="old\x07 reply", params={}, cache_key=llm.cache_key("p", {
                       "temperature": 0.0, "max_tokens": 512}), cached=0, attempts=1, input_tokens=1, output_tokens=2)
    assert llm.complete("p", step="gist").text == "old reply"


def test_sanitise_leaves_ordinary_text_alone():
    text = "Dameri said: «Bonjour» — and left.\n\tThe end."
    assert sanitise(text) == text and sanitise(None) == "" and sanitise("") == ""


# --- rejected replies are never replayed ---------------------------------------------------------------

def test_a_rejected_reply_is_never_replayed_and_the_model_is_asked_again(store):
    backend = ScriptedBackend(["I'm sorry, but I can't help with that request.", "Dameri lands."])
    llm = LLM(backend, store)
    bad = llm.complete("p", step="gist")
    llm.reject(bad)
    good = llm.complete("p", step="gist")  # the same prompt asks the model again
    assert not good.cached and good.text == "Dameri lands." and len(backend.prompts) == 2
    again = llm.complete("p", step="gist")  # an accepted reply replays exactly, with no call
    assert again.cached and again.text == "Dameri lands." and len(backend.prompts) == 2
    rows = {r.id: r for r in store.calls(run_id=None)}
    assert rows[bad.call_id].rejected and rows[bad.call_id].reply.startswith("I'm sorry")  # kept in the log
    assert not rows[good.call_id].rejected


def test_rejecting_a_replay_rejects_the_reply_it_replayed(store):
    backend = ScriptedBackend(["Break point: <999>", "Casey meets the alien."])
    LLM(backend, store).complete("p", step="gist")  # an older version accepted it
    llm = LLM(backend, store)
    replay = llm.complete("p", step="gist")
    assert replay.cached and replay.text == "Break point: <999>"
    llm.reject(replay)
    fresh = llm.complete("p", step="gist")
    assert not fresh.cached and fresh.text == "Casey meets the alien."
