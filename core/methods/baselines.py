"""The papers' baselines: retrieval over ReadAgent's pages, and truncated raw text.

* ``bm25`` and ``embedding`` (ReadAgent paper, Sec. 4.2 "Retrieval-Augmented Generation"):
  the document's own pages (those of its gist memory, so every method shares one
  pagination) are ranked by relevance to the question and its options, and the top-k
  pages, raw, are the context of the same answer prompt every method uses. BM25 is
  Okapi BM25 (``bm25s``); the neural variant ranks by the dot product of the question's
  and each page's embedding from an OpenAI-compatible embeddings endpoint.
* ``first-words`` and ``last-words`` (ReadAgent Table 3, "First/Last 6k words"): the first
  or last N words of the document as the context.

The pages shown are kept in page order in the context (the story reads in order);
``pages_looked_up`` lists them in rank order.
"""
from __future__ import annotations

import os
import time
from typing import Sequence

from dataclasses import dataclass

from core.config import DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_ENV
from core.errors import SettingError
from core.llm.window import cut_to_tokens, describe
from core.methods.answer import answer_question, answer_room, fit_context
from core.methods.base import Details, Method, MethodOutput, Param, Question, holding
from core.methods.readagent.memory import GistMemory
from core.text import lexical
from core.text.documents import Document, count_words
from core.text.tokens import count_tokens
from core.trace import MODEL, OFFLINE, RULE, Attempt, StepTrace

DEFAULT_TOP_K = 5
DEFAULT_WORDS = 6000  # the ReadAgent paper's Table 3 setting (first/last 6,000 words)


@dataclass(frozen=True)
class PageScore:
    page: int
    score: float


@dataclass
class RetrievalDetails(Details):
    """Which pages a retrieval ranked first, and by what."""
    kind = "retrieval"
    retrieval: str = ""  # how pages were ranked
    top_k: int = DEFAULT_TOP_K
    pages: int = 0  # pages in the memory's pagination
    scores: list[PageScore] = holding(PageScore, default_factory=list)  # the top k, best first
    memory_id: int | None = None
    embedding_model: str = ""

    def summary(self) -> str:
        return f"pages retrieved, best first: {[s.page for s in self.scores]}"


@dataclass
class TruncationDetails(Details):
    """How much raw text a truncation baseline kept."""
    kind = "truncation"
    words: int = DEFAULT_WORDS
    truncated_from: str = "first"

    def summary(self) -> str:
        return f"the {self.truncated_from} {self.words:,} words"


def _check_top_k(top_k: int) -> None:
    if top_k < 1:
        raise SettingError("top_k", top_k, "at least 1")


def _pages_context(memory: GistMemory, pages: Sequence[int]) -> tuple[str, int]:
    """The chosen pages, raw, in page order as '<Page i>' blocks; and their words."""
    chosen = [memory.pages[i] for i in sorted(pages)]
    return "\n".join(f"<Page {p.index}>\n{p.text}" for p in chosen), sum(p.words for p in chosen)


def _retrieved(engine, memory: GistMemory, question: Question, ranked: list[tuple[int, float]], top_k: int,
               trace: StepTrace, embedding_model: str = "") -> MethodOutput:
    pages = [i for i, _ in ranked[:top_k]]
    room = answer_room(engine, question)
    dropped: list[int] = []
    while room is not None and len(pages) > 1 and count_tokens(_pages_context(memory, pages)[0], engine.model) > room:
        dropped.insert(0, pages.pop())  # the lowest-ranked page goes first
    context, words = _pages_context(memory, pages)
    context, cut = fit_context(engine, context, question, what="the page")
    trace.value = pages
    trace.detail.update(top_k=top_k, context_words=words,
                        scores={str(i): round(s, 4) for i, s in ranked})
    if dropped or cut:
        words = count_words(context)
        trace.detail.update(context_words=words, not_shown=dropped, fitted="; ".join(
            ([f"page{'s' if len(dropped) > 1 else ''} {dropped} left out: with them the answer prompt would not "
              f"fit in the {describe(engine.context_tokens)}"] if dropped else []) + ([cut["fitted"]] if cut else [])))
    answer = answer_question(engine, context, question)
    details = RetrievalDetails(retrieval=trace.detail["method"], top_k=top_k, pages=len(memory.pages),
                               scores=[PageScore(i, round(s, 4)) for i, s in ranked[:top_k]],
                               memory_id=memory.memory_id, embedding_model=embedding_model)
    return MethodOutput(answer.value, context, words, memory.words, pages_looked_up=pages, expanded=sorted(pages),
                        steps=[trace, answer.trace], details=details)


def bm25_rank(memory: GistMemory, question: Question) -> list[tuple[int, float]]:
    """Pages best first by Okapi BM25 of the question and options against the raw page text."""
    return lexical.rank(question.with_options(), [p.text for p in memory.pages])


