"""ReadAgent's decisions, each stated once: its prompt, its parser, its fallback, and the
offline engine's rule for it (see ``core/decisions.py`` for how a step is decided).

| step | prompt (``core/prompts.py``) | fallback |
| --- | --- | --- |
| pause point | the preset's pagination prompt | the largest page, as the notebook does |
| gist | "Please shorten the following passage" | an extractive gist |
| parallel look-up (ReadAgent-P) | "I want to look up Page [...]" | no look-up: answer from the gists |
| sequential look-up (ReadAgent-S) | "Page N" or "STOP" | STOP |
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from core import prompts
from core.decisions import Step
from core.llm.window import input_budget
from core.methods.base import Question
from core.methods.readagent import rules
from core.methods.readagent.memory import GistMemory
from core.methods.readagent.pagination import Window, pagination_prompt
from core.methods.readagent.parsers import (STOP, parse_gist, parse_next_page, parse_page_list,
                                            parse_pause_point)
from core.methods.readagent.presets import Preset
from core.text import lexical
from core.text.tokens import count_tokens
from core.trace import FALLBACK, Decision


# --- pause points -------------------------------------------------------------------------------

@dataclass(frozen=True)
class PauseInput:
    window: Window
    preset: Preset


def _because(reply: str) -> str:
    """The model's explanation after the label ('Because ...'), for the trace and the UI."""
    match = re.search(r"\bbecause\b(.*)", reply, re.I | re.S)
    text = (match.group(0) if match else re.sub(r"^.*?[>⟩]\s*", "", reply, count=1, flags=re.S)).strip()
    return " ".join(text.split())[:600]


def _keep_reason(decision: Decision, i: PauseInput) -> None:
    if decision.trace.attempts and decision.trace.outcome != FALLBACK:
        decision.trace.detail["reason"] = _because(decision.trace.attempts[-1].reply)


PAUSE_TOKENS = 64  # "Break point: <57>" and a sentence of reason
GIST_MIN_TOKENS = 64
LOOKUP_TOKENS = 100  # "I want to look up Page [...]" and a short reason; "Page N" or "STOP"


def pause_prompt_tokens(window: int | None) -> int | None:
    """How long a pagination prompt may be in the model's ``window`` (None: no limit)."""
    return None if window is None else input_budget(window, PAUSE_TOKENS)


def _pause_detail(i: PauseInput) -> dict:
    detail = {"labels": list(i.window.labels), "window": [i.window.start, i.window.end]}
    if i.window.fitted:
        detail["fitted"] = i.window.fitted
    return detail


PAUSE_POINT = Step(
    name="pagination",
    prompt=lambda i: pagination_prompt(i.window, i.preset),
    parse=lambda reply, i: parse_pause_point(reply, i.window.labels),
    fallback=lambda i, attempts: (i.window.end, f"no usable label in {len(attempts)} replies; broke at the "
                                                f"largest page <{i.window.end}> as the notebook does"),
    rule=lambda i: rules.pause_point(i.window),
    detail=_pause_detail,
    finish=_keep_reason,
    max_tokens=lambda i: PAUSE_TOKENS,
    min_tokens=16,
)


# --- gists -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GistInput:
    text: str
    words: int
    preset: Preset
    condition: str = ""  # Conditional ReadAgent (App. G.1): the question known while gisting


def _gist_prompt(i: GistInput) -> str:
    if i.condition:
        return prompts.GIST_CONDITIONAL.format(question=i.condition, page=i.text)
    return i.preset.gist_prompt.format(page=i.text)


def _gist_rule(i: GistInput) -> tuple[str, dict]:
    return rules.conditional_gist(i.text, i.condition) if i.condition else rules.gist(i.text)


DEFAULT_GIST_TOKENS = 512


def gist_tokens(i: GistInput) -> int:
    """A gist's reply budget: about its page's tokens (a gist is shorter than its page), never
    more than the preset's cap (128 for movie scripts) or 512."""
    cap = i.preset.gist_prompt.params.get("max_tokens") or DEFAULT_GIST_TOKENS
    return min(cap, max(GIST_MIN_TOKENS, count_tokens(i.text)))


GIST = Step(
    name="gist",
    prompt=_gist_prompt,
    parse=lambda reply, i: parse_gist(reply, i.words, i.text),
    fallback=lambda i, attempts: (lexical.shorten(i.text), f"no usable gist in {len(attempts)} replies; used an "
                                                           "extractive gist (offline, no LLM)"),
    rule=_gist_rule,
    detail=lambda i: {"conditional": i.condition} if i.condition else {},
    max_tokens=gist_tokens,
    min_tokens=32,
    too_long=lambda i: "The page is longer than this window can hold; a memory built with this window has pages "
                       "that fit it.",
)


# --- look-ups ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LookupInput:
    memory: GistMemory
    question: Question
    preset: Preset
    max_pages: int = 0  # ReadAgent-P: the most pages to ask for
    read: tuple[int, ...] = ()  # ReadAgent-S: pages read so far, in order


def _lookup_prompt(i: LookupInput) -> str:
    template = prompts.LOOKUP_PARALLEL_RANKED if i.preset.ranked_lookup else prompts.LOOKUP_PARALLEL
    return template.format(
        a_doc_kind=i.preset.a_doc_kind, doc_kind=i.preset.doc_kind,
        question_kind="a multiple choice question" if i.question.is_choice else "a question",
        max_pages=i.max_pages, gist_memory=i.memory.context(), question=i.question.with_options())


LOOKUP_PARALLEL = Step(
    name="lookup",
    prompt=_lookup_prompt,
    parse=lambda reply, i: parse_page_list(reply, len(i.memory.pages), i.max_pages),
    fallback=lambda i, attempts: ([], f"no usable page list in {len(attempts)} replies; answered from the gists "
                                      "alone"),
    rule=lambda i: rules.lookup_parallel(i.memory, i.question, i.max_pages),
    detail=lambda i: {"max_pages": i.max_pages},
    max_tokens=lambda i: LOOKUP_TOKENS,
    min_tokens=32,
    too_long=lambda i: _memory_too_long(i),
)


def _memory_too_long(i: LookupInput) -> str:
    return (f"ReadAgent shows the whole gist memory ({len(i.memory.pages)} pages, {i.memory.gist_words:,} words of "
            "gists) with the question in one prompt, and this one does not fit; build the memory for this window "
            "(it is then shortened by merging pages, the paper's App. I, and gisting again, G.3). A method that does not show the whole memory (bm25, "
            "memwalker, segmentplus) works in this window.")


def _read_list(read: Sequence[int]) -> str:
    return ", ".join(str(p) for p in read) or "None"


LOOKUP_NEXT = Step(
    name="lookup-sequential",
    prompt=lambda i: prompts.LOOKUP_SEQUENTIAL.format(
        a_doc_kind=i.preset.a_doc_kind, doc_kind=i.preset.doc_kind, context=i.memory.context(i.read),
        already_read=_read_list(i.read), question=i.question.with_options()),
    parse=lambda reply, i: parse_next_page(reply, len(i.memory.pages), i.read),
    fallback=lambda i, attempts: (STOP, f"no usable 'Page N' or 'STOP' in {len(attempts)} replies; stopped "
                                        "looking up"),
    rule=lambda i: rules.lookup_next(i.memory, i.question, i.read),
    detail=lambda i: {"already_read": list(i.read)},
    max_tokens=lambda i: LOOKUP_TOKENS,
    min_tokens=32,
    too_long=lambda i: _memory_too_long(i),
)
