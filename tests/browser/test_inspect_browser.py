"""Inspect in a real Chromium: labelling from the keyboard, two annotators, agreement, export."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from core.engine import OFFLINE
from core.eval.datasets import load_dataset
from core.eval.runner import evaluate
from core.store import open_db

pytestmark = pytest.mark.browser
NAME = "Your name (labels are signed with it)"


@pytest.fixture(scope="module")
def evaluation(app_server):
    """An offline evaluation stored in the app's database before the page opens."""
    store = open_db(app_server.db)
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:8])]
    eval_id = evaluate(store, OFFLINE, docs, ["readagent-p", "gistmem"], dataset="quality",
                       path="quality_dev_16.jsonl")
    store.close()
    return eval_id


def idle(page: Page) -> None:
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=60_000)


def open_inspect(page: Page, server) -> None:
    page.goto(server.url)
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=30_000)
    page.locator(".st-key-gme_nav").get_by_text("Inspect", exact=True).click()
    expect(page.get_by_role("heading", name="Inspect", exact=True)).to_be_visible(timeout=20_000)


def case_is(page: Page, n: int) -> None:
    expect(page.get_by_text(re.compile(rf"^Case {n} of \d+"))).to_be_visible(timeout=20_000)


def sign(page: Page, name: str) -> None:
    """Type the annotator's name (focus moved there, no click), then leave the field as Tab would,
    so the page's shortcuts work again (they never fire while typing in a field)."""
    page.get_by_label(NAME).focus()
    page.keyboard.press("Control+A")
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    idle(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")


def category_box(page: Page):
    return page.get_by_role("combobox", name="Failure category")


def label_with_keys(page: Page, position: int, key: str, category: str) -> None:
    case_is(page, position)
    idle(page)
    for _ in range(3):  # a key pressed while the page is still rerunning can be lost: press it again
        page.keyboard.press(key)
        try:
            expect(category_box(page)).to_have_value(category, timeout=5_000)
            break
        except AssertionError:
            idle(page)
    expect(category_box(page)).to_have_value(category, timeout=20_000)
    page.keyboard.press("s")
    expect(page.get_by_text(f"Saved as “{category}”.").first).to_be_visible(timeout=20_000)
    case_is(page, position + 1)
    idle(page)


def test_two_annotators_label_from_the_keyboard_and_their_agreement_is_measured(page, app_server, evaluation, shot,
                                                                                 tmp_path):
    page.set_viewport_size({"width": 1280, "height": 2400})
    open_inspect(page, app_server)
    case_is(page, 1)
    expect(category_box(page)).to_have_value("")  # nothing preselected
    expect(category_box(page)).to_have_attribute("placeholder", "Choose one, or press 1–6")
    expect(page.locator(".gme-position")).to_have_text(re.compile(r"case 1 of \d+"))
    sign(page, "ana")

    for position, key, category in ((1, "2", "gist lost the detail"), (2, "3", "wrong look-up"),
                                    (3, "1", "pagination")):
        label_with_keys(page, position, key, category)

    # an unsaved choice survives moving away and back (arrow keys); at 1280x800 a key changes what is
    # in sight (the corner badge and a toast), though the category buttons are below the fold
    page.set_viewport_size({"width": 1280, "height": 800})
    page.keyboard.press("4")
    expect(category_box(page)).to_have_value("reasoning", timeout=20_000)
    badge = page.locator(".gme-position")
    expect(badge).to_have_text(re.compile(r"case 4 of \d+ · reasoning \(unsaved\)"))
    expect(badge).to_be_in_viewport()
    expect(page.get_by_test_id("stToast").filter(has_text="Category: reasoning")).to_be_in_viewport()
    shot(page, "13b_inspect_key_feedback_1280")
    page.set_viewport_size({"width": 1280, "height": 2400})
    page.keyboard.press("ArrowLeft")
    case_is(page, 3)
    expect(category_box(page)).to_have_value("pagination", timeout=20_000)
    idle(page)
    page.keyboard.press("ArrowRight")
    case_is(page, 4)
    expect(category_box(page)).to_have_value("reasoning", timeout=20_000)
    expect(page.get_by_text(re.compile("Unsaved change: it stays with this case"))).to_be_visible()
    for n in (3, 2, 1):
        idle(page)
        page.keyboard.press("ArrowLeft")
        case_is(page, n)
    expect(page.get_by_text("Your saved label: gist lost the detail.")).to_be_visible(timeout=20_000)
    expect(page.locator(".gme-position")).to_have_text(re.compile(r"case 1 of \d+ · saved: gist lost the detail"))

    # a second annotator: agrees twice, disagrees once
    sign(page, "ben")
    case_is(page, 1)
    expect(category_box(page)).to_have_value("")  # ana's label is hers, not ben's
    for position, key, category in ((1, "2", "gist lost the detail"), (2, "3", "wrong look-up"),
                                    (3, "5", "dataset problem")):
        label_with_keys(page, position, key, category)

    expect(page.get_by_text(re.compile(r"Cohen's kappa: 0\.57 \(moderate\) over 3 cases"))).to_be_visible(
        timeout=20_000)
    expect(page.get_by_text("Cases where annotators disagree (1)")).to_be_visible()
    expect(page.get_by_text("ben: gist lost the detail")).to_have_count(0)  # ben sees ana's labels, not his own
    shot(page, "30_inspect_keyboard_labels_1280")

    # the position stays in view while the page is scrolled down to the annotators
    page.get_by_role("heading", name="Annotators").scroll_into_view_if_needed()
    expect(page.locator(".gme-position")).to_be_in_viewport()
    expect(page.locator(".gme-position")).to_have_text(re.compile(r"case 4 of \d+"))

    page.set_viewport_size({"width": 1920, "height": 2400})
    page.get_by_role("heading", name="Inspect", exact=True).scroll_into_view_if_needed()
    idle(page)
    shot(page, "31_inspect_table_beside_case_wide")
    page.get_by_role("heading", name="Annotators").scroll_into_view_if_needed()
    idle(page)
    shot(page, "32_inspect_agreement_wide")

    # a click on a row of the case table opens that case
    page.get_by_role("heading", name="Inspect", exact=True).scroll_into_view_if_needed()
    table = page.get_by_test_id("stDataFrame").first
    box = table.bounding_box()
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 35 * 2 + 17)  # the third row's selection box
    case_is(page, 3)
    expect(page.get_by_text("Your saved label: dataset problem.")).to_be_visible(timeout=20_000)

    export = page.get_by_role("button", name="Export labels (JSONL)")
    expect(export).to_have_count(1, timeout=20_000)
    with page.expect_download() as download:
        export.click()
    exported = tmp_path / "labels.jsonl"
    download.value.save_as(exported)
    cases = [json.loads(line) for line in exported.read_text().splitlines()]
    assert sorted((c["annotator"], c["category"]) for c in cases) == sorted([
        ("ana", "gist lost the detail"), ("ana", "wrong look-up"), ("ana", "pagination"),
        ("ben", "gist lost the detail"), ("ben", "wrong look-up"), ("ben", "dataset problem")])
    by_case = {}
    for c in cases:
        by_case.setdefault(c["result_id"], {})[c["annotator"]] = c["category"]
    assert sorted(v for v in by_case.values() if len(set(v.values())) > 1) == [
        {"ana": "pagination", "ben": "dataset problem"}]
    assert all(c["question"] and c["ask_run_id"] for c in cases)


