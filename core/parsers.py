"""Parsers for model replies: pure ``str -> Parsed`` functions.

Each accepts every format its prompt asks for (and the common ways models
stray from it), and otherwise says in one sentence what was wrong, so the step
can re-ask with that sentence and the trace can show it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Generic, Sequence, TypeVar

from core.documents import count_words
from core.prompts import option_letters

T = TypeVar("T")

STOP = "STOP"


@dataclass(frozen=True)
class Parsed(Generic[T]):
    value: T | None
    problem: str = ""  # empty when the reply was usable
    notes: tuple[str, ...] = field(default=())  # what was repaired: duplicates, out-of-range pages...

    @property
    def ok(self) -> bool:
        return not self.problem


def _bad(problem: str) -> Parsed:
    return Parsed(None, problem)


def clean(reply: str | None) -> str:
    """Strip markdown emphasis, code fences and surrounding whitespace."""
    text = (reply or "").strip()
    text = re.sub(r"^```[a-zA-Z]*\n?|\n?```$", "", text).strip()
    return re.sub(r"\*\*|__|`", "", text).strip()


def _summarise(labels: Sequence[int]) -> str:
    labels = list(labels)
    if len(labels) <= 6:
        return ", ".join(f"<{j}>" for j in labels)
    return f"<{labels[0]}>, <{labels[1]}>, ... <{labels[-1]}>"


# --- pagination -------------------------------------------------------------------

_LABEL_KEYWORD = re.compile(
    r"(?:break\s*point|pause\s*point|label|breakpoint)s?\b[^0-9<⟨\n]{0,25}?(?:[<⟨]|&lt;)?\s*(\d+)", re.I
)
_ANGLE = re.compile(r"(?:[<⟨]|&lt;)\s*(\d+)\s*(?:[>⟩]|&gt;)")
_PAGINATION_ECHO = ("natural to break reading", "numbered labels", "are in angle brackets")


def parse_pause_point(reply: str, labels: Sequence[int]) -> Parsed[int]:
    """'Break point: <57>', 'Label: <57>', 'The break point is: <9>', '<12>', '12'."""
    text = clean(reply)
    if not text:
        return _bad("the reply was empty")
    if any(marker in text.lower() for marker in _PAGINATION_ECHO):
        return _bad("the reply repeats the instructions instead of choosing a label")
    match = _LABEL_KEYWORD.search(text)
    if match is None:
        angles = list(dict.fromkeys(_ANGLE.findall(text)))
        if len(angles) >= 3:
            return _bad("the reply repeats the passage instead of choosing one label")
        match = _ANGLE.search(text) or re.fullmatch(r"\D{0,3}(\d+)\D{0,3}", text)
    if match is None:
        return _bad(f"it does not name a label; answer like \"Break point: <{labels[-1]}>\"")
    value = int(match.group(1))
    if value not in labels:
        return _bad(f"<{value}> is not one of the labels in the passage ({_summarise(labels)})")
    return Parsed(value)


# --- look-up ------------------------------------------------------------------------

_DECLINE = re.compile(
    r"\b(?:no|don't|do not|dont|won't|not)\b[^.\n]{0,40}\b(?:need|want|necessary|required)\b[^.\n]{0,40}\b(?:look|read|page)",
    re.I,
)
_PAGE_LIST_LOOSE = re.compile(r"\bpages?\s+((?:\d+(?:\s*(?:,|and|&|\+)\s*)?)+)", re.I)


def parse_page_list(reply: str, num_pages: int, max_pages: int) -> Parsed[list[int]]:
    """'I want to look up Page [7, 12] to ...'. The list is the text between the first '['
    and the following ']'. Out-of-range pages are dropped, duplicates removed, and only
    the first ``max_pages`` kept; each repair is noted. Declining to look up is valid."""
    text = clean(reply)
    if not text:
        return _bad("the reply was empty")
    start = text.find("[")
    end = text.find("]", start + 1) if start >= 0 else -1
    if start >= 0 and end > start:
        items = re.findall(r"-?\d+", text[start + 1 : end])
        if not items and not text[start + 1 : end].strip():
            return Parsed([], notes=("asked for no pages (empty list)",))
        if not items:
            return _bad("the brackets hold no page numbers; answer like \"I want to look up Page [2, 5] to ...\"")
    else:
        loose = _PAGE_LIST_LOOSE.search(text)
        if loose is None:
            if _DECLINE.search(text):
                return Parsed([], notes=("declined to look up any page",))
            return _bad("it does not list pages in brackets; answer like \"I want to look up Page [2, 5] to ...\"")
        items = re.findall(r"\d+", loose.group(1))
    notes: list[str] = []
    pages: list[int] = []
    for item in items:
        page = int(item)
        if not 0 <= page < num_pages:
            notes.append(f"dropped page {page}: there are pages 0-{num_pages - 1}")
        elif page in pages:
            notes.append(f"dropped duplicate page {page}")
        else:
            pages.append(page)
    if not pages:
        return _bad(f"none of the pages asked for exist; the pages are numbered 0-{num_pages - 1}")
    if len(pages) > max_pages:
        notes.append(f"kept the first {max_pages} of {len(pages)} pages")
        pages = pages[:max_pages]
    return Parsed(pages, notes=tuple(notes))


def parse_next_page(reply: str, num_pages: int, already_read: Sequence[int]) -> Parsed[int | str]:
    """ReadAgent-S: 'Page 5' or 'STOP'. Returns a page number or ``STOP``."""
    text = clean(reply)
    if not text:
        return _bad("the reply was empty")
    if re.match(r"^[\W_]*stop\b", text, re.I):
        return Parsed(STOP)
    match = re.search(r"\bpage\s*(?:number\s*)?[:#]?\s*\[?(\d+)", text, re.I) or re.fullmatch(r"\W*(\d+)\W*", text)
    if match is None:
        if re.search(r"\bSTOP\b", text):
            return Parsed(STOP)
        return _bad('it is neither "Page N" nor "STOP"')
    page = int(match.group(1))
    if not 0 <= page < num_pages:
        return _bad(f"there is no Page {page}; the pages are numbered 0-{num_pages - 1}")
    if page in already_read:
        return _bad(f"Page {page} was already read; choose another page or say STOP")
    return Parsed(page)


# --- answers -------------------------------------------------------------------------

def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def parse_choice(reply: str, options: Sequence[str]) -> Parsed[str]:
    """'Answer: (C) ...', 'Answer: C', 'The answer is (C)', '(C)', 'C.', or an option's exact text."""
    letters = option_letters(len(options))
    text = clean(reply)
    if not text:
        return _bad("the reply was empty")
    # Keywords match in any case; the letter itself only in capitals ("answer is a man" is no choice).
    patterns = [
        r"(?i:\banswer\s*(?:is|:|-|would be|should be)?\s*:?\s*(?:option\s*)?)\(?([A-J])\)?(?![A-Za-z])",
        r"^\(?([A-J])\)(?=\s|$|[.:,])",
        r"^([A-J])(?:[.:,]|\s*$)",
        r"(?i:\boption\s*)\(?([A-J])\)?(?![A-Za-z])",
        r"\(([A-J])\)",
        r"(?i:\banswer\s*:\s*)\(?([a-j])(?:\)|\.|\s*$)",
    ]
    for pattern in patterns:
        match = re.search(pattern, text)
        if match:
            letter = match.group(1).upper()
            if letter not in letters:
                return _bad(f"({letter}) is not one of the options ({', '.join(letters)})")
            return Parsed(letter)
    said = f" {_norm(text)} "
    matches = [l for l, o in zip(letters, options) if len(_norm(o)) > 2 and f" {_norm(o)} " in said]
    if len(matches) == 1:
        return Parsed(matches[0], notes=("matched the option's text",))
    return _bad(f'it does not name an option; answer like "Answer: ({letters[0]}) ..."')


def parse_freeform(reply: str) -> Parsed[str]:
    text = clean(reply)
    text = re.sub(r"^answer\s*:\s*", "", text, flags=re.I).strip()
    if not text:
        return _bad("the reply was empty")
    return Parsed(text)


# --- gists ---------------------------------------------------------------------------

_GIST_PREAMBLE = re.compile(
    r"^(?:sure[,!.]?\s*)?(?:here(?:'s| is)\b[^\n:]*|(?:a\s+)?shortened(?: version)?(?: of the passage)?|gist|summary)\s*:\s*",
    re.I,
)


def parse_gist(reply: str, page_words: int) -> Parsed[str]:
    """The shortened page. Preambles ('Here is a shortened version:') and quotes are removed."""
    text = clean(reply)
    text = _GIST_PREAMBLE.sub("", text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if not text:
        return _bad("the reply was empty")
    if "please shorten the following passage" in text.lower():
        return _bad("the reply repeats the instructions instead of shortening the passage")
    words = count_words(text)
    if words > page_words:
        return _bad(f"the reply ({words} words) is longer than the page ({page_words} words)")
    return Parsed(text)
