"""How soon does an upload show its first pause point? Pride and Prejudice, offline engine.

    python benchmarks/app_first_pause.py [--runs 3]

Starts the app with ``streamlit run`` (its own empty database) and Debian's Chromium,
uploads the book through the file uploader and times, from the upload: the document
heading, the first "Page N ends here" marker, and the finished memory (its compression
rate). The baseline, measured in this process, is the same work without a browser:
parsing the upload plus the offline build up to its first pause point. Each fresh
upload uses a new database so nothing is reused. Target: first pause point visible
within 1.0 s. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.methods.readagent.build import BuildSettings, build_memory  # noqa: E402
from core.store import open_db  # noqa: E402
from core.text.documents import load_bytes  # noqa: E402
from core.engine import OFFLINE  # noqa: E402
from core.methods.readagent.presets import choose_preset  # noqa: E402
from tests.browser.conftest import CHROMIUM, TALL, AppServer  # noqa: E402

BOOK = ROOT.parent / "shared" / "data" / "books" / "pg1342_pride_and_prejudice.txt"


def in_process() -> float:
    data = BOOK.read_bytes()
    started = time.perf_counter()
    document = load_bytes(data, BOOK.name)
    first: list[float] = []
    store = open_db(":memory:")
    build_memory(store, document, OFFLINE, BuildSettings(choose_preset("auto", document.words)),
                 progress=lambda e: first.append(time.perf_counter()) if not first else None)
    return first[0] - started


def in_browser() -> dict:
    from playwright.sync_api import sync_playwright

    server = AppServer(Path(tempfile.mkdtemp(prefix="gme-bench-")) / "app.db")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport=TALL)
            page.goto(server.url)
            page.get_by_test_id("stFileUploaderDropzoneInput").wait_for(state="attached", timeout=30_000)
            page.wait_for_timeout(1000)  # let the first run settle
            started = time.perf_counter()
            page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(BOOK))
            page.get_by_role("heading", name="Pride and Prejudice").wait_for(timeout=30_000)
            heading = time.perf_counter() - started
            page.get_by_text(re.compile(r"Page \d+ ends here")).first.wait_for(timeout=30_000)
            pause = time.perf_counter() - started
            page.get_by_text("Compression rate").first.wait_for(timeout=60_000)
            done = time.perf_counter() - started
            browser.close()
    finally:
        server.stop()
    return {"heading_s": heading, "first_pause_s": pause, "memory_s": done}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    baseline = statistics.median(in_process() for _ in range(args.runs))
    runs = [in_browser() for _ in range(args.runs)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"Pride and Prejudice, offline engine, median of {args.runs} fresh uploads")
    print(f"in process (parse + first pause point, no browser): {baseline:.2f} s")
    print(f"browser: heading {med['heading_s']:.2f} s, first pause point {med['first_pause_s']:.2f} s, "
          f"whole memory {med['memory_s']:.2f} s")
    print(f"first pause point: {med['first_pause_s']:.2f} s (target < 1.0 s); "
          f"{med['first_pause_s'] / baseline:.1f}x the in-process time")
    print(json.dumps({"runs": args.runs, "in_process_first_pause_s": round(baseline, 3),
                      **{k: round(v, 3) for k, v in med.items()},
                      "ratio_to_in_process": round(med["first_pause_s"] / baseline, 2)}))


if __name__ == "__main__":
    main()
