"""Segment+'s values: a note (the paper's Evidence and Reasoning), the filter's label, a
segment's note as the trace viewer shows it, and a note made by merging."""
from __future__ import annotations

import json
from dataclasses import dataclass

from core.text.documents import count_words
from core.text.tokens import count_tokens

NO_INFORMATION = "No information about the question in this segment."


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
