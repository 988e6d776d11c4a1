"""Episode pagination (ReadAgent Sec. 3.1): the window of paragraphs a pause point is
chosen from, with its numbered labels, exactly as the authors' notebook builds it.

Each step starts at paragraph ``i`` (the last pause point) and adds paragraphs while
the running count is below ``max_words``; label ``<j>`` means "break before paragraph
j". As in the notebook, paragraph j's words join the count *before* label ``<j>`` is
decided, so ``<j>`` is offered once paragraphs i..j hold ``min_words`` and a page chosen
at ``<j>`` (paragraphs i..j-1) may be shorter than ``min_words``. When the rest of a section is short, or there is only one possible break, the
page ends without asking (``forced_break``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core.llm.window import cut_to_tokens
from core.methods.readagent.presets import Preset
from core.text.documents import Paragraph, count_words
from core.text.tokens import count_tokens
from core.trace import Decision, by_rule

LOOKAHEAD_WORDS = 150


@dataclass(frozen=True)
class Window:
    """One pagination step: paragraphs ``start``..``end-1`` with labels ``<j>`` meaning
    "break before paragraph j", offered once paragraphs ``start``..j hold ``min_words``."""
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
    # What was left out so the prompt fits the model's context window ("" when nothing was).
    fitted: str = ""

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
                previous_page: Sequence[str] = (), prompt_tokens: int | None = None,
                model: str | None = None) -> Window:
    """The notebook's window: add paragraphs while the count is below ``max_words``;
    paragraph j's words join the count first, then the label before paragraph j is offered
    if paragraphs start..j hold ``min_words`` (so a page chosen at ``<j>``, paragraphs
    start..j-1, may hold fewer), plus a final label after the last paragraph added.

    ``prompt_tokens`` (a model's window; None: no limit) bounds the pagination prompt: the
    window stops adding paragraphs before the prompt would not fit, then the next paragraph
    and the previous page's tail are shortened to the room left (the trace says so)."""
    if prompt_tokens is None:
        return _window(paragraphs, start, section_end, preset, previous_page)
    room = prompt_tokens - count_tokens(preset.pagination_prompt.format(preceding="", passage="", following=""),
                                        model)
    for _ in range(4):  # the estimate adds tokens piece by piece; the check counts the whole prompt
        window = _window(paragraphs, start, section_end, preset, previous_page, room, model)
        excess = count_tokens(pagination_prompt(window, preset), model) - prompt_tokens
        if excess <= 0:
            return window
        room -= excess + 8
    return window


def pagination_prompt(window: Window, preset: Preset) -> str:
    """The pause-point step's prompt for ``window``, as sent."""
    return preset.pagination_prompt.format(preceding=window.preceding, passage=window.passage(),
                                           following=window.following)


def _label_tokens(j: int) -> int:
    return len(str(j)) // 3 + 4  # "\n<123>"


def _window(paragraphs: Sequence[Paragraph], start: int, section_end: int, preset: Preset,
            previous_page: Sequence[str], room: int | None = None, model: str | None = None) -> Window:
    def tokens(text: str) -> int:
        return count_tokens(text, model) + 1  # and its newline

    count = paragraphs[start].words
    j = start + 1
    labels = []
    used = tokens(paragraphs[start].text) + _label_tokens(section_end) if room is not None else 0
    stopped = False
    while count < preset.max_words and j < section_end:
        offered = count + paragraphs[j].words >= preset.min_words  # the notebook counts paragraph j first
        if room is not None:
            cost = tokens(paragraphs[j].text) + (_label_tokens(j) if offered else 0)
            if used + cost > room:
                stopped = True
                break
            used += cost
        count += paragraphs[j].words
        if offered:
            labels.append(j)
        j += 1
    labels.append(j)
    fitted: list[str] = []
    if stopped:
        fitted.append(f"the window stops at {count:,} words (before paragraph {j}) so the prompt fits the model's "
                      "context window")
    following = ""
    if j < section_end:
        following = paragraphs[j].text
        if room is not None:
            left = room - used - 3
            if tokens(following) > left:
                cut = cut_to_tokens(following, left - 1, model=model)
                fitted.append(f"the next paragraph is shown {'up to ' + str(count_words(cut)) + ' words' if cut else 'not at all'}"
                              " for room")
                following = cut
            used += tokens(following) + 2
        following = f"{following}\n..." if following else ""
    preceding = ""
    if previous_page:
        kept: list[str] = []
        budget = preset.preceding_words
        for text in reversed(previous_page):
            if budget is not None and kept and sum(count_words(t) for t in kept) + count_words(text) > budget:
                break
            kept.insert(0, text)
        if room is not None:
            left, fitting = room - used - 3, []
            for text in reversed(kept):
                if tokens(text) > left:
                    tail = cut_to_tokens(text, left - 1, from_end=True, model=model)
                    if tail:
                        fitting.insert(0, tail)
                    break
                fitting.insert(0, text)
                left -= tokens(text)
            if fitting != kept:
                shown = sum(count_words(t) for t in fitting)
                fitted.append(f"the previous page's tail is shown as {shown:,} of {sum(map(count_words, kept)):,} "
                              "words for room")
            kept = fitting
        preceding = "...\n" + "\n".join(kept) if kept else ""
    lookahead, k = [], j
    while k < section_end and sum(count_words(t) for t in lookahead) < LOOKAHEAD_WORDS:
        lookahead.append(paragraphs[k].text)
        k += 1
    return Window(start=start, end=j, labels=tuple(labels),
                  paragraphs=tuple(p.text for p in paragraphs[start:j]),
                  headings=tuple(p.heading for p in paragraphs[start:j]),
                  preceding=preceding, following=following, words=count, lookahead=tuple(lookahead),
                  fitted="; ".join(fitted))


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
    if window.fitted:
        return by_rule("pagination", window.end, why, labels=list(window.labels), fitted=window.fitted)
    return by_rule("pagination", window.end, why, labels=list(window.labels))
