"""Moving through a long book in a real Chromium at 1280 px: Pride and Prejudice (built offline),
go to page 40, search "Pemberley", open a match; the Gist memory table shows the gist first.
Screenshots go to test-artifacts/ (50_... to 53_...)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from core.store import open_db
from tests.browser.conftest import AppServer
from tests.browser.test_app_browser import idle, nav
from tests.browser.test_demo_browser import open_url
from tests.conftest import ROOT, book

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pride(tmp_path_factory):
    """The app on a database holding Pride and Prejudice's gist memory (built offline)."""
    db = tmp_path_factory.mktemp("book") / "book.db"
    subprocess.run([sys.executable, "-m", "core", "build", str(book("pride_and_prejudice")), "--db", str(db)],
                   cwd=ROOT, check=True, capture_output=True)
    server = AppServer(db)
    server.doc = open_db(str(db)).list_documents()[0].id
    yield server
    server.stop()


def nothing_cut(page: Page) -> list[str]:
    return page.evaluate("""() => {
      const width = document.documentElement.clientWidth, cut = [];
      if (document.documentElement.scrollWidth > width + 1) cut.push('page scrolls sideways');
      document.querySelectorAll('.gme-hit, .gme-page').forEach(el => {
        if (el.getBoundingClientRect().right > width + 1) cut.push(el.innerText.slice(0, 40)); });
      return cut;
    }""")


def test_go_to_page_40_search_pemberley_and_open_a_match(page, pride, shot):
    page.set_viewport_size({"width": 1280, "height": 1600})
    open_url(page, pride, f"?doc={pride.doc}")
    ranges = page.get_by_role("combobox", name="Pages", exact=True)
    expect(ranges).to_match_aria_snapshot('- combobox "Pages": Pages 0–11 of 71', timeout=30_000)
    page.get_by_label("Go to page").fill("40")
    page.get_by_role("button", name="Go", exact=True).click()
    idle(page)
    target = page.locator(".gme-page.target")
    expect(target).to_have_count(1)
    expect(target).to_have_attribute("id", "page-40")
    expect(ranges).to_match_aria_snapshot('- combobox "Pages": Pages 36–47 of 71')
    assert "page=40" in page.url
    expect(target).to_be_in_viewport(timeout=5_000)  # brought into view: no hunting for it
    page.wait_for_timeout(600)  # the smooth scroll ends
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_timeout(300)
    target.scroll_into_view_if_needed()
    shot(page, "50_read_pride_page_40")
    page.set_viewport_size({"width": 1280, "height": 1600})

    page.get_by_label("Go to page").fill("400")  # past the end: said so, and the last page shown
    page.get_by_label("Go to page").press("Enter")
    idle(page)
    expect(page.get_by_text("There is no page 400: this memory has pages 0–70. Showing page 70.")).to_be_visible()
    expect(page.locator(".gme-page.target")).to_have_attribute("id", "page-70")
    expect(page.locator(".gme-page.target")).to_be_in_viewport(timeout=5_000)
    shot(page, "50b_read_pride_page_past_the_end")

    page.get_by_label("Search the text and the gists").fill("Pemberley")
    page.get_by_label("Search the text and the gists").press("Enter")
    idle(page)
    expect(page.get_by_text("“Pemberley”:")).to_be_visible()
    hits = page.locator(".gme-hit")
    assert hits.count() > 3
    expect(hits.first.locator("mark").first).to_have_text("Pemberley", ignore_case=True)
    assert nothing_cut(page) == []
    hits.first.scroll_into_view_if_needed()
    shot(page, "51_read_pride_search_pemberley")

    buttons = page.locator('[class*="st-key-read_memory_pages_hit"] button')
    last = buttons.nth(buttons.count() - 1)
    number = int(last.inner_text().split()[1])
    last.click()
    idle(page)
    expect(page.locator(".gme-page.target")).to_have_attribute("id", f"page-{number}")
    marks = page.locator(f"#page-{number} mark")
    assert marks.count() >= 1 and marks.first.inner_text().lower() == "pemberley"
    assert f"page={number}" in page.url
    expect(page.locator(f"#page-{number}")).to_be_in_viewport(timeout=5_000)  # brought into view
    marks.first.scroll_into_view_if_needed()
    expect(marks.first).to_be_in_viewport()  # the page gone to is shown whole: no box to scroll inside
    shot(page, "52_read_pride_match_opened")


def test_gist_memory_table_shows_the_gist_first_at_1280_px(page, pride, shot):
    page.set_viewport_size({"width": 1280, "height": 1400})
    open_url(page, pride, f"memory?doc={pride.doc}")
    nav(page, "Gist memory")
    idle(page)
    grid = page.get_by_test_id("stDataFrame").first
    expect(grid).to_be_visible(timeout=20_000)
    grid.scroll_into_view_if_needed()
    page.wait_for_timeout(1000)
    shot(page, "53_gist_memory_table_gist_first")
    headers = grid.locator('[role="columnheader"]')
    expect(headers).not_to_have_count(0, timeout=20_000)
    names = [h.strip() for h in headers.all_text_contents() if h.strip()]
    # The gist first, where the eye lands, and every column in sight at 1280 px: the reason (last) too.
    assert names[:2] == ["page", "gist"] and names[-1] == "reason", names
