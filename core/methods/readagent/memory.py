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
from core.store import Store, loads
from core.text.documents import Document


@dataclass(frozen=True)
class Page:
    index: int
    start: int  # first paragraph
    end: int  # one past the last paragraph
    text: str
    words: int
    gist: str = ""
    gist_words: int = 0
    break_by: str = ""  # how the pause point ending this page was chosen (a trace outcome)
    break_reason: str = ""
    gist_by: str = ""
    # Page history (App. I, G.3): the pages of the memory this one was made from that this page
    # holds (empty: it is its own), and how many times its gist was gisted again.
    sources: tuple[int, ...] = ()
    gist_rounds: int = 0


@dataclass(frozen=True)
class GistMemory:
    doc_id: str
    title: str
    words: int  # words in the whole document
    pages: tuple[Page, ...]
    memory_id: int | None = None
    engine: str = ""
    engine_label: str = ""
    preset: str = ""
    settings: dict = field(default_factory=dict, compare=False)
    parent_id: int | None = None  # the memory this one was fitted from (App. I), if any
    fit_tokens: int | None = None  # the window it was fitted to

    @property
    def conditional(self) -> str:
        """The question its gists were made for (Conditional ReadAgent, App. G.1), or ""."""
        return self.settings.get("conditional") or ""

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
    row = store.get_memory_row(memory_id)
    document = document or store.get_document(row["doc_id"])
    pages = tuple(
        Page(index=i, start=r["start"], end=r["end"], text=document.span_text(r["start"], r["end"]),
             words=r["words"], gist=r["gist"] or "", gist_words=r["gist_words"] or 0, break_by=r["break_by"] or "",
             break_reason=r["break_reason"] or "", gist_by=r["gist_by"] or "",
             sources=tuple(loads(r.get("sources"), [])), gist_rounds=r.get("gist_rounds") or 0)
        for i, r in enumerate(store.page_rows(memory_id))
    )
    return GistMemory(doc_id=document.id, title=document.title, words=document.words, pages=pages,
                      memory_id=memory_id, engine=row["engine"], engine_label=row["engine_label"] or "",
                      preset=row["preset"] or "", settings=loads(row["settings"], {}),
                      parent_id=row.get("parent_id"), fit_tokens=row.get("fit_tokens"))


def latest_memory(store: Store, document: Document, engine_key: str | None = None) -> GistMemory:
    """The newest complete gist memory of a document, built by ``engine_key`` if given. A memory
    gisted for one question (Conditional ReadAgent) is only chosen when there is no other."""
    rows = store.memories_for(document.id, status=COMPLETE)
    rows = sorted(rows, key=lambda r: bool(loads(r["settings"], {}).get("conditional")))  # stable: newest first
    if engine_key is not None:
        rows = [r for r in rows if r["engine"] == engine_key]
    if not rows:
        by = f" built by {engine_key}" if engine_key else ""
        raise NotFound(f"{document.title!r} ({document.id}) has no finished gist memory{by}.",
                       cli="Build one first: `python -m core build PATH` with the same --engine/--model, "
                           "or pass --memory ID.",
                       app="Build one on the Read page with the engine chosen in the sidebar.")
    return load_memory(store, rows[0]["id"], document)
