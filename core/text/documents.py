"""Documents: Project Gutenberg clean-up, paragraphs, headings, sections (decoding is in ``encodings``).

A paragraph is what a reader sees as one: lines are joined across hard wraps,
one or more blank lines separate paragraphs, CRLF and CR are newlines. Texts
with no blank lines at all (some magazine articles) fall back to layout cues:
a short line that ends a sentence, or an indented line, starts a new paragraph.

Words are counted as the ReadAgent paper counts them: ``len(text.split())``.
"""
from __future__ import annotations

import hashlib
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import DocumentError

# A paragraph longer than this is split between sentences when the text is loaded: a paragraph
# is the smallest unit a page is made of, and a page must fit in a prompt. No shipped text has a
# paragraph this long, so no shipped text changes.
MAX_PARAGRAPH_WORDS = 1000
MAX_PARAGRAPH_TOKENS = 1400  # the same for text whose words are long (or not separated by spaces)
# ... into pieces of at most this many, so pagination can still choose where a page ends (every
# preset's pages hold at least 600 words) and a 2,048-token window holds a window of pieces.
PIECE_WORDS = 400
PIECE_TOKENS = 560


def count_words(text: str) -> int:
    return len(text.split())


@dataclass(frozen=True)
class Paragraph:
    text: str
    words: int
    heading: bool = False


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    paragraphs: tuple[Paragraph, ...]
    source: str = ""
    author: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def words(self) -> int:
        return sum(p.words for p in self.paragraphs)

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.paragraphs)

    def span_text(self, start: int, end: int) -> str:
        """Paragraphs ``start``..``end - 1`` as the prompts show a page: one per line."""
        return join_paragraphs(p.text for p in self.paragraphs[start:end])


def join_paragraphs(texts) -> str:
    """The one way a page's paragraphs are joined (prompts, look-ups, exports)."""
    return "\n".join(texts)


# --- Project Gutenberg ----------------------------------------------------------

_PG_START = re.compile(
    r"^\s*\*{3}\s*START OF (?:THIS|THE) PROJECT GUTENBERG E-?BOOK[^\n]*$", re.I | re.M
)
_PG_END = re.compile(
    r"^\s*(?:\*{3}\s*END OF (?:THIS|THE) PROJECT GUTENBERG E-?BOOK"
    r"|End of (?:the )?Project Gutenberg(?:['’]s)? E-?(?:book|text)|End of (?:the )?Project Gutenberg(?:['’]s)? )[^\n]*$",
    re.I | re.M,
)
_PG_FIELD = re.compile(r"^(Title|Author):[ \t]*(.+)$", re.M)
_PG_CREDIT = re.compile(r"^(Produced by|E-text prepared by|Transcribed from|This e-?text was)", re.I)


def strip_gutenberg(text: str) -> tuple[str, dict]:
    """Remove the Project Gutenberg header and licence footer if present.

    Returns the body and what the header said (title, author)."""
    start = _PG_START.search(text)
    if not start:
        return text, {}
    header = text[: start.start()]
    meta = {k.lower(): v.strip() for k, v in _PG_FIELD.findall(header)}
    body = text[start.end():]
    end = _PG_END.search(body)
    if end:
        body = body[: end.start()]
    # Drop the volunteers' credit that usually opens the body.
    blocks = re.split(r"\n\s*\n", body.strip("\n"), maxsplit=3)
    while blocks and _PG_CREDIT.match(blocks[0].strip()):
        blocks.pop(0)
    return "\n\n".join(blocks), meta


def gutenberg_books(text: str) -> list[str]:
    """A file holding several Project Gutenberg books, cut into one text per book: each runs
    to the end of its END marker line (the next one's header follows, after the licence). A
    file with one book, or none, is returned whole."""
    starts = list(_PG_START.finditer(text))
    if len(starts) < 2:
        return [text]
    books, begin = [], 0
    for start, following in zip(starts, starts[1:]):
        end = _PG_END.search(text, start.end(), following.start())
        cut = text.find("\n", end.end()) + 1 if end else following.start()
        books.append(text[begin:cut])
        begin = cut
    books.append(text[begin:])
    return books


