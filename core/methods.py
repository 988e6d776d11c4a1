"""Every question-answering method behind one interface, and ``ask`` which runs one
and stores the run (result, steps, and through the seam every model call)."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from core import readagent
from core.db import Store
from core.documents import Document
from core.errors import GistError
from core.memory import latest_memory, load_memory
from core.presets import PRESETS, Preset, choose_preset
from core.readagent import Engine, GistMemory, MethodOutput, Question


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: Any
    help: str


@dataclass
class MethodInput:
    engine: Engine
    document: Document
    memory: GistMemory | None
    question: Question
    preset: Preset
    store: Store


@dataclass(frozen=True)
class Method:
    name: str
    label: str
    description: str
    needs_memory: bool
    run: Callable[[MethodInput, dict], MethodOutput]
    params: tuple[Param, ...] = ()

    def resolve(self, given: dict | None) -> dict:
        """Defaults filled in, unknown names ignored, values converted to their types."""
        given = {k: v for k, v in (given or {}).items() if v is not None}
        out = {}
        for p in self.params:
            value = given.get(p.name, p.default)
            try:
                out[p.name] = p.type(value)
            except (TypeError, ValueError):
                raise GistError(f"{self.label}: {p.name} must be a {p.type.__name__}, not {value!r}.") from None
        return out


METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    METHODS[method.name] = method
    return method


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise GistError(f"Unknown method {name!r}. Choose one of: {', '.join(METHODS)}.") from None


# Methods defined in their own modules register themselves when imported at the end of this file.

register(Method(
    "readagent-p", "ReadAgent-P", "Look up 1 to N pages at once from the gist memory, then answer (paper Sec. 3.2).",
    True, lambda i, p: readagent.readagent_p(i.engine, i.memory, i.question, i.preset, p["max_pages"]),
    (Param("max_pages", int, 5, "the most pages to look up"),),
))
register(Method(
    "readagent-s", "ReadAgent-S", "Look up one page at a time, seeing pages already read, until STOP (Sec. 3.2).",
    True, lambda i, p: readagent.readagent_s(i.engine, i.memory, i.question, i.preset, p["max_pages"]),
    (Param("max_pages", int, 6, "the most look-up steps"),),
))
register(Method(
    "gistmem", "GistMem", "Answer from the gist memory alone, no look-up (Sec. 4.2).",
    True, lambda i, p: readagent.gistmem(i.engine, i.memory, i.question, i.preset),
))
register(Method(
    "full", "Full text", "Answer with the whole document in context (compression rate 0).",
    False, lambda i, p: readagent.full_text(i.engine, i.document.paragraphs, i.question, i.preset),
))


@dataclass
class AskResult:
    run_id: int
    method: str
    method_label: str
    engine: str
    engine_label: str
    doc_id: str
    title: str
    question: str
    options: list[str]
    answer: str
    choice: str | None
    pages_looked_up: list[int]
    expanded: list[int]
    lookups: int
    words_in_context: int
    document_words: int
    compression_rate: float
    llm_calls: int
    cached_calls: int
    input_tokens: int
    output_tokens: int
    prompt_words: int
    seconds: float
    params: dict
    memory_id: int | None = None
    memory_label: str = ""
    context: str = ""
    extra: dict = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)


def ask(store: Store, engine: Engine, doc_id: str, question: Question, *, method: str = "readagent-p",
        params: dict | None = None, memory_id: int | None = None, preset: str | None = None) -> AskResult:
    """Answer ``question`` about a stored document with ``method``; store and return the run."""
    started = time.perf_counter()
    spec = get_method(method)
    values = spec.resolve(params)
    document = store.get_document(doc_id)
    memory = None
    if spec.needs_memory or memory_id is not None:
        memory = load_memory(store, memory_id, document) if memory_id else latest_memory(store, document, engine.key)
    chosen = PRESETS.get(memory.preset) if memory and memory.preset in PRESETS else choose_preset(preset, document.words)
    model = getattr(getattr(engine, "llm", None), "model", None)
    run_id = store.create_run(
        "ask", doc_id=document.id, memory_id=memory.memory_id if memory else None, method=method,
        engine=engine.key, engine_label=engine.label, model=model, question=question.text,
        options=list(question.options), params=values,
    )
    bound = engine.bind(run_id=run_id, doc_id=document.id)
    try:
        output = spec.run(MethodInput(bound, document, memory, question, chosen, store), values)
    except BaseException as exc:
        store.finish_run(run_id, status="failed", error=str(exc), seconds=round(time.perf_counter() - started, 3))
        raise
    steps = [trace.to_dict() for trace in output.steps]
    for seq, trace in enumerate(output.steps):
        store.add_step(run_id, seq, trace.step, trace.outcome, steps[seq], trace.seconds, page=trace.page)
    usage = bound.usage()
    result = AskResult(
        run_id=run_id, method=method, method_label=spec.label, engine=engine.key, engine_label=engine.label,
        doc_id=document.id, title=document.title, question=question.text, options=list(question.options),
        answer=output.answer.text, choice=output.answer.choice, pages_looked_up=output.pages_looked_up,
        expanded=output.expanded, lookups=output.lookups, words_in_context=output.words_in_context,
        document_words=output.document_words, compression_rate=output.compression_rate,
        llm_calls=usage["llm_calls"], cached_calls=usage["cached_calls"], input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"], prompt_words=usage["prompt_words"],
        seconds=round(time.perf_counter() - started, 3), params=values,
        memory_id=memory.memory_id if memory else None, memory_label=memory.engine_label if memory else "",
        context=output.context, extra=output.extra, steps=steps,
    )
    stored = result.as_json()
    stored.pop("steps")  # kept in the steps table
    store.finish_run(run_id, status="done", result=stored, seconds=result.seconds)
    return result


def load_ask(store: Store, run_id: int) -> AskResult:
    """A stored question run, exactly as it was returned."""
    run = store.get_run(run_id)
    if run["kind"] != "ask" or not run["result"]:
        raise GistError(f"Run {run_id} is a {run['kind']} run ({run['status']}), not a finished question.")
    return AskResult(**{**run["result"], "steps": [s["data"] for s in store.steps(run_id)]})


# Methods in their own modules (they register themselves on import).
import core.memwalker  # noqa: E402,F401
import core.segment_plus  # noqa: E402,F401
import core.baselines  # noqa: E402,F401
