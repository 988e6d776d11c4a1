"""MemWalker's memory tree (Chen et al., Sec. 3 "Memory tree construction"): built once per
document and settings, stored, and reopened with no model calls.

The text is cut into segments of about ``segment_tokens`` tokens (tiktoken,
paragraph-aligned), each segment is summarised into a leaf, and up to ``max_children``
consecutive nodes are summarised into a parent, level by level, until one root. Leaves
keep their raw segment. The summaries of one level are made concurrently. A tree can
also be built on a ReadAgent gist memory: its pages are the leaves and their gists the
leaf summaries, so both methods share one pagination.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import threading
import time
from dataclasses import asdict, dataclass, replace
from typing import Callable

from core import prompts
from core.concurrency import run_all
from core.errors import Cancelled, ContextWindowError, GistError, SettingError
from core.llm.window import describe, input_budget
from core.methods.memwalker.steps import (LEAF_SUMMARY, NODE_SUMMARY, SummaryInput, segment_room, summary_tokens,
                                          triage_room)
from core.methods.readagent.memory import GistMemory
from core.status import BUILDING, COMPLETE
from core.store import Store
from core.store.records import TreeNode
from core.store.runs import run
from core.text.documents import Document
from core.text.segments import Segment, segment_paragraphs
from core.text.tokens import DEFAULT_ENCODING, count_tokens
from core.trace import FALLBACK, Decision


@dataclass(frozen=True)
class MemoryTree:
    doc_id: str
    title: str
    words: int  # words in the document (or in the gist memory's pages)
    nodes: tuple[TreeNode, ...]
    tree_id: int | None = None
    origin: str = "segments"  # "segments" (cut by tokens) or "pages" (a gist memory's pages)
    memory_id: int | None = None
    engine: str = ""
    engine_label: str = ""
    segment_tokens: int = 0
    max_children: int = 0

    @property
    def root(self) -> TreeNode:
        return self.nodes[-1]

    def node(self, node_id: int) -> TreeNode:
        return self.nodes[node_id]

    @property
    def leaves(self) -> list[TreeNode]:
        return [n for n in self.nodes if n.level == 1]

    @property
    def tokens(self) -> int:
        return sum(n.tokens for n in self.leaves)

    def level_counts(self) -> list[int]:
        """Nodes per level, leaves first, root last."""
        counts: dict[int, int] = {}
        for n in self.nodes:
            counts[n.level] = counts.get(n.level, 0) + 1
        return [counts[level] for level in sorted(counts)]


@dataclass(frozen=True)
class TreeSettings:
    segment_tokens: int = 1000  # the paper: 1000 (QuALITY, SummScreenFD), 1200 (GovReport)
    max_children: int = 8  # the paper: 8, 5, 8

    def check(self) -> "TreeSettings":
        if self.segment_tokens < 50:
            raise SettingError("segment_tokens", self.segment_tokens, "at least 50", "the paper uses 1000")
        if self.max_children < 2:
            raise SettingError("max_children", self.max_children, "at least 2", "the paper uses 5 to 8")
        return self

    def key(self, engine_key: str, memory_id: int | None) -> str:
        """Identifies a tree: same document, engine, settings and prompts give the same tree."""
        blob = json.dumps({
            "engine": engine_key, "memory_id": memory_id, "max_children": self.max_children,
            "segment_tokens": None if memory_id else self.segment_tokens, "encoding": DEFAULT_ENCODING,
            "prompts": prompts.MEMWALKER_SUMMARY_LEAF.text + prompts.MEMWALKER_SUMMARY_PARENT.text,
        }, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def balanced_groups(n: int, max_children: int) -> list[range]:
    """Split n consecutive nodes into the fewest groups of at most ``max_children``, with
    sizes differing by at most one (9 nodes under 8 -> 5 + 4, never 8 + 1)."""
    groups = math.ceil(n / max_children)
    size, extra = divmod(n, groups)
    out, start = [], 0
    for g in range(groups):
        end = start + size + (1 if g < extra else 0)
        out.append(range(start, end))
        start = end
    return out


@dataclass(frozen=True)
class TreeEvent:
    """Progress: ``done`` of ``total`` summaries made at ``level``."""
    level: int
    done: int
    total: int


@dataclass
class TreeResult:
    tree_id: int
    doc_id: str
    title: str
    origin: str
    memory_id: int | None
    engine: str
    engine_label: str
    segment_tokens: int
    max_children: int
    levels: list[dict]  # [{"level": 1, "nodes": 12}, ...] leaves first
    nodes: int
    leaves: int
    tokens: int
    summary_tokens: int
    llm_calls: int
    cached_calls: int
    fallback_summaries: int
    seconds: float
    run_id: int | None
    reused: bool = False

    def as_json(self) -> dict:
        return asdict(self)


def load_tree(store: Store, tree_id: int, document: Document | None = None) -> MemoryTree:
    """A stored tree, exactly as built; no model calls."""
    record = store.get_tree(tree_id)
    if record.status != COMPLETE:
        raise GistError(f"Memory tree {tree_id} is {record.status}.", cli="Build it again with `python -m core tree`.",
                        app="Build it again on the Memory tree page.")
    document = document or store.get_document(record.doc_id)
    return MemoryTree(doc_id=document.id, title=document.title, words=document.words,
                      nodes=store.tree_nodes(tree_id), tree_id=tree_id, origin=record.origin,
                      memory_id=record.memory_id, engine=record.engine, engine_label=record.engine_label,
                      segment_tokens=record.segment_tokens, max_children=record.max_children)


class _TreeBuilder:
    def __init__(self, store: Store, engine, run_id: int, concurrency: int,
                 progress: Callable[[TreeEvent], None] | None, cancel: threading.Event):
        self.store, self.engine, self.run_id = store, engine, run_id
        self.workers = engine.workers(concurrency)
        self.progress = progress
        self.cancel = cancel
        self.seq = itertools.count()
        self.lock = threading.Lock()
        self.window = getattr(engine, "context_tokens", None)  # the model's; None for the offline engine
        self.summary_tokens = summary_tokens(self.window)

    def _summarise(self, step, inputs: SummaryInput, node_id: int, level: int) -> Decision[str]:
        if self.cancel.is_set():
            raise Cancelled("The memory tree was not finished.",
                            cli="Build it again with the same settings to resume; finished model calls are reused.",
                            app="Build it again with the same settings to resume; finished model calls are reused.")
        decision = self.engine.decide(step, inputs)
        trace = decision.trace
        trace.detail.update(node=node_id, level=level)
        self.store.add_step(self.run_id, next(self.seq), trace.step, trace.outcome, trace.to_dict(), trace.seconds)
        return decision

    def level(self, jobs: list[Callable[[], Decision[str]]], level: int) -> list[Decision[str]]:
        """Run one level's summaries, side by side when the engine allows, reporting progress."""
        done = [0]

        def counted(_decision) -> None:
            with self.lock:
                done[0] += 1
                if self.progress:
                    self.progress(TreeEvent(level, done[0], len(jobs)))

        return run_all(jobs, self.workers, cancel=self.cancel, on_done=counted, name="tree")

    def leaves_from_segments(self, segments: list[Segment]) -> list[TreeNode]:
        jobs = [lambda i=i, s=s: self._summarise(LEAF_SUMMARY, SummaryInput(s.text, reply_tokens=self.summary_tokens),
                                                 i, 1)
                for i, s in enumerate(segments)]
        decisions = self.level(jobs, 1)
        return [TreeNode(id=i, level=1, index=i, children=(), parent=None, start=s.start, end=s.end,
                         summary=d.value, summary_by=d.trace.outcome, text=s.text, tokens=s.tokens,
                         summary_tokens=count_tokens(d.value))
                for i, (s, d) in enumerate(zip(segments, decisions))]

    def groups(self, below: list[TreeNode], max_children: int) -> list[range]:
        """The children of each parent: ``balanced_groups``, unless their summaries would not fit
        in one prompt of the model's window (a node summary, and a triage with the question):
        then consecutive nodes as long as they fit (at least two, so the tree still narrows)."""
        groups = balanced_groups(len(below), max_children)
        if self.window is None:
            return groups
        parent = count_tokens(prompts.MEMWALKER_SUMMARY_PARENT.format(summaries=""))
        budget = min(triage_room(self.window), input_budget(self.window, self.summary_tokens) - parent)
        cost = [count_tokens(n.summary) + 8 for n in below]  # and "Summary i: "
        if all(sum(cost[i] for i in g) <= budget for g in groups):
            return groups
        out: list[range] = []
        start, total = 0, 0
        for i, tokens in enumerate(cost):
            if i - start >= 2 and (i - start >= max_children or total + tokens > budget):
                out.append(range(start, i))
                start, total = i, 0
            total += tokens
        out.append(range(start, len(below)))
        if len(out) > 1 and len(out[-1]) == 1:  # a lone last node joins the group before it
            last = out.pop()
            out[-1] = range(out[-1].start, last.stop)
        return out

    def parents(self, below: list[TreeNode], next_id: int, max_children: int) -> list[TreeNode]:
        level = below[0].level + 1
        groups = self.groups(below, max_children)
        jobs = []
        for k, group in enumerate(groups):
            summaries = tuple(below[i].summary for i in group)
            jobs.append(lambda summaries=summaries, k=k: self._summarise(
                NODE_SUMMARY, SummaryInput("\n".join(summaries), summaries, self.summary_tokens), next_id + k, level))
        decisions = self.level(jobs, level)
        return [TreeNode(id=next_id + k, level=level, index=k, children=tuple(below[i].id for i in group),
                         parent=None, start=below[group[0]].start, end=below[group[-1]].end, summary=d.value,
                         summary_by=d.trace.outcome, tokens=sum(below[i].tokens for i in group),
                         summary_tokens=count_tokens(d.value))
                for k, (group, d) in enumerate(zip(groups, decisions))]


