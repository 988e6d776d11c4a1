"""Running methods over a dataset.

Each document's gist memory is built once (or reused) and shared by every method and
question; questions run concurrently up to a limit; every result is stored as it is made,
so an interrupted evaluation resumes where it stopped (and the replay cache means no model
call is repeated). Repeated runs (``runs``) ask the model again: run k has its own cache
entries. Offline results are labelled offline and never mixed with a model's.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Callable

from core.concurrency import run_all
from core.errors import Cancelled, GistError
from core.eval.datasets import BUNDLED, EvalDoc, EvalQuestion, load_dataset
from core.eval.metrics import response_words, rouge
from core.eval.raters import rate
from core.eval.report import summarize
from core.jobs import Job, start_job
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.presets import choose_preset
from core.methods.registry import get_method
from core.store import Store
from core.store.records import Run
from core.store.runs import run

STOPPED = ("The evaluation was stopped; the answers made so far are kept. Resume it to finish "
           "(Resume on the Evaluate page, or `python -m core eval ... --resume EVAL_ID`).")


@dataclass
class EvalProgress:
    done: int = 0
    total: int = 0
    stage: str = "building"  # "building" | "asking" | "done"
    last: dict | None = None
    eval_id: int | None = None


@dataclass
class Task:
    run_index: int
    doc: EvalDoc
    question: EvalQuestion
    method: str


@dataclass
class EvalRequest:
    """Everything ``evaluate`` needs besides the store and the engine: what a stored
    evaluation records, so it can be resumed as it was started."""
    docs: list[EvalDoc]
    methods: list[str]
    dataset: str
    path: str = ""
    runs: int = 1
    concurrency: int = 4
    params: dict[str, dict] = field(default_factory=dict)
    preset: str | None = None
    limit_questions: int | None = None


def _check_resumable(store: Store, engine, eval_id: int) -> Run:
    previous = store.get_run(eval_id)
    if previous.kind != "eval":
        raise GistError(f"Run {eval_id} is not an evaluation.", cli="List them with `python -m core runs --kind eval`.",
                        app="Pick an evaluation from the list.")
    if previous.engine != engine.key:
        raise GistError(f"Evaluation {eval_id} was run by {previous.engine_label}; resume it with the same "
                        "engine and model, so results from different engines are never mixed.")
    return previous


def evaluate(store: Store, engine, docs: list[EvalDoc], methods: list[str], *, dataset: str,
             path: str = "", runs: int = 1, concurrency: int = 4, params: dict[str, dict] | None = None,
             preset: str | None = None, progress: Callable[[EvalProgress], None] | None = None,
             cancel: threading.Event | None = None, resume: int | None = None,
             limit_questions: int | None = None) -> int:
    """Evaluate ``methods`` on ``docs``; returns the evaluation's run id (``resume`` continues one).
    ``limit_questions`` is recorded (the caller has cut the questions) so the app can resume."""
    specs = [get_method(m) for m in methods]
    params = params or {}
    cancel = cancel or threading.Event()
    settings = {"dataset": dataset, "path": path, "methods": methods, "runs": runs, "concurrency": concurrency,
                "params": params, "preset": preset, "docs": [d.document.id for d in docs],
                "questions": sum(len(d.questions) for d in docs), "is_llm": not engine.offline,
                "limit_questions": limit_questions}
    if resume is not None:
        _check_resumable(store, engine, resume)
    with run(store, "eval", engine, resume=resume, method=",".join(methods),
             question=f"{dataset}: {settings['questions']} questions", params=settings) as current:
        eval_id = current.id
        builds = _build_all(store, engine, docs, specs, preset, concurrency, cancel, progress, eval_id)
        done = {(r.run_index, r.method, r.question_id) for r in store.eval_results(eval_id) if not r.error}
        tasks = [Task(k, doc, q, m) for k in range(runs) for doc in docs for q in doc.questions for m in methods
                 if (k, m, q.id) not in done]
        count = EvalProgress(len(done), len(tasks) + len(done), "asking", eval_id=eval_id)
        lock = threading.Lock()

        def one(task: Task) -> dict:
            if cancel.is_set():
                raise Cancelled(STOPPED)
            return _answer(store, engine.with_sample(task.run_index), eval_id, task, builds, params, preset)

        def on_done(row: dict) -> None:
            with lock:
                count.done += 1
                count.last = row
                if progress:
                    progress(replace(count))

        run_all([lambda t=t: one(t) for t in tasks], max(1, concurrency), cancel=cancel, on_done=on_done,
                name="eval")
        if cancel.is_set():
            raise Cancelled(STOPPED)
        current.finish({"results": summarize(store, eval_id)})
    if progress:
        progress(EvalProgress(count.total, count.total, "done", eval_id=eval_id))
    return eval_id


def doc_preset(doc: EvalDoc, preset: str | None):
    """The preset a document is read with: ``preset`` when given (``--preset``), else its dataset's
    own (QuALITY, QMSum, NarrativeQA books or movie scripts), else by length."""
    return choose_preset(preset if preset not in (None, "", "auto") else doc.document.meta.get("preset"),
                         doc.document.words)


def _build_all(store: Store, engine, docs: list[EvalDoc], specs, preset: str | None, concurrency: int,
               cancel: threading.Event, progress, eval_id: int) -> dict[str, dict]:
    """Every document's gist memory (when a method needs one); documents are independent, so
    they are built side by side, sharing the concurrency."""
    builds: dict[str, dict] = {}
    needs_memory = any(s.needs_memory for s in specs)
    workers = max(1, min(len(docs), concurrency))
    per_build = max(1, concurrency // workers)
    built = EvalProgress(0, len(docs), "building", eval_id=eval_id)
    lock = threading.Lock()

    def build(doc: EvalDoc) -> None:
        if cancel.is_set():
            raise Cancelled(STOPPED)
        store.save_document(doc.document)
        if needs_memory:
            chosen = doc_preset(doc, preset)
            made = build_memory(store, doc.document, engine, BuildSettings(chosen), concurrency=per_build,
                                cancel=cancel)
            words = made.prompt_words
            if made.reused and made.memory_id:
                built_by = store.get_memory(made.memory_id).run_id
                if built_by:
                    words = (store.get_run(built_by).result or {}).get("prompt_words", 0)
            builds[doc.document.id] = {"memory_id": made.memory_id, "words": words,
                                       "fallbacks": made.fallback_breaks}
        with lock:
            built.done += 1
            if progress:
                progress(replace(built))

    run_all([lambda d=d: build(d) for d in docs], workers, cancel=cancel, name="eval-build")
    return builds


def _answer(store: Store, engine, eval_id: int, task: Task, builds: dict, params: dict,
            preset: str | None = None) -> dict:
    q, doc = task.question, task.doc
    spec = get_method(task.method)
    build = builds.get(doc.document.id, {})
    base = {"eval_id": eval_id, "run_index": task.run_index, "doc_id": doc.document.id, "question_id": q.id,
            "method": task.method, "question": q.text, "options": list(q.options), "gold": q.gold,
            "references_": list(q.references), "meta": q.meta, "fallbacks": build.get("fallbacks", 0)}
    try:
        result = ask(store, engine, doc.document.id, Question(q.text, q.options), method=task.method,
                     params=params.get(task.method), memory_id=build.get("memory_id") if spec.needs_memory else None,
                     preset=doc_preset(doc, preset).name)
    except GistError as exc:
        row = {**base, "error": str(exc)}
        store.add_eval_result(**row)
        return row
    answer = result.answer.text
    row = {**base, "ask_run_id": result.run.id, "answer": answer, "choice": result.answer.choice,
           "compression_rate": result.reading.compression_rate, "lookups": result.reading.lookups,
           "pages_looked_up": result.reading.pages_looked_up, "response_words": response_words(answer),
           "words_consumed": result.usage.prompt_words, "llm_calls": result.usage.llm_calls,
           "answered": int(getattr(result.details, "answered", True)), "error": None}
    if q.is_choice:
        row["correct"] = int(result.answer.choice == q.gold)
    else:
        row.update(rouge(answer, q.references))
        if not engine.offline and q.references:
            rater = engine.bind(run_id=result.run.id, doc_id=doc.document.id)
            rating = rate(rater, q.text, answer, q.references)
            row["rating"] = rating.level
            for n, trace in enumerate(rating.traces, len(result.steps)):  # the raters join the question's trace
                store.add_step(result.run.id, n, trace.step, trace.outcome, trace.to_dict(), trace.seconds)
    store.add_eval_result(**row)
    return row


def start_eval(store: Store, engine, request: EvalRequest, *, resume: int | None = None) -> Job:
    """Run an evaluation on a background thread; ``job.progress`` is an ``EvalProgress``."""
    progress = EvalProgress()

    def update(p: EvalProgress) -> None:
        progress.done, progress.total, progress.stage, progress.eval_id = p.done, p.total, p.stage, p.eval_id

    return start_job("eval", f"{request.dataset}: {', '.join(request.methods)}", lambda job: evaluate(
        store, engine, request.docs, request.methods, dataset=request.dataset, path=request.path,
        runs=request.runs, concurrency=request.concurrency, params=request.params, preset=request.preset,
        limit_questions=request.limit_questions, progress=update, cancel=job.cancel, resume=resume),
        progress=progress)


def resume_request(store: Store, eval_id: int, path: str | None = None) -> EvalRequest:
    """The request that started evaluation ``eval_id``, its documents reloaded (from ``path``,
    or from the bundled sample it was run on) and cut as they were."""
    settings = store.get_run(eval_id).params
    dataset = settings.get("dataset", "")
    stored_path = settings.get("path") or ""
    if path is None and not can_resume_here(store, eval_id):
        how = f"Finish it with `python -m core eval --dataset {dataset} --path FILE --resume {eval_id}` and the same file."
        raise GistError(f"Evaluation {eval_id} ran on {stored_path}, not a bundled sample.", cli=how, app=how)
    wanted = set(settings.get("docs") or [])
    docs = [d for d in load_dataset(dataset, path) if not wanted or d.document.id in wanted]
    limit = settings.get("limit_questions")
    if limit:
        docs = [EvalDoc(d.document, d.questions[:limit]) for d in docs]
    return EvalRequest(docs, list(settings.get("methods") or []), dataset, stored_path, settings.get("runs", 1),
                       settings.get("concurrency", 4), settings.get("params") or {}, settings.get("preset"), limit)


def can_resume_here(store: Store, eval_id: int) -> bool:
    """Whether the app can reload this evaluation's documents (a bundled sample)."""
    settings = store.get_run(eval_id).params
    return BUNDLED.get(settings.get("dataset"), ("",))[0] == settings.get("path")
