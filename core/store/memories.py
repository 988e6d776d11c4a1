"""Gist memories and their pages."""
from __future__ import annotations

from typing import Iterable

from core.errors import NotFound
from core.status import BUILDING, COMPLETE
from core.store.base import Tables, dumps
from core.store.migrations import now
from core.store.owners import is_gone
from core.store.records import Memory, Page
from core.text.documents import Document


class Memories(Tables):
    def find_memory(self, doc_id: str, settings_key: str, statuses: Iterable[str] = (COMPLETE,)) -> Memory | None:
        """The newest memory of ``doc_id`` made with ``settings_key`` whose status is one of ``statuses``."""
        statuses = list(statuses)
        with self.lock:
            rows = list(self.db["memories"].rows_where(
                f"doc_id = ? and settings_key = ? and status in ({','.join('?' * len(statuses))})",
                [doc_id, settings_key, *statuses], order_by="id desc", limit=1,
            ))
        return Memory.from_row(rows[0]) if rows else None

    def memories_for(self, doc_id: str, status: str | None = COMPLETE) -> list[Memory]:
        """A document's memories, newest first: those with ``status``, or all (``None``)."""
        with self.lock:
            where, args = ("doc_id = ?", [doc_id]) if status is None else ("doc_id = ? and status = ?", [doc_id, status])
            rows = list(self.db["memories"].rows_where(where, args, order_by="id desc"))
        return [Memory.from_row(r) for r in rows]

    def get_memory(self, memory_id: int) -> Memory:
        return Memory.from_row(self.row("memories", memory_id, NotFound(
            f"No gist memory {memory_id}.", cli="List them with `python -m core docs`.",
            app="Choose one of the document's gist memories.")))

    def claim_memory(self, doc_id: str, settings_key: str, fields: dict, *, claim: str,
                     rebuild: bool = False) -> tuple[str, int | None]:
        """One build per memory, across threads and processes, decided in one write transaction:
        ``("complete", id)`` a finished memory to reuse (not when ``rebuild``); ``("busy", id)``
        another live build holds it; else the memory is claimed for ``claim``: ``("resume", id)``
        an unfinished one, or ``("new", id)``."""
        self.require_writable()
        with self.lock:
            conn = self.db.conn
            conn.execute("begin immediate")
            try:
                rows = list(self.db.query(
                    "select id, status, owner from memories where doc_id = ? and settings_key = ? order by id desc",
                    [doc_id, settings_key]))
                busy = next((r for r in rows if r["status"] == BUILDING and r["owner"] and r["owner"] != claim
                             and not is_gone(r["owner"].split("/")[0])), None)
                complete = next((r for r in rows if r["status"] == COMPLETE), None)
                unfinished = next((r for r in rows if r["status"] != COMPLETE), None)
                if busy is not None:
                    state, memory_id = "busy", busy["id"]
                elif complete is not None and not rebuild:
                    state, memory_id = "complete", complete["id"]
                elif unfinished is not None and not rebuild:
                    state, memory_id = "resume", unfinished["id"]
                    conn.execute("update memories set status = ?, owner = ? where id = ?",
                                 [BUILDING, claim, memory_id])
                else:
                    state = "new"
                    memory_id = self.db["memories"].insert({**fields, "status": BUILDING, "owner": claim,
                                                            "created_at": now()}).last_pk
                conn.execute("commit")
            except BaseException:
                conn.execute("rollback")
                raise
        return state, memory_id

    def create_memory(self, **fields) -> int:
        self.require_writable()
        with self.lock, self.db.conn:
            return self.db["memories"].insert({**fields, "created_at": now()}).last_pk

    def update_memory(self, memory_id: int, **fields) -> None:
        with self.lock, self.db.conn:
            self.db["memories"].update(memory_id, fields)

    # -- pages ------------------------------------------------------------------------------------
    def save_page(self, memory_id: int, page: Page) -> None:
        """Store a page of a memory (a page not gisted yet, or gisted: the same page again)."""
        with self.lock, self.db.conn:
            self.db["pages"].upsert({
                "memory_id": memory_id, "start": page.start, "end": page.end, "words": page.words,
                "break_by": page.break_by, "break_reason": page.break_reason, "gist": page.gist or None,
                "gist_words": page.gist_words if page.gist else None, "gist_by": page.gist_by or None,
                "sources": dumps(list(page.sources)) if page.sources else None, "gist_rounds": page.gist_rounds,
            }, pk=("memory_id", "start"))

    def pages(self, memory_id: int, document: Document) -> tuple[Page, ...]:
        """A memory's pages in text order, each with its text from ``document``."""
        with self.lock:
            rows = list(self.db["pages"].rows_where("memory_id = ?", [memory_id], order_by="start"))
        return tuple(Page.from_row(r, index=i, text=document.span_text(r["start"], r["end"]))
                     for i, r in enumerate(rows))

    def page_count(self, memory_id: int) -> int:
        """How many pages a memory holds so far (a stopped build's too)."""
        with self.lock:
            return self.db["pages"].count_where("memory_id = ?", [memory_id])

    def clear_pages(self, memory_id: int, keep: Iterable[int] = ()) -> None:
        """Remove a memory's pages, but those starting at a paragraph in ``keep`` (a build resumed
        with other pause points leaves pages that are no longer its own)."""
        keep = list(keep)
        with self.lock, self.db.conn:
            self.db["pages"].delete_where(f"memory_id = ? and start not in ({','.join('?' * len(keep))})",
                                          [memory_id, *keep])
