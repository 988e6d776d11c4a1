"""Each page's logic through Streamlit's AppTest (plotly and iframes are checked in the browser)."""
import time

import pytest
from streamlit.testing.v1 import AppTest

from core.store import open_db
from core.llm.simulator import SimulatedLLM
from tests.conftest import ROOT, book

PAPER_Q = 2  # "What was Dameri's purpose in landing on earth?"


def html_of(at) -> str:
    return "\n".join(e.proto.body for e in at.get("html"))


def open_sample(at, key="off-course"):
    at.selectbox(key="read_sample").set_value(key)
    at.button(key="read_open_sample").click().run()
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
    app.file_uploader(key="read_upload").set_value(("alice.txt", book("alice").read_bytes(), "text/plain")).run()
    assert not app.exception
    assert app.header[0].value.startswith("Alice")
    settle(app)
    pages = int(metrics(app)["Pages"])
    assert pages > 10
    assert html_of(app).count("ends here") == 12  # the first view of pages
    # Every gist the offline engine wrote says so, and none quotes the book's front matter.
    gists = html_of(app).split('class="gme-gist">')[1:]
    assert len(gists) == 12 and all(g.split("</span>")[1].startswith(
        '<span class="gme-tag offline">offline engine (no LLM)') for g in gists)
    assert not any(w in g for g in gists for w in ("Gutenberg", "EBook #", "Produced by", "CONTENTS"))
    # Opening it again from the library reuses the stored memory: no new build.
    app.button(key="read_open_library").click().run()
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
    app.file_uploader(key="read_upload").set_value((name, data, "application/octet-stream")).run()
    assert says in app.error[0].value
    assert app.header[0].value == "Off Course"  # the open document is still there


def test_text_from_documents_is_escaped_everywhere(app):
    evil = ("# <script>alert('title')</script>\n\n"
            + "\n\n".join(f"Paragraph {i} <img src=x onerror=alert({i})> and <script>alert('x')</script> "
                          + "word " * 60 for i in range(12)))
    app.file_uploader(key="read_upload").set_value(("evil.md", evil.encode(), "text/markdown")).run()
    settle(app)
    body = html_of(app)
    assert "<script>" not in body and "<img" not in body
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body and "&lt;img src=x onerror" in body
    assert "\\<script\\>" in app.header[0].value  # a Markdown heading shows the tag as text


def test_ask_the_papers_question_and_see_the_pages_re_read(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="ask_sample").set_value(PAPER_Q).run()
    assert app.text_area(key="ask_text").value == "What was Dameri’s purpose in landing on earth?"
    assert len(app.text_area(key="ask_options").value.splitlines()) == 4
    app.button(key="ask_run").click().run()
    assert not app.exception
    body = html_of(app)
    looked_up = body.count("gme-cell reread")
    assert 1 <= looked_up <= 5 and body.count('class="gme-cell') == 16  # this run's strip and the paper's
    assert body.count("gme-cell paper") == 2  # the paper's ReadAgent re-read pages 5 and 6
    assert any(b.label == "Download report (HTML)" for b in app.get("download_button"))
    answer = body.split('<td class="answer">')[1].split("</td>")[0]  # the comparison table's cell
    assert '<span class="gme-tag offline">offline engine (no LLM)</span>' in answer  # the offline engine's
    assert 'gme-gist"><span class="gme-tag gist">gist</span><span class="gme-tag offline">' not in body
    assert "In the paper, ReadAgent with PaLM 2-L re-read pages 5, 6" in app.info[0].value
    assert metrics(app)["Pages re-read"] == str(looked_up)
    assert any(e.label.startswith("1. lookup") for e in app.expander)


