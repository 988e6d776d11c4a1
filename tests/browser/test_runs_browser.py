"""Runs in a real Chromium at 1280 px: Off Course asked with three methods at once (offline) is one
entry on Runs, and it reopens side by side as Ask showed it (screenshots 50_... to 52_...)."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core.store import open_db
from tests.browser.conftest import AppServer
from tests.browser.test_app_browser import idle, nav, open_off_course
from tests.browser.test_demo_browser import ask_url, open_url

pytestmark = pytest.mark.browser
THREE = ["ReadAgent-P", "GistMem", "BM25 top-k"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = AppServer(tmp_path_factory.mktemp("runs") / "runs.db")
    yield server
    server.stop()


def test_a_comparison_is_one_entry_on_runs_and_reopens_side_by_side(page, server, shot):
    page.set_viewport_size({"width": 1280, "height": 1600})
    open_off_course(page, server)
    server.docs = {d.title: d.id for d in open_db(str(server.db)).list_documents()}
    open_url(page, server, ask_url(server, THREE))
    page.get_by_role("button", name="Run").click()
    expect(page.locator(".gme-compare tr")).to_have_count(4, timeout=90_000)
    idle(page)
    asked = page.locator(".gme-compare tr").all_inner_texts()
    shot(page, "50_ask_three_methods")

    nav(page, "Runs")
    idle(page)
    opened = page.get_by_role("combobox", name="Open run")
    expect(opened).to_have_value(re.compile("comparison of 3 methods"), timeout=30_000)
    picker = opened.input_value()
    assert "comparison of 3 methods · readagent-p, gistmem, bm25 · Off Course" in picker, picker
    assert "· ·" not in picker and "None" not in picker
    store = open_db(str(server.db))
    assert store.count_runs() == 1 and store.count_runs(kind="ask") == 1  # one entry, not three
    expect(page.locator(".gme-compare tr")).to_have_count(4, timeout=30_000)
    assert page.locator(".gme-compare tr").all_inner_texts() == asked  # the same answers and figures
    page.get_by_role("heading", name="Runs").scroll_into_view_if_needed()
    idle(page)
    page.wait_for_timeout(1000)  # the table draws on a canvas after the page settles
    shot(page, "51_runs_comparison_one_entry")
    tabs = page.get_by_role("tab").all_inner_texts()
    assert [t for t in tabs if "#" in t] == [f"{m} · #{i}" for m, i in zip(THREE, store.group_runs(
        store.runs_page()[0].id))]
    page.get_by_role("tab", name="BM25 top-k").click()
    expect(page.get_by_text("Pages re-read (numbered by rank)")).to_be_visible()
    idle(page)
    shot(page, "52_runs_comparison_reopened_tab")
