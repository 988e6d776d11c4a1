"""ReadAgent (Lee et al., ICML 2024): episode pagination, gist memory, look-up, answer.

This module holds what does not depend on who makes the decisions: the
pagination window, the gist memory and its context text, and the look-up
loops. The decisions come from an engine (``core/llm_engine.py`` asks a model,
``core/offline.py`` uses lexical rules), which returns a value and its trace.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Protocol, Sequence

from core.documents import Paragraph, count_words
from core.parsers import STOP
from core.presets import Preset
from core.prompts import format_options
from core.trace import RULE, Decision, StepTrace


# --- values ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Page:
    index: int
    start: int  # first paragraph
    end: int  # one past the last paragraph
    text: str
    words: int
    gist: str = ""
    gist_words: int = 0
    break_by: str = ""  # how the pause point ending this page was chosen (a trace outcome)
    break_reason: str = ""
    gist_by: str = ""


@dataclass(frozen=True)
class GistMemory:
    doc_id: str
    title: str
    words: int  # words in the whole document
    pages: tuple[Page, ...]
    memory_id: int | None = None
    engine: str = ""
    engine_label: str = ""
    preset: str = ""
    settings: dict = field(default_factory=dict, compare=False)

    @property
    def gist_words(self) -> int:
        return sum(p.gist_words for p in self.pages)

    @property
    def compression_rate(self) -> float:
        return compression_rate(self.gist_words, self.words)

    def context(self, expanded: Iterable[int] = ()) -> str:
        """The memory as the model sees it: '<Page i>' blocks in page order, with the
        pages in ``expanded`` replaced in place by their raw text."""
        expanded = set(expanded)
        return "\n".join(f"<Page {p.index}>\n{p.text if p.index in expanded else p.gist}" for p in self.pages)

    def context_words(self, expanded: Iterable[int] = ()) -> int:
        """Words of gists and raw pages in the context (the paper's in-context text)."""
        expanded = set(expanded)
        return sum(p.words if p.index in expanded else p.gist_words for p in self.pages)


@dataclass(frozen=True)
class Question:
    text: str
    options: tuple[str, ...] = ()

    @property
    def is_choice(self) -> bool:
        return bool(self.options)

    def with_options(self) -> str:
        """The question as look-up prompts show it: with its options when multiple choice."""
        return f"{self.text}\n{format_options(self.options)}" if self.options else self.text


@dataclass(frozen=True)
class Answer:
    text: str  # the model's reply (or the offline engine's answer)
    choice: str | None = None  # option letter, None if free-form or unparseable


def compression_rate(in_context_words: int, document_words: int) -> float:
    """CR = 100 x (1 - in-context words / full-text words), the paper's Sec. 4 definition."""
    if document_words <= 0:
        return 0.0
    return round(100.0 * (1.0 - in_context_words / document_words), 2)


# --- the pagination window ------------------------------------------------------------------

LOOKAHEAD_WORDS = 150

@dataclass(frozen=True)
class Window:
    """One pagination step: paragraphs ``start``..``end-1`` with labels ``<j>`` meaning
    "break before paragraph j" offered once the page would have ``min_words``."""
    start: int
    end: int
    labels: tuple[int, ...]
    paragraphs: tuple[str, ...]  # texts of paragraphs start..end-1
    headings: tuple[bool, ...]
    preceding: str  # '...\n' + tail of the previous page, or ''
    following: str  # next paragraph + '\n...', or ''
    words: int
    # Paragraphs after the window (within the section, about LOOKAHEAD_WORDS): not shown to
    # a model, but the offline engine measures cohesion across the last label with them.
    lookahead: tuple[str, ...] = ()

    def passage(self) -> str:
        lines = [self.paragraphs[0]]
        for offset, text in enumerate(self.paragraphs[1:], start=1):
            j = self.start + offset
            if j in self.labels:
                lines.append(f"<{j}>")
            lines.append(text)
        lines.append(f"<{self.end}>")
        return "\n".join(lines)

    def words_before(self, label: int) -> int:
        return sum(count_words(t) for t in self.paragraphs[: label - self.start])


def make_window(paragraphs: Sequence[Paragraph], start: int, section_end: int, preset: Preset,
                previous_page: Sequence[str] = ()) -> Window:
    """The notebook's window: add paragraphs while the count is below ``max_words``;
    offer the label before paragraph j only once paragraphs start..j-1 hold ``min_words``
    (so every page chosen from a label has at least ``min_words``), plus a final label."""
    count = paragraphs[start].words
    j = start + 1
    labels = []
    while count < preset.max_words and j < section_end:
        if count >= preset.min_words:
            labels.append(j)
        count += paragraphs[j].words
        j += 1
    labels.append(j)
    preceding = ""
    if previous_page:
        kept: list[str] = []
        budget = preset.preceding_words
        for text in reversed(previous_page):
            if budget is not None and kept and sum(count_words(t) for t in kept) + count_words(text) > budget:
                break
            kept.insert(0, text)
        preceding = "...\n" + "\n".join(kept)
    following = f"{paragraphs[j].text}\n..." if j < section_end else ""
    lookahead, k = [], j
    while k < section_end and sum(count_words(t) for t in lookahead) < LOOKAHEAD_WORDS:
        lookahead.append(paragraphs[k].text)
        k += 1
    return Window(start=start, end=j, labels=tuple(labels),
                  paragraphs=tuple(p.text for p in paragraphs[start:j]),
                  headings=tuple(p.heading for p in paragraphs[start:j]),
                  preceding=preceding, following=following, words=count, lookahead=tuple(lookahead))


def forced_break(window: Window, section_end: int, preset: Preset) -> Decision[int] | None:
    """When there is nothing to choose, the page ends without asking: the rest of a
    section that is short (under ``short_tail_words``) or offers no label but the last,
    or a window whose only label is the last (one paragraph longer than max_words)."""
    if window.end == section_end and (window.words < preset.short_tail_words or len(window.labels) == 1):
        why = f"the rest of the section ({window.words} words) becomes the last page without asking"
    elif len(window.labels) == 1:
        why = f"only one possible break (<{window.end}>) in this window"
    else:
        return None
    return Decision(window.end, StepTrace(step="pagination", outcome=RULE, value=window.end,
                                          detail={"labels": list(window.labels), "reason": why}))


# --- engines --------------------------------------------------------------------------------

class Engine(Protocol):
    """Who makes ReadAgent's decisions. Every method returns a value with its trace."""
    key: str  # identifies the decision maker in stored memories ("offline", "openai:model@url")
    label: str  # how the UI and CLI name it
    is_llm: bool

    def bind(self, *, run_id: int | None, doc_id: str | None) -> "Engine": ...
    def usage(self) -> dict: ...
    def pause_point(self, window: Window, preset: Preset) -> Decision[int]: ...
    def gist(self, page_text: str, page_words: int, preset: Preset) -> Decision[str]: ...
    def lookup_parallel(self, memory: GistMemory, question: Question, max_pages: int,
                        preset: Preset) -> Decision[list[int]]: ...
    def lookup_next(self, memory: GistMemory, question: Question, read: Sequence[int],
                    preset: Preset) -> Decision[int | str]: ...
    def answer(self, context: str, question: Question, preset: Preset) -> Decision[Answer]: ...


# --- look-up and answer ---------------------------------------------------------------------

@dataclass
class MethodOutput:
    """What every question-answering method returns (before it is stored as a run)."""
    answer: Answer
    context: str  # the context of the final answer step, exactly as sent
    words_in_context: int  # the longest in-context text over all steps
    document_words: int
    pages_looked_up: list[int] = field(default_factory=list)  # look-up order
    expanded: list[int] = field(default_factory=list)  # pages shown raw in the final context
    steps: list[StepTrace] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # method-specific (e.g. a path, notes)

    @property
    def compression_rate(self) -> float:
        return compression_rate(self.words_in_context, self.document_words)

    @property
    def lookups(self) -> int:
        return len(self.pages_looked_up)


def _answer(engine: Engine, context: str, question: Question, preset: Preset) -> Decision[Answer]:
    decision = engine.answer(context, question, preset)
    decision.trace.detail.setdefault("context_words", count_words(context))
    return decision


def readagent_p(engine: Engine, memory: GistMemory, question: Question, preset: Preset,
                max_pages: int = 5) -> MethodOutput:
    """ReadAgent-P: ask once for up to ``max_pages`` pages, expand them in place, answer."""
    lookup = engine.lookup_parallel(memory, question, max_pages, preset)
    lookup.trace.detail.setdefault("context_words", memory.context_words())
    pages = list(lookup.value)
    expanded = sorted(pages)
    context = memory.context(expanded)
    answer = _answer(engine, context, question, preset)
    return MethodOutput(answer.value, context, max(memory.context_words(), memory.context_words(expanded)),
                        memory.words, pages, expanded, [lookup.trace, answer.trace])


def readagent_s(engine: Engine, memory: GistMemory, question: Question, preset: Preset,
                max_steps: int = 6) -> MethodOutput:
    """ReadAgent-S: ask for one page at a time (seeing those already expanded) until
    STOP or ``max_steps`` pages, then answer."""
    read: list[int] = []
    steps: list[StepTrace] = []
    longest = memory.context_words()
    for _ in range(max_steps):
        step = engine.lookup_next(memory, question, read, preset)
        step.trace.detail.setdefault("context_words", memory.context_words(read))
        steps.append(step.trace)
        if step.value == STOP:
            break
        read.append(int(step.value))
        longest = max(longest, memory.context_words(read))
    else:
        steps[-1].detail["step_cap"] = f"stopped after the maximum of {max_steps} look-ups"
    context = memory.context(read)
    answer = _answer(engine, context, question, preset)
    steps.append(answer.trace)
    return MethodOutput(answer.value, context, longest, memory.words, read, sorted(read), steps)


def gistmem(engine: Engine, memory: GistMemory, question: Question, preset: Preset) -> MethodOutput:
    """GistMem: answer from the gists alone."""
    context = memory.context()
    answer = _answer(engine, context, question, preset)
    return MethodOutput(answer.value, context, memory.context_words(), memory.words, steps=[answer.trace])


def full_text(engine: Engine, paragraphs: Sequence[Paragraph], question: Question, preset: Preset) -> MethodOutput:
    """Full raw content: the whole document in context (compression rate 0)."""
    context = "\n".join(p.text for p in paragraphs)
    words = sum(p.words for p in paragraphs)
    answer = _answer(engine, context, question, preset)
    return MethodOutput(answer.value, context, words, words, steps=[answer.trace])
