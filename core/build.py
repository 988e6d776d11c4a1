"""Building a gist memory, fast.

Pagination is a chain (each pause point starts the next window), but a page can
be gisted as soon as it exists, and chapters separated by hard breaks are
independent chains. Model calls run concurrently up to ``concurrency``; when
more are ready than there are slots, the pagination step with the most text
still ahead of it goes first (it is on the longest remaining chain), then gists.
With the offline engine everything runs inline, page by page.

Progress is reported through a callback so the CLI (a progress bar) and the app
(pause points and gists appearing as they are made) share this code. Every
page and step is stored as it happens, and every model call is in the replay
cache, so a stopped or failed build resumes without repeating model calls.
"""
from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Callable

from core.db import Store, now
from core.documents import Document, count_words, sections
from core.errors import Cancelled
from core.memory import load_memory, page_text
from core.presets import Preset
from core.readagent import Engine, GistMemory, forced_break, make_window
from core.trace import FALLBACK


@dataclass(frozen=True)
class BuildSettings:
    preset: Preset
    hard_breaks: bool = True  # chapter/section headings end pages, and chapters paginate independently

    def as_dict(self) -> dict:
        p = self.preset
        return {"preset": p.name, "min_words": p.min_words, "max_words": p.max_words,
                "hard_breaks": self.hard_breaks, "preceding_words": p.preceding_words,
                "short_tail_words": p.short_tail_words}

    def key(self, engine_key: str) -> str:
        """Identifies a memory: the same document, engine and key give the same pages."""
        prompts = self.preset.pagination_prompt.text + self.preset.gist_prompt.text
        blob = json.dumps({"engine": engine_key, **self.as_dict(), "prompts": prompts,
                           "gist_params": self.preset.gist_prompt.params}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BuildEvent:
    """One thing that happened: a pause point chosen ("page") or a page gisted ("gist")."""
    kind: str
    start: int  # the page's first paragraph
    end: int  # one past its last paragraph
    words: int
    break_by: str = ""
    break_reason: str = ""
    gist: str = ""
    gist_by: str = ""
    pages_found: int = 0
    pages_gisted: int = 0
    words_paginated: int = 0
    total_words: int = 0


@dataclass
class BuildResult:
    doc_id: str
    title: str
    words: int
    pages: int
    gist_words: int
    compression_rate: float
    llm_calls: int
    cached_calls: int
    fallback_breaks: int
    seconds: float
    memory_id: int
    run_id: int | None
    engine: str
    engine_label: str
    preset: str
    min_words: int
    max_words: int
    hard_breaks: bool
    reused: bool = False
    prompt_words: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    fallback_gists: int = 0

    def as_json(self) -> dict:
        return asdict(self)


class Slots:
    """At most ``n`` holders at once; waiters are served lowest key first."""

    def __init__(self, n: int):
        self.free = max(1, n)
        self.cond = threading.Condition()
        self.waiting: list[tuple] = []
        self.counter = itertools.count()

    @contextmanager
    def take(self, key: tuple):
        with self.cond:
            ticket = (*key, next(self.counter))
            heapq.heappush(self.waiting, ticket)
            while self.free == 0 or self.waiting[0] != ticket:
                self.cond.wait()
            heapq.heappop(self.waiting)
            self.free -= 1
            self.cond.notify_all()
        try:
            yield
        finally:
            with self.cond:
                self.free += 1
                self.cond.notify_all()


@contextmanager
def _no_slot(key):
    yield


class _Builder:
    def __init__(self, store: Store, document: Document, engine: Engine, settings: BuildSettings,
                 memory_id: int, run_id: int, concurrency: int, progress, cancel: threading.Event):
        self.store, self.document, self.engine, self.settings = store, document, engine, settings
        self.preset = settings.preset
        self.memory_id, self.run_id = memory_id, run_id
        self.progress = progress
        self.cancel = cancel
        self.lock = threading.Lock()
        self.seq = itertools.count()
        self.pages: dict[int, dict] = {}
        self.gisted = 0
        self.words_paginated = 0
        self.slots = Slots(concurrency) if engine.is_llm else None
        self.pool: ThreadPoolExecutor | None = None
        self.gist_futures = []
        self.avg_page = (self.preset.min_words + self.preset.max_words) / 2

    def _take(self, key):
        return self.slots.take(key) if self.slots else _no_slot(key)

    def _check(self):
        if self.cancel.is_set():
            raise Cancelled("The build was stopped. Build again with the same settings to resume; "
                            "finished model calls are reused.")

    def _emit(self, kind: str, page: dict):
        if self.progress is None:
            return
        event = BuildEvent(kind=kind, start=page["start"], end=page["end"], words=page["words"],
                           break_by=page.get("break_by", ""), break_reason=page.get("break_reason", ""),
                           gist=page.get("gist") or "", gist_by=page.get("gist_by") or "",
                           pages_found=len(self.pages), pages_gisted=self.gisted,
                           words_paginated=self.words_paginated, total_words=self.document.words)
        self.progress(event)

    def chain(self, start: int, end: int) -> None:
        paragraphs = self.document.paragraphs
        i, previous = start, ()
        while i < end:
            self._check()
            window = make_window(paragraphs, i, end, self.preset, previous)
            decision = forced_break(window, end, self.preset)
            if decision is None:
                remaining = sum(p.words for p in paragraphs[i:end])
                level = math.ceil(remaining / self.avg_page) + 1
                with self._take((-level,)):
                    self._check()
                    decision = self.engine.pause_point(window, self.preset)
            j = decision.value
            trace = decision.trace
            words = sum(p.words for p in paragraphs[i:j])
            page = {"start": i, "end": j, "words": words, "break_by": trace.outcome,
                    "break_reason": trace.fallback or trace.detail.get("reason", "")}
            self.store.add_step(self.run_id, next(self.seq), "pagination", trace.outcome, trace.to_dict(),
                                trace.seconds)
            self.store.save_page(self.memory_id, **page, gist=None, gist_words=None, gist_by=None)
            with self.lock:
                self.pages[i] = page
                self.words_paginated += words
                self._emit("page", page)
            if self.pool is not None:
                self.gist_futures.append(self.pool.submit(self.gist, i))
            else:
                self.gist(i)
            previous = tuple(p.text for p in paragraphs[i:j])
            i = j

    def gist(self, start: int) -> None:
        self._check()
        page = self.pages[start]
        text = page_text(self.document, page["start"], page["end"])
        with self._take((-1,)):
            self._check()
            decision = self.engine.gist(text, page["words"], self.preset)
        trace = decision.trace
        trace.detail["page_start"] = start
        self.store.add_step(self.run_id, next(self.seq), "gist", trace.outcome, trace.to_dict(), trace.seconds)
        gist = decision.value
        self.store.save_page(self.memory_id, **page, gist=gist, gist_words=count_words(gist), gist_by=trace.outcome)
        with self.lock:
            page.update(gist=gist, gist_words=count_words(gist), gist_by=trace.outcome)
            self.gisted += 1
            self._emit("gist", page)

    def run(self, concurrency: int) -> None:
        paragraphs = self.document.paragraphs
        if self.settings.hard_breaks:
            parts = sections(paragraphs, self.preset.min_words)
        else:
            parts = [(0, len(paragraphs))]
        if not self.engine.is_llm:
            for start, end in parts:
                self.chain(start, end)
            return
        # Longest chapters first: they are the longest chains.
        parts = sorted(parts, key=lambda se: -sum(p.words for p in paragraphs[se[0]:se[1]]))
        with ThreadPoolExecutor(max_workers=concurrency + len(parts), thread_name_prefix="build") as pool:
            self.pool = pool
            chains = [pool.submit(self.chain, s, e) for s, e in parts]
            try:
                for future in chains:
                    future.result()
                for future in list(self.gist_futures):
                    future.result()
            except BaseException:
                self.cancel.set()
                raise


def build_memory(store: Store, document: Document, engine: Engine, settings: BuildSettings, *,
                 concurrency: int = 8, progress: Callable[[BuildEvent], None] | None = None,
                 cancel: threading.Event | None = None, rebuild: bool = False) -> BuildResult:
    """Build (or reuse) the gist memory of ``document``. See the module docstring."""
    started = time.perf_counter()
    store.save_document(document)
    preset = settings.preset
    key = settings.key(engine.key)
    model = getattr(getattr(engine, "llm", None), "model", None)
    if not rebuild:
        done = store.find_memory(document.id, key)
        if done is not None:
            memory = load_memory(store, done["id"], document)
            return _result(document, memory, engine, settings, run_id=None, seconds=time.perf_counter() - started,
                           usage=engine.usage(), reused=True)
    unfinished = store.find_memory(document.id, key, statuses=("building", "interrupted", "failed"))
    memory_fields = {"doc_id": document.id, "engine": engine.key, "engine_label": engine.label, "model": model,
                     "preset": preset.name, "min_words": preset.min_words, "max_words": preset.max_words,
                     "hard_breaks": int(settings.hard_breaks), "settings": json.dumps(settings.as_dict()),
                     "settings_key": key, "status": "building", "origin": "built"}
    if unfinished is not None and not rebuild:
        memory_id = unfinished["id"]
        store.update_memory(memory_id, status="building")
    else:
        memory_id = store.create_memory(**memory_fields)
    run_id = store.create_run("build", doc_id=document.id, memory_id=memory_id, engine=engine.key,
                              engine_label=engine.label, model=model,
                              params={**settings.as_dict(), "concurrency": concurrency,
                                      "resumed": unfinished is not None and not rebuild})
    bound = engine.bind(run_id=run_id, doc_id=document.id)
    builder = _Builder(store, document, bound, settings, memory_id, run_id, concurrency, progress,
                       cancel or threading.Event())
    try:
        builder.run(concurrency)
    except BaseException as exc:
        status = "interrupted" if isinstance(exc, (Cancelled, KeyboardInterrupt)) else "failed"
        store.update_memory(memory_id, status=status)
        store.finish_run(run_id, status=status, error=str(exc), seconds=round(time.perf_counter() - started, 3),
                         result=bound.usage())
        raise
    keep = set(builder.pages)
    for row in store.page_rows(memory_id):
        if row["start"] not in keep:
            store.db["pages"].delete((memory_id, row["start"]))
    memory = load_memory(store, memory_id, document)
    seconds = time.perf_counter() - started
    result = _result(document, memory, bound, settings, run_id=run_id, seconds=seconds, usage=bound.usage(),
                     reused=False)
    store.update_memory(memory_id, status="complete", pages=len(memory.pages), words=document.words,
                        gist_words=memory.gist_words, compression_rate=memory.compression_rate, run_id=run_id,
                        finished_at=now())
    store.finish_run(run_id, status="done", result=result.as_json(), seconds=round(seconds, 3))
    return result


def _result(document: Document, memory: GistMemory, engine: Engine, settings: BuildSettings, *, run_id,
            seconds: float, usage: dict, reused: bool) -> BuildResult:
    return BuildResult(
        doc_id=document.id, title=document.title, words=document.words, pages=len(memory.pages),
        gist_words=memory.gist_words, compression_rate=memory.compression_rate,
        llm_calls=usage["llm_calls"], cached_calls=usage["cached_calls"],
        fallback_breaks=sum(1 for p in memory.pages if p.break_by == FALLBACK),
        fallback_gists=sum(1 for p in memory.pages if p.gist_by == FALLBACK),
        seconds=round(seconds, 3), memory_id=memory.memory_id, run_id=run_id, engine=engine.key,
        engine_label=engine.label, preset=settings.preset.name, min_words=settings.preset.min_words,
        max_words=settings.preset.max_words, hard_breaks=settings.hard_breaks, reused=reused,
        prompt_words=usage.get("prompt_words", 0), input_tokens=usage.get("input_tokens", 0),
        output_tokens=usage.get("output_tokens", 0),
    )
