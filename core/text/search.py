"""Finding words in a book's pages and their gists: what the reader types, found as they meant it.

The query is literal text, never a pattern: ``.*`` or ``(`` find those characters. Case does
not matter, any run of spaces or line breaks in the query matches any run in the text, and
curly and straight quotes are the same letter (``Darcy's`` finds ``Darcy’s``). Quotes around the
whole query are dropped (``"Pemberley"`` finds Pemberley). Offsets always index the text as given,
so a caller can escape the pieces between matches and mark the matches.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032`"
DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"
_QUOTES = str.maketrans({**{c: "'" for c in SINGLE_QUOTES}, **{c: '"' for c in DOUBLE_QUOTES}})
_SURROUNDING = "\"'" + SINGLE_QUOTES + DOUBLE_QUOTES
MAX_QUERY = 200  # characters: a search box, not a document
SNIPPET_CHARS = 70  # either side of the first match


@dataclass(frozen=True)
class PageMatch:
    """A page the query was found on: how often in its text and in its gist, and a snippet
    around the first match (in the text, or the gist when the text has none) with the matches'
    spans inside the snippet."""
    page: int
    in_text: int
    in_gist: int
    where: str  # "text" or "gist": what the snippet quotes
    snippet: str
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SearchResult:
    query: str
    matches: tuple[PageMatch, ...]  # at most ``limit``, in page order
    pages: int  # pages with a match, all of them
    hits: int  # matches in texts and gists, all of them

    @property
    def cut(self) -> bool:
        return self.pages > len(self.matches)


def _fold(text: str) -> str:
    """Lower case and one kind of each quote, one character for one (offsets stay put)."""
    text = text.translate(_QUOTES)
    lowered = text.lower()
    if len(lowered) == len(text):  # nearly always: no letter lowers to two (İ does)
        return lowered
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def clean_query(query: str) -> str:
    """The query as searched: trimmed, surrounding quotes dropped, at most ``MAX_QUERY`` characters."""
    query = " ".join((query or "").split())[:MAX_QUERY]
    stripped = query.strip(_SURROUNDING).strip()
    return stripped or query  # a query of quotes only searches for them


def pattern(query: str) -> re.Pattern | None:
    """The compiled search for ``query``, or None when there is nothing to look for."""
    query = _fold(clean_query(query))
    if not query:
        return None
    return re.compile(r"\s+".join(re.escape(part) for part in query.split()))


def find_spans(text: str, query: str | re.Pattern | None) -> list[tuple[int, int]]:
    """Where ``query`` occurs in ``text``: (start, end) offsets into ``text``, not overlapping."""
    compiled = pattern(query) if isinstance(query, str) else query
    if compiled is None or not text:
        return []
    return [m.span() for m in compiled.finditer(_fold(text)) if m.end() > m.start()]


def snippet(text: str, spans: list[tuple[int, int]], chars: int = SNIPPET_CHARS) -> tuple[str, tuple]:
    """Some words either side of the first span, cut at spaces, with ``…`` where text was left
    out; the spans that fall inside it, shifted to the snippet's offsets."""
    start, end = spans[0]
    lo, hi = max(0, start - chars), min(len(text), end + chars)
    if lo > 0 and (space := text.find(" ", lo, start)) != -1:
        lo = space + 1
    if hi < len(text) and (space := text.rfind(" ", end, hi)) != -1:
        hi = space
    head, tail = ("…" if lo > 0 else ""), ("…" if hi < len(text) else "")
    piece = text[lo:hi]
    # Line breaks become spaces, one for one, so the spans keep their places.
    piece = "".join(" " if c in "\r\n\t" else c for c in piece)
    shift = len(head) - lo
    inside = tuple((s + shift, e + shift) for s, e in spans if s >= lo and e <= hi)
    return head + piece + tail, inside


def search_pages(pages: Sequence[tuple[str, str]], query: str, limit: int = 30) -> SearchResult:
    """Pages (``(text, gist)`` by page index) holding ``query`` in their text or gist, in page
    order; at most ``limit`` of them listed, all of them counted."""
    compiled = pattern(query)
    matches, found, hits = [], 0, 0
    if compiled is not None:
        for index, (text, gist) in enumerate(pages):
            in_text, in_gist = find_spans(text, compiled), find_spans(gist or "", compiled)
            if not in_text and not in_gist:
                continue
            found += 1
            hits += len(in_text) + len(in_gist)
            if len(matches) < limit:
                where, source, spans = ("text", text, in_text) if in_text else ("gist", gist, in_gist)
                quoted, inside = snippet(source, spans)
                matches.append(PageMatch(index, len(in_text), len(in_gist), where, quoted, inside))
    return SearchResult(clean_query(query), tuple(matches), found, hits)
