"""What the database hands out: one frozen record per kind of row, each read from its row by
one ``from_row``, where its JSON columns are decoded (once) and missing values get their defaults.

A ``Page`` and a ``TreeNode`` are also the values the methods work with: a page is the one shape
a page has from the builder to the screen (a page not gisted yet has no gist).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.trace import StepTrace


def loads(value: str | None, default: Any = None) -> Any:
    return json.loads(value) if value else default


@dataclass(frozen=True)
class DocumentListing:
    """A document in the library: what it is and how many finished gist memories it has."""
    id: str
    title: str
    source: str
    words: int
    created_at: str
    memories: int

    @classmethod
    def from_row(cls, row: dict) -> "DocumentListing":
        return cls(id=row["id"], title=row["title"], source=row["source"] or "", words=row["words"],
                   created_at=row["created_at"], memories=row["memories"])


@dataclass(frozen=True)
class Memory:
    """A stored gist memory: how it was built (engine, preset, settings) and where it stands."""
    id: int
    doc_id: str
    engine: str
    engine_label: str
    model: str | None  # the model's name (None: the offline engine)
    preset: str
    min_words: int | None
    max_words: int | None
    hard_breaks: bool
    settings: dict
    settings_key: str
    status: str
    origin: str
    pages: int  # once finished
    words: int
    gist_words: int
    compression_rate: float
    run_id: int | None
    created_at: str
    finished_at: str | None
    owner: str | None
    parent_id: int | None  # the memory this one was fitted from (App. I), if any
    fit_tokens: int | None  # the window it was fitted to

    @property
    def conditional(self) -> str:
        """The question its gists were made for (Conditional ReadAgent, App. G.1), or ""."""
        return self.settings.get("conditional") or ""

    @classmethod
    def from_row(cls, row: dict) -> "Memory":
        return cls(id=row["id"], doc_id=row["doc_id"], engine=row["engine"], engine_label=row["engine_label"] or "",
                   model=row["model"], preset=row["preset"] or "", min_words=row["min_words"],
                   max_words=row["max_words"], hard_breaks=bool(row["hard_breaks"]),
                   settings=loads(row["settings"], {}), settings_key=row["settings_key"], status=row["status"],
                   origin=row["origin"] or "", pages=row["pages"] or 0, words=row["words"] or 0,
                   gist_words=row["gist_words"] or 0, compression_rate=row["compression_rate"] or 0.0,
                   run_id=row["run_id"], created_at=row["created_at"], finished_at=row["finished_at"],
                   owner=row.get("owner"), parent_id=row.get("parent_id"), fit_tokens=row.get("fit_tokens"))


@dataclass(frozen=True)
class Page:
    """A page of a gist memory: its span of paragraphs, its text, and its gist ("" until gisted)."""
    start: int  # first paragraph
    end: int  # one past the last paragraph
    text: str
    words: int
    index: int = 0  # its place in the memory, counted when the pages are listed in text order
    gist: str = ""
    gist_words: int = 0
    break_by: str = ""  # how the pause point ending this page was chosen (a trace outcome)
    break_reason: str = ""
    gist_by: str = ""
    # Page history (App. I, G.3): the pages of the memory this one was made from that this page
    # holds (empty: it is its own), and how many times its gist was gisted again.
    sources: tuple[int, ...] = ()
    gist_rounds: int = 0

    @classmethod
    def from_row(cls, row: dict, *, index: int, text: str) -> "Page":
        return cls(start=row["start"], end=row["end"], text=text, words=row["words"], index=index,
                   gist=row["gist"] or "", gist_words=row["gist_words"] or 0, break_by=row["break_by"] or "",
                   break_reason=row["break_reason"] or "", gist_by=row["gist_by"] or "",
                   sources=tuple(loads(row.get("sources"), [])), gist_rounds=row.get("gist_rounds") or 0)


@dataclass(frozen=True)
class Tree:
    """A stored MemWalker memory tree: how it was built and where it stands."""
    id: int
    doc_id: str
    memory_id: int | None  # the gist memory whose pages are its leaves, if any
    origin: str  # "segments" or "pages"
    engine: str
    engine_label: str
    segment_tokens: int
    max_children: int
    settings_key: str
    status: str
    run_id: int | None

    @classmethod
    def from_row(cls, row: dict) -> "Tree":
        return cls(id=row["id"], doc_id=row["doc_id"], memory_id=row["memory_id"], origin=row["origin"],
                   engine=row["engine"], engine_label=row["engine_label"] or "",
                   segment_tokens=row["segment_tokens"] or 0, max_children=row["max_children"],
                   settings_key=row["settings_key"], status=row["status"], run_id=row["run_id"])


@dataclass(frozen=True)
class TreeNode:
    id: int  # leaves are 0..n-1 in text order, then each level left to right; the root is last
    level: int  # 1 = leaf (the paper's l=1); the root has the highest level
    index: int  # position within its level
    children: tuple[int, ...]
    parent: int | None
    start: int  # first paragraph covered
    end: int  # one past the last paragraph covered
    summary: str
    summary_by: str  # the trace outcome that made the summary (model, re-asked, fallback, offline, ...)
    text: str = ""  # leaves: the raw segment
    tokens: int = 0  # leaves: tokens of the raw segment; parents: of all the leaves below
    summary_tokens: int = 0

    @property
    def is_leaf(self) -> bool:
        return not self.children

    @classmethod
    def from_row(cls, row: dict) -> "TreeNode":
        return cls(id=row["node"], level=row["level"], index=row["idx"], children=tuple(loads(row["children"], [])),
                   parent=row["parent"], start=row["start"], end=row["end"], summary=row["summary"] or "",
                   summary_by=row["summary_by"] or "", text=row["text"] or "", tokens=row["tokens"] or 0,
                   summary_tokens=row["summary_tokens"] or 0)


@dataclass(frozen=True)
class Run:
    """A build, tree, question or evaluation: what it was asked to do, and how it ended."""
    id: int
    kind: str  # "build", "tree", "ask" or "eval"
    doc_id: str | None
    memory_id: int | None
    method: str
    engine: str
    engine_label: str
    model: str | None  # the model's name (None: the offline engine)
    question: str
    options: tuple[str, ...]
    params: dict
    status: str
    result: Any  # what it returned, as stored (JSON)
    error: str
    started_at: str
    finished_at: str | None
    seconds: float | None
    traceback: str | None
    ask_group: str | None  # the comparison (one question, several methods) it belongs to

    @classmethod
    def from_row(cls, row: dict) -> "Run":
        return cls(id=row["id"], kind=row["kind"], doc_id=row["doc_id"], memory_id=row["memory_id"],
                   method=row["method"] or "", engine=row["engine"] or "", engine_label=row["engine_label"] or "",
                   model=row["model"], question=row["question"] or "",
                   options=tuple(loads(row["options"], [])), params=loads(row["params"], {}),
                   status=row["status"], result=loads(row["result"]), error=row["error"] or "",
                   started_at=row["started_at"], finished_at=row["finished_at"], seconds=row["seconds"],
                   traceback=row.get("traceback"), ask_group=row.get("ask_group"))


@dataclass(frozen=True)
class RunListing:
    """A run as lists show it. In a page of the Runs list, an evaluation says how many results it
    holds, and a comparison (runs sharing an ``ask_group``) is one row naming all its runs."""
    id: int
    kind: str
    doc_id: str | None
    title: str  # the document's ("" when it is not stored)
    method: str
    engine: str
    engine_label: str
    model: str | None  # the model's name (None: the offline engine)
    question: str
    status: str
    started_at: str
    seconds: float | None
    memory_id: int | None
    results: int | None = None  # an evaluation's results
    group_ids: tuple[int, ...] = ()  # a comparison's runs, in order
    group_methods: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: dict) -> "RunListing":
        return cls(id=row["id"], kind=row["kind"], doc_id=row["doc_id"], title=row["title"] or "",
                   method=row["method"] or "", engine=row["engine"] or "", engine_label=row["engine_label"] or "",
                   model=row["model"], question=row["question"] or "", status=row["status"],
                   started_at=row["started_at"], seconds=row["seconds"], memory_id=row["memory_id"],
                   results=row.get("results"),
                   group_ids=tuple(int(i) for i in (row.get("group_ids") or "").split(",") if i),
                   group_methods=tuple(m for m in (row.get("group_methods") or "").split(",") if m))


@dataclass(frozen=True)
class EvalQuestionRun:
    """A question run an evaluation made, with the result it gave."""
    id: int
    kind: str
    doc_id: str
    title: str
    method: str
    question: str
    status: str
    seconds: float | None
    result_id: int
    run_index: int

    @classmethod
    def from_row(cls, row: dict) -> "EvalQuestionRun":
        return cls(id=row["id"], kind=row["kind"], doc_id=row["doc_id"], title=row["title"] or "",
                   method=row["method"] or "", question=row["question"] or "", status=row["status"],
                   seconds=row["seconds"],
                   result_id=row["result_id"], run_index=row["run_index"])


@dataclass(frozen=True)
class Step:
    """One recorded step of a run, with its trace (prompts' call ids, replies, parse results)."""
    id: int
    run_id: int
    seq: int
    step: str
    outcome: str
    page: int | None
    trace: StepTrace
    seconds: float
    created_at: str

    @classmethod
    def from_row(cls, row: dict) -> "Step":
        return cls(id=row["id"], run_id=row["run_id"], seq=row["seq"], step=row["step"], outcome=row["outcome"],
                   page=row["page"], trace=StepTrace.from_dict(loads(row["data"], {"step": row["step"],
                                                                                    "outcome": row["outcome"]})),
                   seconds=row["seconds"] or 0.0, created_at=row["created_at"])


@dataclass(frozen=True)
class LlmCall:
    """One logged model call (the API key is never stored)."""
    id: int
    run_id: int | None = None
    doc_id: str | None = None
    step: str = ""
    model: str = ""
    backend: dict = field(default_factory=dict)  # the server's base URL and kind
    prompt: str = ""
    reply: str | None = None
    params: dict = field(default_factory=dict)
    cache_key: str = ""
    cached: bool = False  # replayed from the log
    duration_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int | None = None
    retry_errors: tuple[str, ...] = ()
    error: str = ""
    rejected: bool = False
    started_at: str | None = None  # when it was sent (calls logged before this was recorded have none)
    created_at: str | None = None  # when it was logged

    @classmethod
    def from_row(cls, row: dict) -> "LlmCall":
        return cls(id=row["id"], run_id=row["run_id"], doc_id=row["doc_id"], step=row["step"] or "",
                   model=row["model"] or "", backend=loads(row["backend"], {}), prompt=row["prompt"] or "",
                   reply=row["reply"], params=loads(row["params"], {}), cache_key=row["cache_key"] or "",
                   cached=bool(row["cached"]), duration_ms=row["duration_ms"] or 0,
                   input_tokens=row["input_tokens"] or 0, output_tokens=row["output_tokens"] or 0,
                   attempts=row["attempts"], retry_errors=tuple(map(str, loads(row["retry_errors"], []))),
                   error=row["error"] or "", rejected=bool(row.get("rejected")), started_at=row.get("started_at"),
                   created_at=row["created_at"])


@dataclass(frozen=True)
class EvalResult:
    """One question answered by one method in one run of an evaluation, and how it scored."""
    id: int
    eval_id: int
    run_index: int
    doc_id: str
    question_id: str
    method: str
    ask_run_id: int | None
    question: str
    options: tuple[str, ...]
    gold: str | None
    references: tuple[str, ...]
    answer: str | None
    choice: str | None
    correct: int | None
    rating: str | None
    rouge1: float | None
    rouge2: float | None
    rougeL: float | None
    compression_rate: float | None
    lookups: int | None
    pages_looked_up: tuple[int, ...]
    response_words: int | None
    words_consumed: int | None
    llm_calls: int | None
    fallbacks: int | None
    answered: int | None
    error: str | None
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: dict) -> "EvalResult":
        return cls(id=row["id"], eval_id=row["eval_id"], run_index=row["run_index"], doc_id=row["doc_id"],
                   question_id=row["question_id"], method=row["method"], ask_run_id=row["ask_run_id"],
                   question=row["question"] or "", options=tuple(loads(row["options"], [])), gold=row["gold"],
                   references=tuple(loads(row["references_"], [])), answer=row["answer"], choice=row["choice"],
                   correct=row["correct"], rating=row["rating"], rouge1=row["rouge1"], rouge2=row["rouge2"],
                   rougeL=row["rougeL"], compression_rate=row["compression_rate"], lookups=row["lookups"],
                   pages_looked_up=tuple(loads(row["pages_looked_up"], [])), response_words=row["response_words"],
                   words_consumed=row["words_consumed"], llm_calls=row["llm_calls"], fallbacks=row["fallbacks"],
                   answered=row["answered"], error=row["error"], meta=loads(row["meta"], {}))


@dataclass(frozen=True)
class Label:
    """An annotator's failure category (and note) for one evaluation result."""
    id: int
    result_id: int
    annotator: str
    category: str
    note: str
    updated_at: str

    @classmethod
    def from_row(cls, row: dict) -> "Label":
        return cls(id=row["id"], result_id=row["result_id"], annotator=row["annotator"], category=row["category"],
                   note=row["note"] or "", updated_at=row["updated_at"])


@dataclass(frozen=True)
class MemoryRead:
    """A gist memory an evaluation's answers read with one method, and what fallbacks made in it."""
    method: str
    memory_id: int
    doc_id: str
    pages: int
    fallback_breaks: int
    fallback_gists: int

    @classmethod
    def from_row(cls, row: dict) -> "MemoryRead":
        return cls(method=row["method"], memory_id=row["memory_id"], doc_id=row["doc_id"], pages=row["pages"],
                   fallback_breaks=row["fallback_breaks"], fallback_gists=row["fallback_gists"])
