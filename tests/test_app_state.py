"""What survives: Ask's form across pages, the view in the URL across a reload, the tree just built
on the Memory tree page, and the MemWalker walk drawn whole (AppTest; the drawings in the browser)."""
from streamlit.testing.v1 import AppTest

from core.store import open_db
from tests.conftest import ROOT
from tests.test_app import PAPER_Q, html_of, open_sample

METHODS = ["readagent-p", "gistmem", "memwalker"]


def ask_three(at):
    open_sample(at)
    at.switch_page("pages/ask.py").run()
    at.selectbox(key="ask_sample").set_value(PAPER_Q).run()
    at.multiselect(key="ask_methods").set_value(METHODS).run()
    at.button(key="ask_run").click().run()
    assert not at.exception
    return at


def test_the_ask_form_survives_a_trip_to_another_page(app):
    open_sample(app)
    app.switch_page("pages/ask.py").run()
    app.text_area(key="ask_text").set_value("Who lands on Earth?").run()
    app.text_area(key="ask_options").set_value("A pilot\nA patrolman").run()
    app.multiselect(key="ask_methods").set_value(["full", "gistmem"]).run()
    app.switch_page("pages/read.py").run()
    app.switch_page("pages/ask.py").run()
    assert app.text_area(key="ask_text").value == "Who lands on Earth?"
    assert app.text_area(key="ask_options").value == "A pilot\nA patrolman"
    assert app.multiselect(key="ask_methods").value == ["full", "gistmem"]


def test_the_url_names_the_document_memory_question_methods_and_answers(app):
    ask_three(app)
    params = dict(app.query_params)
    runs = [r.id for r in open_db().list_runs(kind="ask")]
    assert params["doc"] == app.session_state["app_doc_id"] and params["memory"] == "1"
    assert params["ask_text"].startswith("What was Dameri")
    assert sorted(map(int, params["runs"].split(","))) == sorted(runs) and len(runs) == 3


def test_a_reload_reopens_the_same_view_from_the_url(app):
    ask_three(app)
    params = dict(app.query_params)
    # The browser puts a bound multiselect in the URL as soon as it changes (repeated labels);
    # AppTest only does so on a later run, so the test writes it as the browser would.
    params.setdefault("ask_methods", ["ReadAgent-P", "GistMem", "MemWalker"])
    table = next(h for h in html_of(app).split("\n") if "<table class=\"gme-compare\"" in h)
    reloaded = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)  # a new session, same database
    for key, value in params.items():
        reloaded.query_params[key] = value
    reloaded.run()
    assert reloaded.header[0].value == "Off Course"  # Read opens the linked document
    reloaded.switch_page("pages/ask.py").run()
    assert not reloaded.exception
    assert reloaded.text_area(key="ask_text").value.startswith("What was Dameri")
    assert reloaded.multiselect(key="ask_methods").value == METHODS
    assert table in html_of(reloaded)  # the same answers, from the database


def test_a_link_to_runs_of_another_database_is_ignored(app):
    open_sample(app)
    reloaded = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    reloaded.query_params.update({"doc": app.session_state["app_doc_id"], "runs": "999,abc"})
    reloaded.run()
    reloaded.switch_page("pages/ask.py").run()
    assert not reloaded.exception and '<table class="gme-compare"' not in html_of(reloaded)


def test_ask_compares_methods_in_one_table_and_a_tab_each(app):
    ask_three(app)
    body = html_of(app)
    table = body[body.index('<table class="gme-compare">'):body.index("</table>", body.index("gme-compare"))]
    assert table.count("<tr") == 1 + len(METHODS)
    assert "ReadAgent-P" in table and "MemWalker" in table and "Words in context" in table
    assert [t.label for t in app.tabs][:3] == [f"{label} · #{r}" for label, r in
                                               zip(["ReadAgent-P", "GistMem", "MemWalker"],
                                                   map(int, app.query_params["runs"].split(",")))]
    assert sum(1 for e in app.expander if e.label == "Context sent to the model for the answer") == len(METHODS)
    assert not any(c.language is None and "Dameri" in c.value and "<Page" in c.value for c in app.code)


def test_a_tree_just_built_is_the_one_shown_and_named_by_its_settings(app):
    open_sample(app)
    app.switch_page("pages/tree.py").run()
    app.button(key="tree_build").click().run()
    first = app.selectbox(key="tree_pick").value
    app.number_input(key="tree_segment_tokens").set_value(300).run()
    app.button(key="tree_build").click().run()
    picked = app.selectbox(key="tree_pick")
    assert picked.value != first and str(picked.value) == app.query_params["tree"]  # the new tree, in the URL too
    label = picked.format_func(picked.value)
    assert "300 tokens a segment" in label and "pages tokens" not in label
    app.number_input(key="tree_segment_tokens").set_value(1000).run()
    app.button(key="tree_build").click().run()  # reopening the older tree shows it, not the newest
    assert app.selectbox(key="tree_pick").value == first and "Reopened the stored tree" in app.success[0].value
    app.checkbox(key="tree_on_pages").check().run()
    app.button(key="tree_build").click().run()
    label = app.selectbox(key="tree_pick").format_func(app.selectbox(key="tree_pick").value)
    assert "pages as leaves" in label and "pages tokens" not in label