def test_the_papers_question_typed_with_a_straight_apostrophe_is_the_papers(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.text_area(key="ask_text").set_value("What was Dameri's  purpose in landing on earth?").run()
    app.text_area(key="ask_options").set_value(
        "To share knowledge\nRepairs\nTo collect animals\nHe arrived by accident while exploring").run()
    app.button(key="ask_run").click().run()
    assert not app.exception
    assert "In the paper, ReadAgent with PaLM 2-L re-read pages 5, 6" in app.info[0].value
    assert html_of(app).count("gme-cell paper") == 2


def test_two_methods_side_by_side(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="ask_sample").set_value(PAPER_Q).run()
    app.multiselect(key="ask_methods").set_value(["readagent-p", "gistmem"]).run()
    app.button(key="ask_run").click().run()
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
    app.file_uploader(key="read_upload").set_value(("alice.txt", book("alice").read_bytes(), "text/plain")).run()
    settle(app)
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="ask_sample").set_value(PAPER_Q).run()
    app.button(key="ask_run").click().run()
    answered = metrics(app)
    app.switch_page("pages/runs.py").run()
    runs = app.selectbox(key="runs_open")
    assert len(runs.options) == 2 and " question " in runs.options[0]  # newest first
    assert metrics(app)["Words in context"] == answered["Words in context"]
    build = open_db().list_runs(kind="build")[0]
    runs.set_value(build.id).run()
    assert not app.exception
    assert metrics(app)["Status"] == "done" and int(metrics(app)["Pages"]) > 10
    assert app.number_input(key=f"build{build.id}_pick").value == 1  # step picker over the build's steps
    assert html_of(app).count("ends here") == 12


def test_runs_reopen_a_comparison_as_one_entry_side_by_side(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="ask_sample").set_value(PAPER_Q).run()
    app.multiselect(key="ask_methods").set_value(["readagent-p", "gistmem", "bm25"]).run()
    app.button(key="ask_run").click().run()
    assert not app.exception
    asked = html_of(app)
    app.switch_page("pages/runs.py").run()
    assert not app.exception
    options = app.selectbox(key="runs_open").options
    [entry] = [o for o in options if "comparison" in o]
    assert "comparison of 3 methods · readagent-p, gistmem, bm25 · Off Course" in entry
    assert len([o for o in options if "question" in o or "comparison" in o]) == 1  # one entry, not three
    assert "· ·" not in "".join(options)
    compare = lambda text: text[text.index('<table class="gme-compare">'):].split("</table>")[0]  # noqa: E731
    assert compare(html_of(app)) == compare(asked)  # the same table, the same figures
    assert [m.value for m in app.markdown if m.value.startswith("#### ")] == \
        ["#### ReadAgent\\-P", "#### GistMem", "#### BM25 top\\-k"]
    app.selectbox(key="runs_kind").set_value("builds").run()
    assert "No run matches." in app.info[0].value  # the paper's memory came with the sample: no build
    app.selectbox(key="runs_kind").set_value("every kind").run()
    app.selectbox(key="runs_doc").set_value("").run()
    assert app.selectbox(key="runs_open").options == options


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
        app.sidebar.radio(key="engine_kind").set_value("openai").run()  # as a user does, in the sidebar
        app.sidebar.text_input(key="engine_base_url").set_value(sim.base_url)
        app.sidebar.text_input(key="engine_model").set_value("gme-simulator")
        app.sidebar.text_input(key="engine_api_key").set_value("sk-session").run()
        app.switch_page("pages/ask.py").run()
        app.selectbox(key="ask_sample").set_value(PAPER_Q).run()
        app.button(key="ask_run").click().run()
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


def test_evaluate_chooses_each_methods_setting_and_counts_fallbacks_per_memory(app):
    app.switch_page("pages/evaluate.py").run()
    app.number_input(key="ev_limit_docs").set_value(1)
    app.number_input(key="ev_limit_q").set_value(3)
    app.multiselect(key="ev_methods").set_value(["bm25", "first-words"]).run()
    assert app.number_input(key="ev_param_first-words_words").value == 6000  # the paper's Table 3 default
    app.number_input(key="ev_param_first-words_words").set_value(500)
    app.number_input(key="ev_param_bm25_top_k").set_value(2)
    app.button(key="ev_run").click().run()
    deadline = time.monotonic() + 60
    while not app.dataframe and time.monotonic() < deadline:
        time.sleep(0.2)
        app.run()
    table = app.dataframe[0].value
    assert list(table["setting"]) == ["k = 2", "first 500 words"]
    assert list(table["problems"]) == ["none", "none"]  # no unparseable, no-answer, fallback or error
    memories = next(d.value for d in app.dataframe if "read by" in d.value.columns)
    assert list(memories["read by"]) == ["BM25 top-k"] and list(memories["fallback breaks"]) == [0]
    assert list(memories["pages"])[0] > 1 and not app.exception


