"""Evaluation figures: offline accuracy on QuALITY dev_16, and wall time at concurrency 1 vs 16.

    python benchmarks/eval_speed.py [--latency-ms 100] [--docs 2] [--methods ...]

1. The offline engine (no LLM) on all 16 articles / 279 questions of dev_16: each method's
   accuracy, compression rate and look-ups. Lexical baselines: expect little above chance (25%).
2. The simulated server (its own process, fixed latency): the same evaluation of ``--docs``
   articles at concurrency 1 and at 16, each with an empty database (nothing replayed; the
   gist memories are built inside the timed evaluation). Prints both wall times and the ratio.

The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.build_speed import simulated_server  # noqa: E402
from core.eval.datasets import load_dataset  # noqa: E402
from core.store import open_db  # noqa: E402
from core.engine import make_engine  # noqa: E402
from core.eval.report import format_table, summarize  # noqa: E402
from core.eval.runner import evaluate  # noqa: E402
from core.engine import OFFLINE  # noqa: E402

DEV_16 = ROOT.parent / "shared" / "data" / "quality" / "dev_16.jsonl"
OFFLINE_METHODS = ["readagent-p", "readagent-s", "gistmem", "full", "memwalker", "segmentplus", "bm25", "first-words",
                   "last-words"]


def offline_accuracy(methods: list[str]) -> list[dict]:
    store = open_db(":memory:")
    docs = load_dataset("quality", DEV_16 if DEV_16.exists() else None)
    started = time.perf_counter()
    eval_id = evaluate(store, OFFLINE, docs, methods, dataset="quality", concurrency=4)
    summary = summarize(store, eval_id)
    print(f"offline engine (no LLM) on QuALITY dev_16: {len(docs)} articles, "
          f"{sum(len(d.questions) for d in docs)} questions, {time.perf_counter() - started:.1f} s")
    print(format_table(summary))
    return summary


def timed(base_url: str, docs, methods: list[str], concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_db(Path(tmp) / "bench.db")
        engine = make_engine("openai", store, model="gme-simulator", base_url=base_url, backoff=0.05)
        started = time.perf_counter()
        evaluate(store, engine, docs, methods, dataset="quality", concurrency=concurrency)
        seconds = time.perf_counter() - started
        store.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--docs", type=int, default=2)
    parser.add_argument("--methods", default="readagent-p,gistmem")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    offline = offline_accuracy(OFFLINE_METHODS)
    methods = args.methods.split(",")
    docs = load_dataset("quality", DEV_16 if DEV_16.exists() else None, limit_docs=args.docs)
    questions = sum(len(d.questions) for d in docs)
    with simulated_server(args.latency_ms) as base_url:
        one = timed(base_url, docs, methods, 1)
        many = timed(base_url, docs, methods, 16)
    print(f"simulated server, {args.latency_ms:.0f} ms latency: {len(docs)} articles, {questions} questions x "
          f"{len(methods)} methods (memories built inside the run)")
    print(f"concurrency 1: {one:.1f} s; concurrency 16: {many:.1f} s; speed-up {one / many:.1f}x")
    print(json.dumps({
        "offline_accuracy": {r["method"]: r["accuracy"] for r in offline},
        "offline_compression_rate": {r["method"]: r["compression_rate"] for r in offline},
        "offline_lookups": {r["method"]: r["lookups"] for r in offline},
        "latency_ms": args.latency_ms, "questions": questions, "methods": methods,
        "concurrency_1_s": round(one, 2), "concurrency_16_s": round(many, 2), "speedup": round(one / many, 2),
    }))


if __name__ == "__main__":
    main()
