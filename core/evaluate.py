"""Running methods over a dataset, and the papers' tables from the results.

Each document's gist memory is built once (or reused) and shared by every method and
question; questions run concurrently up to a limit; every result is stored as it is made,
so an interrupted evaluation resumes where it stopped (and the replay cache means no model
call is repeated). Repeated runs (``runs``) ask the model again: run k has its own cache
entries. Offline results are labelled offline and never mixed with a model's.
"""
from __future__ import annotations

import csv
import io
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Callable

from core.build import BuildSettings, build_memory
from core.datasets import EvalDoc, EvalQuestion
from core.db import Store
from core.errors import Cancelled, GistError
from core.methods import ask, get_method
from core.metrics import EXACT, PARTIAL, mean_std, rate, response_words, rouge
from core.presets import choose_preset
from core.readagent import Engine, Question


STOPPED = ("The evaluation was stopped; the answers made so far are kept. Resume it to finish "
           "(Resume on the Evaluate page, or `python -m core eval ... --resume EVAL_ID`).")


@dataclass
class EvalProgress:
    done: int
    total: int
    stage: str  # "building" | "asking" | "done"
    last: dict | None = None
    eval_id: int | None = None


@dataclass
class Task:
    run_index: int
    doc: EvalDoc
    question: EvalQuestion
    method: str


def engine_for_run(engine: Engine, run_index: int) -> Engine:
    """Run 0 uses the engine as it is; run k > 0 asks the model afresh (its own cache entries)."""
    if run_index == 0 or not engine.is_llm:
        return engine
    from core.llm_engine import LLMEngine

    return LLMEngine(engine.llm.with_sample(run_index), max_reasks=engine.max_reasks)


def evaluate(store: Store, engine: Engine, docs: list[EvalDoc], methods: list[str], *, dataset: str,
             path: str = "", runs: int = 1, concurrency: int = 4, params: dict[str, dict] | None = None,
             preset: str | None = None, progress: Callable[[EvalProgress], None] | None = None,
             cancel: threading.Event | None = None, resume: int | None = None,
             limit_questions: int | None = None) -> int:
    """Evaluate ``methods`` on ``docs``; returns the evaluation's run id (``resume`` continues one).
    ``limit_questions`` is recorded (the caller has cut the questions) so the app can resume."""
    specs = [get_method(m) for m in methods]
    params = params or {}
    cancel = cancel or threading.Event()
    started = time.perf_counter()
    settings = {"dataset": dataset, "path": path, "methods": methods, "runs": runs, "concurrency": concurrency,
                "params": params, "preset": preset, "docs": [d.document.id for d in docs],
                "questions": sum(len(d.questions) for d in docs), "is_llm": engine.is_llm,
                "limit_questions": limit_questions}
    if resume is None:
        eval_id = store.create_run("eval", engine=engine.key, engine_label=engine.label,
                                   model=getattr(getattr(engine, "llm", None), "model", None),
                                   method=",".join(methods), question=f"{dataset}: {settings['questions']} questions",
                                   params=settings)
    else:
        eval_id = resume
        previous = store.get_run(eval_id)
        if previous["kind"] != "eval":
            raise GistError(f"Run {eval_id} is not an evaluation; list them with `python -m core runs --kind eval`.")
        if previous["engine"] != engine.key:
            raise GistError(f"Evaluation {eval_id} was run by {previous['engine_label']}; resume it with the same "
                            f"engine and model, so results from different engines are never mixed.")
        store.db["runs"].update(eval_id, {"status": "running"})

    builds: dict[str, dict] = {}
    needs_memory = any(s.needs_memory for s in specs)
    # Documents are independent: build their memories side by side, sharing the concurrency.
    workers = max(1, min(len(docs), concurrency))
    per_build = max(1, concurrency // workers)
    built_docs, build_lock = 0, threading.Lock()

    def build(doc: EvalDoc) -> None:
        nonlocal built_docs
        if cancel.is_set():
            raise Cancelled(STOPPED)
        store.save_document(doc.document)
        if needs_memory:
            chosen = choose_preset(preset, doc.document.words)
            built = build_memory(store, doc.document, engine, BuildSettings(chosen), concurrency=per_build,
                                 cancel=cancel)
            words = built.prompt_words
            if built.reused and built.memory_id:
                row = store.get_memory_row(built.memory_id)
                if row.get("run_id"):
                    words = (store.get_run(row["run_id"]).get("result") or {}).get("prompt_words", 0)
            builds[doc.document.id] = {"memory_id": built.memory_id, "words": words,
                                       "fallbacks": built.fallback_breaks}
        with build_lock:
            built_docs += 1
            if progress:
                progress(EvalProgress(built_docs, len(docs), "building", eval_id=eval_id))

    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="eval-build") as pool:
            for future in [pool.submit(build, d) for d in docs]:
                future.result()
    except BaseException as exc:
        store.finish_run(eval_id, status="interrupted" if isinstance(exc, (Cancelled, KeyboardInterrupt)) else "failed",
                         error=str(exc), seconds=round(time.perf_counter() - started, 3))
        raise

    done = {(r["run_index"], r["method"], r["question_id"]) for r in store.eval_results(eval_id) if not r["error"]}
    tasks = [Task(k, doc, q, m) for k in range(runs) for doc in docs for q in doc.questions for m in methods
             if (k, m, q.id) not in done]
    total, finished = len(tasks) + len(done), len(done)
    lock = threading.Lock()

    def one(task: Task) -> dict:
        if cancel.is_set():
            raise Cancelled(STOPPED)
        return _answer(store, engine_for_run(engine, task.run_index), eval_id, task, builds, params)

    try:
        with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="eval") as pool:
            futures = [pool.submit(one, t) for t in tasks]
            for future in as_completed(futures):
                try:
                    row = future.result()
                except Cancelled:
                    continue
                with lock:
                    finished += 1
                if progress:
                    progress(EvalProgress(finished, total, "asking", row, eval_id))
        if cancel.is_set():
            raise Cancelled(STOPPED)
    except BaseException as exc:
        store.finish_run(eval_id, status="interrupted" if isinstance(exc, (Cancelled, KeyboardInterrupt)) else "failed",
                         error=str(exc), seconds=round(time.perf_counter() - started, 3))
        raise
    summary = summarize(store, eval_id)
    store.finish_run(eval_id, status="done", result={"results": summary}, seconds=round(time.perf_counter() - started, 3))
    if progress:
        progress(EvalProgress(total, total, "done", eval_id=eval_id))
    return eval_id


