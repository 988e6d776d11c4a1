import pytest

from core.text.documents import (count_words, is_heading, load_bytes, load_path, parse_text, sections, split_paragraphs,
                                 strip_gutenberg)
from core.text.encodings import decode_bytes
from core.errors import DocumentError
from tests.conftest import book

WRAPPED = ("It was a dark and stormy night; the rain fell in torrents, except at occasional\n"
           "intervals, when it was checked by a violent gust of wind.\n")


@pytest.mark.parametrize("text, expected", [
    ("One.\n\nTwo.", ["One.", "Two."]),
    ("One.\r\n\r\nTwo.\r\n", ["One.", "Two."]),  # CRLF
    ("One.\r\rTwo.", ["One.", "Two."]),  # old Mac CR
    ("One.\n\n\n\n\nTwo.", ["One.", "Two."]),  # several blank lines are one break
    ("One.\n   \t\nTwo.", ["One.", "Two."]),  # whitespace-only line is blank
    (WRAPPED + "\n" + WRAPPED, [" ".join(WRAPPED.split())] * 2),  # hard-wrapped lines join
    ("Line one\ncontinues here.", ["Line one continues here."]),
    ("Spaces    inside   collapse.", ["Spaces inside collapse."]),
    ("", []),
])
def test_split_paragraphs(text, expected):
    assert split_paragraphs(text) == expected


def test_text_without_blank_lines_uses_layout_cues():
    text = (
        "The logistics of the matter.\n"
        "The Washington Times could hardly contain its excitement about a new book that\n"
        "describes how the president slips past his guards in the dead of night and\n"
        "meets a celebrity in a hotel downtown.\n"
        "And it was not true at all. Those who know about White House security said the\n"
        "claims were demolished by staffers, agents and former aides to the president.\n"
    )
    paragraphs = split_paragraphs(text)
    assert paragraphs[0] == "The logistics of the matter."
    assert len(paragraphs) == 3
    assert paragraphs[2].startswith("And it was not true")


def test_indented_first_lines_start_paragraphs():
    text = ("  First paragraph starts here and is wrapped onto a second line that is\n"
            "quite long as well.\n"
            "  Second paragraph starts with an indent and goes on for a while too,\n"
            "wrapping like the first.\n"
            "  Third.\n")
    assert len(split_paragraphs(text)) == 3


@pytest.mark.parametrize("text, heading", [
    ("Chapter 1", True), ("CHAPTER I. Down the Rabbit-Hole", True), ("CHAPTER V. Advice from a Caterpillar", True),
    ("Letter 4", True), ("Part Two", True), ("Chapter the First", True), ("IV", True), ("12.", True),
    ("# A Markdown Title", True), ("PROLOGUE", True), ("Prologue: The Storm", True),
    ("Part of me wanted to go.", False), ("Book two was a bore.", False), ("Introduction had been made.", False),
    ("conclusion of all was the comfortable declaration", False), ("“Bingley.”", False),
    ("Mr. Bennet made no answer.", False), ("i", False),
])
def test_is_heading(text, heading):
    assert is_heading(text) is heading


GUTENBERG = """The Project Gutenberg EBook of Tiny, by A. Writer\r
\r
Title: Tiny Tale\r
\r
Author: A. Writer\r
\r
*** START OF THIS PROJECT GUTENBERG EBOOK TINY TALE ***\r
\r
Produced by Volunteers\r
\r
\r
Chapter 1\r
\r
Once upon a time.\r
\r
*** END OF THIS PROJECT GUTENBERG EBOOK TINY TALE ***\r
\r
Licence text that is not part of the book.\r
"""


