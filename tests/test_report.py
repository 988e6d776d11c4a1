"""The report you can hand on (``core/report.py``, ``python -m core report``): one HTML file
that loads nothing from anywhere and shows every document and model text as text."""
import re

import pytest

from core.engine import make_engine
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.presets import PRESETS
from core.report import OFFLINE_WORDS, page_strip, report_html, write_report
from core.samples import find_question, open_sample, paper_lookup, question_key
from core.text.documents import parse_text
from tests.conftest import book
from tests.test_cli import run, run_json

HOSTILE = '<script>alert("x")</script><img src="https://evil.example/x.png" onerror="alert(1)">'
OUTSIDE = re.compile(r"""(?:src|href|action|xmlns)\s*=\s*["']?\s*(?:https?:)?//|@import|url\(|<link|<script""", re.I)


def hostile_document():
    paragraphs = [f"Paragraph {i}. Casey met Dameri Tass in the park. {HOSTILE} The saucer landed near the lake "
                  f"and the patrolmen watched." for i in range(40)]
    return parse_text("\n\n".join(paragraphs), title=f"Hostile {HOSTILE}")


def assert_self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not OUTSIDE.search(page), OUTSIDE.search(page).group(0)


@pytest.fixture
def hostile_runs(store, scripted):
    document = hostile_document()
    store.save_document(document)
    offline = make_engine("offline", store)
    memory_id = build_memory(store, document, offline, BuildSettings(PRESETS["quality"])).memory_id
    question = Question(f"Who landed? {HOSTILE}", ("A saucer", f"Dameri {HOSTILE}"))
    by_offline = ask(store, offline, document.id, question, method="readagent-p")
    engine, _ = scripted([f"I want to look up Page [0] {HOSTILE}", f"Answer: (B) {HOSTILE}"])
    by_model = ask(store, engine, document.id, question, method="readagent-p", memory_id=memory_id)
    walked = ask(store, offline, document.id, Question(f"Where did it land? {HOSTILE}"), method="memwalker")
    return [by_offline.run.id, by_model.run.id, walked.run.id]


def test_hostile_document_and_model_text_is_escaped(store, hostile_runs):
    page = report_html(store, hostile_runs)
    assert_self_contained(page)
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page  # shown, as text
    assert page.count("&lt;script&gt;") >= 6  # title, question, option, context, prompt and reply


def test_every_part_of_a_run_is_there(store, hostile_runs):
    page = report_html(store, hostile_runs)
    for part in ("Pages re-read", 'class="cell reread"', "Context sent for the answer", "<h4>Trace</h4>",
                 "Prompt", "Reply", "Parsed.", "MemWalker: the path walked", "<svg", 'class="walk"'):
        assert part in page, part
    assert "chosen by scripted-model" in page  # the model's look-up is the model's


def test_offline_output_is_labelled_never_a_models(store, hostile_runs):
    offline_only = report_html(store, [hostile_runs[0]])
    assert OFFLINE_WORDS in offline_only and f'<span class="offline">{OFFLINE_WORDS}</span>' in offline_only
    assert "chosen by" not in offline_only


def test_page_strip_numbers_pages_in_look_up_order():
    strip = page_strip(4, [2, 0])
    assert strip.count('class="cell reread"') == 2 and "#1" in strip.split("Page 2")[1][:40]
    assert page_strip(3, [1], label="re-read in the paper", css="paper").count('class="cell paper"') == 1


def test_paper_demo_matches_a_straight_apostrophe_and_draws_the_papers_pages(store):
    document, paper_memory = open_sample(store, "off-course")
    typed = "What was Dameri's purpose in landing on earth?"  # the data has a curly apostrophe
    gold = find_question(document.meta["questions"], typed)
    result = ask(store, make_engine("offline", store), document.id, Question(typed, tuple(gold["options"])),
                 method="readagent-p", memory_id=paper_memory)
    page = report_html(store, [result.run.id])
    assert "re-read in the paper (ReadAgent)" in page and page.count('class="cell paper"') == 2  # pages 5 and 6
    assert "the answer is (D)" in page and "In the paper, ReadAgent with PaLM 2-L re-read pages 5, 6" in page


@pytest.mark.parametrize("typed, matches", [
    ("What was Dameri's purpose in landing on earth?", True),
    ("What was Dameri’s purpose in landing on earth?", True),
    ("  what was   Dameri`s purpose in landing on earth ", True),
    ("WHAT WAS DAMERI'S PURPOSE IN LANDING ON EARTH?", True),
    ("What was Dameri purpose in landing on earth?", False),
    ("What was Dameri's purpose in leaving earth?", False),
    ("", False),
    ("   ", False),
])
def test_question_matching_ignores_quote_style_and_spacing(typed, matches):
    questions = [{"id": "q1", "question": "What was Dameri’s purpose in landing on earth?"}]
    assert (find_question(questions, typed) is not None) is matches


@pytest.mark.parametrize("a, b", [("“Yes,” he said?", '"yes," he said'), ("it’s", "it's"), ("a\tb\n c", "a b c")])
def test_question_key(a, b):
    assert question_key(a) == question_key(b)


def test_paper_lookup_is_none_for_other_documents():
    assert paper_lookup(hostile_document(), "What was Dameri's purpose in landing on earth?") is None


def test_write_report_writes_the_file(store, hostile_runs, tmp_path):
    path = write_report(store, hostile_runs[:1], tmp_path / "r.html")
    assert_self_contained(path.read_text(encoding="utf-8"))


def test_cli_report(tmp_path):
    db = tmp_path / "cli.db"
    built = run_json("build", str(book("off_course")), "--preset", "quality", db=db)
    asked = [run_json("ask", built["doc_id"][:6], "Who lands in the park?", "--method", m, db=db)["run_id"]
             for m in ("readagent-p", "bm25")]
    out = tmp_path / "report.html"
    written = run_json("report", *map(str, asked), "--out", str(out), db=db)
    assert written["out"] == str(out) and written["runs"] == asked and out.stat().st_size == written["bytes"]
    page = out.read_text(encoding="utf-8")
    assert_self_contained(page)
    assert page.count("<h3>") == 2 and "Who lands in the park?" in page
    not_a_question = run("report", str(built["run_id"]), "--out", str(tmp_path / "x.html"), db=db)
    assert not_a_question.returncode == 1 and "not a finished question" in not_a_question.stderr
    assert not (tmp_path / "x.html").exists()
