"""Each page's logic through Streamlit's AppTest (plotly and iframes are checked in the browser)."""
import time

import pytest
from streamlit.testing.v1 import AppTest

from components.state import EngineSettings
from core.db import open_db
from core.simulator import SimulatedLLM
from tests.conftest import ROOT, book

PAPER_Q = 2  # "What was Dameri's purpose in landing on earth?"


@pytest.fixture
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("GIST_MEMORY_DB", str(tmp_path / "app.db"))
    from components.state import get_store

    get_store.clear()  # each test gets the database of its own environment
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    yield at.run()
    get_store.clear()


def html_of(at) -> str:
    return "\n".join(e.proto.body for e in at.get("html"))


def open_sample(at, key="off-course"):
    at.selectbox(key="sample").set_value(key)
    at.button(key="open_sample").click().run()
    assert not at.exception
    return at


def settle(at, seconds=30):
    """Rerun until a background build has finished."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        at.run()
        if any(m.label == "Compression rate" for m in at.metric):
            return at
        time.sleep(0.2)
    raise AssertionError("the build did not finish")


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_landing_page_labels_the_offline_engine_and_says_how_to_begin(app):
    assert not app.exception
    assert app.title[0].value == "Gist Memory Explorer"
    assert app.sidebar.radio(key="engine_kind").value == "offline"
    assert any("No LLM" in c.value for c in app.sidebar.caption)
    assert "Upload a text or open a bundled sample" in app.info[0].value


def test_off_course_opens_with_the_papers_memory(app):
    open_sample(app)
    assert app.header[0].value == "Off Course"
    assert metrics(app)["Pages"] == "8" and metrics(app)["Compression rate"] == "88.2%"
    body = html_of(app)
    assert body.count("ends here") == 8 and "Patrolmen Dermott and Casey" in body
    assert "from the ReadAgent paper (PaLM 2-L)" in body


def test_uploading_a_book_builds_it_offline_and_reopening_is_instant(app):
    app.file_uploader(key="upload").set_value(("alice.txt", book("alice").read_bytes(), "text/plain")).run()
    assert not app.exception
    assert app.header[0].value.startswith("Alice")
    settle(app)
    pages = int(metrics(app)["Pages"])
    assert pages > 10
    assert html_of(app).count("ends here") == 12  # the first view of pages
    # Opening it again from the library reuses the stored memory: no new build.
    app.button(key="open_library").click().run()
    assert metrics(app)["Pages"] == str(pages)
    store = open_db()
    assert len(store.list_runs(kind="build")) == 1


@pytest.mark.parametrize("name, data, says", [
    ("empty.txt", b"", "is empty"),
    ("image.txt", b"\x89PNG\r\n\x1a\n\x00\x00", "not text"),
    ("broken.epub", b"PK\x03\x04garbage", "not a readable EPUB"),
])
def test_a_bad_upload_gets_a_clear_message_and_nothing_is_lost(app, name, data, says):
    open_sample(app)
    app.file_uploader(key="upload").set_value((name, data, "application/octet-stream")).run()
    assert says in app.error[0].value
    assert app.header[0].value == "Off Course"  # the open document is still there


def test_text_from_documents_is_escaped_everywhere(app):
    evil = ("# <script>alert('title')</script>\n\n"
            + "\n\n".join(f"Paragraph {i} <img src=x onerror=alert({i})> and <script>alert('x')</script> "
                          + "word " * 60 for i in range(12)))
    app.file_uploader(key="upload").set_value(("evil.md", evil.encode(), "text/markdown")).run()
    settle(app)
    body = html_of(app)
    assert "<script>" not in body and "<img" not in body
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body and "&lt;img src=x onerror" in body
    assert "\\<script\\>" in app.header[0].value  # a Markdown heading shows the tag as text


def test_ask_the_papers_question_and_see_the_pages_re_read(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="sample_question").set_value(PAPER_Q).run()
    assert app.text_area(key="q_text").value == "What was Dameri’s purpose in landing on earth?"
    assert len(app.text_area(key="q_options").value.splitlines()) == 4
    app.button(key="run_question").click().run()
    assert not app.exception
    body = html_of(app)
    looked_up = body.count("gme-cell reread")
    assert 1 <= looked_up <= 5 and body.count('class="gme-cell') == 8
    assert "In the paper, ReadAgent with PaLM 2-L re-read pages 5, 6" in app.info[0].value
    assert metrics(app)["Pages re-read"] == str(looked_up)
    assert any(e.label.startswith("1. lookup") for e in app.expander)


def test_two_methods_side_by_side(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="sample_question").set_value(PAPER_Q).run()
    app.multiselect(key="q_methods").set_value(["readagent-p", "gistmem"]).run()
    app.button(key="run_question").click().run()
    headings = [m.value for m in app.markdown if m.value.startswith("#### ")]
    assert headings == ["#### ReadAgent\\-P", "#### GistMem"]
    assert [m.value for m in app.metric if m.label == "Pages re-read"][1] == "0"


def test_ask_without_a_document_or_memory_says_what_to_do(app):
    app.switch_page("pages/ask.py").run()
    assert "Open a document on the **Read** page first." in app.info[0].value
    app.switch_page("pages/memory.py").run()
    assert "Open a document" in app.info[0].value
    app.switch_page("pages/runs.py").run()
    assert "No runs yet" in app.info[0].value


def test_gist_memory_page_offers_exports_and_the_context(app):
    open_sample(app)
    app.switch_page("pages/memory.py").run()
    assert not app.exception
    assert "<Page 0>\nPatrolmen Dermott" in app.code[0].value
    assert len(app.expander) == 8
    assert [b.proto.label for b in app.get("download_button")] == ["Export JSON", "Export Markdown"]


def test_runs_reopen_a_question_and_a_build_as_they_were(app):
    app.file_uploader(key="upload").set_value(("alice.txt", book("alice").read_bytes(), "text/plain")).run()
    settle(app)
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="sample_question").set_value(PAPER_Q).run()
    app.button(key="run_question").click().run()
    answered = metrics(app)
    app.switch_page("pages/runs.py").run()
    runs = app.selectbox(key="open_run")
    assert len(runs.options) == 2 and " ask " in runs.options[0]  # newest first
    assert metrics(app)["Words in context"] == answered["Words in context"]
    build = open_db().list_runs(kind="build")[0]
    runs.set_value(build["id"]).run()
    assert not app.exception
    assert metrics(app)["Status"] == "done" and int(metrics(app)["Pages"]) > 10
    assert app.number_input(key=f"build{build['id']}_pick").value == 1  # step picker over the build's steps
    assert html_of(app).count("ends here") == 12


def sidebar_app():
    from components.settings import render_settings

    render_settings()


def test_model_settings_test_connection(tmp_path, monkeypatch):
    # The sidebar alone: AppTest keeps an st.navigation entrypoint's own elements only on the first run.
    monkeypatch.setenv("GIST_MEMORY_DB", str(tmp_path / "app.db"))
    app = AppTest.from_function(sidebar_app, default_timeout=30).run()
    app.sidebar.radio(key="engine_kind").set_value("openai").run()
    app.sidebar.button(key="test_connection").click().run()
    assert "Type the model name" in app.sidebar.error[0].value
    with SimulatedLLM() as sim:
        app.sidebar.text_input(key="engine_base_url").set_value(sim.base_url)
        app.sidebar.text_input(key="engine_model").set_value("gme-simulator")
        app.sidebar.text_input(key="engine_api_key").set_value("sk-typed-in-the-session")
        app.sidebar.button(key="test_connection").click().run()
        assert "Connected. The server offers gme-simulator." in app.sidebar.success[0].value
        assert app.session_state["engine_settings"].api_key == "sk-typed-in-the-session"
    app.sidebar.button(key="test_connection").click().run()
    assert "Could not reach" in app.sidebar.error[0].value


def test_a_question_through_a_model_never_reuses_offline_results(app):
    open_sample(app)
    with SimulatedLLM() as sim:
        app.session_state["engine_settings"] = EngineSettings("openai", sim.base_url, "gme-simulator", "sk-session")
        app.switch_page("pages/ask.py").run()
        app.selectbox(key="sample_question").set_value(PAPER_Q).run()
        app.button(key="run_question").click().run()
        assert not app.exception
        assert int(metrics(app)["Model calls"]) >= 2
        assert any("gme-simulator" in c.value.replace("\\", "") for c in app.caption)
        assert sim.stats.completed >= 2
    # The key typed in the session is never written to the database.
    store = open_db()
    dump = "\n".join(store.db.iterdump())
    assert "sk-session" not in dump


def test_evaluate_runs_in_the_background_and_inspect_walks_its_failures(app):
    app.switch_page("pages/inspect.py").run()
    assert "No evaluations yet" in app.info[0].value
    app.switch_page("pages/evaluate.py").run()
    app.number_input(key="ev_limit_docs").set_value(1)
    app.number_input(key="ev_limit_q").set_value(4)
    app.button(key="ev_run").click().run()
    deadline = time.monotonic() + 60
    while not app.dataframe and time.monotonic() < deadline:
        time.sleep(0.2)
        app.run()
    table = app.dataframe[0].value
    assert list(table["method"]) == ["ReadAgent-P", "GistMem", "Full text"] and set(table["n"]) == {4}
    assert "Offline engine (no LLM)" in app.info[0].value
    app.switch_page("pages/inspect.py").run()
    assert not app.exception
    first = next(m.value for m in app.markdown if m.value.startswith("**Case 1 of"))
    app.button(key="in_next").click().run()
    assert any(m.value.startswith("**Case 2 of") for m in app.markdown)
    app.button(key="in_prev").click().run()
    assert any(m.value == first for m in app.markdown)


def test_a_stopped_evaluation_is_resumed_from_the_evaluate_page(app):
    import threading

    from core.datasets import load_dataset
    from core.errors import Cancelled
    from core.evaluate import evaluate
    from core.offline import OfflineEngine

    store = open_db()
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:4])]
    cancel = threading.Event()

    def stop_after_two(p):
        if p.stage == "asking" and p.done >= 2:
            cancel.set()

    with pytest.raises(Cancelled):
        evaluate(store, OfflineEngine(), docs, ["gistmem", "full"], dataset="quality", path="quality_dev_16.jsonl",
                 concurrency=1, progress=stop_after_two, cancel=cancel, limit_questions=4)
    app.switch_page("pages/evaluate.py").run()
    assert "interrupted" in app.warning[0].value
    app.button(key="ev_resume").click().run()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and store.list_runs(kind="eval")[0]["status"] != "done":
        time.sleep(0.2)
    app.run()
    assert store.list_runs(kind="eval")[0]["status"] == "done"
    assert len(store.eval_results(store.list_runs(kind="eval")[0]["id"])) == 8