def test_runs_group_an_evaluations_question_runs_under_it(page, app_server, evaluation, shot):
    page.set_viewport_size({"width": 1280, "height": 1800})
    page.goto(app_server.url)
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=30_000)
    page.locator(".st-key-gme_nav").get_by_text("Runs", exact=True).click()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible(timeout=20_000)
    expect(page.get_by_text(re.compile(r"^\d+ runs, newest first"))).to_be_visible(timeout=20_000)
    store = open_db(app_server.db)
    listed, grouped = store.count_runs(), store.count_eval_question_runs(evaluation)
    store.close()
    assert grouped == 16 and listed < grouped  # the 16 question runs are not in the list
    expect(page.get_by_text(f"{listed} runs, newest first")).to_be_visible()
    page.get_by_test_id("stSelectbox").filter(has_text="Open run").click()
    page.get_by_role("option", name=re.compile(rf"^#{evaluation} · evaluation .*16 question runs")).click()
    group = page.get_by_text(f"The 16 question runs of evaluation #{evaluation}")
    expect(group).to_be_visible(timeout=20_000)
    group.click()
    table = page.get_by_test_id("stDataFrame").last
    expect(table).to_be_visible()
    idle(page)
    box = table.bounding_box()
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)  # the first row's selection box (the grid is a canvas)
    expect(page.get_by_text("Pages re-read").first).to_be_visible(timeout=20_000)
    shot(page, "33_runs_question_runs_under_their_evaluation")
