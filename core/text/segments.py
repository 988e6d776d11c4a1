"""Token segments: consecutive paragraphs of about N tokens, the unit MemWalker's leaves
and Segment+'s notes are made from."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.text import lexical
from core.text.documents import Paragraph, halve_to_fit
from core.text.tokens import count_tokens


@dataclass(frozen=True)
class Segment:
    start: int  # first paragraph
    end: int  # one past the last paragraph
    text: str
    tokens: int


def segment_paragraphs(paragraphs: Sequence[Paragraph], segment_tokens: int) -> list[Segment]:
    """Consecutive paragraphs up to ``segment_tokens`` tokens each (tiktoken cl100k_base).
    A paragraph longer than that is split between sentences (between words inside a sentence
    longer than a segment); a heading that would end a segment starts the next one instead."""
    units: list[tuple[int, str, int, bool]] = []  # (paragraph, text, tokens, heading)
    for i, p in enumerate(paragraphs):
        tokens = count_tokens(p.text)
        if tokens <= segment_tokens:
            units.append((i, p.text, tokens, p.heading))
            continue
        piece, piece_tokens = [], 0
        pieces = [u for s in lexical.sentences(p.text) or [p.text] for u in halve_to_fit(s, len(s), segment_tokens)]
        for sentence in pieces:  # a 'sentence' longer than a segment (no sentence end in it) is cut between words
            t = count_tokens(sentence)
            if piece and piece_tokens + t > segment_tokens:
                units.append((i, " ".join(piece), piece_tokens, False))
                piece, piece_tokens = [], 0
            piece.append(sentence)
            piece_tokens += t
        if piece:
            units.append((i, " ".join(piece), piece_tokens, False))

    groups: list[list[tuple[int, str, int, bool]]] = []
    current: list[tuple[int, str, int, bool]] = []
    total = 0
    for unit in units:
        if current and total + unit[2] > segment_tokens:
            carried = [current.pop()] if len(current) > 1 and current[-1][3] else []
            groups.append(current)
            current, total = carried, sum(u[2] for u in carried)
        current.append(unit)
        total += unit[2]
    if current:
        groups.append(current)

    segments = []
    for group in groups:
        text = group[0][1]
        for previous, unit in zip(group, group[1:]):
            text += (" " if unit[0] == previous[0] else "\n") + unit[1]
        segments.append(Segment(group[0][0], group[-1][0] + 1, text, count_tokens(text)))
    return segments

