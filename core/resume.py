"""Resuming a run that did not finish (stopped, interrupted, failed): a build, a tree or an
evaluation, with the settings it was started with. Finished model calls are replayed from the
log, so nothing the model already answered is asked again."""
from __future__ import annotations

from core.errors import GistError
from core.status import DONE, RUNNING
from core.store.records import Run

RESUMABLE = ("build", "tree", "eval")


def check_resumable(store, run_id: int, engine) -> Run:
    """The run, if ``engine`` may resume it (the same engine, and not finished or running)."""
    row = store.get_run(run_id)
    if row.kind not in RESUMABLE:
        raise GistError(f"Run {run_id} is a question; ask it again instead.")
    if row.status in (DONE, RUNNING):
        raise GistError(f"Run {run_id} is {row.status}; there is nothing to resume.")
    if row.engine != engine.key:
        raise GistError(f"Run {run_id} was made by {row.engine_label}; resume it with the same engine and model, "
                        "so its replies are reused and never mixed with another model's.")
    return row


def resume_run(store, run_id: int, engine, *, progress=None, cancel=None):
    """Finish run ``run_id`` (see the module docstring); returns what the build, tree or evaluation returns."""
    row = check_resumable(store, run_id, engine)
    params = row.params
    if row.kind == "build":
        from core.methods.readagent.build import BuildSettings, build_memory
        from core.methods.readagent.presets import PRESETS

        preset = PRESETS[params["preset"]].with_words(params.get("min_words"), params.get("max_words"))
        return build_memory(store, store.get_document(row.doc_id), engine,
                            BuildSettings(preset, hard_breaks=params.get("hard_breaks", True)),
                            concurrency=params.get("concurrency", 8), progress=progress, cancel=cancel)
    if row.kind == "tree":
        from core.methods.memwalker.tree import TreeSettings, build_tree
        from core.methods.readagent.memory import load_memory

        document = store.get_document(row.doc_id)
        memory = load_memory(store, row.memory_id, document) if row.memory_id else None
        return build_tree(store, document, engine, TreeSettings(params["segment_tokens"], params["max_children"]),
                          memory=memory, concurrency=params.get("concurrency", 8), progress=progress)
    from core.eval.runner import evaluate, resume_request

    request = resume_request(store, run_id)
    return evaluate(store, engine, request.docs, request.methods, dataset=request.dataset, path=request.path,
                    runs=request.runs, concurrency=request.concurrency, params=request.params,
                    preset=request.preset, limit_questions=request.limit_questions, progress=progress,
                    cancel=cancel, resume=run_id)
