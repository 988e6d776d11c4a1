"""Retrieval and truncation baselines: ranking, what each method puts in context (compression
rate and look-ups), embeddings through the seam and the simulated server, and the CLI."""
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace

import pytest

from core.cli.main import main
from core.methods.baselines import bm25_rank
from core.methods.readagent.build import BuildSettings, build_memory
from core.text.documents import parse_text
from core.engine import make_engine
from core.errors import GistError, ModelError, SettingError
from core.methods.ask import ask
from core.engine import OFFLINE as OFFLINE_ENGINE
from core.llm.openai_backend import OpenAIBackend
from core.methods.readagent.presets import PRESETS
from core.methods.base import Question, compression_rate
from core.methods.readagent.memory import GistMemory
from core.store.records import Page
from core.llm.simulator import MODEL, SimulatedLLM, hashed_embedding
from core.trace import MODEL as BY_MODEL, OFFLINE, RULE
from tests.conftest import CORE_DATA, book, cli, cli_json

PAGES = [
    "The harbour was quiet in the morning. Small boats rested against the pier.",
    "Tomas sailed to Brest with a cargo of salted fish. Brest was busy with traders.",
    "Mara lit the lamp in the lighthouse and watched the sea until dawn.",
    "Gulls argued on the rocks while the supply boat was late again.",
]
QUESTION = Question("Where did Tomas sail with the fish?")


def _memory(texts=PAGES) -> GistMemory:
    pages = tuple(Page(index=i, start=i, end=i + 1, text=t, words=len(t.split()), gist=t.split(".")[0] + ".",
                       gist_words=len(t.split(".")[0].split()) + 0) for i, t in enumerate(texts))
    return GistMemory(doc_id="d", title="Harbour", words=sum(p.words for p in pages), pages=pages)


def test_bm25_ranks_the_page_with_the_questions_words_first():
    ranked = bm25_rank(_memory(), QUESTION)
    assert [i for i, _ in ranked] == [1, 0, 2, 3]  # ties (no shared word) keep page order
    assert ranked[0][1] > 0 and all(score == 0 for _, score in ranked[1:])
    with_options = bm25_rank(_memory(), Question("Who kept watch?", ("Mara in the lighthouse", "The gulls")))
    assert with_options[0][0] == 2  # the options count as part of the query


@pytest.fixture
def harbour(store):
    """The four pages above stored as a document with a gist memory of one page per paragraph."""
    document = parse_text("\n\n".join(PAGES), title="Harbour")
    store.save_document(document)
    memory_id = store.create_memory(doc_id=document.id, engine="offline", engine_label="Offline engine (no LLM)",
                                    preset="quality", status="complete", pages=4, words=document.words)
    for i, text in enumerate(PAGES):
        gist = text.split(".")[0] + "."
        store.save_page(memory_id, Page(start=i, end=i + 1, text=text, words=len(text.split()), break_by="rule",
                                        gist=gist, gist_words=len(gist.split()), gist_by="offline"))
    assert len(document.paragraphs) == 4
    # memory_id: for engines that did not build it (the scripted model)
    return SimpleNamespace(id=document.id, words=document.words, memory_id=memory_id)


