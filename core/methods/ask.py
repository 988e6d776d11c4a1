"""``ask``: answer one question about a stored document with one method, and store the run
(the result, every step, and through the seam every model call)."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import GistError
from core.methods.base import Answer, Details, MethodInput, Question
from core.methods.readagent.memory import latest_memory, load_memory
from core.methods.readagent.presets import PRESETS, choose_preset
from core.methods.registry import get_method
from core.store import Store
from core.store.runs import run
from core.trace import StepTrace


@dataclass(frozen=True)
class AskRun:
    """Which run it was: the method, the engine, the document and the method's settings."""
    id: int
    method: str
    method_label: str
    engine: str
    engine_label: str
    doc_id: str
    title: str
    params: dict
    seconds: float


@dataclass(frozen=True)
class Reading:
    """What the method read: the pages it looked up (in look-up or rank order), those shown raw in
    the final context, and that context, with its size against the whole text."""
    pages_looked_up: list[int]
    expanded: list[int]
    words_in_context: int
    document_words: int
    compression_rate: float
    context: str = ""

    @property
    def lookups(self) -> int:
        return len(self.pages_looked_up)


@dataclass(frozen=True)
class ModelUsage:
    llm_calls: int
    cached_calls: int  # replayed from the log
    input_tokens: int
    output_tokens: int
    prompt_words: int


@dataclass(frozen=True)
class MemoryUsed:
    """The gist memory the method read, and who wrote its gists."""
    id: int
    label: str


@dataclass(frozen=True)
class AskResult:
    run: AskRun
    question: Question
    answer: Answer
    reading: Reading
    usage: ModelUsage
    memory: MemoryUsed | None = None
    details: Details = field(default_factory=Details)
    steps: list[StepTrace] = field(default_factory=list)

    def as_json(self) -> dict:
        """One flat object, as the command line prints it and a run stores it (every key a run
        stored by an earlier version has)."""
        r, read, used = self.run, self.reading, self.usage
        return {"run_id": r.id, "method": r.method, "method_label": r.method_label, "engine": r.engine,
                "engine_label": r.engine_label, "doc_id": r.doc_id, "title": r.title, "question": self.question.text,
                "options": list(self.question.options), "answer": self.answer.text, "choice": self.answer.choice,
                "pages_looked_up": list(read.pages_looked_up), "expanded": list(read.expanded),
                "lookups": read.lookups, "words_in_context": read.words_in_context,
                "document_words": read.document_words, "compression_rate": read.compression_rate,
                "llm_calls": used.llm_calls, "cached_calls": used.cached_calls, "input_tokens": used.input_tokens,
                "output_tokens": used.output_tokens, "prompt_words": used.prompt_words, "seconds": r.seconds,
                "params": r.params, "memory_id": self.memory.id if self.memory else None,
                "memory_label": self.memory.label if self.memory else "", "context": read.context,
                "details": self.details.to_dict(), "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_json(cls, data: dict, steps: list[StepTrace]) -> "AskResult":
        """A stored run's result (``as_json``; runs stored before typed details kept them under ``extra``)."""
        spec = get_method(data["method"])
        memory_id = data.get("memory_id")
        return cls(
            run=AskRun(data["run_id"], data["method"], data["method_label"], data["engine"], data["engine_label"],
                       data["doc_id"], data["title"], data["params"], data["seconds"]),
            question=Question(data["question"], tuple(data["options"])),
            answer=Answer(data["answer"], data["choice"]),
            reading=Reading(data["pages_looked_up"], data["expanded"], data["words_in_context"],
                            data["document_words"], data["compression_rate"], data.get("context", "")),
            usage=ModelUsage(data["llm_calls"], data["cached_calls"], data["input_tokens"], data["output_tokens"],
                             data["prompt_words"]),
            memory=MemoryUsed(memory_id, data.get("memory_label", "")) if memory_id else None,
            details=spec.details.from_dict(data.get("details") or data.get("extra")), steps=steps)


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
        for seq, trace in enumerate(output.steps):
            store.add_step(current.id, seq, trace.step, trace.outcome, trace.to_dict(), trace.seconds, page=trace.page)
        usage = current.engine.usage()
        result = AskResult(
            run=AskRun(current.id, method, spec.label, engine.key, engine.label, document.id, document.title, values,
                       current.seconds),
            question=question, answer=output.answer,
            reading=Reading(output.pages_looked_up, output.expanded, output.words_in_context, output.document_words,
                            output.compression_rate, output.context),
            usage=ModelUsage(usage["llm_calls"], usage["cached_calls"], usage["input_tokens"], usage["output_tokens"],
                             usage["prompt_words"]),
            memory=MemoryUsed(memory.memory_id, memory.engine_label) if memory else None,
            details=output.details, steps=output.steps)
        stored = result.as_json()
        stored.pop("steps")  # kept in the steps table
        current.finish(stored)
    return result


def load_ask(store: Store, run_id: int) -> AskResult:
    """A stored question run, exactly as it was returned."""
    row = store.get_run(run_id)
    if row.kind != "ask" or not row.result:
        article = "an" if row.kind[0] in "aeiou" else "a"
        raise GistError(f"Run {run_id} is {article} {row.kind} run ({row.status}), not a finished question.")
    return AskResult.from_json(row.result, [s.trace for s in store.steps(run_id)])