def test_a_stopped_evaluation_is_resumed_from_the_evaluate_page(app):
    import threading

    from core.eval.datasets import load_dataset
    from core.errors import Cancelled
    from core.eval.runner import evaluate
    from core.engine import OFFLINE

    store = open_db()
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:4])]
    cancel = threading.Event()

    def stop_after_two(p):
        if p.stage == "asking" and p.done >= 2:
            cancel.set()

    with pytest.raises(Cancelled):
        evaluate(store, OFFLINE, docs, ["gistmem", "full"], dataset="quality", path="quality_dev_16.jsonl",
                 concurrency=1, progress=stop_after_two, cancel=cancel, limit_questions=4)
    app.switch_page("pages/evaluate.py").run()
    assert "stopped" in app.warning[0].value
    app.button(key="ev_resume").click().run()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and store.list_runs(kind="eval")[0].status != "done":
        time.sleep(0.2)
    app.run()
    assert store.list_runs(kind="eval")[0].status == "done"
    assert len(store.eval_results(store.list_runs(kind="eval")[0].id)) == 8


def test_a_file_that_is_not_utf8_says_how_it_was_read_and_can_be_read_another_way(app):
    text = "Chapitre premier\n\n" + "Zoë a goûté la crème brûlée à Noël, puis elle a dormi.\n\n" * 40
    app.file_uploader(key="read_upload").set_value(("zoe.txt", text.encode("cp1252"), "text/plain")).run()
    assert not app.exception
    assert any("read as Western European" in i.value for i in app.info)
    assert "crème brûlée" in html_of(app) or "crème brûlée" in str(app.markdown)
    app.selectbox(key="read_encoding").set_value("cp1250").run()
    assert not app.exception
    store = open_db()
    titles = {d.id: d for d in store.list_documents()}
    reread = [store.get_document(i) for i in titles if store.get_document(i).meta.get("encoding") == "cp1250"]
    assert reread and "crčme" in reread[0].paragraphs[1].text  # what the reader chose


def test_runs_offers_to_resume_a_stopped_build_and_finishes_it(app):
    import threading

    from core.engine import OFFLINE
    from core.errors import Cancelled
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.presets import PRESETS
    from core.text.documents import load_path

    store = open_db()
    document = load_path(book("alice"))
    cancel = threading.Event()
    with pytest.raises(Cancelled):
        build_memory(store, document, OFFLINE, BuildSettings(PRESETS["quality"]), cancel=cancel,
                     progress=lambda e: cancel.set() if e.pages_gisted >= 2 else None)
    [stopped] = store.list_runs(kind="build")
    app.switch_page("pages/runs.py").run()
    assert any("is stopped" in w.value for w in app.warning)
    app.button(key="runs_resume").click().run()
    assert not app.exception and any("complete" in s.value for s in app.success)
    assert store.get_run(stopped.id).status == "stopped"  # history stays; a new run finished the memory
    assert store.memories_for(document.id)[0].status == "complete"


def test_read_shows_a_stopped_build_as_a_partial_memory_and_library_counts_follow_builds(app):
    import threading

    from core.engine import OFFLINE
    from core.errors import Cancelled
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.presets import PRESETS
    from core.text.documents import load_path

    app.file_uploader(key="read_upload").set_value(("alice.txt", book("alice").read_bytes(), "text/plain")).run()
    settle(app)
    assert "1 gist memory" in app.selectbox(key="read_library_doc").options[0]  # counted as soon as it is built
    store = open_db()
    document = load_path(book("alice"))
    cancel = threading.Event()
    with pytest.raises(Cancelled) as stopped:
        build_memory(store, document, OFFLINE, BuildSettings(PRESETS["quality"]), cancel=cancel,
                     progress=lambda e: cancel.set() if e.pages_gisted >= 2 else None)
    assert "Resume build" in stopped.value.for_app() and "Resume build" not in stopped.value.for_cli()
    app.run()
    picker = app.selectbox(key="read_memory")
    partial = [o for o in picker.options if o.startswith("stopped, partial · ")]
    assert len(picker.options) == 2 and len(partial) == 1
    picker.set_value(store.memories_for(document.id, status="stopped")[0].id).run()
    assert not app.exception
    assert app.subheader[0].value.startswith("Stopped, partial: ")
    assert any("Resume it on the **Runs** page" in w.value for w in app.warning)
    assert "1 gist memory" in app.selectbox(key="read_library_doc").options[0]  # a partial one is not counted


