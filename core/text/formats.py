"""Text out of HTML, EPUB and PDF files, as Markdown-ish plain text.

Headings become ``# heading`` lines and blocks are separated by blank lines, so
``documents.parse_text`` sees paragraphs and hard breaks the way a reader does.
Each format uses a well-kept library: Beautiful Soup (HTML, and the XHTML inside
EPUB), EbookLib (EPUB container and reading order), pypdf (PDF).
"""
from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path

from core.errors import DocumentError

FORMATS = {".html": "HTML", ".htm": "HTML", ".xhtml": "HTML", ".epub": "EPUB", ".pdf": "PDF"}
_BLOCKS = ("p", "div", "section", "article", "blockquote", "li", "pre", "tr", "dd", "dt", "figcaption",
           "table", "ul", "ol", "header", "footer", "aside", "main", "body")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_DROP = ("script", "style", "noscript", "template", "head", "nav", "svg", "math", "iframe", "object")


@dataclass(frozen=True)
class Extracted:
    text: str
    title: str = ""
    author: str = ""


def is_rich(name: str) -> bool:
    return Path(name).suffix.lower() in FORMATS


def extract(data: bytes, name: str) -> Extracted:
    """The readable text of an HTML, EPUB or PDF file; a ``DocumentError`` says what is wrong."""
    kind = FORMATS[Path(name).suffix.lower()]
    if not data.strip():
        raise DocumentError(f"{name} is empty. Choose a file that contains the text to read.")
    if kind == "HTML":
        return _html(data, name)
    if kind == "EPUB":
        return _epub(data, name)
    return _pdf(data, name)


def html_text(markup: bytes | str) -> tuple[str, str]:
    """(text, <title>) of an HTML or XHTML page; scripts, styles and navigation dropped."""
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(_DROP):
        tag.decompose()
    for br in soup.find_all("br"):
        br.replace_with(" ")
    for tag in soup.find_all(_HEADINGS):
        text = " ".join(tag.get_text(" ").split())
        tag.replace_with(f"\n\n# {text}\n\n" if text else "")
    for tag in soup.find_all(_BLOCKS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    # Inside a block, line breaks are just spaces (HTML wraps text freely).
    blocks = (" ".join(chunk.split()) for chunk in soup.get_text().split("\n\n"))
    return "\n\n".join(b for b in blocks if b), title


def _html(data: bytes, name: str) -> Extracted:
    from core.text.encodings import decode_bytes

    text, title = html_text(decode_bytes(data, name))
    return Extracted(text, title)


def _epub(data: bytes, name: str) -> Extracted:
    import ebooklib
    from ebooklib import epub

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = epub.read_epub(io.BytesIO(data), options={"ignore_ncx": True})
    except Exception as exc:  # zipfile, lxml and ebooklib each raise their own types
        raise DocumentError(
            f"{name} is not a readable EPUB ({type(exc).__name__}). Check the file, or convert it to .txt."
        ) from None
    chapters = []
    for item_id, _linear in book.spine:
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        text, _ = html_text(item.get_content())
        if text:
            chapters.append(text)

    def meta(field: str) -> str:
        values = book.get_metadata("DC", field)
        return values[0][0].strip() if values and values[0][0] else ""

    return Extracted("\n\n".join(chapters), meta("title"), meta("creator"))


def _pdf(data: bytes, name: str) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(f"{name} is password-protected. Remove the password and upload it again.")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata or {}
    except DocumentError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise DocumentError(
            f"{name} is not a readable PDF ({type(exc).__name__}). Check the file, or convert it to .txt."
        ) from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise DocumentError(
            f"{name} has no text layer (it may be scanned images). Run OCR on it or upload a .txt file."
        )
    return Extracted(text, str(info.get("/Title") or "").strip(), str(info.get("/Author") or "").strip())
