"""The demo paths of issue 14 in a real Chromium: Frankenstein's MemWalker walk drawn node for node
on Ask and on Memory tree, a reload that keeps the document, question and answers, and five
methods compared at 1280 px with nothing cut. The offline engine answers; screenshots go to
test-artifacts/ (40_... to 46_...)."""
from __future__ import annotations

import subprocess
import sys
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from core.methods.memwalker.drawing import node_label
from core.methods.ask import load_ask
from core.methods.memwalker.tree import load_tree
from core.store import open_db
from tests.browser.conftest import AppServer
from tests.browser.test_app_browser import idle, nav
from tests.conftest import ROOT, book

pytestmark = pytest.mark.browser
QUESTION = "Where does Victor create the creature?"
FIVE = ["ReadAgent-P", "ReadAgent-S", "GistMem", "Full text", "BM25 top-k"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The app on a database holding Frankenstein's and Off Course's gist memories (built offline)."""
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    for name in ("frankenstein", "off_course"):
        subprocess.run([sys.executable, "-m", "core", "build", str(book(name)), "--db", str(db)], cwd=ROOT,
                       check=True, capture_output=True)
    server = AppServer(db)
    server.docs = {d.title: d.id for d in open_db(str(db)).list_documents()}
    yield server
    server.stop()


def open_url(page: Page, server, path: str) -> None:
    """Open a link, on a server just started too (the module's first test): the page opens inside
    the app's navigation, with its settings and page names, not as a lone script."""
    page.goto(f"{server.url}/{path}")
    expect(page.locator(".st-key-gme_nav")).to_contain_text("Memory tree", timeout=60_000)
    idle(page)


def graph_nodes(page: Page) -> dict:
    """The nodes pyvis drew in the page's graph iframe, by id: their labels."""
    for _ in range(60):
        for frame in page.frames:
            try:
                drawn = frame.evaluate("typeof nodes !== 'undefined' && nodes.get ? nodes.get().map(n => [String(n.id),"
                                       " n.label]) : null")
            except Exception:  # a frame still loading
                continue
            if drawn:
                return dict(drawn)
        page.wait_for_timeout(500)
    raise AssertionError("no graph drawn")


def newest_walk(server):
    store = open_db(str(server.db))
    run = next(r for r in store.list_runs(kind="ask") if r.method == "memwalker")
    result = load_ask(store, run.id)
    return result, load_tree(store, result.details.tree.tree_id)


def walk_drawing(page: Page) -> dict:
    """What the walk's drawing shows: each box's texts, every label with its rendered font size, and
    the drawing's width."""
    svg = page.locator('svg[aria-label="MemWalker memory tree and walk"]').first
    expect(svg).to_be_visible(timeout=30_000)
    return svg.evaluate("""svg => ({
      boxes: [...svg.querySelectorAll('g')].map(g => [...g.querySelectorAll('text')].map(t => t.textContent)),
      labels: [...svg.querySelectorAll('text')].map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize),
                                                         t.getBoundingClientRect().height]),
      width: svg.getBoundingClientRect().width})""")


def assert_walk_drawn(page: Page, server) -> None:
    """Every step at its node, numbered; every revert labelled; the answering leaf marked; the rest
    of the tree folded into "+N" boxes; and every label at least 12 px as drawn."""
    result, tree = newest_walk(server)
    visits = result.details.trajectory
    drawn = walk_drawing(page)
    boxes = {texts[0]: texts[1:] for texts in drawn["boxes"] if texts}
    for n, visit in enumerate(visits, 1):
        steps = boxes.get(node_label(tree, visit.node))
        assert steps is not None and any(f"#{n}" in s or f",{n}" in s for s in steps), (n, visit, steps)
    texts = [t for t, _, _ in drawn["labels"]]
    for n, visit in enumerate(visits, 1):
        if visit.move == "revert":
            assert f"revert #{n}" in texts
    if result.details.answered:
        assert "✓ answered here" in texts
    assert len(tree.nodes) > 100 and len(boxes) < len(tree.nodes) and any(t.startswith("+") for t in texts)
    small = [(t, size, height) for t, size, height in drawn["labels"] if size < 12 or height < 12]
    assert not small, small


def test_frankenstein_walk_node_for_node_on_ask_and_memory_tree(page, demo, shot):
    open_url(page, demo, f"ask?doc={demo.docs['Frankenstein']}&ask_methods=MemWalker")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_label("Question").press("Control+Enter")
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_text("Path walked")).to_be_visible(timeout=120_000)
    idle(page)
    assert_walk_drawn(page, demo)
    page.get_by_text("Path walked").scroll_into_view_if_needed()
    shot(page, "40_ask_frankenstein_walk_graph")
    nav(page, "Memory tree")
    idle(page)
    expect(page.get_by_text(f"Showing the walk for “{QUESTION}”")).to_be_visible()
    picker = page.get_by_test_id("stSelectbox").filter(has_text="Tree").first.aria_snapshot()
    assert "Offline engine (no LLM) · 1000 tokens a segment · ≤8 children" in picker, picker
    assert_walk_drawn(page, demo)
    shot(page, "41_memory_tree_frankenstein_walk_graph")
    page.get_by_test_id("stButtonGroup").get_by_text("Explore").click()  # the whole tree, to drag and zoom
    idle(page)
    slider = page.get_by_test_id("stSlider").filter(has_text="Levels below the root")
    slider.get_by_role("slider").focus()
    page.keyboard.press("End")  # the slider's maximum: every node, leaves included
    idle(page)
    result, tree = newest_walk(demo)
    expect(slider).to_contain_text(str(len(tree.level_counts()) - 1))
    for _ in range(20):
        if len(graph_nodes(page)) == len(tree.nodes):
            break
        page.wait_for_timeout(500)
    assert len(graph_nodes(page)) == len(tree.nodes) == 116
    shot(page, "42_memory_tree_every_level")
    page.get_by_test_id("stButtonGroup").get_by_text("Icicle").click()
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=20_000)
    idle(page)
    shot(page, "43_memory_tree_icicle_walk")