def test_uploading_a_file_of_several_books_says_so_and_opens_another(app):
    data = (book("off_course").read_text(encoding="utf-8") + "\n\n" + book("alice").read_text(encoding="utf-8"))
    app.file_uploader(key="read_upload").set_value(("two.txt", data.encode("utf-8"), "text/plain")).run()
    assert not app.exception and app.header[0].value == "Off Course"
    assert any("This file holds 2 books" in i.value for i in app.info)
    app.selectbox(key="read_book").set_value(1).run()
    app.button(key="read_open_book").click().run()
    assert not app.exception and app.header[0].value.startswith("Alice")


# --- Inspect, Evaluate and Runs for annotators and evaluators at scale ----------------------------

def offline_evaluation(methods=("readagent-p", "gistmem"), questions=4, params=None):
    from core.engine import OFFLINE
    from core.eval.datasets import load_dataset
    from core.eval.runner import evaluate

    store = open_db()
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:questions])]
    return store, evaluate(store, OFFLINE, docs, list(methods), dataset="quality", path="quality_dev_16.jsonl",
                           params=params)


def case_line(app) -> str:
    return next(m.value for m in app.markdown if m.value.startswith("**Case "))


def test_inspect_labels_from_the_key_buttons_keeps_drafts_and_measures_agreement(app):
    store, eval_id = offline_evaluation()
    app.switch_page("pages/inspect.py").run()
    app.selectbox(key="in_show").set_value("everything").run()
    assert case_line(app).startswith("**Case 1 of 8**")
    first = app.session_state["in_case"]
    assert app.selectbox(key=f"in_category_{first}_").value is None  # nothing preselected
    app.button(key="in_cat_1").click().run()  # key 2 chooses the second category
    assert app.selectbox(key=f"in_category_{first}_").value == "gist lost the detail"
    app.button(key="in_save").click().run()
    assert "Type your name" in app.error[0].value and not store.labels(eval_id)
    app.text_input(key="in_annotator").set_value("ana").run()  # the choice made before is kept, now signed
    assert app.selectbox(key=f"in_category_{first}_ana").value == "gist lost the detail"

    # a note; away and back: the unsaved draft is still there
    app.text_area(key=f"in_note_{first}_ana").input("the date is gone").run()
    app.button(key="in_next").click().run()
    assert case_line(app).startswith("**Case 2 of 8**")
    app.button(key="in_save").click().run()
    assert "Choose a failure category first (keys 1–6)" in app.error[0].value and not store.labels(eval_id)
    app.button(key="in_prev").click().run()
    assert app.selectbox(key=f"in_category_{first}_ana").value == "gist lost the detail"
    assert app.text_area(key=f"in_note_{first}_ana").value == "the date is gone"
    assert any("Unsaved change" in c.value for c in app.caption)

    # save and next, three times
    order = []
    for key in ("in_save", "in_cat_2", "in_save", "in_cat_0", "in_save"):
        if key == "in_save":
            order.append(app.session_state["in_case"])
        app.button(key=key).click().run()
    assert "Saved as “pagination”." in app.success[0].value and case_line(app).startswith("**Case 4 of 8**")
    assert [(lb.result_id, lb.category, lb.note) for lb in store.labels(eval_id)] == sorted(
        zip(order, ["gist lost the detail", "wrong look-up", "pagination"], ["the date is gone", "", ""]))

    # a second annotator agrees on two cases and not on the third
    app.text_input(key="in_annotator").set_value("ben").run()
    app.number_input(key="in_goto").set_value(1).run()
    assert case_line(app).startswith("**Case 1 of 8**")
    for key in ("in_cat_1", "in_save", "in_cat_2", "in_save", "in_cat_4", "in_save"):
        app.button(key=key).click().run()
    assert any("Cohen's kappa: **0.57 (moderate)** over 3 cases" in m.value for m in app.markdown)
    [apart] = [d.value for d in app.dataframe if "by ben" in d.value.columns]
    assert list(apart["by ana"]) == ["pagination"] and list(apart["by ben"]) == ["dataset problem"]
    assert any("Cases where annotators disagree** (1)" in m.value for m in app.markdown)

    # the same question's other method, even when the filters hide it
    app.selectbox(key="in_labelled").set_value("annotators disagree").run()
    case = next(r for r in store.eval_results(eval_id) if r.id == app.session_state["in_case"])
    other = next(r for r in store.eval_results(eval_id) if r.question_id == case.question_id and r.id != case.id)
    app.button(key=f"in_other_{other.id}").click().run()
    assert app.session_state["in_case"] == other.id and app.selectbox(key="in_show").value == "everything"
    assert "widened" in app.info[0].value and not app.exception