def test_gutenberg_header_footer_and_credit_removed():
    body, meta = strip_gutenberg(GUTENBERG.replace("\r", ""))
    assert meta == {"title": "Tiny Tale", "author": "A. Writer"}
    assert "Produced by" not in body and "Licence" not in body and "START OF" not in body
    doc = parse_text(GUTENBERG, source="pg1_tiny.txt")
    assert [p.text for p in doc.paragraphs] == ["Chapter 1", "Once upon a time."]
    assert doc.title == "Tiny Tale" and doc.author == "A. Writer"
    assert doc.paragraphs[0].heading


def test_text_without_gutenberg_markers_is_kept_whole():
    assert strip_gutenberg("Just a story.\n\nThe end.") == ("Just a story.\n\nThe end.", {})


@pytest.mark.parametrize("data, name, encoding_ok", [
    ("Café crème".encode("utf-8"), "utf8.txt", True),
    ("Café crème".encode("utf-8-sig"), "bom.txt", True),
    ("Café crème".encode("utf-16"), "utf16.txt", True),
    ("Le café était très chaud, et la crème fraîche aussi. Déjà l'été arrivait à Noël.".encode("latin-1"),
     "latin1.txt", True),
])
def test_decoding(data, name, encoding_ok):
    assert "caf" in decode_bytes(data, name).lower()


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b"   \n\n  ", "empty"),
    (b"%PDF-1.7 binary", "PDF"),
    (b"PK\x03\x04zipdata", "ZIP"),
    (b"\x00\x01\x02\x03\xff\xfe\xfd" * 50, "binary"),
])
def test_unreadable_input_says_what_to_do(data, message):
    with pytest.raises(DocumentError, match=message):
        load_bytes(data, "upload.bin")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DocumentError, match="No file"):
        load_path(tmp_path / "nope.txt")
    with pytest.raises(DocumentError, match="folder"):
        load_path(tmp_path)


def test_markdown_headings_are_headings():
    doc = parse_text("# My Notes\n\nSome text here.\n\n## Part Two\n\nMore.", source="notes.md")
    assert doc.title == "My Notes"
    assert [(p.text, p.heading) for p in doc.paragraphs] == [
        ("My Notes", True), ("Some text here.", False), ("Part Two", True), ("More.", False)]


def test_document_id_depends_on_text_only():
    a = parse_text("Same words.\n\nHere.", title="A")
    b = parse_text("Same words.\r\n\r\nHere.\r\n", title="B")
    assert a.id == b.id and a.title != b.title


def test_words_are_counted_as_the_paper_does():
    doc = parse_text("One two  three\nfour.\n\nFive -- six.")
    assert doc.words == 7 == count_words(doc.text)  # "--" is a word when split on whitespace


def _doc(*paragraphs):
    return parse_text("\n\n".join(paragraphs))


def test_sections_merge_short_front_matter_and_short_last_chapter():
    words = " ".join(["word"] * 300)
    doc = _doc("A TITLE", "Chapter 1", "Chapter 2", "Chapter 1", words, "Chapter 2", words, "Chapter 3", "short end.")
    # title page and table of contents join chapter 1; the tiny last chapter joins chapter 2
    assert sections(doc.paragraphs, 280) == [(0, 5), (5, 9)]


def test_pride_and_prejudice_loads_as_a_reader_sees_it():
    doc = load_path(book("pride_and_prejudice"))
    assert doc.title == "Pride and Prejudice" and doc.author == "Jane Austen"
    assert 121_000 < doc.words < 121_700
    headings = [p.text for p in doc.paragraphs if p.heading]
    assert headings[0] == "Chapter 1" and headings[-1] == "Chapter 61" and len(headings) == 61
    assert "Project Gutenberg" not in doc.text
    assert doc.paragraphs[3].text.startswith("It is a truth universally acknowledged, that a single man")


