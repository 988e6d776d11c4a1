"""Very long texts (ReadAgent App. I, G.3): Pride and Prejudice fitted into 4,096- and 8,192-token
windows, by the simulated server and by the offline engine.

    python benchmarks/long_book.py [--windows 4096 8192] [--questions 5]

For each engine and window: pages before/after merging, merges and merge rounds, gists gisted
again, tokens of gists before/after against the room the window leaves, and over a few questions
asked with ReadAgent-P, how many requested look-ups were dropped for room. The last line is JSON.
Reads ../shared/data's copy of the book if present, else tests/data/books.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.engine import OFFLINE, make_engine  # noqa: E402
from core.llm.simulator import MODEL, SimulatedLLM  # noqa: E402
from core.methods.ask import ask  # noqa: E402
from core.methods.base import Question  # noqa: E402
from core.methods.readagent.build import BuildSettings, build_memory  # noqa: E402
from core.methods.readagent.presets import choose_preset  # noqa: E402
from core.store import open_db  # noqa: E402
from core.text.documents import load_path  # noqa: E402

QUESTIONS = ["Whom does Elizabeth Bennet marry?", "Why does Elizabeth first dislike Mr. Darcy?",
             "With whom does Lydia elope?", "Who proposes to Elizabeth before Darcy does?",
             "What does Lady Catherine demand of Elizabeth?"]


def book_path() -> Path:
    for folder in (ROOT.parent.parent / "shared" / "data", ROOT / "tests" / "data" / "books"):
        found = sorted(folder.rglob("pg1342*.txt")) if folder.is_dir() else []
        if found:
            return found[0]
    raise SystemExit("Pride and Prejudice (pg1342*.txt) not found")


def measure(engine, store, document, window: int, questions: int) -> dict:
    started = time.perf_counter()
    result = build_memory(store, document, engine, BuildSettings(choose_preset("auto", document.words),
                                                                 fit_tokens=window), concurrency=8)
    built = time.perf_counter() - started
    requested = dropped = 0
    for text in QUESTIONS[:questions]:
        answer = ask(store, engine, document.id, Question(text), method="readagent-p", memory_id=result.memory_id)
        for step in answer.steps:
            detail = step.get("detail", {}) if isinstance(step, dict) else step.detail
            if (step.get("step") if isinstance(step, dict) else step.step) == "lookup":
                requested += len(step.get("value") or [] if isinstance(step, dict) else step.value or [])
                dropped += len(detail.get("not_expanded", []))
    fit = result.fit or {}
    return {"engine": engine.label, "window": window, "pages_before": fit.get("pages_before"),
            "pages_after": fit.get("pages_after"), "merges": fit.get("merges"), "merge_rounds": fit.get("merge_rounds"),
            "gisted_again": fit.get("gisted_again"), "tokens_before": fit.get("tokens_before"),
            "tokens_after": fit.get("tokens_after"), "room": fit.get("room"), "fits": fit.get("fits"),
            "lookups_requested": requested, "lookups_dropped_for_room": dropped, "build_s": round(built, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    logging.disable(logging.INFO)
    document = load_path(book_path())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for window in args.windows:
            store = open_db(Path(tmp) / f"offline-{window}.db")
            rows.append(measure(OFFLINE, store, document, window, args.questions))
            with SimulatedLLM(context_tokens=window) as sim:
                store = open_db(Path(tmp) / f"sim-{window}.db")
                engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01)
                rows.append(measure(engine, store, document, window, args.questions))
    print(f"{document.title}: {document.words:,} words")
    for r in rows:
        print(f"{r['engine'][:32]:32} window {r['window']:>5,}: pages {r['pages_before']} -> {r['pages_after']} "
              f"({r['merges']} merges, {r['merge_rounds']} rounds, {r['gisted_again']} gisted again); gist tokens "
              f"{r['tokens_before']:,} -> {r['tokens_after']:,} (room {r['room']:,}, fits {r['fits']}); look-ups "
              f"dropped for room {r['lookups_dropped_for_room']}/{r['lookups_requested']}; build {r['build_s']} s")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