def test_each_method_reports_its_context_look_ups_and_compression_rate(store, harbour):
    doc_words = harbour.words
    page_words = [len(t.split()) for t in PAGES]
    bm25 = ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method="bm25", params={"top_k": 2})
    assert bm25.reading.pages_looked_up == [1, 0] and bm25.reading.lookups == 2 and bm25.reading.expanded == [0, 1]
    assert bm25.reading.words_in_context == page_words[0] + page_words[1]
    assert bm25.reading.compression_rate == compression_rate(page_words[0] + page_words[1], doc_words)
    assert bm25.reading.context.index("<Page 0>") < bm25.reading.context.index("<Page 1>")  # page order in the context
    assert "Brest" in bm25.answer.text and [s.step for s in bm25.steps] == ["retrieve", "answer"]
    assert bm25.steps[0].outcome == OFFLINE and bm25.details.scores[0].page == 1

    first = ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method="first-words", params={"words": 15})
    assert first.reading.words_in_context == 15 and first.reading.lookups == 0 and first.reading.pages_looked_up == []
    assert first.reading.context.split() == " ".join(PAGES).split()[:15]
    assert first.reading.compression_rate == compression_rate(15, doc_words) and first.steps[0].outcome == RULE

    last = ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method="last-words", params={"words": 20})
    assert last.reading.context.split() == " ".join(PAGES).split()[-20:] and last.reading.words_in_context == 20
    assert "\n" in last.reading.context  # paragraph breaks are kept
    everything = ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method="first-words", params={"words": 10_000})
    assert everything.reading.words_in_context == doc_words and everything.reading.compression_rate == 0

    plus = ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method="segmentplus", params={"segment_tokens": 50})
    kept = [n.segment for n in plus.details.notes if n.kept]
    assert plus.reading.pages_looked_up == kept and plus.reading.lookups == len(kept) >= 1
    assert plus.reading.compression_rate == compression_rate(plus.reading.words_in_context, doc_words)


@pytest.mark.parametrize("method, params, setting, says", [
    ("bm25", {"top_k": 0}, "top_k", "--top-k must be at least 1 (got 0)"),
    ("last-words", {"words": 0}, "words", "--words must be at least 1 (got 0)"),
    ("bm25", {"top_k": "many"}, "top_k", "--top-k must be a whole number (got 'many')"),
])
def test_bad_params_say_what_to_change(store, harbour, method, params, setting, says):
    with pytest.raises(SettingError) as refused:
        ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method=method, params=params)
    assert refused.value.setting == setting and refused.value.for_cli().startswith(says)


def test_embedding_needs_a_server(store, harbour):
    with pytest.raises(GistError, match="offline engine makes no embeddings"):
        ask(store, OFFLINE_ENGINE, harbour.id, QUESTION, method="embedding")


def test_embedding_ranks_by_dot_product_and_reuses_page_vectors(store, harbour, scripted):
    def embedder(texts):  # 'Tomas' and 'lamp' directions: page 2 is made the closest to the question
        return [[1.0 if "Tomas" in t else 0.0, 2.0 if "lamp" in t else 0.0, 0.1] for t in texts]

    engine, backend = scripted(handler=lambda prompt: "Brest.", embedder=embedder, use_cache=True)
    question = Question("Where did Tomas sail? Was a lamp lit?")
    first = ask(store, engine, harbour.id, question, method="embedding", params={"top_k": 2, "embedding_model": "e-1"},
                memory_id=harbour.memory_id)
    assert first.reading.pages_looked_up[0] == 2  # dot product 2+... beats the 'Tomas' page
    assert first.reading.lookups == 2
    retrieve = first.steps[0]
    assert retrieve.outcome == BY_MODEL and retrieve.detail["embedding_model"] == "e-1"
    assert retrieve.detail["embedded_now"] == 5 and retrieve.attempts[0].call_id
    assert backend.embedded[-1][0] == question.text  # the question first, then every page
    calls = store.calls(first.run.id)
    assert [c.step for c in calls] == ["embed", "answer"] and calls[0].model == "e-1"
    # Another question: the pages' vectors come from the database, only the question is embedded.
    again = ask(store, engine, harbour.id, Question("Who lit the lamp?"), method="embedding",
                params={"embedding_model": "e-1"}, memory_id=harbour.memory_id)
    assert backend.embedded[-1] == ["Who lit the lamp?"]
    assert again.steps[0].detail == {**again.steps[0].detail, "embedded_now": 1, "from_cache": 4}
    assert again.details.embedding_model == "e-1" and again.reading.lookups == 4  # top_k 5 > 4 pages
    # Another embedding model is another set of vectors.
    ask(store, engine, harbour.id, QUESTION, method="embedding", params={"embedding_model": "e-2"},
        memory_id=harbour.memory_id)
    assert len(backend.embedded[-1]) == 5