def test_evaluate_names_each_setting_shows_no_spread_for_one_run_and_compares_two(app):
    store, first = offline_evaluation(("bm25", "first-words"), params={"bm25": {"top_k": 1}})
    _, second = offline_evaluation(("bm25", "first-words"), params={"first-words": {"words": 150}})
    app.switch_page("pages/evaluate.py").run()
    table = app.dataframe[0].value
    assert list(table["setting"]) == ["k = 5", "first 150 words"] and set(table["± std"]) == {"—"}
    app.selectbox(key="ev_pick").set_value(first).run()
    assert list(app.dataframe[0].value["setting"]) == ["k = 1", "first 6000 words"]
    app.selectbox(key="ev_compare").set_value(second).run()
    assert not app.exception
    assert any(c.value.startswith(f"8 results in both · 0 only in #{first}") for c in app.caption)
    methods = next(d.value for d in app.dataframe if "fixed" in d.value.columns)
    assert list(methods["questions"]) == [4, 4]
    changed = next(d.value for d in app.dataframe if f"#{second}" in d.value.columns)
    assert len(changed) == sum(methods["answer changed"]) > 0


def test_runs_list_an_evaluations_question_runs_under_it_not_one_by_one(app):
    store, eval_id = offline_evaluation()
    app.switch_page("pages/runs.py").run()
    options = app.selectbox(key="runs_open").options
    assert not any(" · question · " in o for o in options) and len(options) == 2  # the evaluation and its build
    assert any(o.startswith(f"#{eval_id} · eval") and "8 question runs" in o for o in options)
    app.selectbox(key="runs_open").set_value(eval_id).run()
    assert any(e.label.startswith(f"The 8 question runs of evaluation #{eval_id}") for e in app.expander)
    assert len(next(d.value for d in app.dataframe if "repeat" in d.value.columns)) == 8
    app.selectbox(key="runs_kind").set_value("questions").run()
    assert "No run matches." in app.info[0].value


# --- what a session holds: each page its own state, shared state through components/state ---------

def test_runs_hands_a_stopped_evaluation_to_evaluate_which_resumes_it(app):
    import threading

    from core.engine import OFFLINE
    from core.errors import Cancelled
    from core.eval.datasets import load_dataset
    from core.eval.runner import evaluate

    store = open_db()
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:4])]
    cancel = threading.Event()
    with pytest.raises(Cancelled):
        evaluate(store, OFFLINE, docs, ["gistmem", "full"], dataset="quality", path="quality_dev_16.jsonl",
                 concurrency=1, progress=lambda p: cancel.set() if p.stage == "asking" and p.done >= 2 else None,
                 cancel=cancel, limit_questions=4)
    [stopped] = store.list_runs(kind="eval")
    app.switch_page("pages/runs.py").run()
    app.selectbox(key="runs_open").set_value(stopped.id).run()
    assert any("is stopped" in w.value for w in app.warning)
    app.button(key="runs_resume").click().run()
    assert not app.exception and app.title[0].value == "Evaluate"
    assert "resume" not in app.query_params  # taken: a reload does not resume it again
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and store.get_run(stopped.id).status != "done":
        time.sleep(0.2)
    assert store.get_run(stopped.id).status == "done" and len(store.eval_results(stopped.id)) == 8
    app.switch_page("pages/evaluate.py").run()  # (AppTest's next run is on the page it was told, not switched to)
    assert app.selectbox(key="ev_pick").value == stopped.id and "resume" not in app.query_params


