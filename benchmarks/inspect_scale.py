"""Inspect and Runs at scale: each screen's data loaded from a database of 10,000 evaluation results
and 1,000 other runs, against a small database, in the same process.

    python benchmarks/inspect_scale.py [--results 10000] [--runs 1000] [--small-results 128]
                                       [--small-runs 50] [--repeat 5] [--no-app]

Each database is a temporary file filled from a real offline evaluation of the bundled QuALITY
sample (2 articles, 4 methods: its results, question runs, steps, gist memories), copied until it
holds ``--results`` results in one evaluation (each with its own question run and steps) plus
``--runs`` other runs (questions asked on their own and builds), and labels by three annotators
on a third of the failures. Nothing is downloaded.

Timed: the core functions the Inspect, Runs and Evaluate pages call (the median of ``--repeat``
calls, after one), then the page scripts themselves run by Streamlit's AppTest (no browser): the
first opening and a rerun (Inspect: "Next"). The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.engine import OFFLINE  # noqa: E402
from core.eval.agreement import agreement, disagreements  # noqa: E402
from core.eval.datasets import load_dataset  # noqa: E402
from core.eval.report import (FAILURES, case_table_rows, find_cases, is_failure, label_counts,  # noqa: E402
                              labelled_cases, labels_jsonl, same_question, summarize)
from core.eval.runner import evaluate  # noqa: E402
from core.methods.ask import load_ask  # noqa: E402
from core.methods.readagent.memory import load_memory  # noqa: E402
from core.store import Store, open_db  # noqa: E402

METHODS = ["readagent-p", "gistmem", "bm25", "first-words"]
CATEGORIES = ["pagination", "gist lost the detail", "wrong look-up", "reasoning", "dataset problem", "other"]
PAGE_ROWS = 15


def _copy_rows(store: Store, table: str, rows: list[dict]) -> None:
    store.db[table].insert_all(rows, batch_size=1000)


def fill(path: Path, results: int, runs: int) -> dict:
    """A database at ``path`` with one evaluation of ``results`` results and ``runs`` other runs."""
    store = open_db(path)
    docs = load_dataset("quality", limit_docs=2)
    seed = evaluate(store, OFFLINE, docs, METHODS, dataset="quality", path="quality_dev_16.jsonl")
    template = list(store.db["eval_results"].rows_where("eval_id = ?", [seed], order_by="id"))
    ask_rows = {r["id"]: r for r in store.db.query(
        "select * from runs where id in (select ask_run_id from eval_results where eval_id = ?)", [seed])}
    steps = {}
    for s in store.db.query("select * from steps where run_id in (select ask_run_id from eval_results "
                            "where eval_id = ?)", [seed]):
        steps.setdefault(s["run_id"], []).append(s)
    seed_run = store.db["runs"].get(seed)
    with store.lock, store.db.conn:
        next_run = store.db.execute("select max(id) from runs").fetchone()[0] + 1
        big = {**seed_run, "id": next_run, "question": f"quality: {results} results (filled)"}
        store.db["runs"].insert(big)
        next_run += 1
        new_runs, new_steps, new_results = [], [], []
        for k in range(results):
            t = template[k % len(template)]
            ask = {**ask_rows[t["ask_run_id"]], "id": next_run}
            new_runs.append(ask)
            new_steps += [{**s, "id": None, "run_id": next_run} for s in steps.get(t["ask_run_id"], [])]
            row = {**t, "id": None, "eval_id": big["id"], "ask_run_id": next_run,
                   "question_id": f"{t['question_id']}~{k // len(template)}"}
            new_results.append(row)
            next_run += 1
        builds = list(store.db.query("select * from runs where kind = 'build'"))
        standalone = list(ask_rows.values())
        for k in range(runs):
            source = builds[k % len(builds)] if k % 10 == 0 and builds else standalone[k % len(standalone)]
            new_runs.append({**source, "id": next_run})
            next_run += 1
        _copy_rows(store, "runs", new_runs)
        _copy_rows(store, "steps", [{k: v for k, v in s.items() if k != "id"} for s in new_steps])
        _copy_rows(store, "eval_results", [{k: v for k, v in r.items() if k != "id"} for r in new_results])
    rows = store.eval_results(big["id"])
    failures = [r for r in rows if is_failure(r)]
    labels = []
    for i, r in enumerate(failures[: len(failures) // 3]):
        category = CATEGORIES[i % len(CATEGORIES)]
        labels.append({"result_id": r.id, "annotator": "ana", "category": category, "note": "", "updated_at": ""})
        if i % 2 == 0:  # ben labels every other case, agreeing four times in five
            labels.append({"result_id": r.id, "annotator": "ben", "note": "", "updated_at": "",
                           "category": category if i % 5 else CATEGORIES[(i + 1) % len(CATEGORIES)]})
        if i % 4 == 0:
            labels.append({"result_id": r.id, "annotator": "cy", "category": category, "note": "", "updated_at": ""})
    with store.lock, store.db.conn:
        _copy_rows(store, "labels", labels)
    counts = {t: store.db[t].count for t in ("runs", "eval_results", "steps", "labels")}
    store.close()
    return {"eval_id": big["id"], "seed_eval": seed, "results": results, "rows": counts}


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def screen_steps(store: Store, eval_id: int) -> dict[str, callable]:
    """Each step a screen takes, as the pages call them."""
    from components import charts  # plotly figures, as the page builds them

    rows = store.eval_results(eval_id)
    by_id = {r.id: r for r in rows}
    labels = store.labels(eval_id)
    titles = {d.id: d.title for d in store.list_documents()}
    shown = find_cases(rows, labels, show=FAILURES, annotator="ana", titles=titles)
    looked_up = [i for i, r in enumerate(shown) if r.method == "readagent-p" and r.pages_looked_up]
    position = looked_up[len(looked_up) // 2]  # a ReadAgent-P case halfway down the list: pages re-read
    case = shown[position]

    def open_case():
        document = store.get_document(case.doc_id)
        result = load_ask(store, case.ask_run_id)
        if result.memory:
            load_memory(store, result.memory.id, document)
        same_question(rows, case)

    def heatmap():
        same_doc = [r for r in rows if r.doc_id == case.doc_id and r.method == case.method
                    and r.run_index == case.run_index and not r.error]
        charts.pages_reread(same_doc, case.method, current=case.id)

    def rerun():  # what a key press costs once the results are loaded
        store.eval_results_version(eval_id)
        now = store.labels(eval_id)
        listed = find_cases(rows, now, show=FAILURES, annotator="ana", titles=titles)
        first = position // PAGE_ROWS * PAGE_ROWS
        case_table_rows(listed[first:first + PAGE_ROWS], now, annotator="ana", current=case.id, titles=titles)
        open_case()
        heatmap()
        agreement(now, None, CATEGORIES)
        disagreements(now)
        label_counts(now, by_id)

    run_total = store.count_runs()
    return {
        "Inspect · results, first load (then kept until they change)": lambda: store.eval_results(eval_id),
        "Inspect · have the results changed? (each rerun)": lambda: store.eval_results_version(eval_id),
        "Inspect · labels": lambda: store.labels(eval_id),
        "Inspect · filter failures and order": lambda: find_cases(rows, labels, show=FAILURES, titles=titles),
        "Inspect · filter 'methods disagree'": lambda: find_cases(rows, labels, show="methods disagree"),
        "Inspect · search two words": lambda: find_cases(rows, labels, show="everything", search="why the",
                                                          titles=titles),
        "Inspect · case table page": lambda: case_table_rows(shown[:PAGE_ROWS], labels, annotator="ana",
                                                             titles=titles),
        "Inspect · open a case (trace, memory)": open_case,
        "Inspect · heatmap of pages re-read": heatmap,
        "Inspect · agreement and disagreements": lambda: (agreement(labels, None, CATEGORIES), disagreements(labels)),
        "Inspect · labels by category and method": lambda: label_counts(labels, by_id),
        "Inspect · a rerun in all (key press)": rerun,
        "Inspect · export every label (on click)": lambda: labels_jsonl(labelled_cases(store, eval_id)),
        "Runs · first page (count + 100 runs)": lambda: (store.count_runs(), store.runs_page(limit=100)),
        "Runs · last page": lambda: store.runs_page(offset=max(0, (run_total - 1) // 100 * 100), limit=100),
        "Runs · evaluations only": lambda: (store.count_runs(kind="eval"), store.runs_page(kind="eval", limit=100)),
        "Runs · search": lambda: (store.count_runs(search="Korvin"), store.runs_page(search="Korvin", limit=100)),
        "Runs · an evaluation's question runs (page)": lambda: (store.count_eval_question_runs(eval_id),
                                                                store.eval_question_runs(eval_id, limit=100)),
        "Runs · open a question run": lambda: load_ask(store, case.ask_run_id),
        "Evaluate · the paper's table (results loaded)": lambda: summarize(store, eval_id),
        "Evaluate · the paper's table (results kept)": lambda: summarize(store, eval_id, rows),
    }


def app_times(db: Path, repeat: int) -> dict[str, float]:
    """The page scripts in Streamlit's AppTest (the median of ``repeat``): Inspect opened in a new
    session, "Next" on it, Runs opened, Evaluate opened."""
    from streamlit.testing.v1 import AppTest

    from components.state import get_store

    os.environ["GIST_MEMORY_DB"] = str(db)
    get_store.clear()
    opened, moved, runs, evaluated = [], [], [], []
    for _ in range(repeat):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
        started = time.perf_counter()
        at.switch_page("pages/inspect.py").run()
        opened.append(time.perf_counter() - started)
        assert not at.exception, at.exception
        started = time.perf_counter()
        at.button(key="in_next").click().run()
        moved.append(time.perf_counter() - started)
        started = time.perf_counter()
        at.switch_page("pages/runs.py").run()
        runs.append(time.perf_counter() - started)
        assert not at.exception, at.exception
        started = time.perf_counter()
        at.switch_page("pages/evaluate.py").run()
        evaluated.append(time.perf_counter() - started)
        assert not at.exception, at.exception
    get_store.clear()
    return {"App · Inspect opened (new session)": 1000 * statistics.median(opened),
            "App · Inspect 'Next' (a rerun)": 1000 * statistics.median(moved),
            "App · Runs opened": 1000 * statistics.median(runs),
            "App · Evaluate opened": 1000 * statistics.median(evaluated)}


def measure(path: Path, results: int, runs: int, repeat: int, app: bool) -> tuple[dict, dict]:
    started = time.perf_counter()
    filled = fill(path, results, runs)
    filled["fill_seconds"] = round(time.perf_counter() - started, 1)
    store = open_db(path)
    times = {name: median_ms(fn, repeat) for name, fn in screen_steps(store, filled["eval_id"]).items()}
    store.close()
    if app:
        app_times(path, 1)  # imports and first-render costs paid once, outside the figures
        times.update(app_times(path, repeat))
    return filled, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--small-results", type=int, default=128)
    parser.add_argument("--small-runs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-app", action="store_true", help="skip the page scripts (AppTest)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        small, small_times = measure(Path(tmp) / "small.db", args.small_results, args.small_runs, args.repeat,
                                     not args.no_app)
        large, large_times = measure(Path(tmp) / "large.db", args.results, args.runs, args.repeat, not args.no_app)
    for name, filled in (("small", small), ("large", large)):
        print(f"{name} database: one evaluation of {filled['results']:,} results; in all "
              f"{filled['rows']['eval_results']:,} results, {filled['rows']['runs']:,} runs, "
              f"{filled['rows']['steps']:,} steps, {filled['rows']['labels']:,} labels (filled in "
              f"{filled['fill_seconds']} s)")
    width = max(map(len, large_times))
    print(f"\n{'step'.ljust(width)}  {'small ms':>9}  {'large ms':>9}  {'ratio':>6}")
    for name, ms in large_times.items():
        base = small_times.get(name)
        ratio = f"{ms / base:6.1f}" if base else "     —"
        print(f"{name.ljust(width)}  {base:9.1f}  {ms:9.1f}  {ratio}")
    print(json.dumps({"small": {"rows": small["rows"], "ms": {k: round(v, 2) for k, v in small_times.items()}},
                      "large": {"rows": large["rows"], "ms": {k: round(v, 2) for k, v in large_times.items()}}}))


if __name__ == "__main__":
    main()
