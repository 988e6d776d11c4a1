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

Model replies are parsed tolerantly (code fences, single quotes, trailing text, missing
keys), re-asked a bounded number of times, and otherwise fall back explicitly; the trace
says which happened. With the offline engine every step is lexical and labelled
``offline``: the evidence is the segment's best BM25 sentences for the question, the
filter keeps notes whose evidence holds enough of the question's words, and merging
concatenates.
"""
from __future__ import annotations

import ast
import json
import math
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence, TypeVar

from core import lexical, prompts
from core.documents import Document, count_words
from core.errors import GistError
from core.llm_engine import model_step
from core.memwalker import Segment, segment_paragraphs
from core.parsers import Parsed
from core.presets import Preset
from core.readagent import Engine, MethodOutput, Question, _answer
from core.tokens import count_tokens
from core.trace import FALLBACK, OFFLINE, RULE, Decision, StepTrace

T = TypeVar("T")

DEFAULT_SEGMENT_TOKENS = 3000  # the paper runs 4k-context models on segments that leave room for the prompt
DEFAULT_MERGE_TOKENS = 2500  # notes per merge prompt and in the final context: a 4k window minus instructions
NOTE_MAX_TOKENS = 1024  # a note quotes sentences; the default 512-token reply can cut it short
EVIDENCE_SENTENCES = 3  # offline: sentences quoted per segment
KEEP_COVERAGE = 0.5  # offline: share of the question's (or one option's) words the evidence must hold
NO_INFORMATION = "No information about the question in this segment."


# --- values ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Note:
    """The paper's structured note: quoted evidence and the reasoning over it."""
    evidence: str
    reasoning: str

    def as_json(self) -> str:
        return json.dumps({"Evidence": self.evidence, "Reasoning": self.reasoning}, ensure_ascii=False)

    def as_text(self) -> str:
        return f"Evidence: {self.evidence or '(none)'}\nReasoning: {self.reasoning or '(none)'}"

    @property
    def words(self) -> int:
        return count_words(self.evidence) + count_words(self.reasoning)


@dataclass(frozen=True)
class Label:
    keep: bool
    reason: str = ""


@dataclass
class SegmentNote:
    """One segment's note and the filter's label, as the trace viewer and JSON show them."""
    segment: int
    start: int  # first paragraph
    end: int  # one past the last paragraph
    tokens: int  # tokens of the segment
    evidence: str
    reasoning: str
    note_by: str  # trace outcome of the note step (model, re-asked, fallback, offline)
    kept: bool
    label_by: str  # trace outcome of the filter step (model, re-asked, fallback, offline, rule)
    reason: str  # why it was kept or removed

    @property
    def note(self) -> Note:
        return Note(self.evidence, self.reasoning)


@dataclass(frozen=True)
class MergedNote:
    note: Note
    segments: tuple[int, ...]  # the segments whose notes it holds, in order
    by: str  # outcome of the merge that made it ("kept" for a note that was not merged)

    @property
    def tokens(self) -> int:
        return count_tokens(self.note.as_json())


# --- parsing replies (pure functions) ------------------------------------------------------------

_NOTE_ECHO = ("guidelines for note-writing", "your task: evaluate the provided segment",
              "detailed instructions: process the information")
