"""Segment+ (Shi et al., "Segment+: Long Text Processing with Short-Context Language Models").

Three steps, as in the paper's Sec. 3.2:

* **Gather**: the text is cut into segments of about ``segment_tokens`` tokens
  (tiktoken, paragraph-aligned, shared with MemWalker), and for every segment, in
  parallel, the model writes a structured *note* for the question,
  ``{"Evidence": quoted sentences, "Reasoning": its interpretation}`` (App. C prompt).
  Each note is then labelled **Keep** or **Remove** by a filter prompt (ours: the paper
  describes it but does not print it).
* **Merge**: the kept notes, in document order, are split into batches that fit
  ``merge_tokens`` and each batch is merged into one note (App. C merge prompt); rounds
  repeat until the remaining notes fit the budget.
* **Answer**: from the final note(s) only; the model never sees the segments again.

Each decision is a step of ``steps.py`` (the model's prompt and parser, the offline
rule, the fallback); this module only orders them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from core.concurrency import run_all
from core.errors import ContextWindowError, DocumentError, SettingError
from core.llm.window import REASK_TOKENS, describe, fits, headroom, input_budget
from core.methods.answer import answer_question, answer_room
from core.methods.base import Details, Method, MethodOutput, Param, Question, holding
from core.methods.segment_plus.notes import Label, MergedNote, Note, SegmentNote
from core.methods.segment_plus.steps import (FILTER, MERGE, NOTE, NOTE_MAX_TOKENS, FilterInput, MergeInput,
                                            NoteInput, concatenated_note)
from core.text.documents import Document, count_words
from core.text.segments import Segment, segment_paragraphs
from core.text.tokens import count_tokens
from core.trace import RULE, Decision, StepTrace, by_rule

DEFAULT_SEGMENT_TOKENS = 3000  # the paper runs 4k-context models on segments that leave room for the prompt
DEFAULT_MERGE_TOKENS = 2500  # notes per merge prompt and in the final context: a 4k window minus instructions
MIN_SEGMENT_TOKENS = 50
MIN_MERGE_TOKENS = 100


def batches(token_counts: Sequence[int], budget: int) -> list[range]:
    """Consecutive notes whose tokens fit ``budget``, each batch holding at least two notes
    while two remain (so every round merges something and the rounds end). A last note
    left alone is passed on unmerged."""
    out: list[range] = []
    start, total = 0, 0
    for i, tokens in enumerate(token_counts):
        if i > start and i - start >= 2 and total + tokens > budget:
            out.append(range(start, i))
            start, total = i, 0
        total += tokens
    if start < len(token_counts):
        out.append(range(start, len(token_counts)))
    return out


@dataclass
class MergeRound:
    round: int
    batches: list[list[int]]  # for each batch, the segments its notes hold
    tokens_in: int
    tokens_out: int
    outcomes: list[str]  # for each batch: the merge step's outcome, or "passed on" for a lone note


@dataclass
class SegmentPlusRun:
    segments: list[Segment]
    notes: list[SegmentNote]
    rounds: list[MergeRound]
    final: list[MergedNote]
    context: str
    words_in_context: int
    trimmed: bool = False
    steps: list[StepTrace] = field(default_factory=list)


def _context(final: Sequence[MergedNote]) -> str:
    if not final:
        return "(No notes: the filter removed every segment's note as unhelpful for this question.)"
    return "\n\n".join(m.note.as_text() for m in final)


def _trim(text: str, budget: int) -> str:
    """The first ``budget`` tokens of ``text``, cut at a word."""
    words = text.split()
    low, high = 0, len(words)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(" ".join(words[:mid])) <= budget:
            low = mid
        else:
            high = mid - 1
    return " ".join(words[:low])


def _note_value(note: Note) -> dict:
    return {"Evidence": note.evidence, "Reasoning": note.reasoning}


def check_settings(segment_tokens: int, merge_tokens: int) -> None:
    if segment_tokens < MIN_SEGMENT_TOKENS:
        raise SettingError("segment_tokens", segment_tokens, f"at least {MIN_SEGMENT_TOKENS}",
                           "the paper fits segments of about 3000 tokens in a 4k window")
    if merge_tokens < MIN_MERGE_TOKENS:
        raise SettingError("merge_tokens", merge_tokens, f"at least {MIN_MERGE_TOKENS}",
                           "notes are merged in batches of that many tokens")


@dataclass(frozen=True)
class Sizes:
    """Segment+'s sizes in tokens: the settings, made smaller where the model's window needs it."""
    segment_tokens: int  # a segment, in its note prompt
    note_tokens: int  # a note's reply budget
    merge_reply: int  # a merged note's reply budget (and a concatenated note's length)
    batch_tokens: int  # the notes in one merge prompt
    final_tokens: int  # the final notes, in the answer prompt
    fitted: str = ""  # what was made smaller, for the trace


def sizes(engine, question: Question, segment_tokens: int, merge_tokens: int) -> Sizes:
    """The settings as they are without a window (the offline engine); else each made to fit:
    segments in the note prompt, two merged notes in one merge prompt (so rounds narrow), the
    final notes in the answer prompt."""
    window = getattr(engine, "context_tokens", None)
    if window is None:
        return Sizes(segment_tokens, NOTE_MAX_TOKENS, merge_tokens, merge_tokens, merge_tokens)
    model = getattr(engine, "model", None)
    note_tokens = min(NOTE_MAX_TOKENS, max(64, window // 4))
    segment_room = input_budget(window, note_tokens) - count_tokens(NOTE.prompt(NoteInput("", question)), model)
    empty_merge = count_tokens(MERGE.prompt(MergeInput((), question, 0)), model)
    merge_reply = min(merge_tokens, max(64, (window - headroom(window) - REASK_TOKENS - 128 - empty_merge) // 3))
    batch_room = input_budget(window, merge_reply) - empty_merge
    final_room = answer_room(engine, question)
    segment, batch, final = (min(segment_tokens, segment_room), min(merge_tokens, batch_room),
                             min(merge_tokens, final_room))
    if segment_room < MIN_SEGMENT_TOKENS or batch_room < 128 or final_room < 64:
        raise ContextWindowError(f"The model's {describe(window)} is too small for Segment+: a segment, its note and "
                                 "the question do not fit in it.")
    changed = [f"{name} {new:,} tokens (not {old:,})" for name, new, old in
               (("segments of", segment, segment_tokens), ("notes of at most", note_tokens, NOTE_MAX_TOKENS),
                ("merged notes of at most", merge_reply, merge_tokens), ("merge batches of", batch, merge_tokens),
                ("final notes of", final, merge_tokens)) if new != old]
    fitted = f"{', '.join(changed)} to fit the {describe(window)}" if changed else ""
    return Sizes(segment, note_tokens, merge_reply, batch, final, fitted)


def _merge(engine, notes: tuple[Note, ...], question: Question, size: Sizes) -> Decision[Note]:
    """A batch's merged note; a batch whose notes came out too long for one merge prompt is
    concatenated and cut by the offline rule, and the trace says why."""
    inputs = MergeInput(notes, question, size.merge_reply)
    window = getattr(engine, "context_tokens", None)
    if window is None or fits(MERGE.prompt(inputs), size.merge_reply, window, getattr(engine, "model", None)):
        return engine.decide(MERGE, inputs)
    note, detail = concatenated_note(notes, question, size.merge_reply)
    return by_rule("merge", note, f"the {len(notes)} notes do not fit in one merge prompt in the {describe(window)}; "
                                  "concatenated them and dropped their least relevant sentences (no LLM)", **detail)


def gather_and_merge(engine, document: Document, question: Question, *,
                     segment_tokens: int = DEFAULT_SEGMENT_TOKENS, merge_tokens: int = DEFAULT_MERGE_TOKENS,
                     concurrency: int = 8) -> SegmentPlusRun:
    """Notes for every segment (in parallel), the filter (in parallel), then merge rounds."""
    check_settings(segment_tokens, merge_tokens)
    size = sizes(engine, question, segment_tokens, merge_tokens)
    segments = segment_paragraphs(document.paragraphs, size.segment_tokens)
    if not segments:
        raise DocumentError(f"{document.title!r} has no text to take notes from.")
    limit = engine.workers(concurrency)
    steps: list[StepTrace] = []
    if size.fitted:
        steps.append(StepTrace(step="fit-window", outcome=RULE, detail={"reason": size.fitted}))
    longest = max(count_words(s.text) for s in segments)

    noted = run_all([lambda s=s: engine.decide(NOTE, NoteInput(s.text, question, size.note_tokens))
                     for s in segments], limit, name="segment+")
    for i, (segment, decision) in enumerate(zip(segments, noted)):
        decision.trace.page = i
        decision.trace.detail.update(segment=i, paragraphs=[segment.start, segment.end], tokens=segment.tokens)
        decision.trace.value = _note_value(decision.value)
        steps.append(decision.trace)

    def label(note: Note) -> Decision[Label]:
        if not note.evidence.strip() and not note.reasoning.strip():
            return by_rule("filter", Label(False, "the note is empty"), "the note is empty; nothing to keep")
        return engine.decide(FILTER, FilterInput(note, question))

    labelled = run_all([lambda d=d: label(d.value) for d in noted], limit, name="segment+")
    notes: list[SegmentNote] = []
    for i, (segment, note, decision) in enumerate(zip(segments, noted, labelled)):
        decision.trace.page = i
        decision.trace.value = "Keep" if decision.value.keep else "Remove"
        decision.trace.detail.update(segment=i, reason=decision.value.reason)
        steps.append(decision.trace)
        longest = max(longest, note.value.words)
        notes.append(SegmentNote(i, segment.start, segment.end, segment.tokens, note.value.evidence,
                                 note.value.reasoning, note.trace.outcome, decision.value.keep,
                                 decision.trace.outcome, decision.value.reason))

    current = [MergedNote(n.note, (n.segment,), "kept") for n in notes if n.kept]
    rounds: list[MergeRound] = []
    if not current:
        steps.append(by_rule("merge", None, "the filter removed every note; the answer is given from no notes").trace)
    while len(current) > 1 and (not rounds or sum(m.tokens for m in current) > size.final_tokens):
        groups = batches([m.tokens for m in current], size.batch_tokens)
        if all(len(g) == 1 for g in groups):
            break
        jobs = [lambda g=g: _merge(engine, tuple(current[i].note for i in g), question, size)
                for g in groups if len(g) > 1]
        merged = iter(run_all(jobs, limit, name="segment+"))
        following: list[MergedNote] = []
        outcomes: list[str] = []
        for k, group in enumerate(groups):
            covered = tuple(s for i in group for s in current[i].segments)
            if len(group) == 1:
                following.append(current[group[0]])
                outcomes.append("passed on")
                continue
            decision = next(merged)
            batch_words = sum(current[i].note.words for i in group)
            longest = max(longest, batch_words)
            decision.trace.value = _note_value(decision.value)
            decision.trace.detail.update(round=len(rounds) + 1, batch=k, segments=list(covered), notes=len(group),
                                         tokens=sum(current[i].tokens for i in group), context_words=batch_words)
            steps.append(decision.trace)
            following.append(MergedNote(decision.value, covered, decision.trace.outcome))
            outcomes.append(decision.trace.outcome)
        rounds.append(MergeRound(len(rounds) + 1, [list(m.segments) for m in following],
                                 sum(m.tokens for m in current), sum(m.tokens for m in following), outcomes))
        current = following

    context = _context(current)
    trimmed = False
    if current and count_tokens(context) > size.final_tokens:
        context, trimmed = _trim(context, size.final_tokens), True
        steps.append(StepTrace(step="merge", outcome=RULE, value=None, detail={
            "reason": f"the final note was longer than {size.final_tokens} tokens; cut to fit"}))
    return SegmentPlusRun(segments, notes, rounds, current, context, max(longest, count_words(context)),
                          trimmed, steps)


@dataclass(frozen=True)
class FinalNote:
    """A note the answer was given from: what it holds and how it was made."""
    evidence: str
    reasoning: str
    segments: list[int]  # the segments whose notes it holds
    by: str  # the merge's outcome, or "kept" for a note that was not merged
    tokens: int


@dataclass
class NotesDetails(Details):
    """Segment+'s notes, the filter's labels and the merge rounds."""
    kind = "notes"
    segments: int = 0
    notes_kept: int = 0
    notes_removed: int = 0
    all_removed: bool = False
    merge_rounds: int = 0
    notes: list[SegmentNote] = holding(SegmentNote, default_factory=list)
    rounds: list[MergeRound] = holding(MergeRound, default_factory=list)
    final_notes: list[FinalNote] = holding(FinalNote, default_factory=list)
    final_note_words: int = 0
    final_trimmed: bool = False
    segment_tokens: int = DEFAULT_SEGMENT_TOKENS
    merge_tokens: int = DEFAULT_MERGE_TOKENS

    def summary(self) -> str:
        kept = [n.segment for n in self.notes if n.kept]
        return (f"notes kept from segments {kept} ({self.notes_kept} of {self.segments}) | {self.merge_rounds} "
                f"merge round{'' if self.merge_rounds == 1 else 's'}")


def segment_plus(engine, document: Document, question: Question, *,
                 segment_tokens: int = DEFAULT_SEGMENT_TOKENS, merge_tokens: int = DEFAULT_MERGE_TOKENS,
                 concurrency: int = 8) -> MethodOutput:
    """Gather notes, filter, merge, and answer from the final note(s) only.

    ``words_in_context`` is the longest text shown in any one step (a segment, a note, a
    merge batch, or the final notes), as the paper's compression rate is measured;
    ``details.final_note_words`` is the final context alone. ``pages_looked_up`` lists the
    segments whose notes were kept."""
    run = gather_and_merge(engine, document, question, segment_tokens=segment_tokens, merge_tokens=merge_tokens,
                           concurrency=concurrency)
    answer = answer_question(engine, run.context, question)
    kept = [n.segment for n in run.notes if n.kept]
    details = NotesDetails(
        segments=len(run.segments), notes_kept=len(kept), notes_removed=len(run.notes) - len(kept),
        all_removed=not kept, merge_rounds=len(run.rounds), notes=run.notes, rounds=run.rounds,
        final_notes=[FinalNote(m.note.evidence, m.note.reasoning, list(m.segments), m.by, m.tokens) for m in run.final],
        final_note_words=count_words(run.context) if run.final else 0, final_trimmed=run.trimmed,
        segment_tokens=segment_tokens, merge_tokens=merge_tokens)
    return MethodOutput(answer.value, run.context, run.words_in_context, document.words, pages_looked_up=kept,
                        steps=[*run.steps, answer.trace], details=details)


METHOD = Method(
    "segmentplus", "Segment+",
    "Write a note (Evidence + Reasoning) for every segment in parallel, keep the useful ones, merge them in "
    "batches until they fit, and answer from the final note only (Shi et al. 2024, Sec. 3.2).",
    False,
    lambda i, p: segment_plus(i.engine, i.document, i.question, **p),
    (Param("segment_tokens", int, DEFAULT_SEGMENT_TOKENS, "tokens per segment (one note each)",
           minimum=MIN_SEGMENT_TOKENS, why="the paper fits segments of about 3000 tokens in a 4k window"),
     Param("merge_tokens", int, DEFAULT_MERGE_TOKENS,
           "token budget of the notes in one merge prompt and in the final context", minimum=MIN_MERGE_TOKENS,
           why="notes are merged in batches of that many tokens"),
     Param("concurrency", int, 8, "model calls at once while writing, filtering and merging notes", minimum=1)),
    NotesDetails,
)