def fit_settings(settings: TreeSettings, engine) -> TreeSettings:
    """``settings`` with segments no longer than the model's window can summarise and read at a
    leaf with a question (the tree's settings, and so its key, say the size used)."""
    window = getattr(engine, "context_tokens", None)
    if window is None or settings.segment_tokens <= segment_room(window):
        return settings
    fitted = segment_room(window)
    if fitted < 50:
        raise ContextWindowError(f"The model's {describe(window)} is too small for a memory tree: a segment, its "
                                 "summary and a question do not fit in it.")
    return replace(settings, segment_tokens=fitted)


def _with_parents(nodes: list[TreeNode]) -> tuple[TreeNode, ...]:
    parent_of = {child: n.id for n in nodes for child in n.children}
    return tuple(replace(n, parent=parent_of.get(n.id)) for n in nodes)


def has_tree(store: Store, document: Document, engine, settings: TreeSettings = TreeSettings(),
             memory: GistMemory | None = None) -> bool:
    """Whether ``build_tree`` would reopen a stored tree (no model calls) rather than build one."""
    settings = fit_settings(settings.check(), engine)
    return store.find_tree(document.id, settings.key(engine.key, memory.memory_id if memory else None)) is not None


def build_tree(store: Store, document: Document, engine, settings: TreeSettings = TreeSettings(), *,
               memory: GistMemory | None = None, concurrency: int = 8,
               progress: Callable[[TreeEvent], None] | None = None, cancel: threading.Event | None = None,
               rebuild: bool = False) -> tuple[MemoryTree, TreeResult]:
    """Build (or reuse) the memory tree of ``document``; on ``memory``'s pages if given.
    A stored tree with the same engine and settings is reopened with no model calls."""
    started = time.perf_counter()
    settings = fit_settings(settings.check(), engine)
    store.save_document(document)
    memory_id = memory.memory_id if memory else None
    key = settings.key(engine.key, memory_id)
    if not rebuild and (stored := store.find_tree(document.id, key)) is not None:
        tree = load_tree(store, stored.id, document)
        return tree, _tree_result(tree, stored.run_id, {"llm_calls": 0, "cached_calls": 0},
                                  time.perf_counter() - started, reused=True)
    origin = "pages" if memory else "segments"
    tree_id = store.create_tree(
        doc_id=document.id, memory_id=memory_id, origin=origin, engine=engine.key, engine_label=engine.label,
        model=engine.model, segment_tokens=None if memory else settings.segment_tokens,
        max_children=settings.max_children, settings=json.dumps(asdict(settings)), settings_key=key,
        status=BUILDING)
    params = {**asdict(settings), "origin": origin, "tree_id": tree_id, "concurrency": concurrency}
    with run(store, "tree", engine, doc_id=document.id, memory_id=memory_id, method="memwalker",
             params=params) as this:
        this.on_end.append(lambda status: store.update_tree(tree_id, status=status))
        store.update_tree(tree_id, run_id=this.id)
        builder = _TreeBuilder(store, this.engine, this.id, max(1, concurrency), progress,
                               cancel or threading.Event())
        if memory is not None:
            if not memory.pages:
                raise GistError(f"Gist memory {memory_id} has no pages; build it again before making a tree on it.")
            leaves = [TreeNode(id=p.index, level=1, index=p.index, children=(), parent=None, start=p.start,
                               end=p.end, summary=p.gist, summary_by=f"gist ({p.gist_by})" if p.gist_by else "gist",
                               text=p.text, tokens=count_tokens(p.text), summary_tokens=count_tokens(p.gist))
                      for p in memory.pages]
        else:
            segments = segment_paragraphs(document.paragraphs, settings.segment_tokens)
            if not segments:
                raise GistError(f"{document.title!r} has no text to build a memory tree from.")
            leaves = builder.leaves_from_segments(segments)
        nodes, level = list(leaves), list(leaves)
        while len(level) > 1:
            level = builder.parents(level, len(nodes), settings.max_children)
            nodes.extend(level)
        nodes = list(_with_parents(nodes))
        tree = MemoryTree(doc_id=document.id, title=document.title, words=document.words, nodes=tuple(nodes),
                          tree_id=tree_id, origin=origin, memory_id=memory_id, engine=engine.key,
                          engine_label=engine.label, segment_tokens=0 if memory else settings.segment_tokens,
                          max_children=settings.max_children)
        result = _tree_result(tree, this.id, this.engine.usage(), time.perf_counter() - started, reused=False)
        store.finish_tree(tree_id, nodes, nodes=len(nodes), leaves=len(leaves), levels=len(tree.level_counts()),
                          tokens=tree.tokens)
        this.finish(result.as_json())
    return tree, result


def _tree_result(tree: MemoryTree, run_id: int | None, usage: dict, seconds: float, *, reused: bool) -> TreeResult:
    return TreeResult(
        tree_id=tree.tree_id, doc_id=tree.doc_id, title=tree.title, origin=tree.origin, memory_id=tree.memory_id,
        engine=tree.engine, engine_label=tree.engine_label, segment_tokens=tree.segment_tokens,
        max_children=tree.max_children,
        levels=[{"level": i + 1, "nodes": c} for i, c in enumerate(tree.level_counts())],
        nodes=len(tree.nodes), leaves=len(tree.leaves), tokens=tree.tokens,
        summary_tokens=sum(n.summary_tokens for n in tree.nodes),
        llm_calls=usage.get("llm_calls", 0), cached_calls=usage.get("cached_calls", 0),
        fallback_summaries=sum(1 for n in tree.nodes if n.summary_by == FALLBACK),
        seconds=round(seconds, 3), run_id=run_id, reused=reused,
    )


