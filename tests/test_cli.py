"""``python -m core`` as a user runs it: JSON contracts and one-sentence errors.

Commands run in-process (``core.cli.main.main``) with their output captured; one test
starts the real entry point to prove ``python -m core`` works."""
import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from types import SimpleNamespace
from unittest import mock

import pytest

from core.cli.main import main
from core.llm.simulator import MODEL, SimulatedLLM
from tests.conftest import CORE_DATA, ROOT, book


def run(*args, db, env=None):
    """Run one command as the user would type it; its exit status and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([*args, "--db", str(db)])
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def run_json(*args, db, **kw):
    proc = run(*args, "--json", db=db, **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_build_and_ask_offline(tmp_path):
    db = tmp_path / "cli.db"
    built = run_json("build", str(book("off_course")), "--preset", "quality", db=db)
    for key in ("doc_id", "title", "words", "pages", "gist_words", "compression_rate", "llm_calls",
                "cached_calls", "fallback_breaks", "seconds"):
        assert key in built
    assert built["title"] == "Off Course" and built["llm_calls"] == 0 and built["engine"] == "offline"
    again = run_json("build", str(book("off_course")), "--preset", "quality", db=db)
    assert again["reused"] and again["doc_id"] == built["doc_id"]
    answer = run_json("ask", built["doc_id"][:6], "What was Dameri's purpose in landing on earth?",
                      "--option", "To share knowledge", "--option", "Repairs", "--option", "To collect animals",
                      "--option", "He arrived by accident while exploring", "--max-pages", "2", db=db)
    for key in ("answer", "choice", "pages_looked_up", "compression_rate", "llm_calls", "run_id"):
        assert key in answer
    assert answer["choice"] in "ABCD" and len(answer["pages_looked_up"]) <= 2
    shown = run("show", str(answer["run_id"]), db=db)
    assert shown.returncode == 0 and "lookup" in shown.stdout and "offline" in shown.stdout


def test_offline_engine_is_labelled(tmp_path):
    proc = run("build", str(book("off_course")), db=tmp_path / "x.db")
    assert proc.returncode == 0
    assert "offline (no LLM)" in proc.stderr and "Offline engine (no LLM)" in proc.stdout


def test_build_and_ask_through_an_openai_compatible_server(tmp_path):
    db = tmp_path / "sim.db"
    with SimulatedLLM() as sim:
        opts = ["--engine", "openai", "--model", MODEL, "--base-url", sim.base_url]
        built = run_json("build", str(book("off_course")), "--preset", "quality", "--concurrency", "4", *opts, db=db)
        assert built["llm_calls"] > 0 and built["cached_calls"] == 0
        rebuilt = run_json("build", str(book("off_course")), "--preset", "quality", "--rebuild", *opts, db=db)
        assert rebuilt["llm_calls"] == 0 and rebuilt["cached_calls"] == built["llm_calls"]
        answer = run_json("ask", built["doc_id"], "Who met the alien?", "--method", "readagent-s", *opts, db=db)
        assert answer["llm_calls"] >= 2 and answer["choice"] is None


@pytest.mark.parametrize("case, args, message", [
    ("missing file", ["build", "no/such/file.txt"], "No file at"),
    ("empty file", ["build", "{empty}"], "is empty"),
    ("binary file", ["build", "{binary}"], "not text"),
    ("corrupt pdf", ["build", "{corrupt}"], "not a readable PDF"),
    ("no model", ["build", "{book}", "--engine", "openai"], "No model configured"),
    ("no key for OpenAI", ["build", "{book}", "--engine", "openai", "--model", "gpt-4o-mini"], "OPENAI_API_KEY"),
    ("unreachable server", ["build", "{book}", "--engine", "openai", "--model", "m", "--base-url",
                            "http://127.0.0.1:9/v1", "--retries", "1", "--timeout", "1"], "Could not reach"),
    ("unknown document", ["ask", "ffffffff", "Why?"], "no such document"),
    ("not built yet", ["ask", "{doc}", "Why?", "--method", "gistmem"], "no finished gist memory"),
    ("unknown method", ["ask", "{doc}", "Why?", "--method", "guess"], "Unknown method"),
])
def test_errors_are_one_clear_sentence(tmp_path, case, args, message):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    binary = tmp_path / "scan.dat"
    binary.write_bytes(b"%PDF-1.4\n\x00\x01binary")
    corrupt = tmp_path / "scan.pdf"
    corrupt.write_bytes(b"%PDF-1.4\n\x00\x01binary")
    db = tmp_path / "e.db"
    doc = ""
    if "{doc}" in args:
        from core.store import open_db
        from core.text.documents import load_path

        store = open_db(db)
        document = load_path(book("off_course"))
        store.save_document(document)
        store.close()
        doc = document.id
    args = [a.format(empty=empty, binary=binary, corrupt=corrupt, book=book("off_course"), doc=doc) for a in args]
    proc = run(*args, db=db)
    assert proc.returncode == 1, (case, proc.stdout, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and message in errors[0] and errors[0] == proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr


def test_bad_key_is_reported(tmp_path):
    with SimulatedLLM(api_key="the-right-key") as sim:
        proc = run("build", str(book("off_course")), "--engine", "openai", "--model", MODEL, "--base-url",
                   sim.base_url, db=tmp_path / "k.db", env={"OPENAI_API_KEY": "a-wrong-key"})
    assert proc.returncode == 1 and "rejected the API key" in proc.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_simulate_llm_command_serves_models():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "core", "simulate-llm", "--port", str(port), "--latency-ms", "5"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1) as response:
                    assert json.load(response)["data"][0]["id"] == MODEL
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert "not a real model" in out


def test_methods_lists_every_method_with_its_parameters(capsys):
    from core.methods.registry import METHODS

    assert main(["methods", "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)["methods"]}
    assert list(listed) == list(METHODS)
    assert all([p["name"] for p in listed[name]["params"]] == [p.name for p in METHODS[name].params]
               for name in listed)


def test_eval_prints_the_papers_table_and_one_json_object(tmp_path):
    db, out = tmp_path / "eval.db", tmp_path / "results.csv"
    result = run_json("eval", "--dataset", "quality", "--path", str(CORE_DATA / "eval" / "quality_dev_16.jsonl"),
                      "--limit-docs", "1", "--methods", "readagent-p,gistmem", "--max-pages", "2",
                      "--out", str(out), db=db)
    assert [r["method"] for r in result["results"]] == ["readagent-p", "gistmem"]
    for row in result["results"]:
        for key in ("n", "accuracy", "compression_rate", "lookups", "response_words", "words_consumed"):
            assert key in row
        assert row["offline"] is True
    assert result["results"][0]["lookups"] <= 2
    assert [r["setting"] for r in result["results"]] == ["max pages 2", ""]
    assert [r["fallback_breaks"] for r in result["results"]] == [0, 0]  # the offline engine never falls back
    [memory] = result["memories"]
    assert memory["methods"] == ["GistMem", "ReadAgent-P"] and memory["fallback_gists"] == 0
    assert out.read_text().startswith("id,run_index,doc_id,question_id,method")
    text = run("eval", "--dataset", "quality", "--limit-docs", "1", "--methods", "gistmem,first-words", "--words",
               "500", db=db)
    assert "CR (#LU)" in text.stdout and "accuracy" in text.stdout and "offline" in text.stdout
    lines = text.stdout.splitlines()
    head = next(line for line in lines if line.startswith("method"))
    assert head.split()[:2] == ["method", "setting"] and "fallback breaks" in head and "no answer" in head
    assert any(line.startswith("First N words") and "first 500 words" in line for line in lines)
    assert any(line.startswith("  memory ") and "0 fallback breaks, 0 fallback gists" in line for line in lines)


def test_export_prints_the_memory_as_the_app_exports_it(tmp_path):
    db = tmp_path / "x.db"
    built = run_json("build", str(book("off_course")), "--preset", "quality", db=db)
    exported = run("export", built["doc_id"], "--json", db=db)
    assert exported.returncode == 0
    memory = json.loads(exported.stdout)
    pages = memory["pages"]
    assert len(pages) == built["pages"] and memory["engine"] == "offline"
    assert [p["first_paragraph"] for p in pages[1:]] == [p["end_paragraph"] for p in pages[:-1]]  # spans tile
    assert all(p["gist"] and p["pause_point_by"] and p["words"] for p in pages)
    markdown = run("export", built["doc_id"][:6], "--markdown", db=db).stdout
    assert markdown.startswith("# Off Course — gist memory") and "pause point by offline" in markdown
    missing = run("export", built["doc_id"], "--memory", "999", db=db)
    assert missing.returncode == 1 and "No gist memory 999" in missing.stderr


def test_build_says_when_a_file_holds_several_books_and_builds_the_one_asked_for(tmp_path):
    path = tmp_path / "two.txt"
    path.write_text(book("off_course").read_text(encoding="utf-8") + "\n\n" +
                    book("alice").read_text(encoding="utf-8"), encoding="utf-8")
    first = run("build", str(path), "--json", db=tmp_path / "b.db")
    assert "holds 2 books (Off Course; Alice’s Adventures in Wonderland); building book 1" in first.stderr
    assert json.loads(first.stdout)["title"] == "Off Course"
    second = run_json("build", str(path), "--book", "2", db=tmp_path / "b.db")
    assert second["title"] == "Alice’s Adventures in Wonderland"