def test_frankenstein_contents_page_does_not_make_pages():
    doc = load_path(book("frankenstein"))
    parts = sections(doc.paragraphs, 500)
    first_start, first_end = parts[0]
    # The contents list (28 headings with nothing between) joins the first letter...
    assert [p.text for p in doc.paragraphs[first_start:first_end] if p.heading].count("Letter 1") == 2
    assert doc.paragraphs[first_end].text == "Letter 2"
    # ...and Letter 3 (under 500 words) joins Letter 4: 4 letters + 24 chapters - 1.
    assert len(parts) == 27
    assert all(sum(p.words for p in doc.paragraphs[s:e]) >= 500 for s, e in parts)


FRENCH = "Zoë a goûté la crème brûlée à Noël. « Très bien », dit-il — c'était 20 €.\n\n" * 20


@pytest.mark.parametrize("data, encoding, guessed, starts", [
    (FRENCH.encode("utf-8"), "utf-8", False, "Zoë a goûté"),
    (FRENCH.encode("cp1252"), "cp1252", True, "Zoë a goûté"),  # Latin-1/cp1252: never read as cp1250
    ("Größe und Grüße aus München.\n\n".encode("latin-1") * 20, "cp1252", True, "Größe und Grüße"),
    (FRENCH.encode("utf-16-le"), "utf-16-le", True, "Zoë a goûté"),  # no byte-order mark
    (FRENCH.encode("utf-16-be"), "utf-16-be", True, "Zoë a goûté"),
    (FRENCH.encode("utf-16"), "utf-16-le", False, "Zoë a goûté"),  # with a mark
    ("Привет, как дела? Это русский текст.\n\n".encode("cp1251") * 20, "cp1251", True, "Привет, как дела?"),
    ("Příliš žluťoučký kůň úpěl ďábelské ódy.\n\n".encode("cp1250") * 20, "cp1250", True, "Příliš žluťoučký"),
])
def test_encodings_are_detected_and_a_guess_is_reported(data, encoding, guessed, starts):
    from core.text.encodings import decode

    decoded = decode(data, "book.txt")
    assert (decoded.encoding, decoded.guessed) == (encoding, guessed)
    assert decoded.text.lstrip("\ufeff").startswith(starts)


def test_a_guessed_encoding_is_kept_and_the_reader_can_choose_another():
    data = FRENCH.encode("cp1252")
    guessed = load_bytes(data, "zoe.txt")
    assert guessed.meta["encoding"] == "cp1252" and guessed.meta["encoding_guessed"]
    assert "crème brûlée" in guessed.paragraphs[0].text
    chosen = load_bytes(data, "zoe.txt", encoding="cp1250")
    assert chosen.meta["encoding"] == "cp1250" and not chosen.meta["encoding_guessed"]
    assert "crčme" in chosen.paragraphs[0].text  # what the reader asked for, even when wrong
    with pytest.raises(DocumentError, match="not valid UTF-8"):
        load_bytes(data, "zoe.txt", encoding="utf-8")
    assert "encoding" not in load_bytes(FRENCH.encode("utf-8"), "zoe.txt").meta


def _four_books() -> tuple[str, list]:
    files = [book("off_course"), book("alice"), book("frankenstein"), book("pride_and_prejudice")]
    return "\n\n".join(f.read_text(encoding="utf-8") for f in files), files


def test_a_file_holding_several_gutenberg_books_is_never_cut_silently():
    text, files = _four_books()
    first = load_bytes(text.encode("utf-8"), "four.txt")
    assert first.meta["books"] == ["Off Course", "Alice’s Adventures in Wonderland", "Frankenstein",
                                   "Pride and Prejudice"] and first.meta["book"] == 0
    for n, path in enumerate(files):
        alone = load_path(path)
        chosen = load_bytes(text.encode("utf-8"), "four.txt", book=n)
        assert (chosen.id, chosen.words, chosen.title) == (alone.id, alone.words, alone.title)
    with pytest.raises(DocumentError, match="holds 4 books; there is no book 5"):
        load_bytes(text.encode("utf-8"), "four.txt", book=4)
    assert "books" not in load_path(files[0]).meta  # one book: nothing to say
