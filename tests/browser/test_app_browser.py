"""The paths people take through the app, in a real Chromium."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.conftest import book

pytestmark = pytest.mark.browser
PAPER_QUESTION = "What was Dameri’s purpose in landing on earth?"


def goto(page: Page, server, path: str = "") -> None:
    page.goto(f"{server.url}/{path}")
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=30_000)


def nav(page: Page, title: str) -> None:
    page.locator(".st-key-gme_nav").get_by_text(title, exact=True).click()
    expect(page.get_by_role("heading", name=title, exact=True).first).to_be_visible(timeout=20_000)


def pick(page: Page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label``."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    choice = page.get_by_role("option", name=option).first
    for _ in range(3):  # a rerun landing during the click closes the list again
        box.click()
        try:
            choice.wait_for(timeout=3_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        choice.click()
        return
    raise AssertionError(f"no option {option!r} in {label!r}")


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
    expect(page.locator(".js-plotly-plot .bars >> visible=true").first).to_be_visible(timeout=20_000)
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
    assert page.locator(".gme-strip").first.locator(".gme-cell").count() == 8  # ours; the paper's strip follows
    expect(page.locator(".gme-cell.paper")).to_have_count(2)  # the paper's ReadAgent re-read pages 5 and 6
    expect(page.get_by_text("In the paper, ReadAgent with PaLM 2-L re-read pages 5, 6")).to_be_visible()
    page.get_by_text("Context sent to the model for the answer").click()
    expect(page.locator(".gme-ctx.raw").first).to_be_visible()
    assert page.locator(".gme-ctx.raw").count() == reread.count()
    shot(page, "03_ask_off_course_offline")

    nav(page, "Runs")
    pick(page, "Open run", "question")
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
    expect(page.locator(".js-plotly-plot .bars >> visible=true").first).to_be_visible(timeout=20_000)
    shot(page, "05_read_pride_and_prejudice")


@pytest.fixture
def sim():
    from core.llm.simulator import SimulatedLLM

    with SimulatedLLM(latency_ms=60) as server:
        yield server


def open_alice(page: Page) -> None:
    """Open the bundled Alice sample from the Read page."""
    page.get_by_role("tab", name="Bundled samples").click()
    pick(page, "Sample", "Alice's Adventures in Wonderland")
    page.get_by_role("button", name="Open sample").click()
    expect(page.get_by_role("heading", name=re.compile("Alice"))).to_be_visible(timeout=20_000)


def use_simulator(page: Page, sim) -> None:
    page.get_by_text("OpenAI-compatible server").click()
    page.get_by_role("textbox", name="Base URL").fill(sim.base_url)
    page.get_by_role("textbox", name="Model", exact=True).fill("gme-simulator")
    page.get_by_role("textbox", name="Model", exact=True).press("Enter")
    page.get_by_role("button", name="Test connection").click()
    expect(page.get_by_text("Connected. The server offers gme-simulator.")).to_be_visible(timeout=20_000)


def test_the_papers_question_through_the_simulated_server(page, app_server, sim, shot):
    open_off_course(page, app_server)
    use_simulator(page, sim)
    nav(page, "Ask")
    pick(page, "A question from the data", PAPER_QUESTION)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_text("Pages re-read").first).to_be_visible(timeout=30_000)
    # (md() puts an invisible word joiner in URLs shown as text, so they never become links)
    expect(page.get_by_text(re.compile(r"Look-ups and answer: gme-simulator at http\W*//127\.0\.0\.1"))).to_be_visible()
    idle(page)  # the strip may land a moment after the heading above it
    expect(page.locator(".gme-cell.reread").first).to_be_visible()
    page.get_by_text(re.compile(r"^1\. lookup")).click()
    expect(page.get_by_text("Attempt 1").first).to_be_visible()
    expect(page.get_by_text("Parsed.").first).to_be_visible()
    assert sim.stats.completed >= 2
    shot(page, "06_ask_off_course_simulated_server")


@pytest.fixture
def slow_sim():
    from core.llm.simulator import SimulatedLLM

    with SimulatedLLM(latency_ms=500) as server:
        yield server


def test_a_build_through_the_simulator_stops_and_resumes_without_repeating_calls(page, app_server, slow_sim, shot):
    sim = slow_sim
    goto(page, app_server)
    use_simulator(page, sim)
    open_alice(page)
    page.get_by_text("Pagination settings").click()
    pick(page, "Preset", "QuALITY (articles, stories): 280–600 words")  # many pages: time to stop
    page.get_by_role("button", name="Build gist memory").click()
    expect(page.get_by_text(re.compile(r"Page \d+ ends here")).first).to_be_visible(timeout=30_000)
    expect(page.get_by_text(re.compile(r"chosen by gme-simulator")).first).to_be_visible()
    shot(page, "07_read_building_through_simulator")
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_text(re.compile("The build was stopped"))).to_be_visible(timeout=30_000)
    expect(page.get_by_role("heading", name=re.compile("Stopped, partial"))).to_be_visible(timeout=30_000)
    expect(page.get_by_role("combobox", name="Gist memory")).to_have_value(re.compile("^stopped, partial · "))
    idle(page)
    shot(page, "07b_read_stopped_partial_memory")
    made = sim.stats.completed
    page.get_by_role("button", name="Resume build").click()
    expect(page.get_by_text("Compression rate").first).to_be_visible(timeout=120_000)
    prompts = sim.prompts
    assert len(prompts) == len(set(prompts)), "a model call was repeated after resuming"
    assert sim.stats.completed > made
    shot(page, "08_read_resumed_build_done")


def test_a_hostile_document_renders_as_text(page, app_server, shot, tmp_path):
    hostile = tmp_path / "hostile.md"
    hostile.write_text("# Chapter <script>alert('title')</script>\n\n" + "\n\n".join(
        f"Line {i}: <img src=x onerror=\"alert({i})\"> and <script>alert('x')</script> " + "words " * 80
        for i in range(10)), encoding="utf-8")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    goto(page, app_server)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(hostile))
    expect(page.get_by_text("Compression rate").first).to_be_visible(timeout=30_000)
    expect(page.locator(".gme-raw").first).to_contain_text("<img src=x onerror=\"alert(0)\">")
    expect(page.get_by_role("heading", name="Chapter <script>alert('title')</script>")).to_be_visible()
    assert page.locator(".gme-raw img").count() == 0 and page.locator(".gme-gist script").count() == 0
    shot(page, "09_read_hostile_document_escaped")
    nav(page, "Memory tree")
    page.get_by_role("button", name="Build or open tree").click()
    drawing = page.locator('svg[aria-label="MemWalker memory tree and walk"]')
    expect(drawing).to_be_visible(timeout=30_000)
    assert drawing.locator("script").count() == 0 and drawing.locator("img").count() == 0
    assert any("<script>" in t for t in drawing.locator("title").all_text_contents())  # the summary, as text
    drawing.locator("g").first.hover()
    page.get_by_test_id("stButtonGroup").get_by_text("Explore").click()
    expect(page.frame_locator("iframe").first.locator("canvas").first).to_be_visible(timeout=30_000)
    page.frame_locator("iframe").first.locator("canvas").first.hover()
    page.wait_for_timeout(800)
    assert dialogs == []


def test_two_sessions_do_not_see_each_other(browser, app_server, shot):
    first = browser.new_page(viewport={"width": 1400, "height": 1600})
    second = browser.new_page(viewport={"width": 1400, "height": 1600})
    open_off_course(first, app_server)
    goto(second, app_server)
    second.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(book("alice")))
    expect(second.get_by_text("Compression rate").first).to_be_visible(timeout=30_000)
    nav(first, "Gist memory")
    expect(first.get_by_text(re.compile(r"^Off Course · 8 pages"))).to_be_visible()
    nav(second, "Gist memory")
    expect(second.get_by_text(re.compile(r"^Alice’s Adventures in Wonderland · \d+ pages"))).to_be_visible()
    first.close()
    second.close()


def add_method(page: Page, label: str) -> None:
    page.get_by_test_id("stMultiSelect").first.click()
    page.get_by_role("option", name=label, exact=True).click()
    page.keyboard.press("Escape")


def test_memory_tree_and_a_memwalker_walk_beside_readagent(page, app_server, shot):
    open_off_course(page, app_server)
    nav(page, "Memory tree")
    page.get_by_role("button", name="Build or open tree").click()
    expect(page.get_by_text(re.compile(r"Levels \(leaves first\)"))).to_be_visible(timeout=30_000)
    expect(page.locator('svg[aria-label="MemWalker memory tree and walk"]')).to_be_visible(timeout=20_000)
    shot(page, "10_memory_tree")
    page.get_by_test_id("stButtonGroup").get_by_text("Sunburst", exact=True).click()
    expect(page.locator(".js-plotly-plot .sunburstlayer").first).to_be_visible(timeout=20_000)

    nav(page, "Ask")
    pick(page, "A question from the data", PAPER_QUESTION)
    idle(page)  # the question is filled in by a rerun: let it land before the next change
    add_method(page, "MemWalker")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator(".gme-compare tr")).to_have_count(3, timeout=60_000)  # both answers in one table
    expect(page.get_by_role("heading", name="ReadAgent-P")).to_be_visible()
    page.get_by_role("tab", name=re.compile("^MemWalker")).click()  # then a tab a method
    expect(page.get_by_text(re.compile(r"Path walked"))).to_be_visible(timeout=60_000)
    expect(page.get_by_role("heading", name="MemWalker")).to_be_visible()
    expect(page.locator('svg[aria-label="MemWalker memory tree and walk"]').last).to_be_visible(timeout=20_000)
    shot(page, "11_ask_readagent_and_memwalker_side_by_side")

    nav(page, "Memory tree")
    expect(page.get_by_text(re.compile("Showing the walk for"))).to_be_visible()


def test_evaluate_then_label_a_failure_that_survives_a_reload_and_is_exported(page, app_server, shot, tmp_path):
    goto(page, app_server)
    nav(page, "Evaluate")
    page.get_by_role("button", name="Run evaluation").click()
    expect(page.get_by_text("accuracy % vs compression rate (the paper's trade-off)")).to_be_visible(timeout=90_000)
    expect(page.get_by_text("Offline engine (no LLM): these are lexical baselines")).to_be_visible()
    shot(page, "12_evaluate_quality_offline")

    nav(page, "Inspect")
    page.get_by_label("Your name (labels are signed with it)").fill("ana")
    page.get_by_label("Your name (labels are signed with it)").press("Enter")
    expect(page.get_by_text(re.compile(r"^Case 1 of \d+"))).to_be_visible(timeout=20_000)
    page.get_by_role("button", name="Next →").click()
    expect(page.get_by_text(re.compile(r"^Case 2 of \d+"))).to_be_visible(timeout=20_000)
    page.get_by_role("button", name="← Previous").click()
    expect(page.get_by_text(re.compile(r"^Case 1 of \d+"))).to_be_visible(timeout=20_000)
    expect(page.get_by_label("Note")).to_have_count(1, timeout=20_000)  # the previous case's form has gone
    pick(page, "Failure category", "gist lost the detail")
    page.get_by_label("Note").fill("the gist drops <b>the date</b>")
    page.get_by_role("button", name="Save label").click()
    expect(page.get_by_text("Saved as “gist lost the detail”.").first).to_be_visible(timeout=20_000)
    shot(page, "13_inspect_labelled_case")

    page.reload()
    expect(page.get_by_role("heading", name="Inspect", exact=True)).to_be_visible(timeout=30_000)
    page.get_by_label("Your name (labels are signed with it)").fill("ana")
    page.get_by_label("Your name (labels are signed with it)").press("Enter")
    # While the page reruns, the old form can linger beside the new one: wait for the saved note in either.
    page.wait_for_function("v => [...document.querySelectorAll('textarea[aria-label=Note]')].some(t => t.value === v)",
                           arg="the gist drops <b>the date</b>", timeout=20_000)
    export = page.get_by_role("button", name="Export labels (JSONL)")
    expect(export).to_have_count(1, timeout=20_000)  # the rerun's stale copy has gone
    with page.expect_download() as download:
        export.click()
    exported = tmp_path / "labels.jsonl"
    download.value.save_as(exported)
    [case] = [json.loads(line) for line in exported.read_text().splitlines()]
    assert case["annotator"] == "ana" and case["category"] == "gist lost the detail"
    assert case["note"] == "the gist drops <b>the date</b>" and case["question"] and case["ask_run_id"]


def test_every_kind_of_method_side_by_side_through_the_simulator(page, app_server, sim, shot):
    open_off_course(page, app_server)
    use_simulator(page, sim)
    nav(page, "Ask")
    pick(page, "A question from the data", PAPER_QUESTION)
    idle(page)  # the question is filled in by a rerun: let it land before the next change
    for label in ("Segment+", "BM25 top-k", "Embedding top-k"):
        add_method(page, label)
    page.get_by_role("button", name="Run", exact=True).click()
    table = page.locator(".gme-compare")  # one row a method, then a tab a method
    expect(table.locator("tr")).to_have_count(5, timeout=60_000)
    for label in ("ReadAgent-P", "Segment+", "BM25 top-k", "Embedding top-k"):
        expect(table.locator("td.method", has_text=label)).to_have_count(1)
    expect(page.get_by_text("Words in context per method")).to_be_visible()
    strips = 0
    for label in ("ReadAgent-P", "Segment+", "BM25 top-k", "Embedding top-k"):
        page.get_by_role("tab", name=re.compile("^" + re.escape(label) + " · #")).click()
        expect(page.get_by_role("heading", name=label, exact=True)).to_be_visible(timeout=20_000)
        strips += page.locator(".gme-strip:visible").count()
    page.get_by_role("tab", name=re.compile(r"^Segment\+ · #")).click()
    expect(page.get_by_text(re.compile(r"Segment notes"))).to_be_visible()
    assert strips >= 4  # ReadAgent, BM25 and embedding pages; Segment+ notes
    shot(page, "14_ask_methods_side_by_side_simulator")


def test_a_conditional_memory_is_built_beside_the_unconditional_one(page, app_server, shot):
    open_off_course(page, app_server)
    expect(page.get_by_text("The offline engine (no LLM) has no window to fit").first).to_be_visible(timeout=20_000)
    page.get_by_text("Pagination settings").click()
    page.get_by_text("Gist with a question known (Conditional ReadAgent, App. G.1)").click()
    box = page.get_by_role("textbox", name="Question known while gisting")
    box.fill(PAPER_QUESTION)
    box.press("Enter")
    idle(page)
    page.get_by_role("button", name="Build gist memory").click()
    expect(page.get_by_text("Conditional ReadAgent (App. G.1): gisted for the question").first).to_be_visible(
        timeout=60_000)
    expect(page.get_by_role("combobox", name="Gist memory")).to_have_value(re.compile("conditional on a question"))
    shot(page, "read_conditional_memory")