_PLACEHOLDERS = ("your evidence content here", "your reasoning content here")
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)(?:```|$)", re.S)
_KEYS = {"evidence": "evidence", "evidences": "evidence", "reasoning": "reasoning", "reason": "reasoning"}
_LOOSE_KEY = re.compile(r"""["']?\b(evidences?|reasoning)\b["']?\s*[:=]\s*""", re.I)


def _object_span(text: str) -> tuple[str, bool] | None:
    """The first {...} in ``text`` (quotes respected), and whether it had to be closed."""
    start = text.find("{")
    if start < 0:
        return None
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "\"'" and (c == '"' or text[i - 1] in "{[,: \n\t"):
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1], False
    return text[start:] + (quote or "") + "}" * max(depth, 1), True


def _load_object(blob: str) -> tuple[dict | None, str]:
    """json, then without trailing commas, then as a Python literal (single quotes)."""
    try:
        value = json.loads(blob)
        return (value, "") if isinstance(value, dict) else (None, "")
    except json.JSONDecodeError:
        pass
    relaxed = re.sub(r",\s*([}\]])", r"\1", blob)
    try:
        value = json.loads(relaxed)
        return (value, "removed trailing commas") if isinstance(value, dict) else (None, "")
    except json.JSONDecodeError:
        pass
    try:
        value = ast.literal_eval(relaxed)
        return (value, "read a Python-style (single-quoted) object") if isinstance(value, dict) else (None, "")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, ""


def _as_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (list, tuple)):
        return " ".join(t for t in (_as_text(v) for v in value) if t)
    if isinstance(value, dict):
        return " ".join(f"{k}: {_as_text(v)}" for k, v in value.items())
    return str(value)


def _loose_fields(text: str) -> dict[str, str]:
    """'Evidence: ... Reasoning: ...' (or a broken JSON object) read as key/value text."""
    matches = list(_LOOSE_KEY.finditer(text))
    out: dict[str, str] = {}
    for n, match in enumerate(matches):
        end = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        value = text[match.end():end].strip().rstrip("}").strip().rstrip(",").strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif value[:1] in "\"'":
            value = value[1:]
        out.setdefault(_KEYS[match.group(1).lower()], " ".join(value.replace('\\"', '"').split()))
    return out


def parse_note(reply: str) -> Parsed[Note]:
    """A note ``{"Evidence": "...", "Reasoning": "..."}``. Accepts code fences, text around
    the object, single quotes, trailing commas, a cut-off object, lists as values, any key
    case, and plain 'Evidence: ... Reasoning: ...'. One missing part is taken as empty."""
    text = (reply or "").strip()
    if not text:
        return Parsed(None, "the reply was empty")
    lowered = text.lower()
    if any(echo in lowered for echo in _NOTE_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of writing the note")
    notes: list[str] = []
    fence = _FENCE.search(text)
    if fence and fence.group(1).strip():
        text = fence.group(1).strip()
        notes.append("removed a code fence")
    fields: dict[str, str] = {}
    span = _object_span(text)
    if span is not None:
        blob, closed = span
        obj, how = _load_object(blob)
        if obj is not None:
            for key, value in obj.items():
                name = _KEYS.get(str(key).strip().lower())
                if name:
                    fields.setdefault(name, _as_text(value))
            if how:
                notes.append(how)
            if closed:
                notes.append("closed a cut-off JSON object")
            if text.strip() != blob.strip() and not closed:
                notes.append("ignored text around the JSON object")
    if not fields:
        fields = _loose_fields(text)
        if fields:
            notes.append("read the note from key/value text, not JSON")
    if not fields:
        return Parsed(None, 'it is not a note; reply with JSON like {"Evidence": "...", "Reasoning": "..."}')
    if any(fields.get(k, "").strip().lower() in _PLACEHOLDERS for k in ("evidence", "reasoning")):
        return Parsed(None, "the note repeats the format's placeholder text instead of quoting the segment")
    for key in ("evidence", "reasoning"):
        if key not in fields:
            notes.append(f"no {key.title()} part; took it as empty")
    evidence, reasoning = fields.get("evidence", ""), fields.get("reasoning", "")
    if not evidence and not reasoning:
        return Parsed(None, "both Evidence and Reasoning are empty; quote the segment or say it has no information")
    return Parsed(Note(evidence, reasoning), notes=tuple(notes))


_LABEL_ECHO = ("reply with one label", "decide whether the note should be kept")
_LABELLED = re.compile(r"""\b(?:label|decision|answer|verdict)["']?\s*[:=\-]?\s*["']?\s*(keep|remove)\b""", re.I)
_LEADING = re.compile(r"^\W*(keep|remove)\b", re.I)
_REASON = re.compile(r"\breason\s*:\s*(.*)$", re.I | re.S)


def parse_label(reply: str) -> Parsed[Label]:
    """'Label: Keep' / 'Label: Remove' with an optional 'Reason: ...'; also a bare label,
    '**Remove**', or JSON {"label": "Keep"}. A reply naming both without a label line is
    refused (it cannot be read)."""
    text = (reply or "").replace("*", "").replace("`", "").strip()
    if not text:
        return Parsed(None, "the reply was empty")
    if any(echo in text.lower() for echo in _LABEL_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of labelling the note")
    match = _LABELLED.search(text) or _LEADING.search(text)
    notes: tuple[str, ...] = ()
    if match is None:
        named = {w.lower() for w in re.findall(r"\b(keep|remove)\b", text, re.I)}
        if len(named) != 1:
            problem = "it names both Keep and Remove" if named else "it names no label"
            return Parsed(None, f'{problem}; reply "Label: Keep" or "Label: Remove"')
        match = re.search(r"\b(keep|remove)\b", text, re.I)
        notes = ("no 'Label:' line; took the one label the reply names",)
    reason_match = _REASON.search(text)
    reason = reason_match.group(1) if reason_match else text[match.end():]
    reason = " ".join(reason.strip(" .:-\n\"'}").split())[:600]
    return Parsed(Label(match.group(1).lower() == "keep", reason), notes=notes)


# --- offline (no LLM): extractive notes, lexical filter, concatenating merge --------------------

def extractive_note(segment: str, question: Question, sentences: int = EVIDENCE_SENTENCES) -> tuple[Note, dict]:
    """The segment's best BM25 sentences for the question (and options), in text order."""
    sents = lexical.sentences(segment)
    ranked = [(i, s) for i, s in lexical.rank(question.with_options(), sents) if s > 0][:sentences]
    chosen = sorted(i for i, _ in ranked)
    evidence = " ".join(sents[i] for i in chosen)
    matched = sorted(set(lexical.terms(question.with_options())) & set(lexical.terms(evidence)))
    # No reasoning without a model; the words matched go to the trace, not into the note, where
    # they would echo the question back to the answer step.
    reasoning = "" if evidence else NO_INFORMATION
    detail = {"method": f"extractive: the segment's {sentences} best BM25 sentences for the question and options",
              "sentences": chosen, "scores": [round(s, 3) for _, s in ranked], "matched_words": matched}
    return Note(evidence, reasoning), detail


def _coverage(wanted: str, present: set[str]) -> float:
    terms = set(lexical.terms(wanted))
    return len(terms & present) / len(terms) if terms else 0.0


def lexical_label(note: Note, question: Question) -> tuple[Label, dict]:
    """Keep a note whose evidence holds at least half of the question's content words, or
    of one option's; remove it otherwise (and always when there is no evidence)."""
    present = set(lexical.terms(note.evidence))
    q_cover = _coverage(question.text, present)
    o_cover = max((_coverage(o, present) for o in question.options), default=0.0)
    detail = {"method": f"keep when the evidence holds at least {KEEP_COVERAGE:.0%} of the words of the question "
                        "or of one option", "question_coverage": round(q_cover, 3),
              "best_option_coverage": round(o_cover, 3)}
    if not note.evidence.strip():
        return Label(False, "the note quotes no evidence"), detail
    best = max(q_cover, o_cover)
    if best >= KEEP_COVERAGE:
        which = "question's" if q_cover >= o_cover else "best option's"
        return Label(True, f"the evidence holds {best:.0%} of the {which} words"), detail
    return Label(False, f"the evidence holds only {q_cover:.0%} of the question's words"
                        + (f" and at most {o_cover:.0%} of an option's" if question.options else "")), detail


def concatenated_note(notes: Sequence[Note], question: Question, budget_tokens: int) -> tuple[Note, dict]:
    """Evidence concatenated in order (repeated sentences once) and reasonings joined; when
    that exceeds ``budget_tokens``, the evidence sentences with the lowest BM25 score for
    the question are dropped until it fits."""
    seen: set[str] = set()
    sents: list[str] = []
    for note in notes:
        for s in lexical.sentences(note.evidence):
            if s not in seen:
                seen.add(s)
                sents.append(s)
    reasoning = " ".join(dict.fromkeys(n.reasoning for n in notes if n.reasoning))
    keep = list(range(len(sents)))
    dropped = 0
    if count_tokens(Note(" ".join(sents), reasoning).as_json()) > budget_tokens and sents:
        by_score = [i for i, _ in reversed(lexical.rank(question.with_options(), sents))]
        while len(keep) > 1 and count_tokens(Note(" ".join(sents[i] for i in keep), reasoning).as_json()) > budget_tokens:
            keep.remove(by_score[dropped])
            dropped += 1
    detail = {"method": "concatenated the notes' evidence and reasoning, in order",
              "sentences": len(sents), "dropped_sentences": dropped}
    return Note(" ".join(sents[i] for i in keep), reasoning), detail


# --- who writes the notes: a model through the seam, or lexical rules --------------------------

def _trace(step: str, value, detail: dict, started: float, outcome: str = OFFLINE) -> StepTrace:
    return StepTrace(step=step, outcome=outcome, value=value, detail=detail,
                     seconds=round(time.perf_counter() - started, 4))


class _ModelWriter:
    def __init__(self, llm, merge_tokens: int):
        self.llm = llm
        self.merge_tokens = merge_tokens

    def note(self, segment: str, question: Question) -> Decision[Note]:
        prompt = prompts.SEGMENT_NOTE.format(segment=segment, question=question.with_options())

        def fallback(attempts):
            note, _ = extractive_note(segment, question)
            return note, (f"no usable JSON note in {len(attempts)} replies; used an extractive note "
                          "(offline, no LLM)")

        return model_step(self.llm, "note", prompt, parse_note, fallback=fallback, max_tokens=NOTE_MAX_TOKENS)

    def label(self, note: Note, question: Question) -> Decision[Label]:
        prompt = prompts.SEGMENT_FILTER.format(question=question.with_options(), note=note.as_json())

        def fallback(attempts):
            return (Label(True, "the filter's replies could not be read; kept the note so nothing is lost"),
                    f"no 'Keep' or 'Remove' in {len(attempts)} replies; kept the note")

        return model_step(self.llm, "filter", prompt, parse_label, fallback=fallback)

    def merge(self, notes: Sequence[Note], question: Question) -> Decision[Note]:
        prompt = prompts.SEGMENT_MERGE.format(notes="\n".join(n.as_json() for n in notes),
                                              question=question.with_options())

        def fallback(attempts):
            note, _ = concatenated_note(notes, question, self.merge_tokens)
            return note, (f"no usable merged note in {len(attempts)} replies; concatenated the batch's notes "
                          "(offline, no LLM)")

        return model_step(self.llm, "merge", prompt, parse_note, fallback=fallback, max_tokens=self.merge_tokens)


class _OfflineWriter:
    """No LLM: extractive notes, a lexical filter, concatenating merges."""

    def __init__(self, merge_tokens: int):
        self.merge_tokens = merge_tokens

    def note(self, segment: str, question: Question) -> Decision[Note]:
        started = time.perf_counter()
        note, detail = extractive_note(segment, question)
        return Decision(note, _trace("note", {"Evidence": note.evidence, "Reasoning": note.reasoning}, detail,
                                     started))

    def label(self, note: Note, question: Question) -> Decision[Label]:
        started = time.perf_counter()
        label, detail = lexical_label(note, question)
        detail["reason"] = label.reason
        return Decision(label, _trace("filter", "Keep" if label.keep else "Remove", detail, started))

    def merge(self, notes: Sequence[Note], question: Question) -> Decision[Note]:
        started = time.perf_counter()
        note, detail = concatenated_note(notes, question, self.merge_tokens)
        return Decision(note, _trace("merge", {"Evidence": note.evidence, "Reasoning": note.reasoning}, detail,
                                     started))


def writer(engine: Engine, merge_tokens: int):
    return _ModelWriter(engine.llm, merge_tokens) if engine.is_llm else _OfflineWriter(merge_tokens)


def parallel(jobs: Sequence[Callable[[], T]], limit: int) -> list[T]:
    """Run ``jobs`` at most ``limit`` at a time; results in the jobs' order. When one fails
    (the server is unreachable, say), the jobs not yet started are cancelled, not run."""
    if limit <= 1 or len(jobs) <= 1:
        return [job() for job in jobs]
    pool = ThreadPoolExecutor(max_workers=min(limit, len(jobs)), thread_name_prefix="segment+")
    futures = [pool.submit(job) for job in jobs]
    try:
        return [f.result() for f in futures]
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


# --- merging in batches ----------------------------------------------------------------------------

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


def gather_and_merge(engine: Engine, document: Document, question: Question, *,
                     segment_tokens: int = DEFAULT_SEGMENT_TOKENS, merge_tokens: int = DEFAULT_MERGE_TOKENS,
                     concurrency: int = 8) -> SegmentPlusRun:
    """Notes for every segment (in parallel), the filter (in parallel), then merge rounds."""
    if segment_tokens < 50:
        raise GistError(f"--segment-tokens must be at least 50 (got {segment_tokens}); the paper fits segments "
                        "of about 3000 tokens in a 4k window.")
    if merge_tokens < 100:
        raise GistError(f"--merge-tokens must be at least 100 (got {merge_tokens}); notes are merged in batches "
                        "of that many tokens.")
    segments = segment_paragraphs(document.paragraphs, segment_tokens)
    if not segments:
        raise GistError(f"{document.title!r} has no text to take notes from.")
    write = writer(engine, merge_tokens)
    limit = max(1, concurrency) if engine.is_llm else 1
    steps: list[StepTrace] = []
    longest = max(count_words(s.text) for s in segments)

    noted = parallel([lambda s=s: write.note(s.text, question) for s in segments], limit)
    for i, (segment, decision) in enumerate(zip(segments, noted)):
        decision.trace.page = i
        decision.trace.detail.update(segment=i, paragraphs=[segment.start, segment.end], tokens=segment.tokens)
        decision.trace.value = {"Evidence": decision.value.evidence, "Reasoning": decision.value.reasoning}
        steps.append(decision.trace)

    def label(note: Note) -> Decision[Label]:
        if not note.evidence.strip() and not note.reasoning.strip():
            return Decision(Label(False, "the note is empty"), StepTrace(
                step="filter", outcome=RULE, value="Remove", detail={"reason": "the note is empty; nothing to keep"}))
        return write.label(note, question)

    labelled = parallel([lambda d=d: label(d.value) for d in noted], limit)
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
        steps.append(StepTrace(step="merge", outcome=RULE, value=None, detail={
            "reason": "the filter removed every note; the answer is given from no notes"}))
    while len(current) > 1 and (not rounds or sum(m.tokens for m in current) > merge_tokens):
        groups = batches([m.tokens for m in current], merge_tokens)
        jobs = [lambda g=g: write.merge([current[i].note for i in g], question) for g in groups if len(g) > 1]
        merged = iter(parallel(jobs, limit))
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
            decision.trace.value = {"Evidence": decision.value.evidence, "Reasoning": decision.value.reasoning}
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
    if current and count_tokens(context) > merge_tokens:
        context, trimmed = _trim(context, merge_tokens), True
        steps.append(StepTrace(step="merge", outcome=RULE, value=None, detail={
            "reason": f"the final note was longer than {merge_tokens} tokens; cut to fit"}))
    return SegmentPlusRun(segments, notes, rounds, current, context, max(longest, count_words(context)),
                          trimmed, steps)


# --- the method ------------------------------------------------------------------------------------

def segment_plus(engine: Engine, document: Document, question: Question, preset: Preset, *,
                 segment_tokens: int = DEFAULT_SEGMENT_TOKENS, merge_tokens: int = DEFAULT_MERGE_TOKENS,
                 concurrency: int = 8) -> MethodOutput:
    """Gather notes, filter, merge, and answer from the final note(s) only.

    ``words_in_context`` is the longest text shown in any one step (a segment, a note, a
    merge batch, or the final notes), as the paper's compression rate is measured;
    ``extra["final_note_words"]`` is the final context alone. ``pages_looked_up`` lists the
    segments whose notes were kept."""
    run = gather_and_merge(engine, document, question, segment_tokens=segment_tokens, merge_tokens=merge_tokens,
                           concurrency=concurrency)
    answer = _answer(engine, run.context, question, preset)
    kept = [n.segment for n in run.notes if n.kept]
    extra = {
        "segments": len(run.segments),
        "notes_kept": len(kept),
        "notes_removed": len(run.notes) - len(kept),
        "all_removed": not kept,
        "merge_rounds": len(run.rounds),
        "notes": [asdict(n) for n in run.notes],
        "rounds": [asdict(r) for r in run.rounds],
        "final_notes": [{"evidence": m.note.evidence, "reasoning": m.note.reasoning, "segments": list(m.segments),
                         "by": m.by, "tokens": m.tokens} for m in run.final],
        "final_note_words": count_words(run.context) if run.final else 0,
        "final_trimmed": run.trimmed,
        "segment_tokens": segment_tokens,
        "merge_tokens": merge_tokens,
    }
    return MethodOutput(answer.value, run.context, run.words_in_context, document.words, pages_looked_up=kept,
                        steps=[*run.steps, answer.trace], extra=extra)


def _register() -> None:
    from core.methods import Method, Param, register

    register(Method(
        "segmentplus", "Segment+",
        "Write a note (Evidence + Reasoning) for every segment in parallel, keep the useful ones, merge them in "
        "batches until they fit, and answer from the final note only (Shi et al. 2024, Sec. 3.2).",
        False,
        lambda i, p: segment_plus(i.engine, i.document, i.question, i.preset, **p),
        (Param("segment_tokens", int, DEFAULT_SEGMENT_TOKENS, "tokens per segment (one note each)"),
         Param("merge_tokens", int, DEFAULT_MERGE_TOKENS,
               "token budget of the notes in one merge prompt and in the final context"),
         Param("concurrency", int, 8, "model calls at once while writing, filtering and merging notes")),
    ))


_register()
