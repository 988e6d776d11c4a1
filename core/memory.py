"""Reading stored gist memories back as ``GistMemory`` values."""
from __future__ import annotations

from core.db import Store, loads
from core.documents import Document
from core.errors import NotFound
from core.readagent import GistMemory, Page


def page_text(document: Document, start: int, end: int) -> str:
    return "\n".join(p.text for p in document.paragraphs[start:end])


def load_memory(store: Store, memory_id: int, document: Document | None = None) -> GistMemory:
    row = store.get_memory_row(memory_id)
    document = document or store.get_document(row["doc_id"])
    pages = tuple(
        Page(index=i, start=r["start"], end=r["end"], text=page_text(document, r["start"], r["end"]),
             words=r["words"], gist=r["gist"] or "", gist_words=r["gist_words"] or 0, break_by=r["break_by"] or "",
             break_reason=r["break_reason"] or "", gist_by=r["gist_by"] or "")
        for i, r in enumerate(store.page_rows(memory_id))
    )
    return GistMemory(doc_id=document.id, title=document.title, words=document.words, pages=pages,
                      memory_id=memory_id, engine=row["engine"], engine_label=row["engine_label"] or "",
                      preset=row["preset"] or "", settings=loads(row["settings"], {}))


def latest_memory(store: Store, document: Document, engine_key: str | None = None) -> GistMemory:
    """The newest complete gist memory of a document, built by ``engine_key`` if given."""
    rows = store.memories_for(document.id)
    if engine_key is not None:
        rows = [r for r in rows if r["engine"] == engine_key]
    if not rows:
        by = f" built by {engine_key}" if engine_key else ""
        raise NotFound(
            f"{document.title!r} ({document.id}) has no finished gist memory{by}. Build one first: "
            f"`python -m core build PATH` with the same --engine/--model, or pass --memory ID."
        )
    return load_memory(store, rows[0]["id"], document)
