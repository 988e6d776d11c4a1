"""The paths people take through the app, in a real Chromium."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import book

pytestmark = pytest.mark.browser
PAPER_QUESTION = "What was Dameri’s purpose in landing on earth?"


def goto(page: Page, server, path: str = "") -> None:
    page.goto(f"{server.url}/{path}")
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=30_000)


def nav(page: Page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible(timeout=20_000)


def pick(page: Page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label``."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    box.click()
    page.get_by_role("option", name=option).first.click()


def idle(page: Page) -> None:
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60_000)


def open_off_course(page: Page, server) -> None:
    goto(page, server)
    page.get_by_role("tab", name="Bundled samples").click()
    page.get_by_role("button", name="Open sample").click()
    expect(page.get_by_text("Page 7 ends here")).to_be_visible(timeout=30_000)


def test_off_course_sample_shows_the_papers_memory_and_answers_the_papers_question(page, app_server, shot):
    open_off_course(page, app_server)
    expect(page.get_by_text("from the ReadAgent paper (PaLM 2-L)").first).to_be_visible()
    expect(page.locator(".gme-gist").first).to_contain_text("Patrolmen Dermott and Casey")
    expect(page.locator(".js-plotly-plot .bars").first).to_be_visible(timeout=20_000)
    shot(page, "01_read_off_course")

    nav(page, "Gist memory")
    expect(page.get_by_text("As the model sees it")).to_be_visible()
    expect(page.get_by_role("button", name="Export JSON")).to_be_visible()
    shot(page, "02_gist_memory_off_course")

    nav(page, "Ask")
    pick(page, "A question from the data", PAPER_QUESTION)
    expect(page.get_by_label("Question", exact=True)).to_have_value(PAPER_QUESTION)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_text("Pages re-read").first).to_be_visible(timeout=30_000)
    reread = page.locator(".gme-cell.reread")
    expect(reread.first).to_be_visible()
    assert 1 <= reread.count() <= 5
    assert page.locator(".gme-cell").count() == 8
    expect(page.get_by_text("In the paper, ReadAgent with PaLM 2-L re-read pages 5, 6")).to_be_visible()
    page.get_by_text("Context sent to the model for the answer").click()
    expect(page.locator(".gme-ctx.raw").first).to_be_visible()
    assert page.locator(".gme-ctx.raw").count() == reread.count()
    shot(page, "03_ask_off_course_offline")

    nav(page, "Runs")
    pick(page, "Open run", "ask")
    expect(page.get_by_text("Pages re-read").first).to_be_visible(timeout=20_000)
    expect(page.locator(".gme-cell.reread")).to_have_count(reread.count())
    shot(page, "04_runs_reopened_question")


def test_uploading_pride_and_prejudice_shows_pages_and_gists(page, app_server, shot):
    goto(page, app_server)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(book("pride")))
    expect(page.get_by_text(re.compile(r"Page \d+ ends here")).first).to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name="Pride and Prejudice")).to_be_visible()
    expect(page.get_by_text("Compression rate").first).to_be_visible(timeout=60_000)
    expect(page.locator(".gme-gist:not(.pending)").first).to_be_visible()
    expect(page.locator(".js-plotly-plot .bars").first).to_be_visible(timeout=20_000)
    shot(page, "05_read_pride_and_prejudice")
