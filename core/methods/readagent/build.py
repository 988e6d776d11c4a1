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
import itertools
import json
import math
import threading
import time
import uuid
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from typing import Callable

from core.concurrency import Slots, TaskGroup
from core.errors import Cancelled
from core.jobs import Job, find_job, start_job
from core.methods.readagent.compress import fit_memory
from core.methods.readagent.memory import GistMemory, load_memory
from core.methods.readagent.pagination import forced_break, make_window
from core.methods.readagent.presets import Preset
from core.methods.readagent.steps import GIST, PAUSE_POINT, GistInput, PauseInput, pause_prompt_tokens
from core.status import COMPLETE
from core.store import Store
from core.store.migrations import now
from core.store.owners import current_owner
from core.store.records import Page
from core.store.runs import run
from core.text.documents import MAX_PARAGRAPH_WORDS, Document, count_words, sections
from core.trace import FALLBACK, RULE, by_rule

WAIT_S = 0.25  # how often a build waiting for the same build elsewhere looks again


@dataclass(frozen=True)
class BuildSettings:
    preset: Preset
    hard_breaks: bool = True  # chapter/section headings end pages, and chapters paginate independently
    conditional: str = ""  # Conditional ReadAgent (App. G.1): gist with this question known; its own memory
    # Fit the memory into a window (App. I merging, G.3 iterative gisting): ``fit_tokens``, else the
    # model's window when ``fit``; the fitted memory is a memory of its own, made from this one.
    fit: bool = True
    fit_tokens: int | None = None

    def fit_window(self, engine) -> int | None:
        return self.fit_tokens or (getattr(engine, "context_tokens", None) if self.fit else None)

    def as_dict(self) -> dict:
        p = self.preset
        extra = {"conditional": self.conditional} if self.conditional else {}
        return {"preset": p.name, "min_words": p.min_words, "max_words": p.max_words,
                "hard_breaks": self.hard_breaks, "preceding_words": p.preceding_words,
                "short_tail_words": p.short_tail_words, **extra}

    def key(self, engine_key: str) -> str:
        """Identifies a memory: the same document, engine and key give the same pages."""
        prompts = self.preset.pagination_prompt.text + self.preset.gist_prompt.text
        blob = json.dumps({"engine": engine_key, **self.as_dict(), "prompts": prompts,
                           "gist_params": self.preset.gist_prompt.params}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BuildEvent:
    """One thing that happened: a pause point chosen ("page": the page, not gisted yet) or a page
    gisted ("gist"), and how far the build is."""
    kind: str
    page: Page
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
    fit: dict | None = None  # how the memory was fitted into a window (``FitResult``), if it had to be
    conditional: str = ""

    def as_json(self) -> dict:
        return asdict(self)


class _Builder:
    def __init__(self, store: Store, document: Document, engine, settings: BuildSettings,
                 memory_id: int, run_id: int, concurrency: int, progress, cancel: threading.Event):
        self.store, self.document, self.engine, self.settings = store, document, engine, settings
        self.preset = settings.preset
        self.memory_id, self.run_id = memory_id, run_id
        self.progress = progress
        self.cancel = cancel
        self.lock = threading.Lock()
        self.seq = itertools.count()
        self.pages: dict[int, Page] = {}  # by first paragraph
        self.gisted = 0
        self.words_paginated = 0
        self.workers = engine.workers(concurrency)
        self.slots = Slots(self.workers) if self.workers > 1 else None
        self.group: TaskGroup | None = None
        self.avg_page = (self.preset.min_words + self.preset.max_words) / 2
        # The model's context window bounds each pagination prompt (None: the offline engine).
        self.prompt_tokens = pause_prompt_tokens(getattr(engine, "context_tokens", None))

    def _take(self, key):
        return self.slots.take(key) if self.slots else nullcontext()

    def _check(self):
        if self.cancel.is_set():
            raise Cancelled("The build was stopped.",
                            cli="Build again with the same settings to resume; finished model calls are reused.",
                            app="Press Resume build to finish it; finished model calls are reused.")

    def _emit(self, kind: str, page: Page):
        if self.progress is None:
            return
        self.progress(BuildEvent(kind=kind, page=page, pages_found=len(self.pages), pages_gisted=self.gisted,
                                 words_paginated=self.words_paginated, total_words=self.document.words))

    def chain(self, start: int, end: int) -> None:
        paragraphs = self.document.paragraphs
        i, previous = start, ()
        while i < end:
            self._check()
            window = make_window(paragraphs, i, end, self.preset, previous, self.prompt_tokens,
                                 getattr(self.engine, "model", None))
            decision = forced_break(window, end, self.preset)
            if decision is None:
                remaining = sum(p.words for p in paragraphs[i:end])
                level = math.ceil(remaining / self.avg_page) + 1
                with self._take((-level,)):
                    self._check()
                    decision = self.engine.decide(PAUSE_POINT, PauseInput(window, self.preset))
            j = decision.value
            trace = decision.trace
            page = Page(start=i, end=j, text=self.document.span_text(i, j),
                        words=sum(p.words for p in paragraphs[i:j]), break_by=trace.outcome,
                        break_reason=trace.fallback or trace.detail.get("reason", ""))
            self.store.add_step(self.run_id, next(self.seq), "pagination", trace.outcome, trace.to_dict(),
                                trace.seconds)
            self.store.save_page(self.memory_id, page)
            with self.lock:
                self.pages[i] = page
                self.words_paginated += page.words
                self._emit("page", page)
            if self.group is not None:
                self.group.submit(self.gist, i)
            else:
                self.gist(i)
            previous = tuple(p.text for p in paragraphs[i:j])
            i = j

    def gist(self, start: int) -> None:
        self._check()
        page = self.pages[start]
        with self._take((-1,)):
            self._check()
            decision = self.engine.decide(GIST, GistInput(page.text, page.words, self.preset,
                                                          self.settings.conditional))
        trace = decision.trace
        trace.detail["page_start"] = start
        self.store.add_step(self.run_id, next(self.seq), "gist", trace.outcome, trace.to_dict(), trace.seconds)
        page = replace(page, gist=decision.value, gist_words=count_words(decision.value), gist_by=trace.outcome)
        self.store.save_page(self.memory_id, page)
        with self.lock:
            self.pages[start] = page
            self.gisted += 1
            self._emit("gist", page)

    def note_split(self) -> None:
        """Say in the trace that paragraphs too long for a page were split when the text was loaded."""
        split = self.document.meta.get("split_paragraphs")
        if not split:
            return
        limit = self.document.meta.get("split_words", MAX_PARAGRAPH_WORDS)
        note = by_rule("split", split, f"{split} paragraph{'s' if split != 1 else ''} longer than {limit:,} words "
                                       "(or too many tokens for a page) were split between sentences when the text "
                                       "was loaded, so every page fits in a prompt", split_paragraphs=split)
        self.store.add_step(self.run_id, next(self.seq), "split", RULE, note.trace.to_dict())

    def run(self) -> None:
        paragraphs = self.document.paragraphs
        if self.settings.hard_breaks:
            parts = sections(paragraphs, self.preset.min_words)
        else:
            parts = [(0, len(paragraphs))]
        if self.workers == 1:
            for start, end in parts:
                self.chain(start, end)
            return
        # Longest chapters first: they are the longest chains. Each chain holds a thread while it
        # waits for a slot, so the group has one thread per chain beyond the model's slots.
        parts = sorted(parts, key=lambda se: -sum(p.words for p in paragraphs[se[0]:se[1]]))
        with TaskGroup(self.workers + len(parts), cancel=self.cancel, name="build") as group:
            self.group = group
            for start, end in parts:
                group.submit(self.chain, start, end)


def build_memory(store: Store, document: Document, engine, settings: BuildSettings, *,
                 concurrency: int = 8, progress: Callable[[BuildEvent], None] | None = None,
                 cancel: threading.Event | None = None, rebuild: bool = False) -> BuildResult:
    """Build (or reuse) the gist memory of ``document``, then, when it does not fit the window
    (``settings.fit_window``), fit it (``compress.fit_memory``): the result names the fitted memory."""
    result, memory = _build(store, document, engine, settings, concurrency=concurrency, progress=progress,
                            cancel=cancel, rebuild=rebuild)
    result.conditional = settings.conditional
    window = settings.fit_window(engine)
    if not window:
        return result
    fit = fit_memory(store, document, memory, engine, settings.preset, window, concurrency=concurrency,
                     rebuild=rebuild)
    result.fit = fit.as_json()
    if fit.memory_id != result.memory_id:
        fitted = store.get_memory(fit.memory_id)
        result.memory_id, result.pages = fit.memory_id, fitted.pages
        result.gist_words, result.compression_rate = fitted.gist_words, fitted.compression_rate
    return result


def _build(store: Store, document: Document, engine, settings: BuildSettings, *, concurrency: int,
           progress: Callable[[BuildEvent], None] | None, cancel: threading.Event | None,
           rebuild: bool) -> tuple[BuildResult, GistMemory]:
    started = time.perf_counter()
    store.save_document(document)
    preset = settings.preset
    key = settings.key(engine.key)
    fields = dict(doc_id=document.id, engine=engine.key, engine_label=engine.label, model=engine.model,
                  preset=preset.name, min_words=preset.min_words, max_words=preset.max_words,
                  hard_breaks=int(settings.hard_breaks), settings=json.dumps(settings.as_dict()), settings_key=key,
                  origin="built")
    claim = f"{current_owner()}/{uuid.uuid4().hex}"
    while True:  # single flight: one build per memory; a second waits for the first, then reuses or resumes it
        state, memory_id = store.claim_memory(document.id, key, fields, claim=claim, rebuild=rebuild)
        if state != "busy":
            break
        rebuild = False  # the build under way is the rebuild asked for
        if cancel is None:
            time.sleep(WAIT_S)
        elif cancel.wait(WAIT_S):
            raise Cancelled("Stopped while waiting for the same build, already under way elsewhere.")
    if state == "complete":
        memory = load_memory(store, memory_id, document)
        return _result(document, memory, engine, settings, run_id=None, seconds=time.perf_counter() - started,
                       usage=engine.usage(), reused=True), memory
    params = {**settings.as_dict(), "concurrency": concurrency, "resumed": state == "resume"}
    with run(store, "build", engine, doc_id=document.id, memory_id=memory_id, params=params) as this:
        this.on_end.append(lambda status: store.update_memory(memory_id, status=status))
        builder = _Builder(store, document, this.engine, settings, memory_id, this.id, concurrency, progress,
                           cancel or threading.Event())
        if state != "resume":
            builder.note_split()
        builder.run()
        store.clear_pages(memory_id, keep=builder.pages)  # a resumed build may have chosen other pause points
        made = GistMemory(doc_id=document.id, title=document.title, words=document.words,
                          pages=in_text_order(builder.pages))
        store.update_memory(memory_id, status=COMPLETE, pages=len(made.pages), words=document.words,
                            gist_words=made.gist_words, compression_rate=made.compression_rate, run_id=this.id,
                            finished_at=now())
        memory = replace(made, record=store.get_memory(memory_id))
        result = _result(document, memory, this.engine, settings, run_id=this.id,
                         seconds=time.perf_counter() - started, usage=this.engine.usage(), reused=False)
        this.finish(result.as_json())
    return result, memory


def in_text_order(pages: dict[int, Page]) -> tuple[Page, ...]:
    """Pages found so far (by first paragraph), in text order and numbered so."""
    return tuple(replace(pages[start], index=i) for i, start in enumerate(sorted(pages)))


def _result(document: Document, memory: GistMemory, engine, settings: BuildSettings, *, run_id,
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


# --- in the background, for the app --------------------------------------------------------

class BuildProgress:
    """What a background build has done so far, for a screen to draw while it runs.

    After each page or gist it hands the interpreter to the process's other threads for a moment
    (``YIELD_S``), and for longer after the first page (``FIRST_PAGE_YIELD_S``): a build by the offline
    engine is pure Python and would otherwise hold it for most of a second at a time, keeping the
    screen it runs for (the first pause point) from reaching the browser."""

    YIELD_S = 0.002
    FIRST_PAGE_YIELD_S = 0.25

    def __init__(self, document: Document, engine_label: str = "", key: str = ""):
        self.document = document
        self.engine_label = engine_label
        self.key = key  # the memory's settings key: a second request for it attaches to this build
        self.started = time.perf_counter()
        self.first_page: float | None = None
        self._pages: dict[int, Page] = {}
        self._gisted = 0
        self._words = 0
        self._lock = threading.Lock()
        self._first = threading.Event()

    def __call__(self, event: BuildEvent) -> None:
        with self._lock:
            first = self.first_page is None
            if first:
                self.first_page = time.perf_counter()
            self._pages[event.page.start] = event.page
            self._gisted, self._words = event.pages_gisted, event.words_paginated
        self._first.set()
        time.sleep(self.FIRST_PAGE_YIELD_S if first else self.YIELD_S)

    def pages(self) -> tuple[Page, ...]:
        """The pages found so far, in text order (those not gisted yet have no gist)."""
        with self._lock:
            return in_text_order(self._pages)

    @property
    def pages_gisted(self) -> int:
        return self._gisted

    @property
    def words_done(self) -> int:
        return self._words

    @property
    def first_page_s(self) -> float | None:
        """Seconds from the start to the first pause point."""
        return None if self.first_page is None else self.first_page - self.started

    def wait_first_page(self, job: Job, timeout: float) -> bool:
        """Block until the first pause point is chosen (or the build ends, or ``timeout``)."""
        deadline = time.monotonic() + timeout
        while not self._first.wait(0.02):
            if job.finished or time.monotonic() > deadline:
                return False
        return True


def start_build(store: Store, document: Document, engine, settings: BuildSettings, *, concurrency: int = 8) -> Job:
    """Build ``document``'s gist memory on a background thread; ``job.progress`` is a ``BuildProgress``.
    The same build already running in this process (another browser tab) is returned instead."""
    key = settings.key(engine.key)
    running = find_job("build", lambda j: j.progress.document.id == document.id and j.progress.key == key)
    if running is not None:
        return running
    progress = BuildProgress(document, engine.label, key)
    return start_job("build", f"{document.title}: gist memory", lambda job: build_memory(
        store, document, engine, settings, concurrency=concurrency, progress=progress, cancel=job.cancel),
        progress=progress)