def test_embedding_model_comes_from_the_environment(store, harbour, scripted, monkeypatch):
    engine, backend = scripted(handler=lambda p: "Brest.", embedder=lambda ts: [[1.0, 0.0] for _ in ts])
    monkeypatch.setenv("GIST_MEMORY_EMBEDDING_MODEL", "from-env")
    result = ask(store, engine, harbour.id, QUESTION, method="embedding", memory_id=harbour.memory_id)
    assert result.details.embedding_model == "from-env"
    monkeypatch.delenv("GIST_MEMORY_EMBEDDING_MODEL")
    result = ask(store, engine, harbour.id, QUESTION, method="embedding", memory_id=harbour.memory_id)
    assert result.details.embedding_model == "text-embedding-3-small"


# --- the OpenAI-compatible embeddings endpoint ------------------------------------------------------

def test_simulated_embeddings_are_deterministic_word_overlap_vectors(sim):
    backend = OpenAIBackend(MODEL, sim.base_url, backoff=0.01)
    a, b, c = backend.embed(["Tomas sailed to Brest.", "brest, sailing TOMAS", "Gulls on the rocks."],
                            model="any-name")
    assert a == hashed_embedding("Tomas sailed to Brest.") and len(a) == 256
    assert sum(x * y for x, y in zip(a, b)) > 0.99 and sum(x * y for x, y in zip(a, c)) == 0
    sim.script = ["429", "500"]
    assert backend.embed(["x y"], model="m") == [hashed_embedding("x y")]  # retried, then fine
    sim.script = ["malformed"]
    with pytest.raises(ModelError, match="returned 1 usable embeddings for 2 texts"):
        backend.embed(["one", "two"], model="m")


def test_embeddings_endpoint_errors_are_clear():
    with SimulatedLLM(api_key="right") as server:
        with pytest.raises(ModelError, match="rejected the API key"):
            OpenAIBackend(MODEL, server.base_url, api_key="wrong").embed(["x"])

    class NoEmbeddings(BaseHTTPRequestHandler):  # a chat-only server
        def do_POST(self):
            body = json.dumps({"error": {"message": "Not found", "type": "not_found"}}).encode()
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), NoEmbeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(ModelError, match="no model 'e-9' \\(or no embeddings endpoint\\)"):
            OpenAIBackend(MODEL, f"http://127.0.0.1:{server.server_address[1]}/v1").embed(["x"], model="e-9")
    finally:
        server.shutdown()
        server.server_close()


# --- every method through the simulated server ----------------------------------------------------

OFF_COURSE = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())


def test_every_new_method_through_the_simulated_server(store, sim):
    document = parse_text(OFF_COURSE["article"], title="Off Course")
    store.save_document(document)
    engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01, timeout=5.0)
    built = build_memory(store, document, engine, BuildSettings(PRESETS["quality"]))
    q = OFF_COURSE["questions"][2]
    question = Question(q["question"], tuple(q["options"]))
    results = {m: ask(store, engine, document.id, question, method=m,
                      params={"top_k": 3, "words": 600, "segment_tokens": 600})
               for m in ("segmentplus", "bm25", "embedding", "first-words", "last-words")}
    for name, result in results.items():
        assert result.answer.choice in tuple("ABCD"), name
        assert result.steps[-1].step == "answer" and result.steps[-1].outcome == BY_MODEL
        assert result.reading.compression_rate == compression_rate(result.reading.words_in_context, document.words)
    assert results["bm25"].reading.lookups == results["embedding"].reading.lookups == 3
    assert results["bm25"].memory.id == results["embedding"].memory.id == built.memory_id
    assert results["embedding"].usage.llm_calls == 2 and sim.stats.steps["embeddings"] == 1
    assert results["first-words"].reading.words_in_context == results["last-words"].reading.words_in_context == 600
    assert results["first-words"].usage.llm_calls == 1 and results["first-words"].reading.lookups == 0
    assert results["segmentplus"].reading.lookups == results["segmentplus"].details.notes_kept


# --- registry and command line ------------------------------------------------------------------------