def bm25_top_k(engine, memory: GistMemory, question: Question, top_k: int = DEFAULT_TOP_K) -> MethodOutput:
    """The top-k pages by BM25, raw, then the answer."""
    _check_top_k(top_k)
    started = time.perf_counter()
    ranked = bm25_rank(memory, question)
    trace = StepTrace(step="retrieve", outcome=OFFLINE, detail={
        "method": "Okapi BM25 (bm25s) of the question and options against each page's raw text; no LLM"})
    trace.seconds = round(time.perf_counter() - started, 4)
    return _retrieved(engine, memory, question, ranked, top_k, trace)


def embedding_model(name: str | None) -> str:
    return name or os.environ.get(EMBEDDING_MODEL_ENV) or DEFAULT_EMBEDDING_MODEL


def embedding_top_k(engine, memory: GistMemory, question: Question, top_k: int = DEFAULT_TOP_K, model: str = "") -> MethodOutput:
    """The top-k pages by the dot product of question and page embeddings, raw, then the answer."""
    _check_top_k(top_k)
    model = embedding_model(model)
    started = time.perf_counter()
    made = engine.embed([question.with_options(), *(p.text for p in memory.pages)], model=model)
    query, *pages = made.vectors
    scores = [sum(q * v for q, v in zip(query, page)) for page in pages]
    ranked = sorted(enumerate(scores), key=lambda pair: (-pair[1], pair[0]))
    trace = StepTrace(step="retrieve", outcome=MODEL, detail={
        "method": f"dot product of the question's and each page's embedding ({model})",
        "embedding_model": model, "embedded_now": made.made, "from_cache": made.cached},
        attempts=[Attempt(reply=f"{made.made} vectors made, {made.cached} from the cache", call_id=call_id)
                  for call_id in made.call_ids])
    trace.seconds = round(time.perf_counter() - started, 4)
    return _retrieved(engine, memory, question, ranked, top_k, trace, model)


def _words(document: Document, words: int, last: bool) -> tuple[str, int]:
    """The first (or last) ``words`` words, keeping paragraph breaks; a paragraph at the
    edge is cut at a word."""
    if words < 1:
        raise SettingError("words", words, "at least 1")
    paragraphs = list(reversed(document.paragraphs)) if last else list(document.paragraphs)
    kept: list[str] = []
    total = 0
    for p in paragraphs:
        if total >= words:
            break
        tokens = p.text.split()
        room = words - total
        if len(tokens) > room:
            tokens = tokens[-room:] if last else tokens[:room]
        kept.append(" ".join(tokens) if len(tokens) < len(p.text.split()) else p.text)
        total += len(tokens)
    if last:
        kept.reverse()
    return "\n".join(kept), total


def truncated(engine, document: Document, question: Question, words: int = DEFAULT_WORDS,
              *, last: bool = False) -> MethodOutput:
    """The first or last ``words`` words of the raw text as the context, then the answer."""
    context, used = _words(document, words, last)
    which = "last" if last else "first"
    detail = {"words": words}
    room = answer_room(engine, question)
    if room is not None and count_tokens(context, engine.model) > room:
        context = cut_to_tokens(context, room, from_end=last, model=engine.model)
        detail["fitted"] = (f"{count_words(context):,} words instead of {used:,}: no more fit in the "
                            f"{describe(engine.context_tokens)}")
        used = count_words(context)
    trace = StepTrace(step="truncate", outcome=RULE, value=used, detail={
        "reason": f"the {which} {used:,} of {document.words:,} words, as the context", **detail,
        "context_words": used})
    answer = answer_question(engine, context, question)
    return MethodOutput(answer.value, context, used, document.words, steps=[trace, answer.trace],
                        details=TruncationDetails(words, which))


_TOP_K = Param("top_k", int, DEFAULT_TOP_K, "pages retrieved for the answer", minimum=1)
_WORDS = Param("words", int, DEFAULT_WORDS, "words of raw text in the context", minimum=1)

METHODS = [
    Method("bm25", "BM25 top-k",
           "Retrieve the k pages of the gist memory's pagination that best match the question by Okapi BM25, and "
           "answer from them raw (ReadAgent paper, Sec. 4.2 retrieval baseline).",
           True, lambda i, p: bm25_top_k(i.engine, i.memory, i.question, p["top_k"]), (_TOP_K,), RetrievalDetails),
    Method("embedding", "Embedding top-k",
           "Retrieve the k pages whose embeddings have the largest dot product with the question's (an "
           "OpenAI-compatible embeddings endpoint), and answer from them raw (ReadAgent paper, Sec. 4.2).",
           True, lambda i, p: embedding_top_k(i.engine, i.memory, i.question, p["top_k"], p["embedding_model"]),
           (_TOP_K, Param("embedding_model", str, "", "the server's embedding model (if not given: "
                                                       f"${EMBEDDING_MODEL_ENV}, else {DEFAULT_EMBEDDING_MODEL})")),
           RetrievalDetails),
    Method("first-words", "First N words", "Answer from the first N words of the text (ReadAgent Table 3).",
           False, lambda i, p: truncated(i.engine, i.document, i.question, p["words"]), (_WORDS,), TruncationDetails),
    Method("last-words", "Last N words", "Answer from the last N words of the text (ReadAgent Table 3).",
           False, lambda i, p: truncated(i.engine, i.document, i.question, p["words"], last=True), (_WORDS,),
           TruncationDetails),
]
