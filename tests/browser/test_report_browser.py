"""The report you hand on, opened from disk in a real browser with the network blocked: it
shows everything, runs no script it was given, and asks nothing of any other file or machine."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.engine import make_engine
from core.methods.ask import ask
from core.methods.base import Question
from core.report import write_report
from core.samples import find_question, open_sample
from core.store import open_db
from core.text.documents import parse_text
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.presets import PRESETS

pytestmark = pytest.mark.browser
HOSTILE = '<script>window.ran = 1; alert("x")</script><img src="https://evil.example/x.png" onerror="window.ran=2">'


def written_report(tmp_path):
    store = open_db(tmp_path / "report.db")
    offline = make_engine("offline", store)
    document, paper_memory = open_sample(store, "off-course")
    typed = "What was Dameri's purpose in landing on earth?"  # straight apostrophe; the data's is curly
    gold = find_question(document.meta["questions"], typed)
    question = Question(typed, tuple(gold["options"]))
    runs = [ask(store, offline, document.id, question, method=m, memory_id=paper_memory).run.id
            for m in ("readagent-p", "bm25", "memwalker")]
    hostile = parse_text("\n\n".join(f"Part {i}. Dameri landed in the park. {HOSTILE} The patrolmen watched."
                                     for i in range(30)), title=f"Hostile {HOSTILE}")
    store.save_document(hostile)
    memory = build_memory(store, hostile, offline, BuildSettings(PRESETS["quality"])).memory_id
    runs.append(ask(store, offline, hostile.id, Question(f"Who landed? {HOSTILE}"), method="readagent-p",
                    memory_id=memory).run.id)
    path = write_report(store, runs, tmp_path / "report.html")
    store.close()
    return path


def test_the_report_opens_offline_from_disk_and_shows_text_as_text(page, tmp_path, shot):
    path = written_report(tmp_path)
    asked, dialogs = [], []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
               else (asked.append(route.request.url), route.abort()))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    expect(page.get_by_role("heading", name="Gist Memory Explorer report")).to_be_visible()
    expect(page.get_by_role("heading", name="What was Dameri's purpose in landing on earth?")).to_be_visible()
    expect(page.get_by_text("re-read in the paper (ReadAgent)")).to_be_visible()
    expect(page.locator(".cell.paper")).to_have_count(2 + 4)  # ReadAgent's pages 5, 6; retrieval's 3, 4, 5, 6
    expect(page.locator("svg")).to_have_count(1)  # the MemWalker walk
    expect(page.locator(".offline").first).to_have_text("offline engine (no LLM)")
    expect(page.get_by_role("heading", name=f"Who landed? {HOSTILE}")).to_be_visible()  # the tag, as text
    for summary in page.locator("summary").all()[:6]:
        summary.click()  # the context and the first trace steps, opened
    shot(page, "30_report_offline_from_disk")
    assert page.evaluate("window.ran") is None and dialogs == []  # no script it was given ran
    assert page.locator("script, img, link, iframe").count() == 0
    assert asked == []  # nothing from the network, not even a favicon or a font