def book_title(text: str) -> str:
    """The title a Gutenberg header gives, else the first words."""
    start = _PG_START.search(text)
    fields = dict((k.lower(), v.strip()) for k, v in _PG_FIELD.findall(text[: start.start()] if start else text[:3000]))
    return fields.get("title") or " ".join(text.split()[:8])


# --- paragraphs ---------------------------------------------------------------

_TERMINAL = re.compile(r"[.!?:;][\"'”’»)\]_*]*$")
_STARTS_NEW = re.compile(r"^[\"'“‘«(\[A-Z0-9_*—-]")


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")


def _is_title_line(line: str) -> bool:
    if not line.isupper():  # a lower-case letter, or no cased letter at all: never a title (and 10x quicker)
        return False
    letters = [c for c in line if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters) and count_words(line) <= 8


def _split_block(lines: list[str], wrap_width: int) -> list[list[str]]:
    """Split one blank-line-free block into paragraphs using layout cues."""
    if len(lines) < 3:
        return [lines]
    base_indent = min(len(l) - len(l.lstrip()) for l in lines)
    out: list[list[str]] = [[lines[0]]]
    for prev, line in zip(lines, lines[1:]):
        stripped, prev_stripped = line.strip(), prev.strip()
        indent = len(line) - len(line.lstrip())
        new = (
            (indent >= base_indent + 2 and _STARTS_NEW.match(stripped) is not None)
            or (
                _TERMINAL.search(prev_stripped) is not None
                and len(prev_stripped) < 0.7 * wrap_width
                and _STARTS_NEW.match(stripped) is not None
            )
            or _is_title_line(prev_stripped)
            or _is_title_line(stripped)
            or is_heading(stripped)
            or is_heading(prev_stripped)
        )
        if new:
            out.append([line])
        else:
            out[-1].append(line)
    return out


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs as a reader sees them (see the module docstring)."""
    text = normalise_newlines(text).replace("\t", "    ")
    blocks = [b for b in re.split(r"\n[^\S\n]*\n", text) if b.strip()]
    line_lengths = [len(l.strip()) for b in blocks for l in b.split("\n") if l.strip()]
    if not line_lengths:
        return []
    wrap_width = int(statistics.quantiles(line_lengths, n=10)[-1]) if len(line_lengths) > 1 else line_lengths[0]
    paragraphs = []
    for block in blocks:
        lines = [l for l in block.split("\n") if l.strip()]
        for group in _split_block(lines, wrap_width):
            joined = " ".join(l.strip() for l in group)
            joined = re.sub(r"\s+", " ", joined).strip()
            if joined:
                paragraphs.append(joined)
    return paragraphs


# --- headings -----------------------------------------------------------------

_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final"
)
_HEADING = re.compile(
    r"^(?:"
    r"(?:chapter|letter|book|part|volume|act|scene|canto|stave|section|episode)\.?\s+"
    rf"(?:[0-9]+|[ivxlcdm]+|(?:the\s+)?(?:{_NUMBER_WORDS})(?:[\s-]+(?:{_NUMBER_WORDS}))?)\b[^a-z]?.*"
    r"|(?:prologue|epilogue|preface|introduction|foreword|afterword|conclusion)(?:\s*[.:—-].*)?"
    r"|[ivxlcdm]{1,7}\.?"
    r"|[0-9]{1,3}\.?"
    r"|#{1,6}\s+\S.*"
    r")$",
    re.I,
)
_TITLE_SMALL_WORDS = frozenset(
    "a an and as at but by for from in into nor of off on onto or out over per the to up upon via with"
    " within without".split()
)
_NUMBERED = re.compile(r"^(?:chapter|letter|book|part|volume|act|scene|canto|stave|section|episode)\b", re.I)


def is_heading(paragraph: str) -> bool:
    """A chapter/section heading: 'Chapter 3', 'CHAPTER I. Down the Rabbit-Hole',
    'Letter 1', 'Part Two', 'IV', '# Title'. Short, and not a sentence of prose."""
    text = paragraph.strip()
    if not text or count_words(text) > 12 or len(text) > 100 or not _HEADING.match(text):
        return False
    if text.startswith("#"):
        return True
    if not (text[0].isupper() or text[0].isdigit()):
        return False
    # 'Book two was a bore.' is prose; 'CHAPTER V. Advice from a Caterpillar' is a title:
    # after the keyword and its number, every longer word of a heading is capitalised.
    rest = [w.strip(".,;:!?'\"()") for w in text.split()[2 if _NUMBERED.match(text) else 1:]]
    return all(not w[:1].isalpha() or w[:1].isupper() for w in rest if w.lower() not in _TITLE_SMALL_WORDS)


def _strip_markdown_heading(text: str) -> str:
    return re.sub(r"^#{1,6}\s+", "", text).strip()


def sections(paragraphs: list[Paragraph] | tuple[Paragraph, ...], min_words: int) -> list[tuple[int, int]]:
    """Hard page breaks for books: ranges [start, end) of paragraphs, each starting at a
    heading. A stretch shorter than ``min_words`` (a title page, a table of contents,
    a very short chapter) joins the stretch after it, or the one before if it is last."""
    n = len(paragraphs)
    if n == 0:
        return []
    starts = [0] + [i for i in range(1, n) if paragraphs[i].heading]
    bounds = list(zip(starts, starts[1:] + [n]))
    merged: list[list[int]] = []
    carry = None
    for start, end in bounds:
        if carry is not None:
            start = carry
        words = sum(p.words for p in paragraphs[start:end])
        if words < min_words:
            carry = start
            continue
        carry = None
        merged.append([start, end])
    if carry is not None:
        if merged:
            merged[-1][1] = n
        else:
            merged.append([carry, n])
    return [(s, e) for s, e in merged]


# --- paragraphs too long for a page -------------------------------------------------------------

def _fits_paragraph(text: str, max_words: int, max_tokens: int) -> bool:
    from core.text.tokens import count_tokens

    if count_words(text) > max_words:
        return False
    return len(text.encode("utf-8")) <= max_tokens or count_tokens(text) <= max_tokens


def halve_to_fit(text: str, max_words: int, max_tokens: int):
    """``text`` in pieces that fit, cut in half between words (between characters in a word
    with no spaces) until each fits: for a 'sentence' with no sentence end in it."""
    if _fits_paragraph(text, max_words, max_tokens):
        yield text
        return
    words = text.split()
    if len(words) > 1:
        halves = (" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2:]))
    else:
        halves = (text[: len(text) // 2], text[len(text) // 2:])
    for half in halves:
        yield from halve_to_fit(half, max_words, max_tokens)


def split_long_paragraph(text: str, max_words: int = MAX_PARAGRAPH_WORDS, max_tokens: int = MAX_PARAGRAPH_TOKENS,
                         *, piece_words: int = PIECE_WORDS, piece_tokens: int = PIECE_TOKENS) -> list[str]:
    """``text`` as it is if it has at most ``max_words`` words and ``max_tokens`` tokens, else
    pieces of about equal size, each of at most ``piece_words`` words and ``piece_tokens``
    tokens, cut between sentences (between words inside a sentence longer than a piece)."""
    if _fits_paragraph(text, max_words, max_tokens):
        return [text]
    max_words, max_tokens = piece_words, piece_tokens
    from core.text.lexical import sentences
    from core.text.tokens import count_tokens

    units = [(u, count_words(u), count_tokens(u)) for sentence in (sentences(text) or [text])
             for u in halve_to_fit(sentence, max_words, max_tokens)]
    total_words, total_tokens = sum(u[1] for u in units), sum(u[2] for u in units)
    pieces_needed = max(math.ceil(total_words / max_words), math.ceil(total_tokens / max_tokens), 1)
    target_words, target_tokens = total_words / pieces_needed, total_tokens / pieces_needed
    pieces: list[str] = []
    current: list[str] = []
    words = tokens = 0
    for unit, unit_words, unit_tokens in units:
        over = words + unit_words > max_words or tokens + unit_tokens + 1 > max_tokens
        if current and (over or words >= target_words or tokens >= target_tokens):
            pieces.append(" ".join(current))
            current, words, tokens = [], 0, 0
        current.append(unit)
        words += unit_words
        tokens += unit_tokens + 1
    if current:
        pieces.append(" ".join(current))
    return pieces


# --- loading ------------------------------------------------------------------

def _title_from(paragraphs: list[str], meta: dict, source: str) -> str:
    if meta.get("title"):
        return meta["title"]
    for p in paragraphs[:3]:
        if p.startswith("#"):
            return _strip_markdown_heading(p)
    if source:
        stem = Path(source).stem
        stem = re.sub(r"^pg\d+[_-]?", "", stem)
        return re.sub(r"[_-]+", " ", stem).strip().title() or stem
    first = paragraphs[0] if paragraphs else "Untitled"
    return " ".join(first.split()[:8])


def parse_text(text: str, *, title: str | None = None, source: str = "", author: str = "",
               markdown: bool | None = None) -> Document:
    """Normalise raw text into a Document (Gutenberg boilerplate removed). ``#`` lines are
    headings in Markdown (by default: a .md source)."""
    text = normalise_newlines(text)
    body, meta = strip_gutenberg(text)
    raw = split_paragraphs(body)
    is_markdown = source.lower().endswith((".md", ".markdown")) if markdown is None else markdown
    paragraphs = []
    split = 0
    for p in raw:
        heading = is_heading(p)
        if is_markdown and p.startswith("#"):
            p = _strip_markdown_heading(p)
            heading = True
        pieces = [p] if heading else split_long_paragraph(p)
        split += len(pieces) > 1
        paragraphs.extend(Paragraph(text=piece, words=count_words(piece), heading=heading) for piece in pieces)
    if not paragraphs or sum(p.words for p in paragraphs) == 0:
        raise DocumentError(
            f"{source or 'The text'} has no readable words. Choose a file that contains the text to read."
        )
    digest = hashlib.sha256("\n\n".join(p.text for p in paragraphs).encode()).hexdigest()
    return Document(
        id=digest[:12],
        title=title or _title_from(raw, meta, source),
        paragraphs=tuple(paragraphs),
        source=Path(source).name if source else "",
        author=author or meta.get("author", ""),
        meta={**{k: v for k, v in meta.items() if k not in ("title", "author")},
              **({"split_paragraphs": split, "split_words": MAX_PARAGRAPH_WORDS, "piece_words": PIECE_WORDS}
                 if split else {})},
    )


def load_bytes(data: bytes, name: str, *, title: str | None = None, encoding: str | None = None,
               book: int = 0) -> Document:
    """A document from a file's bytes: text or Markdown (in ``encoding``, else detected), or HTML,
    EPUB and PDF by extension. A guessed encoding is kept in ``meta`` ("encoding",
    "encoding_guessed") so the reader can be told and choose another."""
    from core.text import formats
    from core.text.encodings import decode

    if formats.is_rich(name):
        found = formats.extract(data, name)
        return parse_text(found.text, title=title or found.title or None, source=name, author=found.author,
                          markdown=True)
    decoded = decode(data, name, encoding)
    books = gutenberg_books(decoded.text)
    if not 0 <= book < len(books):
        raise DocumentError(f"{name} holds {len(books)} book{'s' if len(books) != 1 else ''}; there is no book "
                            f"{book + 1}.")
    document = parse_text(books[book], title=title, source=name)
    if len(books) > 1:  # never cut silently: the document says which book of how many it is
        document.meta.update(book=book, books=[book_title(b) for b in books])
    if decoded.encoding != "utf-8":
        document.meta.update(encoding=decoded.encoding, encoding_guessed=decoded.guessed)
    return document


def load_path(path: str | Path, *, title: str | None = None, encoding: str | None = None,
              book: int = 0) -> Document:
    path = Path(path)
    if not path.exists():
        raise DocumentError(f"No file at {path}. Check the path and try again.")
    if path.is_dir():
        raise DocumentError(f"{path} is a folder. Give the path of a text file.")
    return load_bytes(path.read_bytes(), path.name, title=title, encoding=encoding, book=book)