def _answer(store: Store, engine: Engine, eval_id: int, task: Task, builds: dict, params: dict) -> dict:
    q, doc = task.question, task.doc
    spec = get_method(task.method)
    build = builds.get(doc.document.id, {})
    base = {"eval_id": eval_id, "run_index": task.run_index, "doc_id": doc.document.id, "question_id": q.id,
            "method": task.method, "question": q.text, "options": list(q.options), "gold": q.gold,
            "references_": list(q.references), "meta": q.meta, "fallbacks": build.get("fallbacks", 0)}
    try:
        result = ask(store, engine, doc.document.id, Question(q.text, q.options), method=task.method,
                     params=params.get(task.method), memory_id=build.get("memory_id") if spec.needs_memory else None)
    except GistError as exc:
        row = {**base, "error": str(exc)}
        store.add_eval_result(**row)
        return row
    row = {**base, "ask_run_id": result.run_id, "answer": result.answer, "choice": result.choice,
           "compression_rate": result.compression_rate, "lookups": result.lookups,
           "pages_looked_up": result.pages_looked_up, "response_words": response_words(result.answer),
           "words_consumed": result.prompt_words, "llm_calls": result.llm_calls,
           "answered": int(result.extra.get("answered", True)), "error": None}
    if q.is_choice:
        row["correct"] = int(result.choice == q.gold)
    else:
        row.update(rouge(result.answer, q.references))
        if engine.is_llm and q.references:
            rater = engine.bind(run_id=result.run_id, doc_id=doc.document.id)
            rating = rate(rater, q.text, result.answer, q.references)
            row["rating"] = rating.level
            for n, trace in enumerate(rating.traces, len(result.steps)):  # the raters join the question's trace
                store.add_step(result.run_id, n, trace.step, trace.outcome, trace.to_dict(), trace.seconds)
    store.add_eval_result(**row)
    return row


# --- the paper's table --------------------------------------------------------------------

