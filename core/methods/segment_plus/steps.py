"""Segment+'s decisions, each stated once (see ``core/decisions.py``), with the offline
engine's rule for each:

| step | prompt | offline rule | fallback |
| --- | --- | --- | --- |
| note | the paper's App. C query prompt | the segment's best BM25 sentences | an extractive note |
| filter | ours (described in Sec. 3.2, not printed) | keep when the evidence holds half the question's words | keep |
| merge | the paper's App. C merge prompt | concatenate, drop the least relevant sentences | concatenate |
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core import prompts
from core.decisions import Step
from core.methods.base import Question
from core.methods.segment_plus.notes import NO_INFORMATION, Label, Note
from core.methods.segment_plus.parsers import parse_label, parse_note
from core.text import lexical
from core.text.tokens import count_tokens

NOTE_MAX_TOKENS = 1024  # a note quotes sentences; the default 512-token reply can cut it short
EVIDENCE_SENTENCES = 3  # offline: sentences quoted per segment
KEEP_COVERAGE = 0.5  # offline: share of the question's (or one option's) words the evidence must hold


# --- the offline rules ----------------------------------------------------------------------------

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



# --- the steps -------------------------------------------------------------------------------------

FILTER_TOKENS = 100  # "Label: Keep" and one sentence of reason


@dataclass(frozen=True)
class NoteInput:
    segment: str
    question: Question
    reply_tokens: int = NOTE_MAX_TOKENS


NOTE = Step(
    name="note",
    prompt=lambda i: prompts.SEGMENT_NOTE.format(segment=i.segment, question=i.question.with_options()),
    parse=lambda reply, i: parse_note(reply),
    fallback=lambda i, attempts: (extractive_note(i.segment, i.question)[0],
                                  f"no usable JSON note in {len(attempts)} replies; used an extractive note "
                                  "(offline, no LLM)"),
    rule=lambda i: extractive_note(i.segment, i.question),
    max_tokens=lambda i: i.reply_tokens,
    min_tokens=64,
    too_long=lambda i: "The question leaves no room for a segment in this window.",
)


@dataclass(frozen=True)
class FilterInput:
    note: Note
    question: Question


def _label_rule(i: FilterInput) -> tuple[Label, dict]:
    label, detail = lexical_label(i.note, i.question)
    return label, {**detail, "reason": label.reason}


FILTER = Step(
    name="filter",
    prompt=lambda i: prompts.SEGMENT_FILTER.format(question=i.question.with_options(), note=i.note.as_json()),
    parse=lambda reply, i: parse_label(reply),
    fallback=lambda i, attempts: (Label(True, "the filter's replies could not be read; kept the note so nothing "
                                              "is lost"),
                                  f"no 'Keep' or 'Remove' in {len(attempts)} replies; kept the note"),
    rule=_label_rule,
    max_tokens=lambda i: FILTER_TOKENS,
    min_tokens=16,
    too_long=lambda i: "The note and the question do not fit in this window.",
)


@dataclass(frozen=True)
class MergeInput:
    notes: tuple[Note, ...]
    question: Question
    merge_tokens: int


MERGE = Step(
    name="merge",
    prompt=lambda i: prompts.SEGMENT_MERGE.format(notes="\n".join(n.as_json() for n in i.notes),
                                                  question=i.question.with_options()),
    parse=lambda reply, i: parse_note(reply),
    fallback=lambda i, attempts: (concatenated_note(i.notes, i.question, i.merge_tokens)[0],
                                  f"no usable merged note in {len(attempts)} replies; concatenated the batch's notes "
                                  "(offline, no LLM)"),
    rule=lambda i: concatenated_note(i.notes, i.question, i.merge_tokens),
    max_tokens=lambda i: i.merge_tokens,
    min_tokens=64,
    too_long=lambda i: f"A batch of {len(i.notes)} notes and the question do not fit in this window.",
)
