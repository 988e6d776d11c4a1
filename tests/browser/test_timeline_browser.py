"""A model build's estimate and timeline, through the simulated server, in a real Chromium at 1280 px."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_app_browser import goto, nav, open_alice, use_simulator

pytestmark = pytest.mark.browser


@pytest.fixture
def sim():
    from core.llm.simulator import SimulatedLLM

    with SimulatedLLM(latency_ms=300) as server:
        yield server


def test_a_model_builds_estimate_then_its_timeline_on_read_and_runs(page, app_server, sim, shot):
    page.set_viewport_size({"width": 1280, "height": 2000})
    goto(page, app_server)
    use_simulator(page, sim)
    open_alice(page)

    page.get_by_text("Estimate of a model build").click()
    for name, price in (("Price per million input tokens", "2.5"), ("Price per million output tokens", "10")):
        box = page.get_by_role("spinbutton", name=name)
        box.fill(price)
        box.press("Enter")
    expect(page.get_by_test_id("stDataFrame").filter(has_text="estimate").first).to_be_visible(timeout=20_000)
    page.wait_for_timeout(1000)
    shot(page, "timeline_01_estimate_before_the_build")

    page.get_by_role("button", name="Build gist memory").click()
    expect(page.get_by_text("Compression rate").first).to_be_visible(timeout=120_000)
    page.get_by_text("How this memory was built").click()
    timeline = page.locator(".js-plotly-plot").filter(has_text="Model calls over time")
    expect(timeline).to_be_visible(timeout=20_000)
    assert timeline.locator(".bars .point").count() == len([c for c in sim.prompts])  # a bar per call
    expect(page.get_by_text(re.compile(r"at most \d+ at once"))).to_be_visible()
    actual = page.get_by_test_id("stDataFrame").filter(has_text="actual").first
    expect(actual).to_be_visible()
    actual.scroll_into_view_if_needed()
    shot(page, "timeline_02_read_after_the_build")

    nav(page, "Runs")
    expect(page.get_by_text("Timeline", exact=True)).to_be_visible(timeout=20_000)
    expect(page.locator(".js-plotly-plot").filter(has_text="Model calls over time")).to_be_visible(timeout=20_000)
    shot(page, "timeline_03_runs_build")
