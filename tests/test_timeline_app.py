"""Read: the estimate of a model build before it runs, the actual figures and the timeline after."""
from __future__ import annotations

import time


from core.llm.simulator import SimulatedLLM
from core.store import open_db


def tables(at) -> list:
    return [d.value for d in at.dataframe]


def table_with(at, column: str):
    return next((t for t in tables(at) if column in t.columns), None)


def test_offline_engine_shows_no_estimate(app):
    app.selectbox(key="read_sample").set_value("off-course")
    app.button(key="read_open_sample").click().run()
    assert not app.exception
    assert table_with(app, "estimate") is None


def test_estimate_before_a_model_build_and_actual_figures_after(app):
    with SimulatedLLM() as sim:
        app.sidebar.radio(key="engine_kind").set_value("openai").run()
        app.sidebar.text_input(key="engine_base_url").set_value(sim.base_url)
        app.sidebar.text_input(key="engine_model").set_value("gme-simulator").run()
        app.selectbox(key="read_sample").set_value("off-course")
        app.button(key="read_open_sample").click().run()
        assert not app.exception
        estimate = table_with(app, "estimate")
        assert estimate is not None and "actual" not in estimate.columns
        assert list(estimate[""]) == ["Pages", "Pagination calls", "Gist calls", "Input tokens", "Output tokens"]
        app.number_input(key="read_estimate_input_price").set_value(2.5)
        app.number_input(key="read_estimate_output_price").set_value(10.0).run()
        assert list(table_with(app, "estimate")[""])[-1] == "Cost"

        app.button(key="read_build").click().run()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and table_with(app, "actual") is None:
            time.sleep(0.3)
            app.run()
        assert not app.exception
        actual = table_with(app, "actual")
        assert actual is not None, "no actual figures after the build"
        run = open_db().get_run(open_db().list_runs(kind="build")[0].id)
        calls = [c for c in open_db().calls(run.id) if not c.cached]
        by_step = dict(zip(actual[""], actual["actual"]))
        assert by_step["Gist calls"] == f"{sum(c.step == 'gist' for c in calls):,}"
        assert by_step["Pagination calls"] == f"{sum(c.step == 'pagination' for c in calls):,}"
        assert by_step["Input tokens"] == f"{run.result['input_tokens']:,}"
        assert by_step["Cost"] != "—"
        assert all(c.started_at for c in calls)  # every call recorded its start
        steps = table_with(app, "gist")  # tokens per step beside the timeline
        assert steps is not None and list(steps[""]) == ["calls", "seconds", "tokens in", "tokens out"]
        assert steps["gist"][0] == f"{sum(c.step == 'gist' for c in calls):,}"
        assert len(app.get("plotly_chart")) >= 2  # the timeline and the pages chart


def test_runs_draws_an_offline_builds_steps_labelled_as_offline(app):
    app.selectbox(key="read_sample").set_value("alice")
    app.button(key="read_open_sample").click().run()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not open_db().list_runs(kind="build"):
        time.sleep(0.3)
    while time.monotonic() < deadline and open_db().list_runs(kind="build")[0].status == "running":
        time.sleep(0.3)
    app.switch_page("pages/runs.py").run()
    assert not app.exception
    steps = table_with(app, "pagination")
    assert steps is not None and list(steps[""]) == ["steps", "seconds"]
    assert any("offline engine (no LLM)" in c.value for c in app.caption)
