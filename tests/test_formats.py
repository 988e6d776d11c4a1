"""Uploads in HTML, EPUB and PDF become the same documents as their plain text."""
import io

import pytest

from core.text.documents import load_bytes
from core.errors import DocumentError

HTML = b"""<!doctype html><html><head><title>The Lamp</title><style>p {color: red}</style>
<script>alert('x')</script></head><body><nav>Home | About</nav>
<h1>Chapter I</h1>
<p>The lamp was lit at dusk,
and the road was long.</p>
<p>She wrote &lt;script&gt; on the wall<br>and left.</p>
<h2>Chapter II</h2><div>Morning came.</div></body></html>"""


def make_epub(chapters: list[tuple[str, str]], title="A Small Book", author="A. Writer") -> bytes:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("id-1")
    book.set_title(title)
    book.set_language("en")
    book.add_author(author)
    items = []
    for i, (heading, body) in enumerate(chapters):
        item = epub.EpubHtml(title=heading, file_name=f"c{i}.xhtml", lang="en")
        item.content = f"<h1>{heading}</h1><p>{body}</p>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = items
    out = io.BytesIO()
    epub.write_epub(out, book)
    return out.getvalue()


def make_pdf(lines: list[str], title: str = "") -> bytes:
    """A minimal one-page PDF with a text layer."""
    text = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(
        "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*" for line in lines
    ) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(text)} >>\nstream\n{text}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if title:
        objects.append(f"<< /Title ({title}) >>")
    out, offsets = b"%PDF-1.4\n", []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    info = f" /Info {len(objects)} 0 R" if title else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def test_html_keeps_the_text_drops_code_and_marks_headings():
    doc = load_bytes(HTML, "lamp.html")
    texts = [p.text for p in doc.paragraphs]
    assert doc.title == "The Lamp"
    assert texts == ["Chapter I", "The lamp was lit at dusk, and the road was long.",
                     "She wrote <script> on the wall and left.", "Chapter II", "Morning came."]
    assert [p.heading for p in doc.paragraphs] == [True, False, False, True, False]
    assert "alert" not in doc.text and "Home | About" not in doc.text


def test_epub_reads_chapters_in_spine_order_with_metadata():
    data = make_epub([("One", "First chapter text here."), ("Two", "Second chapter text here.")])
    doc = load_bytes(data, "small.epub")
    assert (doc.title, doc.author) == ("A Small Book", "A. Writer")
    assert [p.text for p in doc.paragraphs if p.heading] == ["One", "Two"]
    assert doc.text.index("First chapter") < doc.text.index("Second chapter")


def test_pdf_text_layer_becomes_paragraphs():
    doc = load_bytes(make_pdf(["It was a dark and stormy night;", "the rain fell in torrents."], "Storm"),
                     "storm.pdf")
    assert doc.title == "Storm"
    assert "dark and stormy night" in doc.text and "rain fell in torrents" in doc.text


@pytest.mark.parametrize("name, data, says", [
    ("empty.html", b"   ", "is empty"),
    ("blank.html", b"<html><body><script>x()</script></body></html>", "no readable words"),
    ("broken.epub", b"PK\x03\x04 not really a zip", "not a readable EPUB"),
    ("notzip.epub", b"hello", "not a readable EPUB"),
    ("broken.pdf", b"%PDF-1.4\n garbage", "not a readable PDF"),
    ("scanned.pdf", make_pdf([]), "no text layer"),
])
def test_corrupt_or_empty_files_get_a_clear_message(name, data, says):
    with pytest.raises(DocumentError, match=says):
        load_bytes(data, name)
