"""ReadAgent's interactive look-up (Sec. 3.2) and the gist-memory baselines.

* ReadAgent-P: one look-up step asks for up to N pages; they replace their gists in
  place (the context keeps page order), then the answer. The pages are kept in the order
  the model gave them (NarrativeQA asks for them "in the order of importance"), in the
  trace and in the list of expanded pages, so a window that holds only some of them keeps
  the most important.
* ReadAgent-S: one page at a time, the model seeing the pages already expanded,
  until it says STOP or the step cap, then the answer.
* GistMem: the answer from the gists alone. Full text: the whole document in context.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import ContextWindowError
from core.llm.window import describe, input_budget
from core.methods.answer import answer_question, answer_room, fit_context
from core.methods.base import Details, Method, MethodInput, MethodOutput, Param, Question
from core.methods.readagent.memory import GistMemory
from core.methods.readagent.parsers import STOP
from core.methods.readagent.presets import Preset
from core.methods.readagent.steps import LOOKUP_NEXT, LOOKUP_PARALLEL, LOOKUP_TOKENS, LookupInput
from core.text.documents import Document, count_words, join_paragraphs
from core.text.tokens import count_tokens
from core.trace import StepTrace


@dataclass
class LookupDetails(Details):
    """The pages ReadAgent asked to re-read, in the order it asked."""
    kind = "lookup"
    pages: list[int] = field(default_factory=list)

    def summary(self) -> str:
        return f"pages looked up: {self.pages}"


def _fits_answer(engine, memory: GistMemory, question: Question, expanded) -> bool:
    room = answer_room(engine, question)
    return room is None or count_tokens(memory.context(expanded), engine.model) <= room


def _check_memory_fits(engine, memory: GistMemory, question: Question, method: str) -> None:
    """The gist memory alone must fit in the answer prompt: it cannot be shortened (yet)."""
    room = answer_room(engine, question)
    if room is None:
        return
    tokens = count_tokens(memory.context(), engine.model)
    if tokens > room:
        raise ContextWindowError(
            f"{method} answers from the whole gist memory ({len(memory.pages)} pages, {memory.gist_words:,} words of "
            f"gists, {tokens:,} tokens), which does not fit with the question in the model's "
            f"{describe(engine.context_tokens)}; build the memory for this window (it is then shortened by merging "
            "pages, the paper's App. I, and gisting again, G.3). A method that does not show the whole memory (bm25, memwalker, segmentplus) works in "
            "this window.")


def expand_within(engine, memory: GistMemory, question: Question, pages) -> tuple[list[int], list[int]]:
    """The pages to expand, in the order asked, while the context still fits the answer prompt
    (all of them without a window); and the pages left as gists for room."""
    kept: list[int] = []
    dropped: list[int] = []
    for page in pages:
        (kept if _fits_answer(engine, memory, question, [*kept, page]) else dropped).append(page)
    return kept, dropped


def readagent_p(engine, memory: GistMemory, question: Question, preset: Preset, max_pages: int = 5) -> MethodOutput:
    """ReadAgent-P: ask once for up to ``max_pages`` pages, expand them in place, answer. Pages
    whose raw text would not fit in the model's window stay gists (the trace says which)."""
    _check_memory_fits(engine, memory, question, "ReadAgent-P")
    lookup = engine.decide(LOOKUP_PARALLEL, LookupInput(memory, question, preset, max_pages=max_pages))
    lookup.trace.detail.setdefault("context_words", memory.context_words())
    pages = list(lookup.value)
    kept, dropped = expand_within(engine, memory, question, pages)
    if dropped:
        lookup.trace.detail["not_expanded"] = dropped
        lookup.trace.detail["fitted"] = (f"page{'s' if len(dropped) > 1 else ''} {dropped} stay gists: with their raw "
                                         f"text the answer prompt would not fit in the "
                                         f"{describe(engine.context_tokens)}")
    expanded = kept  # in the model's order; the context itself places them in page order
    context = memory.context(expanded)
    answer = answer_question(engine, context, question)
    return MethodOutput(answer.value, context, max(memory.context_words(), memory.context_words(expanded)),
                        memory.words, pages, expanded, [lookup.trace, answer.trace], LookupDetails(pages))


