"""Documents and their paragraphs, and the library listing."""
from __future__ import annotations

from core.errors import NotFound
from core.status import COMPLETE
from core.store.base import Tables, dumps
from core.store.migrations import now
from core.store.records import DocumentListing, loads
from core.text.documents import Document, Paragraph


class Documents(Tables):
    def save_document(self, doc: Document) -> None:
        self.require_writable()
        with self.lock, self.db.conn:
            if self.db["documents"].count_where("id = ?", [doc.id]):
                return
            # "or ignore": another process saving the same document at the same moment saves the same rows.
            self.db["paragraphs"].insert_all(
                ({"doc_id": doc.id, "idx": i, "text": p.text, "words": p.words, "heading": int(p.heading)}
                 for i, p in enumerate(doc.paragraphs)), ignore=True)
            self.db["documents"].insert({
                "id": doc.id, "title": doc.title, "source": doc.source, "author": doc.author,
                "words": doc.words, "paragraphs": len(doc.paragraphs), "meta": dumps(doc.meta),
                "created_at": now(),
            }, ignore=True)

    def get_document(self, doc_id: str) -> Document:
        """The document whose id is, or starts with, ``doc_id``."""
        with self.lock:
            rows = list(self.db["documents"].rows_where("id = ? or id like ?", [doc_id, f"{doc_id}%"], limit=2))
            if len(rows) != 1:
                hint = "it matches several documents; give more of it" if rows else "no such document"
                raise NotFound(f"Document {doc_id!r}: {hint}.", cli="List documents with `python -m core docs`.",
                               app="Open a document from the Library tab on the Read page.")
            row = rows[0]
            paragraphs = tuple(
                Paragraph(text=p["text"], words=p["words"], heading=bool(p["heading"]))
                for p in self.db["paragraphs"].rows_where("doc_id = ?", [row["id"]], order_by="idx")
            )
        return Document(id=row["id"], title=row["title"], paragraphs=paragraphs, source=row["source"] or "",
                        author=row["author"] or "", meta=loads(row["meta"], {}))

    def list_documents(self) -> list[DocumentListing]:
        """Every document, newest first, with how many finished gist memories it has."""
        with self.lock:
            rows = list(self.db.query(
                "select d.id, d.title, d.source, d.words, d.created_at, "
                f"(select count(*) from memories m where m.doc_id = d.id and m.status = '{COMPLETE}') as memories "
                "from documents d order by d.created_at desc"
            ))
        return [DocumentListing.from_row(r) for r in rows]
