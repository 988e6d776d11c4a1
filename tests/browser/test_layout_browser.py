"""Nothing cut at 1280 px, on any page: every table, chart and frame fits the width it has, and no page
scrolls sideways. The app holds Frankenstein (built offline, with its memory tree, a question asked with
three methods and a MemWalker walk) and an offline evaluation of the bundled QuALITY sample with a label.
Each page is opened as a user reaches it, at 1280x800 and at 1920x1080. Screenshots go to
test-artifacts/ (60_... and 61_...)."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from core.store import open_db
from tests.browser.conftest import AppServer
from tests.browser.test_app_browser import idle
from tests.conftest import ROOT, book

pytestmark = pytest.mark.browser
QUESTION = "Where does Victor create the creature?"
PAGES = ("Read", "Gist memory", "Ask", "Memory tree", "Evaluate", "Inspect", "Runs")

# Whatever overflows the main column or scrolls sideways inside it, named so a failure says where.
OVERFLOW = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const right = main.getBoundingClientRect().right, cut = [];
  const name = el => (el.getAttribute('data-testid') || el.className || el.tagName) + ': '
      + (el.innerText || el.getAttribute('aria-label') || '').replace(/\\s+/g, ' ').slice(0, 60);
  if (document.documentElement.scrollWidth > document.documentElement.clientWidth + 1) cut.push('the page scrolls sideways');
  const wide = '[data-testid="stDataFrame"], [data-testid="stTable"], [data-testid="stPlotlyChart"], '
      + '[data-testid="stIFrame"], [data-testid="stHorizontalBlock"], [data-testid="stMetric"], table, svg, '
      + '.gme-page, .gme-strip, .gme-compare, [data-testid="stCode"]';
  for (const el of main.querySelectorAll(wide)) {
    const r = el.getBoundingClientRect();
    if (!r.width || el.closest('[data-testid="stExpanderDetails"]:not([open])')) continue;
    if (r.right > right + 1) cut.push('past the edge: ' + name(el));
    else if (el.tagName !== 'svg' && el.getAttribute('data-testid') !== 'stDataFrame'
             && el.scrollWidth > el.clientWidth + 1) cut.push('scrolls sideways: ' + name(el));
  }
  for (const s of main.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')) {
    if (s.scrollWidth > s.clientWidth + 1) {
      const grid = s.closest('[data-testid="stDataFrame"]');
      const heads = [...grid.querySelectorAll('[role="columnheader"]')].map(h => h.innerText.trim()).filter(Boolean);
      cut.push('table scrolls sideways: ' + heads.join(', ').slice(0, 120));
    }
  }
  return cut;
}"""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The app on a database holding Frankenstein and an evaluation of the QuALITY sample (offline)."""
    db = tmp_path_factory.mktemp("layout") / "layout.db"

    def core(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "core", *args, "--db", str(db)], cwd=ROOT, check=True,
                       capture_output=True)

    core("build", str(book("frankenstein")))
    core("eval", "--dataset", "quality", "--methods", "readagent-p,gistmem,memwalker")
    store = open_db(str(db))
    doc = next(d.id for d in store.list_documents() if d.title == "Frankenstein")
    for method in ("readagent-p", "bm25", "memwalker"):
        core("ask", doc, QUESTION, "--method", method)
    result = store.eval_results(store.list_runs(kind="eval")[0].id)[0]
    store.save_label(result.id, "bob", "wrong look-up", "=HYPERLINK(\"http://example.com\",\"x\")")
    store.close()
    server = AppServer(db)
    server.doc = doc
    yield server
    server.stop()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280", "1920"])
def test_no_page_is_cut_or_scrolls_sideways(page: Page, library, shot, size):
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{library.url}/?doc={library.doc}")
    expect(page.locator(".st-key-gme_nav")).to_contain_text("Runs", timeout=60_000)
    idle(page)
    found = {}
    for n, title in enumerate(PAGES):
        page.locator(".st-key-gme_nav").get_by_text(title, exact=True).click()
        idle(page)
        page.wait_for_timeout(1500)  # charts and tables settle
        found[title] = page.evaluate(OVERFLOW)
        shot(page, f"6{0 if width == 1280 else 1}_{n}_{title.lower().replace(' ', '_')}_{width}")
    cut = {title: cut for title, cut in found.items() if cut}
    assert not cut, "\n".join(f"{title}: {'; '.join(what)}" for title, what in cut.items())


def test_the_page_list_never_shows_file_names(page: Page, library):
    """On a first load the sidebar lists the pages by their names (Read, Gist memory...) from the start,
    never the pages/ folder's file names (app, ask, evaluate...) while the app starts."""
    seen = set()
    page.goto(f"{library.url}/ask?doc={library.doc}", wait_until="commit")
    for _ in range(80):
        listed = page.evaluate("(() => { const s = document.querySelector('[data-testid=stSidebar]');"
                               " return s ? s.innerText : ''; })()")
        seen.update(line.strip() for line in listed.splitlines() if line.strip())
        if "Gist memory" in seen and "Runs" in seen:
            break
        page.wait_for_timeout(50)
    assert {"Read", "Gist memory", "Memory tree", "Runs"} <= seen
    assert not seen & {"app", "ask", "evaluate", "inspect", "memory", "read", "runs", "tree"}, seen


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280", "1920"])
def test_what_was_asked_for_comes_into_view(page: Page, library, shot, size):
    """Run on Ask: the progress is in sight at once and the answers when they land; a run chosen on Runs
    is brought into view (the list above it is long)."""
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{library.url}/ask?doc={library.doc}&ask_text=Who%20is%20Justine%3F&ask_methods=ReadAgent-P"
              "&ask_methods=MemWalker")
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_visible(timeout=60_000)
    idle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_text(re.compile(r"^(Asking 2 methods…|Answered by 2 of 2 methods)$"))).to_be_in_viewport(
        timeout=3_000)
    expect(page.locator(".gme-compare")).to_be_visible(timeout=60_000)
    idle(page)
    expect(page.get_by_role("heading", name="Who is Justine?")).to_be_in_viewport(timeout=5_000)
    page.wait_for_timeout(500)
    shot(page, f"62_ask_answers_in_view_{width}")
    page.locator(".st-key-gme_nav").get_by_text("Runs", exact=True).click()
    idle(page)
    box = page.get_by_test_id("stSelectbox").filter(has_text="Open run").first
    box.click()
    page.keyboard.type("build gist memory")  # the list is long: typed to find the book's build
    page.get_by_role("option").filter(has_text="build gist memory").first.click()
    idle(page)
    expect(page.get_by_role("heading", name=re.compile("^Build of"))).to_be_in_viewport(timeout=5_000)
    page.wait_for_timeout(500)
    shot(page, f"63_runs_opened_run_in_view_{width}")
