"""Fitting a gist memory into a model's window (ReadAgent App. I and G.3).

ReadAgent shows the whole gist memory with the question in one prompt. For a very long text the
gists alone can exceed the window, so, as the paper does for NarrativeQA's Gutenberg books:

1. **Page merging** (App. I): for each pair of neighbouring pages, ask the paper's merging prompt
   ("does Page 2 start a new chapter/section/book ...? yes, no, or not sure"). Pages whose answer
   is "no" merge, two at a time (each page merges once per round, so pages about double); the
   merged pages are gisted again (from their raw text when it fits the window, else from the gists
   of the pages they hold). Rounds repeat until the memory fits or no pair may merge ("yes",
   "not sure" and an unusable reply keep pages apart).
2. **Iterative gisting** (App. G.3), the last resort: the gists of the oldest pages are gisted
   again (each page once before any page twice, at most ``MAX_GIST_ROUNDS`` times) until it fits.

The offline engine takes the same steps by its rules: pages merge unless Page 2 starts with a
heading, and gists are shortened extractively. Every decision is traced like any other step; the
fitted memory is a memory of its own whose pages record which of the original pages they hold.
"""
from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from types import SimpleNamespace

from core import prompts
from core.decisions import Step
from core.llm.window import cut_to_tokens, describe, input_budget
from core.methods.answer import answer_room
from core.methods.base import Question
from core.methods.readagent import rules
from core.methods.readagent.memory import GistMemory, load_memory
from core.methods.readagent.steps import (GIST, LOOKUP_NEXT, LOOKUP_PARALLEL, LOOKUP_TOKENS, GistInput,
                                          LookupInput)
from core.methods.readagent.presets import Preset
from core.parsing import Parsed, bad, clean
from core.status import COMPLETE
from core.store import Store
from core.store.migrations import now
from core.store.owners import current_owner
from core.store.records import Memory, Page
from core.store.runs import run
from core.text.documents import Document, count_words, is_heading
from core.text.tokens import count_tokens
from core.trace import by_rule

YES, NO, UNSURE = "yes", "no", "not sure"
MERGE_TOKENS = 24  # "No." or "Yes, Page 2 starts Chapter 5."
REGIST_TOKENS = 256  # the reply budget a re-gist from raw text must leave room for
QUESTION_TOKENS = 256  # room kept beside the memory for the question and its options
# A memory that fills the window leaves no look-up any room: every page asked for would stay a
# gist. Fitting aims to keep a third of the room for the raw pages a look-up re-reads (about one
# QuALITY page in a 4,096-token window); a memory that cannot shrink that far still fits if it
# leaves the question and the answer their room.
READ_BACK_SHARE = 1 / 3
MAX_GIST_ROUNDS = 3
ITERATIVE = "gist-again"


# --- the merging decision ---------------------------------------------------------------------------

_ANSWER = re.compile(r"\b(not sure|unsure|uncertain|yes|no)\b")


def parse_merge(reply: str) -> Parsed[str]:
    """"yes", "no" or "not sure" from the first sentence of the reply (after any thinking).
    Refused: nothing, no answer, or two different answers ("yes or no")."""
    text = clean(reply).lower()
    if not text:
        return bad("the reply is empty")
    first = re.split(r"[.!?\n]", text.lstrip("*#> \"'"), maxsplit=1)[0]
    found = {({"unsure": UNSURE, "uncertain": UNSURE}).get(m, m) for m in _ANSWER.findall(first)}
    if not found:
        return bad('the reply does not start with "yes", "no" or "not sure"')
    if len(found) > 1:
        return bad(f"the reply gives more than one answer ({', '.join(sorted(found))})")
    return Parsed(found.pop())


@dataclass(frozen=True)
class MergeInput:
    previous: str  # Page 1's text (its end, when cut to fit the window)
    current: str  # Page 2's text (its start)
    pages: tuple[int, int]  # the two pages' indexes in this round
    sources: tuple[tuple[int, ...], tuple[int, ...]]  # the original pages each holds
    fitted: bool = False


def merge_rule(i: MergeInput) -> tuple[str, dict]:
    """Offline: Page 2 starts a new chapter when its first line is a heading."""
    first = next((line for line in i.current.split("\n") if line.strip()), "")
    if is_heading(first):
        return YES, {"reason": f"Page 2 starts with the heading {first.strip()[:80]!r}: kept apart"}
    return NO, {"reason": "Page 2 does not start with a heading: merged"}


