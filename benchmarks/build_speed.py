"""How fast is a build? Pride and Prejudice against the simulated server, two ways.

    python benchmarks/build_speed.py [--latency-ms 100] [--concurrency 16] [--preset quality]

1. notebook-style: one call at a time, no hard breaks (how the demo notebook reads);
2. the default pipeline: chapters paginate independently, gists start as soon as a
   page exists, up to ``--concurrency`` calls at once.

Both run in this process against the same simulated server at a fixed latency (the
server runs in its own process, as a real one would, so its work does not compete with
ours for the interpreter), each with its own empty database (so neither replays the
other's calls). Printed: both
wall times and their ratio; the pipeline's time against its lower bound, the larger
of (longest dependency chain x latency) and (calls x latency / concurrency); the
offline engine's time for the same book; and the words sent to the model per word
of the book, beside the paper's bound (max_words / min_words for pagination, plus one
pass for gisting). The last line is one JSON object.

Targets: speedup >= 10 at concurrency 16, bound ratio <= 1.3, offline under 10 s.
"""
from __future__ import annotations

import argparse
import json
import logging
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.methods.readagent.build import BuildSettings, build_memory  # noqa: E402
from core.store import open_db  # noqa: E402
from core.text.documents import load_path, sections  # noqa: E402
from core.engine import make_engine  # noqa: E402
from core.methods.readagent.presets import PRESETS  # noqa: E402
from core.llm.simulator import MODEL  # noqa: E402

BOOK = ROOT.parent / "shared" / "data" / "books" / "pg1342_pride_and_prejudice.txt"


def longest_chain(store, run_id: int, document, hard_breaks: bool, min_words: int) -> int:
    """Model calls on the longest dependency chain: a section's pagination calls, one
    after another, then the gist of its last page."""
    bounds = sections(document.paragraphs, min_words) if hard_breaks else [(0, len(document.paragraphs))]
    calls = Counter()
    for step in store.steps(run_id):
        if step.step != "pagination":
            continue
        start = step.trace.detail.get("window", [None])[0]
        if start is None:
            continue
        section = next(n for n, (s, e) in enumerate(bounds) if s <= start < e)
        calls[section] += len(step.trace.attempts)
    return max(calls.values(), default=0) + 1


@contextmanager
def simulated_server(latency_ms: float):
    """``python -m core simulate-llm`` in a child process; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "core", "simulate-llm", "--port", str(port),
                             "--latency-ms", str(latency_ms)], cwd=ROOT, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base}/v1/models", timeout=1).close()
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise SystemExit("The simulated server did not start.")
                time.sleep(0.2)
        yield f"{base}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def server_stats(base_url: str) -> dict:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/sim/stats", timeout=5) as response:
        return json.load(response)


def timed_build(document, base_url, settings, concurrency):
    with tempfile.TemporaryDirectory() as folder:
        store = open_db(Path(folder) / "bench.db")
        engine = make_engine("openai", store, model=MODEL, base_url=base_url, backoff=0.05)
        started = time.perf_counter()
        result = build_memory(store, document, engine, settings, concurrency=concurrency)
        seconds = time.perf_counter() - started
        chain = longest_chain(store, result.run_id, document, settings.hard_breaks, settings.preset.min_words)
        store.close()
    return result, seconds, chain


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--preset", default="quality", choices=sorted(PRESETS))
    parser.add_argument("--book", default=str(BOOK))
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    document = load_path(args.book)
    preset = PRESETS[args.preset]
    latency = args.latency_ms / 1000
    print(f"{document.title}: {document.words:,} words, {len(document.paragraphs):,} paragraphs; preset "
          f"{preset.name} ({preset.min_words}/{preset.max_words}); simulated latency {args.latency_ms:g} ms")

    with simulated_server(args.latency_ms) as base_url:
        seq, seq_s, _ = timed_build(document, base_url, BuildSettings(preset, hard_breaks=False), 1)
        print(f"notebook-style: {seq_s:7.2f} s  {seq.llm_calls} calls, one at a time, no hard breaks "
              f"({seq.pages} pages)")
        pipe, pipe_s, chain = timed_build(document, base_url, BuildSettings(preset), args.concurrency)
        bound = max(chain * latency, pipe.llm_calls * latency / args.concurrency)
        in_flight = server_stats(base_url)["max_in_flight"]
        print(f"pipeline:       {pipe_s:7.2f} s  {pipe.llm_calls} calls, concurrency {args.concurrency}, "
              f"hard breaks ({pipe.pages} pages); at most {in_flight} requests in flight")
    print(f"lower bound:    {bound:7.2f} s  = max(longest chain {chain} x {latency:g} s, "
          f"{pipe.llm_calls} calls x {latency:g} s / {args.concurrency})")

    with tempfile.TemporaryDirectory() as folder:
        store = open_db(Path(folder) / "offline.db")
        started = time.perf_counter()
        offline = build_memory(store, document, make_engine("offline", store), BuildSettings(preset))
        offline_s = time.perf_counter() - started
        store.close()
    print(f"offline engine: {offline_s:7.2f} s  ({offline.pages} pages, no LLM)")

    speedup = seq_s / pipe_s
    bound_ratio = pipe_s / bound
    words_ratio = pipe.prompt_words / document.words
    paper_bound = preset.max_words / preset.min_words + 1
    print(f"speedup {speedup:.1f}x (target >= 10); pipeline / bound {bound_ratio:.2f} (target <= 1.3); "
          f"offline {offline_s:.2f} s (target < 10)")
    print(f"words sent to the model per book word: {words_ratio:.2f} (pipeline, prompts included); "
          f"paper's bound {preset.max_words}/{preset.min_words} + 1 gisting pass = {paper_bound:.2f}; "
          f"notebook-style {seq.prompt_words / document.words:.2f}")
    print(json.dumps({
        "book": document.title, "words": document.words, "preset": preset.name, "latency_ms": args.latency_ms,
        "concurrency": args.concurrency, "sequential_s": round(seq_s, 3), "pipeline_s": round(pipe_s, 3),
        "speedup": round(speedup, 2), "bound_s": round(bound, 3), "bound_ratio": round(bound_ratio, 3),
        "longest_chain_calls": chain, "pipeline_calls": pipe.llm_calls, "sequential_calls": seq.llm_calls,
        "offline_s": round(offline_s, 3), "model_words_per_book_word": round(words_ratio, 3),
        "paper_bound_words_per_book_word": round(paper_bound, 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