def readagent_s(engine, memory: GistMemory, question: Question, preset: Preset, max_steps: int = 6) -> MethodOutput:
    """ReadAgent-S: ask for one page at a time (seeing those already expanded) until
    STOP or ``max_steps`` pages, then answer."""
    _check_memory_fits(engine, memory, question, "ReadAgent-S")
    read: list[int] = []
    steps: list[StepTrace] = []
    longest = memory.context_words()
    for _ in range(max_steps):
        step = engine.decide(LOOKUP_NEXT, LookupInput(memory, question, preset, read=tuple(read)))
        step.trace.detail.setdefault("context_words", memory.context_words(read))
        steps.append(step.trace)
        if step.value == STOP:
            break
        page = int(step.value)
        if not _room_for(engine, memory, question, preset, [*read, page]):
            step.trace.detail["not_expanded"] = [page]
            step.trace.detail["fitted"] = (f"page {page} stays a gist and the look-ups stop: with its raw text the "
                                           f"prompts would not fit in the {describe(engine.context_tokens)}")
            break
        read.append(page)
        longest = max(longest, memory.context_words(read))
    else:
        steps[-1].detail["step_cap"] = f"stopped after the maximum of {max_steps} look-ups"
    context = memory.context(read)
    answer = answer_question(engine, context, question)
    steps.append(answer.trace)
    return MethodOutput(answer.value, context, longest, memory.words, read, list(read), steps, LookupDetails(read))


def _room_for(engine, memory: GistMemory, question: Question, preset: Preset, read: list[int]) -> bool:
    """Whether ``read`` expanded still fits the next look-up prompt and the answer prompt."""
    window = engine.context_tokens
    if window is None:
        return True
    following = LOOKUP_NEXT.prompt(LookupInput(memory, question, preset, read=tuple(read)))
    return (count_tokens(following, engine.model) <= input_budget(window, LOOKUP_TOKENS)
            and _fits_answer(engine, memory, question, read))


def gistmem(engine, memory: GistMemory, question: Question) -> MethodOutput:
    """GistMem: answer from the gists alone."""
    _check_memory_fits(engine, memory, question, "GistMem")
    context = memory.context()
    answer = answer_question(engine, context, question)
    return MethodOutput(answer.value, context, memory.context_words(), memory.words, steps=[answer.trace])


def full_text(engine, document: Document, question: Question) -> MethodOutput:
    """Full raw content: the whole document in context (compression rate 0). In a model's window
    too small for it, the text is cut where it stops fitting, with a sentence saying so."""
    context, fitted = fit_context(engine, join_paragraphs(p.text for p in document.paragraphs), question)
    answer = answer_question(engine, context, question)
    answer.trace.detail.update(fitted)
    return MethodOutput(answer.value, context, count_words(context) if fitted else document.words, document.words,
                        steps=[answer.trace])


def _p(i: MethodInput, p: dict) -> MethodOutput:
    return readagent_p(i.engine, i.memory, i.question, i.preset, p["max_pages"])


def _s(i: MethodInput, p: dict) -> MethodOutput:
    return readagent_s(i.engine, i.memory, i.question, i.preset, p["max_pages"])


METHODS = [
    Method("readagent-p", "ReadAgent-P", "Look up 1 to N pages at once from the gist memory, then answer "
           "(paper Sec. 3.2).", True, _p, (Param("max_pages", int, 5, "the most pages to look up", minimum=1),),
           LookupDetails),
    Method("readagent-s", "ReadAgent-S", "Look up one page at a time, seeing pages already read, until STOP "
           "(Sec. 3.2).", True, _s, (Param("max_pages", int, 6, "the most look-up steps", minimum=1),),
           LookupDetails),
    Method("gistmem", "GistMem", "Answer from the gist memory alone, no look-up (Sec. 4.2).", True,
           lambda i, p: gistmem(i.engine, i.memory, i.question)),
    Method("full", "Full text", "Answer with the whole document in context (compression rate 0).", False,
           lambda i, p: full_text(i.engine, i.document, i.question)),
]
