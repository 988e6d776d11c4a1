"""Bytes to text: UTF-8 first, then a checked guess, and a clear message for what is not text.

Order: a byte-order mark (UTF-8, UTF-16); UTF-8; UTF-16 without a mark (text whose every
other byte is zero); Windows-1252 when every byte outside ASCII decodes to a Western letter
or punctuation mark (Latin-1 text is Windows-1252 text); else ``charset_normalizer``'s
best guess. Anything but UTF-8 (or a marked UTF-16) is reported as a guess, with the
encoding used, so the reader can choose another (``ENCODINGS``).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.errors import DocumentError

_BINARY_SIGNATURES = {
    b"%PDF": "a PDF file",
    b"PK\x03\x04": "a ZIP archive (EPUB, DOCX or similar)",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x7fELF": "a program",
}
# What a reader can choose when the guess is wrong: Python codec -> how the screen names it.
ENCODINGS = {
    "utf-8": "UTF-8", "cp1252": "Western European (Windows-1252 / Latin-1)", "latin-1": "ISO-8859-1 (Latin-1)",
    "cp1250": "Central European (Windows-1250)", "cp1251": "Cyrillic (Windows-1251)", "koi8-r": "Cyrillic (KOI8-R)",
    "iso-8859-7": "Greek (ISO-8859-7)", "cp1253": "Greek (Windows-1253)", "iso-8859-9": "Turkish (ISO-8859-9)",
    "utf-16-le": "UTF-16 (little-endian)", "utf-16-be": "UTF-16 (big-endian)", "shift_jis": "Japanese (Shift JIS)",
    "gb18030": "Chinese (GB18030)", "big5": "Chinese (Big5)", "euc-kr": "Korean (EUC-KR)",
}
MAX_ACCENTED = 0.3  # share of letters outside ASCII beyond which text is not Western
_WESTERN_PUNCTUATION = set("’‘“”–—…•€«»°·©®™¡¿§¶")


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # the Python codec used
    guessed: bool = False  # True when no mark or valid UTF-8 said so: the reader may want to choose another

    @property
    def label(self) -> str:
        return ENCODINGS.get(self.encoding, self.encoding)


def _utf16_without_bom(data: bytes) -> str | None:
    """``utf-16-le``/``-be`` when one byte of every pair is zero in most pairs (Latin-script
    UTF-16), and the text decodes cleanly."""
    sample = data[:8192]
    if len(sample) < 4 or len(sample) % 2:
        sample = sample[: len(sample) - len(sample) % 2]
    pairs = len(sample) // 2
    if pairs < 2:
        return None
    even = sum(1 for i in range(0, len(sample), 2) if sample[i] == 0) / pairs
    odd = sum(1 for i in range(1, len(sample), 2) if sample[i] == 0) / pairs
    codec = "utf-16-be" if even > 0.6 and odd < 0.1 else "utf-16-le" if odd > 0.6 and even < 0.1 else None
    if codec is None:
        return None
    try:
        data[: len(data) - len(data) % 2].decode(codec)
    except UnicodeDecodeError:
        return None
    return codec


def _looks_western(text: str) -> bool:
    """Every character outside ASCII is a Latin letter or a common punctuation mark."""
    for ch in set(text):
        if ord(ch) < 128 or ch in _WESTERN_PUNCTUATION:
            continue
        if ch.isalpha() and "LATIN" in unicodedata.name(ch, ""):
            continue
        if ch in "\u00a0\u00ad":
            continue
        return False
    return True


def _western(data: bytes) -> str | None:
    """Windows-1252 when it decodes every byte to a Western letter or mark. A text in another
    single-byte encoding (Central European, Cyrillic) decodes to odd symbols or fails here;
    cp1252 is a superset of Latin-1's letters, so Latin-1 text reads right."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    if not _looks_western(text):
        return None
    letters = [c for c in text if c.isalpha()]
    accented = sum(1 for c in letters if ord(c) > 127)
    # Western languages accent a few letters in a hundred; Cyrillic or Greek text read as
    # cp1252 is nearly all "accented" letters (Ïðèâåò), so it is left to the detector.
    return text if not letters or accented / len(letters) <= MAX_ACCENTED else None


def decode(data: bytes, name: str = "the file", encoding: str | None = None) -> Decoded:
    """The text of ``data``: in ``encoding`` when the reader chose one, else as the module says."""
    if not data.strip():
        raise DocumentError(f"{name} is empty. Choose a file that contains the text to read.")
    for signature, kind in _BINARY_SIGNATURES.items():
        if data.startswith(signature):
            raise DocumentError(f"{name} is {kind}, not text. Upload a .txt or .md file "
                                "(the app also reads .html, .epub and .pdf).")
    if encoding:
        try:
            return Decoded(data.decode(encoding), encoding)
        except (UnicodeDecodeError, LookupError):
            raise DocumentError(f"{name} is not valid {ENCODINGS.get(encoding, encoding)} text. "
                                "Choose another encoding.") from None
    if data.startswith(b"\xef\xbb\xbf"):
        return Decoded(data[3:].decode("utf-8", errors="replace"), "utf-8")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return Decoded(data.decode("utf-16"), "utf-16-le" if data.startswith(b"\xff\xfe") else "utf-16-be")
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    codec = _utf16_without_bom(data)
    if codec:
        return Decoded(data[: len(data) - len(data) % 2].decode(codec), codec, guessed=True)
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name} looks like a binary file, not text. Upload a plain-text file.")
    western = _western(data)
    if western is not None:
        return Decoded(western, "cp1252", guessed=True)
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise DocumentError(f"Could not tell which text encoding {name} uses. Save it as UTF-8 and try again.")
    return Decoded(str(best), best.encoding, guessed=True)


def decode_bytes(data: bytes, name: str = "the file") -> str:
    """Just the text (see ``decode``)."""
    return decode(data, name).text