def _merge_detail(i: MergeInput) -> dict:
    detail = {"pages": list(i.pages), "sources": [list(s) for s in i.sources]}
    if i.fitted:
        detail["fitted"] = "the pages were cut (the end of Page 1, the start of Page 2) to fit the window"
    return detail


PAGE_MERGE = Step(
    name="page-merge",
    prompt=lambda i: prompts.PAGE_MERGE.format(previous_page=i.previous, current_page=i.current),
    parse=lambda reply, i: parse_merge(reply),
    fallback=lambda i, attempts: (UNSURE, f"no usable yes/no/not sure in {len(attempts)} replies; the pages were "
                                          "kept apart"),
    rule=merge_rule,
    detail=_merge_detail,
    max_tokens=lambda i: MERGE_TOKENS,
    min_tokens=8,
)

ITERATIVE_GIST = replace(GIST, name=ITERATIVE, rule=lambda i: rules.shorter_gist(i.text))


# --- does a memory fit? ------------------------------------------------------------------------------

def memory_room(window: int, preset: Preset, model: str | None = None, *, read_back: bool = False) -> int:
    """The most tokens a gist memory may have in ``window`` so that ReadAgent's look-up prompts and
    its answer prompt fit with a question of ``QUESTION_TOKENS``; with ``read_back``, less
    ``READ_BACK_SHARE`` of that kept for the pages a look-up re-reads (what fitting aims for)."""
    empty = GistMemory(doc_id="", title="", words=0, pages=())
    question = Question("")
    lookups = [LOOKUP_PARALLEL.prompt(LookupInput(empty, question, preset, max_pages=5)),
               LOOKUP_NEXT.prompt(LookupInput(empty, question, preset))]
    lookup_room = input_budget(window, LOOKUP_TOKENS) - max(count_tokens(p, model) for p in lookups)
    answer = answer_room(SimpleNamespace(context_tokens=window, model=model), question)
    room = min(lookup_room, answer) - QUESTION_TOKENS
    return room - max(0, int(room * READ_BACK_SHARE)) if read_back else room


def memory_tokens(memory: GistMemory, model: str | None = None) -> int:
    return count_tokens(memory.context(), model)


@dataclass
class _Page:
    sources: tuple[int, ...]
    start: int
    end: int
    words: int
    gist: str
    gist_words: int
    gist_by: str
    break_by: str
    break_reason: str
    gist_rounds: int = 0
    done: bool = False  # gisting it again made it no shorter


def _context(pages: list[_Page]) -> str:
    return "\n".join(f"<Page {n}>\n{p.gist}" for n, p in enumerate(pages))


@dataclass
class FitResult:
    memory_id: int
    parent_id: int
    window: int
    room: int  # the most the memory may hold (look-ups and answer still fit)
    target: int  # what fitting aims for: the room less READ_BACK_SHARE kept for pages re-read
    fits: bool
    pages_before: int
    pages_after: int
    merge_rounds: int
    merges: int
    registed: int
    gisted_again: int
    tokens_before: int
    tokens_after: int
    run_id: int | None = None
    reused: bool = False

    def as_json(self) -> dict:
        return asdict(self)


def fit_key(parent: Memory, window: int) -> str:
    return hashlib.sha256(f"{parent.settings_key}|fit|{window}".encode()).hexdigest()[:16]


