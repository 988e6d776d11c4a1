"""The gist memory (ReadAgent Sec. 3.1): pages, each with its gist, in order; and reading a
stored one back.

As the model sees it, the memory is ``<Page i>`` blocks in page order; a look-up
replaces a page's gist by its raw text in place, so the story still reads in order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from core.errors import NotFound
from core.methods.base import compression_rate
from core.status import COMPLETE
from core.store import Store
from core.store.records import Memory, Page
from core.text.documents import Document


@dataclass(frozen=True)
class GistMemory:
    doc_id: str
    title: str
    words: int  # words in the whole document
    pages: tuple[Page, ...]
    record: Memory | None = field(default=None, compare=False)  # as stored (None: made for a test or a prompt)

    @property
    def memory_id(self) -> int | None:
        return self.record.id if self.record else None

    @property
    def engine(self) -> str:
        return self.record.engine if self.record else ""

    @property
    def engine_label(self) -> str:
        return self.record.engine_label if self.record else ""

    @property
    def preset(self) -> str:
        return self.record.preset if self.record else ""

    @property
    def settings(self) -> dict:
        return self.record.settings if self.record else {}

    @property
    def parent_id(self) -> int | None:
        """The memory this one was fitted from (App. I), if any."""
        return self.record.parent_id if self.record else None

    @property
    def fit_tokens(self) -> int | None:
        """The window it was fitted to."""
        return self.record.fit_tokens if self.record else None

    @property
    def conditional(self) -> str:
        """The question its gists were made for (Conditional ReadAgent, App. G.1), or ""."""
        return self.record.conditional if self.record else ""

    @property
    def gist_words(self) -> int:
        return sum(p.gist_words for p in self.pages)

    @property
    def compression_rate(self) -> float:
        return compression_rate(self.gist_words, self.words)

    def context(self, expanded: Iterable[int] = ()) -> str:
        """The memory as the model sees it: '<Page i>' blocks in page order, with the
        pages in ``expanded`` replaced in place by their raw text."""
        expanded = set(expanded)
        return "\n".join(f"<Page {p.index}>\n{p.text if p.index in expanded else p.gist}" for p in self.pages)

    def context_words(self, expanded: Iterable[int] = ()) -> int:
        """Words of gists and raw pages in the context (the paper's in-context text)."""
        expanded = set(expanded)
        return sum(p.words if p.index in expanded else p.gist_words for p in self.pages)


def load_memory(store: Store, memory_id: int, document: Document | None = None) -> GistMemory:
    record = store.get_memory(memory_id)
    return with_pages(store, record, document or store.get_document(record.doc_id))


def with_pages(store: Store, record: Memory, document: Document) -> GistMemory:
    """The stored memory ``record`` (already read) of ``document``, with its pages."""
    return GistMemory(doc_id=document.id, title=document.title, words=document.words,
                      pages=store.pages(record.id, document), record=record)


def latest_memory(store: Store, document: Document, engine_key: str | None = None) -> GistMemory:
    """The newest complete gist memory of a document, built by ``engine_key`` if given. A memory
    gisted for one question (Conditional ReadAgent) is only chosen when there is no other."""
    records = store.memories_for(document.id, status=COMPLETE)
    records = sorted(records, key=lambda m: bool(m.conditional))  # stable: newest first
    if engine_key is not None:
        records = [m for m in records if m.engine == engine_key]
    if not records:
        by = f" built by {engine_key}" if engine_key else ""
        raise NotFound(f"{document.title!r} ({document.id}) has no finished gist memory{by}.",
                       cli="Build one first: `python -m core build PATH` with the same --engine/--model, "
                           "or pass --memory ID.",
                       app="Build one on the Read page with the engine chosen in the sidebar.")
    return with_pages(store, records[0], document)