def test_cli_lists_the_new_methods_and_what_they_read(capsys):
    assert main(["methods", "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)["methods"]}
    assert {name: ([p["name"] for p in listed[name]["params"]], listed[name]["needs_memory"])
            for name in ("segmentplus", "bm25", "embedding", "first-words", "last-words")} == {
        "bm25": (["top_k"], True), "embedding": (["top_k", "embedding_model"], True),  # a gist memory's pages
        "first-words": (["words"], False), "last-words": (["words"], False),  # the document itself
        "segmentplus": (["segment_tokens", "merge_tokens", "concurrency"], False)}


@pytest.mark.parametrize("method, params, words", [
    ("first-words", None, 6000), ("last-words", None, 6000),  # the paper's Table 3 setting
    ("first-words", {"words": 2000}, 2000), ("last-words", {"words": 50_000}, None),  # None: the whole book
])
def test_truncation_reads_6000_words_by_default(store, method, params, words):
    document = parse_text(book("alice").read_text(encoding="utf-8"), title="Alice")
    store.save_document(document)
    result = ask(store, OFFLINE_ENGINE, document.id, Question("Who is late?"), method=method, params=params)
    assert result.reading.words_in_context == (words or document.words)
    assert len(result.reading.context.split()) == result.reading.words_in_context
    assert result.details.words == (params or {}).get("words", 6000)


def test_cli_truncation_default_and_flag(tmp_path, capsys):
    db = tmp_path / "cli.db"
    doc = cli_json(capsys, "build", str(book("alice")), "--preset", "quality", db=db)["doc_id"]
    default = cli_json(capsys, "ask", doc, "Who is late?", "--method", "last-words", db=db)
    assert default["words_in_context"] == 6000
    assert cli_json(capsys, "ask", doc, "Who is late?", "--method", "last-words", "--words", "1234",
                    db=db)["words_in_context"] == 1234


def test_cli_asks_with_every_new_method(tmp_path, capsys):
    db = tmp_path / "cli.db"
    doc = cli_json(capsys, "build", str(book("off_course")), "--preset", "quality", db=db)["doc_id"]
    question = "What was Dameri's purpose in landing on earth?"
    bm25 = cli_json(capsys, "ask", doc, question, "--method", "bm25", "--top-k", "2", db=db)
    assert len(bm25["pages_looked_up"]) == bm25["lookups"] == bm25["top_k"] == 2 and 0 < bm25["compression_rate"] < 100
    first = cli_json(capsys, "ask", doc, question, "--method", "first-words", "--words", "300", db=db)
    assert first["words_in_context"] == 300 and first["lookups"] == 0
    plus = cli_json(capsys, "ask", doc, question, "--method", "segmentplus", "--segment-tokens", "600", db=db)
    assert plus["segments"] > 1 and len(plus["notes"]) == plus["segments"]
    assert plus["pages_looked_up"] == [n["segment"] for n in plus["notes"] if n["kept"]]
    text = cli(capsys, "ask", doc, question, "--method", "segmentplus", "--segment-tokens", "600", db=db)
    assert "notes kept from segments" in text.stdout and "offline (no LLM)" in text.stderr
    text = cli(capsys, "ask", doc, question, "--method", "bm25", "--top-k", "2", db=db)
    assert f"pages retrieved, best first: {bm25['pages_looked_up']}" in text.stdout

    refused = cli(capsys, "ask", doc, question, "--method", "embedding", db=db)
    assert refused.returncode == 1 and "offline engine makes no embeddings" in refused.stderr
    assert "Traceback" not in refused.stderr
    bad = cli(capsys, "ask", doc, question, "--method", "bm25", "--top-k", "0", db=db)
    assert bad.returncode == 1 and bad.stderr.strip().splitlines()[-1].startswith("Error: --top-k must be at least 1")

    with SimulatedLLM() as server:
        opts = ["--engine", "openai", "--model", MODEL, "--base-url", server.base_url]
        cli_json(capsys, "build", str(book("off_course")), "--preset", "quality", *opts, db=db)
        emb = cli_json(capsys, "ask", doc, question, "--method", "embedding", "--top-k", "3", "--embedding-model",
                       "sim-e", *opts, db=db)
        assert emb["lookups"] == 3 and emb["embedding_model"] == "sim-e" and emb["llm_calls"] == 2