class _Fitter:
    def __init__(self, store: Store, document: Document, memory: GistMemory, engine, preset: Preset, window: int,
                 run_id: int, concurrency: int):
        self.store, self.document, self.memory, self.engine, self.preset = store, document, memory, engine, preset
        self.window, self.run_id = window, run_id
        self.model = engine.model
        self.room = memory_room(window, preset, self.model, read_back=True)
        self.workers = engine.workers(concurrency)
        self.seq = 0
        self.counts = {"merge_rounds": 0, "merges": 0, "registed": 0, "gisted_again": 0}

    def _log(self, name: str, trace) -> None:
        self.store.add_step(self.run_id, self.seq, name, trace.outcome, trace.to_dict(), trace.seconds)
        self.seq += 1

    def _map(self, fn, items):
        if self.workers == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(fn, items))

    def tokens(self, pages: list[_Page]) -> int:
        return count_tokens(_context(pages), self.model)

    # -- App. I: merge neighbouring pages, re-gist the merged ones --------------------------------------
    def merge_input(self, pages: list[_Page], k: int) -> MergeInput:
        a, b = pages[k], pages[k + 1]
        previous, current = self.document.span_text(a.start, a.end), self.document.span_text(b.start, b.end)
        fitted = False
        if self.engine.context_tokens:
            empty = prompts.PAGE_MERGE.format(previous_page="", current_page="")
            half = (input_budget(self.engine.context_tokens, MERGE_TOKENS) - count_tokens(empty, self.model)) // 2
            cut_a = cut_to_tokens(previous, half, from_end=True, model=self.model)
            cut_b = cut_to_tokens(current, half, model=self.model)
            fitted = (cut_a, cut_b) != (previous, current)
            previous, current = cut_a, cut_b
        return MergeInput(previous, current, (k, k + 1), (a.sources, b.sources), fitted)

    def merge_round(self, pages: list[_Page], kept_apart: set) -> list[_Page] | None:
        asked = [k for k in range(len(pages) - 1) if (pages[k].sources, pages[k + 1].sources) not in kept_apart]
        decisions = self._map(lambda k: self.engine.decide(PAGE_MERGE, self.merge_input(pages, k)), asked)
        answers = {}
        for k, decision in zip(asked, decisions):
            self._log(PAGE_MERGE.name, decision.trace)
            answers[k] = decision.value
            if decision.value != NO:
                kept_apart.add((pages[k].sources, pages[k + 1].sources))
        merged: list[_Page] = []
        parts: list[tuple[_Page, _Page]] = []
        k = 0
        while k < len(pages):
            if answers.get(k) == NO:
                a, b = pages[k], pages[k + 1]
                page = _Page(a.sources + b.sources, a.start, b.end, a.words + b.words, "", 0, "", b.break_by,
                             f"pages {a.sources[0]}-{b.sources[-1]} merged (App. I)")
                merged.append(page)
                parts.append((page, (a, b)))
                k += 2
            else:
                merged.append(pages[k])
                k += 1
        if not parts:
            return None
        self._map(lambda pair: self.regist(*pair), parts)
        self.counts["merge_rounds"] += 1
        self.counts["merges"] += len(parts)
        return merged

    def regist(self, page: _Page, halves: tuple[_Page, _Page]) -> None:
        text = self.document.span_text(page.start, page.end)
        made_from = "raw text"
        condition = self.memory.conditional
        if self.engine.context_tokens:
            prompt = GIST.prompt(GistInput(text, page.words, self.preset, condition))
            if count_tokens(prompt, self.model) > input_budget(self.engine.context_tokens, REGIST_TOKENS):
                text, made_from = "\n".join(h.gist for h in halves), "the gists of its pages (the raw text does not fit the window)"
        decision = self.engine.decide(GIST, GistInput(text, count_words(text), self.preset, condition))
        decision.trace.detail.update(page_start=page.start, merged_from=list(page.sources), regist_from=made_from)
        self._log("regist", decision.trace)
        page.gist, page.gist_words, page.gist_by = decision.value, count_words(decision.value), decision.trace.outcome
        self.counts["registed"] += 1

    # -- App. G.3: gist the oldest gists again -----------------------------------------------------------
    def gist_again(self, page: _Page) -> None:
        decision = self.engine.decide(ITERATIVE_GIST, GistInput(page.gist, page.gist_words, self.preset,
                                                                self.memory.conditional))
        words = count_words(decision.value)
        decision.trace.detail.update(page_start=page.start, round=page.gist_rounds + 1,
                                     iterative="App. G.3: an older page's gist gisted again")
        if words >= page.gist_words:
            page.done = True
            decision.trace.detail["kept"] = f"not shorter ({words} words): the previous gist is kept"
        else:
            page.gist, page.gist_words, page.gist_by = decision.value, words, decision.trace.outcome
            page.gist_rounds += 1
            self.counts["gisted_again"] += 1
        self._log(ITERATIVE, decision.trace)

    def iterate(self, pages: list[_Page]) -> None:
        while (excess := self.tokens(pages) - self.room) > 0:
            candidates = sorted((p for p in pages if not p.done and p.gist_rounds < MAX_GIST_ROUNDS),
                                key=lambda p: (p.gist_rounds, p.start))
            if not candidates:
                return
            batch, saving = [], 0
            for p in candidates:  # the oldest first, until halving their gists would make room
                batch.append(p)
                saving += count_tokens(p.gist, self.model) // 2 + 1
                if saving >= excess:
                    break
            self._map(self.gist_again, batch)

    def run(self) -> list[_Page]:
        pages = [_Page((p.index,), p.start, p.end, p.words, p.gist, p.gist_words, p.gist_by, p.break_by,
                       p.break_reason, p.gist_rounds) for p in self.memory.pages]
        kept_apart: set = set()
        while self.tokens(pages) > self.room:
            merged = self.merge_round(pages, kept_apart)
            if merged is None:
                break
            pages = merged
        self.iterate(pages)
        return pages


