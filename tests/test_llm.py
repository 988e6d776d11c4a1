"""The LLM seam: one row per call, replay cache, tokens, keys never stored; the OpenAI backend's
retries and errors against the simulated server."""
import pytest

from core.errors import ModelError
from core.llm import LLM
from core.openai_backend import OpenAIBackend, redact_url
from core.simulator import MODEL, SimulatedLLM
from tests.fakes import ScriptedBackend


def test_every_call_is_one_logged_row(store):
    backend = ScriptedBackend(["a reply"])
    llm = LLM(backend, store, run_id=None, doc_id="doc1")
    completion = llm.complete("Please shorten the following passage.\n\nPassage:\nHello world.", step="gist")
    row = store.calls(ids=[completion.call_id])[0]
    assert row["step"] == "gist" and row["doc_id"] == "doc1" and row["model"] == "scripted-model"
    assert row["reply"] == "a reply" and row["cached"] == 0 and row["attempts"] == 1
    assert row["input_tokens"] > 5 and row["output_tokens"] == 2
    assert '"temperature": 0.0' in row["params"] and '"max_tokens": 512' in row["params"]
    assert llm.usage.calls == 1 and llm.usage.cached == 0


def test_same_model_params_prompt_is_replayed_without_a_call(store):
    backend = ScriptedBackend(["first"])  # a second real call would fail: the queue is empty
    llm = LLM(backend, store)
    llm.complete("same prompt", step="gist")
    again = llm.bind(run_id=None, doc_id=None).complete("same prompt", step="gist")
    assert again.text == "first" and again.cached
    assert len(backend.prompts) == 1
    rows = store.calls(ids=[again.call_id])
    assert rows[0]["cached"] == 1


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
    errors = [r["error"] for r in store.calls(run_id=None)]
    assert errors == ["server down", None]


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


def test_no_key_for_openai_says_what_to_do():
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        OpenAIBackend("gpt-4o-mini")


def test_api_key_is_never_written_to_the_database(sim, tmp_path):
    from core.db import open_db

    secret = "sk-test-THIS-MUST-NOT-BE-STORED"
    path = tmp_path / "k.db"
    store = open_db(path)
    backend = OpenAIBackend(MODEL, sim.base_url.replace("http://", f"http://user:{secret}@"), secret, backoff=0.01)
    LLM(backend, store).complete("Please shorten the following passage.\n\nPassage:\nHello.", step="gist")
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("k.db*"))
    assert secret.encode() not in raw