def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def summarize(store: Store, eval_id: int) -> list[dict]:
    """One row per method, the paper's columns; means and standard deviations across runs."""
    run = store.get_run(eval_id)
    rows = [r for r in store.eval_results(eval_id) if not r["error"]]
    errors = [r for r in store.eval_results(eval_id) if r["error"]]
    settings = run.get("params") or {}
    out = []
    for method in settings.get("methods") or sorted({r["method"] for r in rows}):
        mine = [r for r in rows if r["method"] == method]
        by_run: dict[int, list[dict]] = {}
        for r in mine:
            by_run.setdefault(r["run_index"], []).append(r)
        per_run = []
        for k, rs in sorted(by_run.items()):
            choice = [r for r in rs if r["options"]]
            free = [r for r in rs if not r["options"]]
            rated = [r for r in free if r["rating"] is not None]
            per_run.append({
                "accuracy": 100 * _mean([r["correct"] for r in choice]) if choice else None,
                "lr1": 100 * _mean([r["rating"] == EXACT for r in rated]) if rated else None,
                "lr2": 100 * _mean([r["rating"] in (EXACT, PARTIAL) for r in rated]) if rated else None,
                "rouge1": _mean([r["rouge1"] for r in free]), "rouge2": _mean([r["rouge2"] for r in free]),
                "rougeL": _mean([r["rougeL"] for r in free]),
                "words_consumed": sum(r["words_consumed"] or 0 for r in rs),
            })
        first_run = by_run.get(min(by_run), []) if by_run else []
        spec_needs_memory = get_method(method).needs_memory
        build_words = 0
        if spec_needs_memory:
            for doc_id in {r["doc_id"] for r in mine}:
                build_words += _build_words(store, doc_id, run)
        entry = {
            "method": method, "method_label": get_method(method).label, "n": len(first_run),
            "runs": len(by_run), "engine": run.get("engine_label"), "offline": not settings.get("is_llm", False),
            "compression_rate": _round(_mean([r["compression_rate"] for r in mine])),
            "lookups": _round(_mean([r["lookups"] for r in mine])),
            "response_words": _round(_mean([r["response_words"] for r in mine])),
            "unparseable": sum(1 for r in mine if r["options"] and r["choice"] is None),
            "no_answer": sum(1 for r in mine if r["answered"] == 0),
            "errors": sum(1 for r in errors if r["method"] == method),
        }
        for key in ("accuracy", "lr1", "lr2", "rouge1", "rouge2", "rougeL"):
            mean, std = mean_std([p[key] for p in per_run])
            if mean is not None:
                entry[key], entry[f"{key}_std"] = _round(mean), _round(std)
        consumed = mean_std([p["words_consumed"] for p in per_run])[0]
        entry["words_consumed"] = int((consumed or 0) + build_words)
        entry["build_words"] = build_words
        out.append(entry)
    return out


def _build_words(store: Store, doc_id: str, run: dict) -> int:
    for memory in store.memories_for(doc_id):
        if memory["engine"] == run.get("engine") and memory.get("run_id"):
            return (store.get_run(memory["run_id"]).get("result") or {}).get("prompt_words", 0)
    return 0


def _round(value, digits=2):
    return None if value is None else round(value, digits)


def format_table(summary: list[dict]) -> str:
    """The paper's layout: method, CR (#LU), then accuracy or LR-1/LR-2/ROUGE, length, words."""
    free = any("rouge1" in r for r in summary)
    head = ["method", "n", "CR (#LU)"] + (["LR-1", "LR-2", "R-1", "R-2", "R-L"] if free else ["accuracy"]) + \
           ["resp. words", "words consumed"]

    def pm(r, key):
        if r.get(key) is None:
            return "—"
        std = r.get(f"{key}_std")
        return f"{r[key]:.2f}" + (f" ± {std:.2f}" if r.get("runs", 1) > 1 and std is not None else "")

    lines = [head]
    for r in summary:
        cr = "—" if r["compression_rate"] is None else f"{r['compression_rate']:.2f} ({r['lookups']:.2f})"
        scores = [pm(r, k) for k in (("lr1", "lr2", "rouge1", "rouge2", "rougeL") if free else ("accuracy",))]
        lines.append([r["method_label"], str(r["n"]), cr, *scores,
                      "—" if r["response_words"] is None else f"{r['response_words']:.1f}",
                      f"{r['words_consumed']:,}" if not r["offline"] else "n/a (offline)"])
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in lines)


RESULT_COLUMNS = ["id", "run_index", "doc_id", "question_id", "method", "question", "options", "gold", "references",
                  "answer", "choice", "correct", "rating", "rouge1", "rouge2", "rougeL", "compression_rate",
                  "lookups", "pages_looked_up", "response_words", "words_consumed", "llm_calls", "answered",
                  "error", "ask_run_id"]


def results_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, RESULT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                         for k, v in r.items()})
    return out.getvalue()


# --- labels -----------------------------------------------------------------------------------

DEFAULT_CATEGORIES = ["pagination", "gist lost the detail", "wrong look-up", "reasoning", "dataset problem",
                      "other"]


def labelled_cases(store: Store, eval_id: int) -> list[dict]:
    """Every label with what is needed to reproduce its case (question, options, gold, prediction,
    method, engine, the ask run holding the full trace)."""
    run = store.get_run(eval_id)
    results = {r["id"]: r for r in store.eval_results(eval_id)}
    cases = []
    for label in store.labels(eval_id):
        r = results[label["result_id"]]
        cases.append({"eval_id": eval_id, "result_id": r["id"], "annotator": label["annotator"],
                      "category": label["category"], "note": label["note"], "labelled_at": label["updated_at"],
                      "engine": run.get("engine_label"), "dataset": (run.get("params") or {}).get("dataset"),
                      **{k: r[k] for k in RESULT_COLUMNS if k != "id"}})
    return cases


def labels_jsonl(cases: list[dict]) -> str:
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)


def labels_csv(cases: list[dict]) -> str:
    if not cases:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, list(cases[0]))
    writer.writeheader()
    for c in cases:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                         for k, v in c.items()})
    return out.getvalue()