def fit_memory(store: Store, document: Document, memory: GistMemory, engine, preset: Preset, window: int, *,
               concurrency: int = 8, rebuild: bool = False) -> FitResult:
    """The memory fitted into ``window`` (see the module docstring), stored as a memory of its own
    (reused when it exists); ``memory`` itself when it already fits (``memory_id == parent_id``)."""
    room = memory_room(window, preset, engine.model)
    target = memory_room(window, preset, engine.model, read_back=True)
    before = memory_tokens(memory, engine.model)
    base = dict(parent_id=memory.memory_id, window=window, room=room, target=target, pages_before=len(memory.pages),
                tokens_before=before, merge_rounds=0, merges=0, registed=0, gisted_again=0)
    if before <= target:
        return FitResult(memory_id=memory.memory_id, fits=True, pages_after=len(memory.pages), tokens_after=before,
                         reused=True, **base)
    parent = memory.record
    key = fit_key(parent, window)
    settings = {**parent.settings, "fit_tokens": window, "from_memory": memory.memory_id}
    fields = {k: getattr(parent, k) for k in ("doc_id", "engine", "engine_label", "model", "preset", "min_words",
                                              "max_words", "hard_breaks")}
    fields.update(settings=_dumps(settings), settings_key=key, origin="fitted", parent_id=memory.memory_id,
                  fit_tokens=window)
    claim = f"{current_owner()}/fit-{uuid.uuid4().hex}"
    while True:  # one fit per memory and window: a second waits for the first, then reuses it
        state, memory_id = store.claim_memory(document.id, key, fields, claim=claim, rebuild=rebuild)
        if state != "busy":
            break
        rebuild = False
        time.sleep(0.25)
    if state == "complete":
        fitted = load_memory(store, memory_id, document)
        after = memory_tokens(fitted, engine.model)
        return FitResult(memory_id=memory_id, fits=after <= room, pages_after=len(fitted.pages), tokens_after=after,
                         reused=True, **{**base, **_counts(fitted)})
    store.clear_pages(memory_id)
    with run(store, "build", engine, doc_id=document.id, memory_id=memory_id,
             params={"fit_tokens": window, "from_memory": memory.memory_id}) as this:
        this.on_end.append(lambda status: store.update_memory(memory_id, status=status))
        fitter = _Fitter(store, document, memory, this.engine, preset, window, this.id, concurrency)
        pages = fitter.run()
        for p in pages:
            store.save_page(memory_id, Page(start=p.start, end=p.end, text=document.span_text(p.start, p.end),
                                            words=p.words, break_by=p.break_by, break_reason=p.break_reason,
                                            gist=p.gist, gist_words=p.gist_words, gist_by=p.gist_by,
                                            sources=p.sources, gist_rounds=p.gist_rounds))
        fitted = load_memory(store, memory_id, document)
        after = memory_tokens(fitted, engine.model)
        result = FitResult(memory_id=memory_id, fits=after <= room, pages_after=len(pages), tokens_after=after,
                           run_id=this.id, **{**base, **fitter.counts})
        verdict = "fits" if result.fits else "still does not fit"
        note = by_rule("fit", result.fits,
                       f"{len(memory.pages)} pages ({before:,} tokens of gists) -> {len(pages)} pages ({after:,} "
                       f"tokens); room for the memory in the {describe(window)}: {room:,} tokens, aiming at {target:,} to "
                       f"leave room for pages re-read; it {verdict}",
                       **fitter.counts)
        fitter._log("fit", note.trace)
        store.update_memory(memory_id, status=COMPLETE, pages=len(pages), words=document.words,
                            gist_words=fitted.gist_words, compression_rate=fitted.compression_rate, run_id=this.id,
                            finished_at=now())
        this.finish(result.as_json())
    return result


def _counts(memory: GistMemory) -> dict:
    return {"merges": sum(1 for p in memory.pages if len(p.sources) > 1),
            "gisted_again": sum(p.gist_rounds for p in memory.pages)}


def _dumps(value) -> str:
    return json.dumps(value)