def ask_url(server, methods: list[str]) -> str:
    options = "\n".join(["He wanted to witness an uncivilized planet and share knowledge",
                         "His spaceship needed to land for repairs",
                         "He heard reports that Earth had interesting animal specimens for his collection",
                         "He arrived on accident while exploring planets in the Galactic League"])
    return (f"ask?doc={server.docs['Off Course']}&ask_text={quote('What was Dameri’s purpose in landing on earth?')}"
            f"&ask_options={quote(options)}" + "".join(f"&ask_methods={quote(m)}" for m in methods))


def test_a_reload_keeps_the_document_question_and_answers(page, demo, shot):
    open_url(page, demo, ask_url(demo, ["ReadAgent-P", "GistMem"]))
    page.get_by_role("button", name="Run").click()
    table = page.locator(".gme-compare")
    expect(table).to_be_visible(timeout=60_000)
    idle(page)
    rows = table.locator("tr").all_inner_texts()
    assert len(rows) == 3
    assert "runs=" in page.url and "doc=" in page.url
    page.get_by_test_id("stTab").nth(1).click()  # GistMem's tab: the one open after the reload too
    idle(page)
    page.reload()
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=30_000)
    idle(page)
    expect(page.get_by_text("Off Course ·").first).to_be_visible()
    expect(page.get_by_label("Question")).to_have_value("What was Dameri’s purpose in landing on earth?")
    expect(page.locator(".gme-compare")).to_be_visible(timeout=30_000)
    assert page.locator(".gme-compare tr").all_inner_texts() == rows
    expect(page.get_by_test_id("stTab").nth(1)).to_have_attribute("aria-selected", "true")
    shot(page, "44_ask_after_reload")


def test_five_methods_compare_at_1280_px_with_nothing_cut(page, demo, shot):
    page.set_viewport_size({"width": 1280, "height": 1800})
    open_url(page, demo, ask_url(demo, FIVE))
    page.get_by_role("button", name="Run").click()
    expect(page.locator(".gme-compare tr")).to_have_count(6, timeout=90_000)
    idle(page)
    cut = page.evaluate("""() => {
      const cut = [], width = document.documentElement.clientWidth;
      const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect().right;
      const check = (el, why) => {
        const r = el.getBoundingClientRect();
        if (el.scrollWidth > el.clientWidth + 1 || r.right > Math.min(width, main) + 1)
          cut.push(why + ': ' + el.innerText.slice(0, 50));
      };
      document.querySelectorAll('.gme-compare th, .gme-compare td').forEach(el => check(el, 'cell'));
      document.querySelectorAll('[data-testid="stTab"]').forEach(el => check(el, 'tab'));
      document.querySelectorAll('[data-testid="stMetricValue"] div').forEach(el => {
        if (el.offsetParent && el.scrollWidth > el.clientWidth + 1) cut.push('metric: ' + el.innerText); });
      if (document.documentElement.scrollWidth > width + 1) cut.push('page scrolls sideways');
      return cut;
    }""")
    assert cut == []
    tabs = page.get_by_test_id("stTab").all_inner_texts()
    assert [t.split(" · ")[0] for t in tabs[:5]] == FIVE
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=20_000)
    page.wait_for_timeout(1000)
    shot(page, "45_five_methods_1280")
    page.get_by_test_id("stTab").nth(4).click()
    idle(page)
    shot(page, "46_five_methods_bm25_tab")
