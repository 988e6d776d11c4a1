"""ReadAgent's reply parsers: pure ``str -> Parsed`` functions for pause points, page lists,
"Page N"/"STOP" and gists. They accept every format the prompts ask for (and the common
ways models stray from it), and otherwise say in one sentence what was wrong.
"""
from __future__ import annotations

import re
from typing import Sequence

from core import prompts
from core.parsing import Parsed, bad, clean, refusal, repeats_example, screen_text
from core.text.documents import count_words

STOP = "STOP"


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
_PAGINATION_PROMPTS = (prompts.PAGINATION, prompts.PAGINATION_QMSUM, prompts.PAGINATION_BOOK, prompts.PAGINATION_MOVIE)


def parse_pause_point(reply: str, labels: Sequence[int]) -> Parsed[int]:
    """'Break point: <57>', 'Label: <57>', 'The break point is: <9>', '<12>', '12'."""
    text = clean(reply)
    if not text:
        return bad("the reply was empty")
    if any(marker in text.lower() for marker in _PAGINATION_ECHO):
        return bad("the reply repeats the instructions instead of choosing a label")
    if repeats_example(text, *_PAGINATION_PROMPTS):
        return bad("the reply is the prompt's own example, not a choice; choose one of the passage's labels "
                   "and say why")
    match = _LABEL_KEYWORD.search(text)
    if match is None:
        angles = list(dict.fromkeys(_ANGLE.findall(text)))
        if len(angles) >= 3:
            return bad("the reply repeats the passage instead of choosing one label")
        match = _ANGLE.search(text) or re.fullmatch(r"\D{0,3}(\d+)\D{0,3}", text)
    if match is None:
        return bad(f"it does not name a label; answer like \"Break point: <{labels[-1]}>\"")
    value = int(match.group(1))
    if value not in labels:
        return bad(f"<{value}> is not one of the labels in the passage ({_summarise(labels)})")
    return Parsed(value)


# --- look-up ------------------------------------------------------------------------

_DECLINE = re.compile(
    r"\b(?:no|don't|do not|dont|won't|not)\b[^.\n]{0,40}\b(?:need|want|necessary|required)\b[^.\n]{0,40}\b(?:look|read|page)",
    re.I,
)
_PAGE_LIST_LOOSE = re.compile(r"\bpages?\s+((?:\d+(?:\s*(?:,|and|&|\+)\s*)?)+)", re.I)
_LOOKUP_ECHO = ("if you only need to read page", "if you would like to read page", "respond with \"i want to look up",
                "which page(s) you would like to read", "do not select more pages")


def parse_page_list(reply: str, num_pages: int, max_pages: int) -> Parsed[list[int]]:
    """'I want to look up Page [7, 12] to ...'. The list is the text between the first '['
    and the following ']'. Out-of-range pages are dropped, duplicates removed, and only
    the first ``max_pages`` kept; each repair is noted. Declining to look up is valid."""
    text = clean(reply)
    if not text:
        return bad("the reply was empty")
    if any(echo in text.lower() for echo in _LOOKUP_ECHO):
        return bad("the reply repeats the instructions and their examples instead of choosing pages")
    if repeats_example(text, prompts.LOOKUP_PARALLEL, prompts.LOOKUP_PARALLEL_RANKED):
        return bad("the reply is the prompt's own example (\"I want to look up Page [8] to ...\"), not a choice; "
                   "name the pages this question needs and say why")
    start = text.find("[")
    end = text.find("]", start + 1) if start >= 0 else -1
    if start >= 0 and end > start:
        items = re.findall(r"-?\d+", text[start + 1 : end])
        if not items and not text[start + 1 : end].strip():
            return Parsed([], notes=("asked for no pages (empty list)",))
        if not items:
            return bad("the brackets hold no page numbers; answer like \"I want to look up Page [2, 5] to ...\"")
    else:
        loose = _PAGE_LIST_LOOSE.search(text)
        if loose is None:
            if _DECLINE.search(text):
                return Parsed([], notes=("declined to look up any page",))
            if refusal(text):
                return bad("it refuses instead of choosing pages; answer like \"I want to look up Page [2, 5] to ...\"")
            return bad("it does not list pages in brackets; answer like \"I want to look up Page [2, 5] to ...\"")
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
        return bad(f"none of the pages asked for exist; the pages are numbered 0-{num_pages - 1}")
    if len(pages) > max_pages:
        notes.append(f"kept the first {max_pages} of {len(pages)} pages")
        pages = pages[:max_pages]
    return Parsed(pages, notes=tuple(notes))


_NEXT_ECHO = ("to read a page again, respond with", "replacing $page_num", "specify a single page you would like")


def parse_next_page(reply: str, num_pages: int, already_read: Sequence[int]) -> Parsed[int | str]:
    """ReadAgent-S: 'Page 5' or 'STOP'. Returns a page number or ``STOP``."""
    text = clean(reply)
    if not text:
        return bad("the reply was empty")
    if any(echo in text.lower() for echo in _NEXT_ECHO) or repeats_example(text, prompts.LOOKUP_SEQUENTIAL):
        return bad('the reply repeats the instructions instead of answering "Page N" or "STOP"')
    if re.match(r"^[\W_]*stop\b", text, re.I):
        return Parsed(STOP)
    match = re.search(r"\bpage\s*(?:number\s*)?[:#]?\s*\[?(\d+)", text, re.I) or re.fullmatch(r"\W*(\d+)\W*", text)
    if match is None:
        if re.search(r"\bSTOP\b", text):
            return Parsed(STOP)
        return bad('it is neither "Page N" nor "STOP"')
    page = int(match.group(1))
    if not 0 <= page < num_pages:
        return bad(f"there is no Page {page}; the pages are numbered 0-{num_pages - 1}")
    if page in already_read:
        return bad(f"Page {page} was already read; choose another page or say STOP")
    return Parsed(page)


# --- gists ---------------------------------------------------------------------------

_GIST_PREAMBLE = re.compile(
    r"^(?:sure[,!.]?\s*)?(?:here(?:'s| is)\b[^\n:]*|(?:a\s+)?shortened(?: version)?(?: of the passage)?|gist|summary)\s*:\s*",
    re.I,
)
_GIST_ECHO = ("please shorten the following passage", "just give me a shortened version")


def parse_gist(reply: str, page_words: int, page_text: str | None = None) -> Parsed[str]:
    """The shortened page. The model's thinking, preambles ('Here is a shortened version:') and
    quotes are removed. Refused: an empty reply, the instructions, a refusal, the start of the
    model's thinking with nothing after it, a pause-point label or look-up answer, JSON, text
    longer than the page, and (given ``page_text``) text sharing almost no words with the page."""
    parsed = screen_text(reply, "shortened passage", source=page_text, source_name="the page",
                         preamble=_GIST_PREAMBLE, echoes=_GIST_ECHO)
    if not parsed.ok:
        return parsed
    words = count_words(parsed.value)
    if words > page_words:
        return bad(f"the reply ({words} words) is longer than the page ({page_words} words)")
    return parsed
