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

from core import lexical
from core.config import DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_ENV
from core.documents import Document
from core.errors import GistError
from core.presets import Preset
from core.readagent import Engine, GistMemory, MethodOutput, Question, _answer
from core.trace import MODEL, OFFLINE, RULE, Attempt, StepTrace

DEFAULT_TOP_K = 5
DEFAULT_WORDS = 2000


def _check_top_k(top_k: int) -> None:
    if top_k < 1:
        raise GistError(f"--top-k must be at least 1 (got {top_k}).")


def _pages_context(memory: GistMemory, pages: Sequence[int]) -> tuple[str, int]:
    """The chosen pages, raw, in page order as '<Page i>' blocks; and their words."""
    chosen = [memory.pages[i] for i in sorted(pages)]
    return "\n".join(f"<Page {p.index}>\n{p.text}" for p in chosen), sum(p.words for p in chosen)


def _retrieved(engine: Engine, memory: GistMemory, question: Question, preset: Preset, ranked: list[tuple[int, float]],
               top_k: int, trace: StepTrace) -> MethodOutput:
    pages = [i for i, _ in ranked[:top_k]]
    context, words = _pages_context(memory, pages)
    trace.value = pages
    trace.detail.update(top_k=top_k, context_words=words,
                        scores={str(i): round(s, 4) for i, s in ranked})
    answer = _answer(engine, context, question, preset)
    extra = {"retrieval": trace.detail["method"], "top_k": top_k, "pages": len(memory.pages),
             "scores": [{"page": i, "score": round(s, 4)} for i, s in ranked[:top_k]],
             "memory_id": memory.memory_id}
    return MethodOutput(answer.value, context, words, memory.words, pages_looked_up=pages, expanded=sorted(pages),
                        steps=[trace, answer.trace], extra=extra)


def bm25_rank(memory: GistMemory, question: Question) -> list[tuple[int, float]]:
    """Pages best first by Okapi BM25 of the question and options against the raw page text."""
    return lexical.rank(question.with_options(), [p.text for p in memory.pages])


def bm25_top_k(engine: Engine, memory: GistMemory, question: Question, preset: Preset,
               top_k: int = DEFAULT_TOP_K) -> MethodOutput:
    """The top-k pages by BM25, raw, then the answer."""
    _check_top_k(top_k)
    started = time.perf_counter()
    ranked = bm25_rank(memory, question)
    trace = StepTrace(step="retrieve", outcome=OFFLINE, detail={
        "method": "Okapi BM25 (bm25s) of the question and options against each page's raw text; no LLM"})
    trace.seconds = round(time.perf_counter() - started, 4)
    return _retrieved(engine, memory, question, preset, ranked, top_k, trace)


def embedding_model(name: str | None) -> str:
    return name or os.environ.get(EMBEDDING_MODEL_ENV) or DEFAULT_EMBEDDING_MODEL


def embedding_top_k(engine: Engine, memory: GistMemory, question: Question, preset: Preset,
                    top_k: int = DEFAULT_TOP_K, model: str = "") -> MethodOutput:
    """The top-k pages by the dot product of question and page embeddings, raw, then the answer."""
    _check_top_k(top_k)
    if not engine.is_llm:
        raise GistError("The embedding baseline needs an OpenAI-compatible server that makes embeddings: use "
                        "--engine openai --model M [--base-url URL] (and --embedding-model or "
                        f"{EMBEDDING_MODEL_ENV}), or the bm25 baseline, which works offline.")
    model = embedding_model(model)
    started = time.perf_counter()
    made = engine.llm.embed([question.with_options(), *(p.text for p in memory.pages)], model=model)
    query, *pages = made.vectors
    scores = [sum(q * v for q, v in zip(query, page)) for page in pages]
    ranked = sorted(enumerate(scores), key=lambda pair: (-pair[1], pair[0]))
    trace = StepTrace(step="retrieve", outcome=MODEL, detail={
        "method": f"dot product of the question's and each page's embedding ({model})",
        "embedding_model": model, "embedded_now": made.made, "from_cache": made.cached},
        attempts=[Attempt(reply=f"{made.made} vectors made, {made.cached} from the cache", call_id=call_id)
                  for call_id in made.call_ids])
    trace.seconds = round(time.perf_counter() - started, 4)
    output = _retrieved(engine, memory, question, preset, ranked, top_k, trace)
    output.extra["embedding_model"] = model
    return output


def _words(document: Document, words: int, last: bool) -> tuple[str, int]:
    """The first (or last) ``words`` words, keeping paragraph breaks; a paragraph at the
    edge is cut at a word."""
    if words < 1:
        raise GistError(f"--words must be at least 1 (got {words}).")
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


def truncated(engine: Engine, document: Document, question: Question, preset: Preset, words: int = DEFAULT_WORDS,
              *, last: bool = False) -> MethodOutput:
    """The first or last ``words`` words of the raw text as the context, then the answer."""
    context, used = _words(document, words, last)
    which = "last" if last else "first"
    trace = StepTrace(step="truncate", outcome=RULE, value=used, detail={
        "reason": f"the {which} {used:,} of {document.words:,} words, as the context", "words": words,
        "context_words": used})
    answer = _answer(engine, context, question, preset)
    return MethodOutput(answer.value, context, used, document.words, steps=[trace, answer.trace],
                        extra={"words": words, "truncated_from": which})


def _register() -> None:
    from core.methods import Method, Param, register

    top_k = Param("top_k", int, DEFAULT_TOP_K, "pages retrieved for the answer")
    register(Method(
        "bm25", "BM25 top-k",
        "Retrieve the k pages of the gist memory's pagination that best match the question by Okapi BM25, and "
        "answer from them raw (ReadAgent paper, Sec. 4.2 retrieval baseline).",
        True, lambda i, p: bm25_top_k(i.engine, i.memory, i.question, i.preset, p["top_k"]), (top_k,),
    ))
    register(Method(
        "embedding", "Embedding top-k",
        "Retrieve the k pages whose embeddings have the largest dot product with the question's (an "
        "OpenAI-compatible embeddings endpoint), and answer from them raw (ReadAgent paper, Sec. 4.2).",
        True, lambda i, p: embedding_top_k(i.engine, i.memory, i.question, i.preset, p["top_k"],
                                           p["embedding_model"]),
        (top_k, Param("embedding_model", str, "",
                      f"the server's embedding model (if not given: ${EMBEDDING_MODEL_ENV}, else {DEFAULT_EMBEDDING_MODEL})")),
    ))
    words = Param("words", int, DEFAULT_WORDS, "words of raw text in the context")
    register(Method(
        "first-words", "First N words", "Answer from the first N words of the text (ReadAgent Table 3).",
        False, lambda i, p: truncated(i.engine, i.document, i.question, i.preset, p["words"]), (words,),
    ))
    register(Method(
        "last-words", "Last N words", "Answer from the last N words of the text (ReadAgent Table 3).",
        False, lambda i, p: truncated(i.engine, i.document, i.question, i.preset, p["words"], last=True), (words,),
    ))


_register()
