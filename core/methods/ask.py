"""``ask``: answer one question about a stored document with one method, and store the run
(the result, every step, and through the seam every model call)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from core.errors import GistError
from core.methods.base import Details, MethodInput, Question
from core.methods.readagent.memory import latest_memory, load_memory
from core.methods.readagent.presets import PRESETS, choose_preset
from core.methods.registry import get_method
from core.store import Store
from core.store.runs import run


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
    details: Details = field(default_factory=Details)
    steps: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return asdict(self)  # the details too, as a dict


def ask(store: Store, engine, doc_id: str, question: Question, *, method: str = "readagent-p",
        params: dict | None = None, memory_id: int | None = None, preset: str | None = None,
        group: str | None = None) -> AskResult:
    """Answer ``question`` about a stored document with ``method``; store and return the run.
    ``group``: a token shared by the runs of one question asked with several methods at once."""
    spec = get_method(method)
    values = spec.resolve(params)
    document = store.get_document(doc_id)
    memory = None
    if spec.needs_memory or memory_id is not None:
        memory = load_memory(store, memory_id, document) if memory_id else latest_memory(store, document, engine.key)
    chosen = PRESETS.get(memory.preset) if memory and memory.preset in PRESETS else choose_preset(preset, document.words)
    with run(store, "ask", engine, doc_id=document.id, memory_id=memory.memory_id if memory else None,
             method=method, question=question.text, options=list(question.options), params=values, ask_group=group) as current:
        output = spec.run(MethodInput(current.engine, document, memory, question, chosen, store), values)
        steps = [trace.to_dict() for trace in output.steps]
        for seq, trace in enumerate(output.steps):
            store.add_step(current.id, seq, trace.step, trace.outcome, steps[seq], trace.seconds, page=trace.page)
        usage = current.engine.usage()
        result = AskResult(
            run_id=current.id, method=method, method_label=spec.label, engine=engine.key,
            engine_label=engine.label, doc_id=document.id, title=document.title, question=question.text,
            options=list(question.options), answer=output.answer.text, choice=output.answer.choice,
            pages_looked_up=output.pages_looked_up, expanded=output.expanded, lookups=output.lookups,
            words_in_context=output.words_in_context, document_words=output.document_words,
            compression_rate=output.compression_rate, llm_calls=usage["llm_calls"],
            cached_calls=usage["cached_calls"], input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"], prompt_words=usage["prompt_words"], seconds=current.seconds,
            params=values, memory_id=memory.memory_id if memory else None,
            memory_label=memory.engine_label if memory else "", context=output.context, details=output.details,
            steps=steps)
        stored = result.as_json()
        stored.pop("steps")  # kept in the steps table
        current.finish(stored)
    return result


def load_ask(store: Store, run_id: int) -> AskResult:
    """A stored question run, exactly as it was returned (runs stored before typed details
    kept them under ``extra``)."""
    row = store.get_run(run_id)
    if row["kind"] != "ask" or not row["result"]:
        article = "an" if row["kind"][0] in "aeiou" else "a"
        raise GistError(f"Run {run_id} is {article} {row['kind']} run ({row['status']}), not a finished question.")
    data = dict(row["result"])
    spec = get_method(data["method"])
    details = spec.details.from_dict(data.pop("details", None) or data.pop("extra", None))
    data.pop("extra", None)
    return AskResult(**{**data, "details": details, "steps": [s["data"] for s in store.steps(run_id)]})
