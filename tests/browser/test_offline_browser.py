"""Offline means offline: no page asks anything of a machine other than this one."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.test_app_browser import goto, idle, nav, open_off_course

pytestmark = pytest.mark.browser
LOCAL = {"127.0.0.1", "localhost", ""}


def test_no_page_requests_anything_off_the_machine(page, app_server, shot):
    leaving = []
    page.context.on("request", lambda r: leaving.append(r.url) if urlsplit(r.url).scheme in ("http", "https", "ws",
                                                                                           "wss")
                    and urlsplit(r.url).hostname not in LOCAL else None)
    goto(page, app_server)
    open_off_course(page, app_server)
    nav(page, "Memory tree")
    page.get_by_role("button", name="Build or open tree").click()
    expect(page.locator('svg[aria-label="MemWalker memory tree and walk"]')).to_be_visible(timeout=60_000)
    page.get_by_test_id("stButtonGroup").get_by_text("Explore").click()
    expect(page.frame_locator("iframe").first.locator("canvas").first).to_be_visible(timeout=60_000)  # pyvis
    idle(page)
    shot(page, "20_memory_tree_drawn_offline")
    for title in ("Gist memory", "Ask", "Evaluate", "Inspect", "Runs"):
        nav(page, title)
        idle(page)
    page.reload()
    expect(page.get_by_test_id("stSidebar")).to_be_visible(timeout=30_000)
    idle(page)
    assert leaving == [], sorted(set(leaving))


HOSTILE = "**bold** :red[red] $$x^2$$ [link](http://example.invalid/) ![img](http://example.invalid/i.png)"


def test_text_from_documents_models_and_servers_shows_literally_and_fetches_nothing(page, app_server, shot):
    """A title, a gist (built from the text), a model reply and a server's error planted with Markdown,
    KaTeX and image links: every page shows them as text."""
    from core.engine import OFFLINE
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.presets import PRESETS
    from core.store import open_db
    from core.text.documents import parse_text

    store = open_db(app_server.db)
    document = parse_text(f"{HOSTILE}\n\n" + "\n\n".join(f"{HOSTILE} sentence {i}. " + "words " * 60
                                                         for i in range(12)), title=HOSTILE)
    build_memory(store, document, OFFLINE, BuildSettings(PRESETS["quality"]))
    run_id = store.create_run("ask", doc_id=document.id, engine="openai:x@y", engine_label=HOSTILE, method="full",
                              question=HOSTILE)
    store.finish_run(run_id, status="failed", error=f"The server said: {HOSTILE}")
    store.close()
    leaving = []
    page.context.on("request", lambda r: leaving.append(r.url)
                    if urlsplit(r.url).hostname not in LOCAL and urlsplit(r.url).scheme.startswith("http") else None)
    goto(page, app_server)

    def literal(where: str) -> None:
        idle(page)
        main = page.get_by_test_id("stMain")
        expect(main.get_by_text("**bold**").first).to_be_visible(timeout=20_000)
        assert main.locator("strong", has_text="bold").count() == 0, where  # not made bold
        links = main.locator("a[href*='example.invalid']")
        assert links.count() == 0, (where, [links.nth(i).evaluate("e => e.parentElement.outerHTML.slice(0, 400)")
                                            for i in range(links.count())])
        assert main.locator(".katex").count() == 0, where
        assert main.locator("img[src*='example.invalid']").count() == 0, where

    nav(page, "Runs")  # the newest run: the failed question
    literal("Runs")
    expect(page.get_by_text("The server said: **bold**")).to_be_visible()
    shot(page, "21_runs_hostile_text_literal")
    page.get_by_role("button", name="Work on this document").click()
    expect(page.get_by_text("Page 0 ends here").first).to_be_visible(timeout=30_000)
    literal("Read")
    nav(page, "Gist memory")
    literal("Gist memory")
    assert leaving == [], sorted(set(leaving))