def test_answers_stay_with_the_document_they_were_made_for(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.selectbox(key="ask_sample").set_value(PAPER_Q).run()
    app.button(key="ask_run").click().run()
    assert metrics(app)["Pages re-read"]
    app.switch_page("pages/read.py").run()
    open_sample(app, "alice")  # another document, then Off Course again
    app.selectbox(key="read_library_doc").set_value(next(d.id for d in open_db().list_documents()
                                                          if d.title == "Off Course"))
    app.button(key="read_open_library").click().run()
    assert app.header[0].value == "Off Course"
    app.switch_page("pages/ask.py").run()
    assert not app.exception and "Pages re-read" not in metrics(app)  # a fresh start, as when it was opened first


def open_pride_and_prejudice(app):
    app.file_uploader(key="read_upload").set_value(
        ("pp.txt", book("pride_and_prejudice").read_bytes(), "text/plain")).run()
    settle(app)
    return app


def test_read_goes_to_a_page_and_keeps_it_in_the_url(app):
    open_pride_and_prejudice(app)
    n = int(metrics(app)["Pages"])
    assert n > 40 and app.selectbox(key="read_memory_pages").value == 0
    app.number_input(key="read_memory_pages_goto").set_value(40).run()
    assert not app.exception
    assert app.selectbox(key="read_memory_pages").value == 36  # the range holding page 40
    body = html_of(app)
    assert 'class="gme-page target" id="page-40"' in body and 'id="page-47"' in body and 'id="page-35"' not in body
    assert app.query_params["page"] in ("40", ["40"])
    app.selectbox(key="read_memory_pages").set_value(0).run()  # another range: nothing outlined, no page in the URL
    assert "gme-page target" not in html_of(app) and "page" not in app.query_params


def test_a_link_to_a_page_opens_it(app):
    open_pride_and_prejudice(app)
    doc = open_db().list_documents()[0].id
    from components.state import get_store

    get_store.clear()
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    fresh.query_params.update({"doc": doc, "page": "50"})
    fresh.run()
    assert not fresh.exception
    assert fresh.selectbox(key="read_memory_pages").value == 48
    assert 'class="gme-page target" id="page-50"' in html_of(fresh)


def test_read_searches_texts_and_gists_and_a_match_opens_its_page(app):
    open_pride_and_prejudice(app)
    app.text_input(key="read_memory_pages_search").input("pemberley").run()
    assert not app.exception
    hits = [b for b in app.button if (b.key or "").startswith("read_memory_pages_hit")]
    assert len(hits) > 3 and all(b.label.startswith("Page ") for b in hits)
    assert "“pemberley”:" in app.caption[-1].value or any("“pemberley”:" in c.value for c in app.caption)
    assert "<mark>Pemberley</mark>" in html_of(app)
    last = hits[-1]
    page = int(last.label.split()[1])
    last.click().run()
    assert app.selectbox(key="read_memory_pages").value == page - page % 12
    assert app.number_input(key="read_memory_pages_goto").value == page
    body = html_of(app)
    assert f'class="gme-page target" id="page-{page}"' in body and "<mark>Pemberley</mark>" in body


@pytest.mark.parametrize("query", ["<script>alert(1)</script>", "**Darcy**", ".*", "(", "[x](javascript:1)"])
def test_read_search_takes_hostile_queries_literally(app, query):
    open_sample(app)
    app.text_input(key="read_memory_pages_search").input(query).run()
    assert not app.exception
    assert "<script>alert" not in html_of(app)
    assert any("No page holds" in c.value for c in app.caption)


def test_gist_memory_table_puts_the_gist_first_and_the_reason_last(app):
    open_sample(app)
    app.switch_page("pages/memory.py").run()
    table = next(d.value for d in app.dataframe if "gist" in d.value.columns)
    assert list(table.columns)[:2] == ["page", "gist"] and list(table.columns)[-1] == "reason"


def test_gist_memory_raw_pages_go_to_a_page_and_mark_search_matches(app):
    open_pride_and_prejudice(app)
    app.switch_page("pages/memory.py").run()
    app.number_input(key="mem_raw_range_goto").set_value(40).run()
    assert app.selectbox(key="mem_raw_range").value == 40
    opened = [e for e in app.expander if e.proto.expanded]
    assert len(opened) == 1 and opened[0].label.startswith("Page 40 ·")
    app.text_input(key="mem_raw_range_search").input("Pemberley").run()
    assert not app.exception and "<mark>Pemberley</mark>" in html_of(app)
