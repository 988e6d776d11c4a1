"""Documents: decoding, Project Gutenberg clean-up, paragraphs, headings.

A paragraph is what a reader sees as one: lines are joined across hard wraps,
one or more blank lines separate paragraphs, CRLF and CR are newlines. Texts
with no blank lines at all (some magazine articles) fall back to layout cues:
a short line that ends a sentence, or an indented line, starts a new paragraph.

Words are counted as the ReadAgent paper counts them: ``len(text.split())``.
"""
from __future__ import annotations

import hashlib
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import DocumentError


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


# --- decoding -----------------------------------------------------------------

_BINARY_SIGNATURES = {
    b"%PDF": "a PDF file",
    b"PK\x03\x04": "a ZIP archive (EPUB, DOCX or similar)",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x7fELF": "a program",
}


def decode_bytes(data: bytes, name: str = "the file") -> str:
    """Bytes to text: UTF-8 (with or without BOM), UTF-16 with BOM, else detected."""
    if not data.strip():
        raise DocumentError(f"{name} is empty. Choose a file that contains the text to read.")
    for signature, kind in _BINARY_SIGNATURES.items():
        if data.startswith(signature):
            raise DocumentError(
                f"{name} is {kind}, not text. Upload a .txt or .md file "
                "(the app also reads .html, .epub and .pdf)."
            )
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name} looks like a binary file, not text. Upload a plain-text file.")
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise DocumentError(
            f"Could not tell which text encoding {name} uses. Save it as UTF-8 and try again."
        )
    return str(best)


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


# --- paragraphs ---------------------------------------------------------------

_TERMINAL = re.compile(r"[.!?:;][\"'”’»)\]_*]*$")
_STARTS_NEW = re.compile(r"^[\"'“‘«(\[A-Z0-9_*—-]")


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")


def _is_title_line(line: str) -> bool:
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
    for p in raw:
        heading = is_heading(p)
        if is_markdown and p.startswith("#"):
            p = _strip_markdown_heading(p)
            heading = True
        paragraphs.append(Paragraph(text=p, words=count_words(p), heading=heading))
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
        meta={k: v for k, v in meta.items() if k not in ("title", "author")},
    )


def load_bytes(data: bytes, name: str, *, title: str | None = None) -> Document:
    """A document from a file's bytes: text or Markdown, or HTML, EPUB and PDF by extension."""
    from core import formats

    if formats.is_rich(name):
        found = formats.extract(data, name)
        return parse_text(found.text, title=title or found.title or None, source=name, author=found.author,
                          markdown=True)
    return parse_text(decode_bytes(data, name), title=title, source=name)


def load_path(path: str | Path, *, title: str | None = None) -> Document:
    path = Path(path)
    if not path.exists():
        raise DocumentError(f"No file at {path}. Check the path and try again.")
    if path.is_dir():
        raise DocumentError(f"{path} is a folder. Give the path of a text file.")
    return load_bytes(path.read_bytes(), path.name, title=title)
