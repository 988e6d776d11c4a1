"""MemWalker (Chen et al., "Walking Down the Memory Maze"): a memory tree, and a walk down it.

Two stages, as in the paper's Sec. 3:

* **Memory tree construction** (query independent, stored and reused): the text is cut
  into segments of about ``segment_tokens`` tokens (tiktoken, paragraph-aligned), each
  segment is summarised into a leaf summary, and up to ``max_children`` consecutive
  nodes are summarised into a parent, level by level, until one root. Leaves keep their
  raw segment. The summaries of one level are made concurrently. A tree can also be
  built on a ReadAgent gist memory: its pages are the leaves and their gists the leaf
  summaries, so both methods share one pagination.
* **Navigation**: from the root, the triage prompt shows the children's summaries and
  asks for reasoning and an action (a child, or -1 to go back to the parent when not at
  the root); at a leaf, the leaf prompt shows the working memory and the raw segment and
  asks for -2 (answer) or -1 (go back). Invalid replies are re-asked; three invalid
  replies in a row end the search with "no answer". A node gone back from is not
  offered again, and a step cap bounds the walk.

The decisions come from a model through the LLM seam, or from lexical rules when the
engine is offline (labelled ``offline`` in every trace).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Sequence

from core import lexical, prompts
from core.db import Store
from core.documents import Document, Paragraph, count_words
from core.errors import Cancelled, GistError
from core.llm_engine import model_step
from core.offline import choose_option, extract_answer
from core.parsers import Parsed, clean, parse_choice
from core.presets import Preset
from core.readagent import Answer, Engine, GistMemory, MethodOutput, Question
from core.tokens import DEFAULT_ENCODING, count_tokens
from core.trace import FALLBACK, OFFLINE, RULE, Decision, StepTrace

REVERT, COMMIT = -1, -2  # the paper's actions: go back to the parent; answer from this leaf
MAX_INVALID = 3  # "If the LLM fails to generate parsable output three consecutive times ... 'no answer'"
NO_ANSWER = "no answer"


# --- parsing navigation replies (pure functions) ----------------------------------------------

@dataclass(frozen=True)
class Move:
    """A usable navigation reply: the action, the model's reasoning, and at a leaf the answer."""
    action: int  # a summary number (triage), REVERT, or COMMIT (leaf)
    reasoning: str = ""
    answer: str = ""
    choice: str | None = None


_NAV_ECHO = ("which of the following summary is most likely", "you must choose one summary number",
             "read the text in triple quotes", "you are only allowed to reply with action")
_ACTION = re.compile(r"\baction\s*(?:number)?\s*(?:is|:|=|-)?\s*:?\s*\(?(?:summary\s*|passage\s*)?(-?\d+)", re.I)
_SEVERAL = re.compile(r"\baction\s*:?\s*-?\d+\s*(?:/|\bor\b|,)\s*-?\d+", re.I)
_REASONING = re.compile(r"\breasoning\s*:\s*(.*?)(?=\baction\b\s*[:=]|\banswer\s*:|$)", re.I | re.S)
_ANSWER = re.compile(r"\banswer\s*:\s*(.*)$", re.I | re.S)


def _strip_fence(text: str) -> str:
    return " ".join(text.replace("#####", " ").split())


def _reasoning(text: str, action_at: int | None) -> str:
    match = _REASONING.search(text)
    if match:
        return _strip_fence(match.group(1))[:1500]
    return _strip_fence(text[:action_at] if action_at is not None else text)[:1500]


def _action(text: str) -> tuple[int | None, int | None, str]:
    """(action, where it starts, problem). The last 'Action: N' wins (models restate)."""
    if _SEVERAL.search(text):
        return None, None, "it names several actions (the format line's example); reply with exactly one"
    matches = list(_ACTION.finditer(text))
    if matches:
        return int(matches[-1].group(1)), matches[-1].start(), ""
    bare = re.fullmatch(r"\W*(-?\d+)\W*", text)
    if bare:
        return int(bare.group(1)), 0, ""
    return None, None, ""


def parse_triage(reply: str, num_children: int, can_revert: bool) -> Parsed[Move]:
    """'Reasoning: ... Action: 2' at a non-leaf node. Valid actions: 0..num_children-1,
    and -1 (go back to the parent) only when ``can_revert`` (not at the root)."""
    text = clean(reply)
    choices = f"0-{num_children - 1}" + (" or -1 to go back" if can_revert else "")
    if not text:
        return Parsed(None, "the reply was empty")
    if any(echo in text.lower() for echo in _NAV_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of choosing an action")
    action, at, problem = _action(text)
    notes: tuple[str, ...] = ()
    if problem:
        return Parsed(None, problem)
    if action is None:
        named = set(re.findall(r"\bsummary\s*(\d+)", text, re.I))
        if len(named) != 1:
            return Parsed(None, f'it gives no action; end with "Action: N" where N is {choices}')
        action, at = int(named.pop()), None
        notes = ("no 'Action:' line; took the one summary the reply names",)
    if action == REVERT and not can_revert:
        return Parsed(None, f"this is the root, there is no parent to go back to; choose a summary {choices}")
    if action == COMMIT:
        return Parsed(None, f"-2 answers only when reading a segment; choose a summary {choices}")
    if not (0 <= action < num_children or action == REVERT):
        return Parsed(None, f"there is no Summary {action}; choose {choices}")
    return Parsed(Move(action, _reasoning(text, at)), notes=notes)


def parse_leaf(reply: str, options: Sequence[str] = ()) -> Parsed[Move]:
    """'Reasoning: ... Action: -2 Answer: (A) ...' or 'Action: -1' at a leaf. An answer
    (-2) must carry the answer; for a multiple-choice question, a readable option."""
    text = clean(reply)
    if not text:
        return Parsed(None, "the reply was empty")
    if any(echo in text.lower() for echo in _NAV_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of choosing an action")
    answer_match = _ANSWER.search(text)
    answer = _strip_fence(answer_match.group(1)) if answer_match else ""
    body = text[:answer_match.start()] if answer_match else text
    action, at, problem = _action(body)
    notes: tuple[str, ...] = ()
    if problem:
        return Parsed(None, problem)
    if action is None and answer and answer.strip(". ") not in ("...", ""):
        action, notes = COMMIT, ("no action given; the reply answers, so took it as -2",)
    if action not in (COMMIT, REVERT):
        shown = "no action" if action is None else f"action {action}"
        return Parsed(None, f"it gives {shown}; reply with action -2 (answer) or -1 (go back)")
    reasoning = _reasoning(body, at)
    if action == REVERT:
        return Parsed(Move(REVERT, reasoning), notes=notes)
    if not answer or answer.strip(". ") in ("...", ""):
        example = "(A) ..." if options else "..."
        return Parsed(None, f'action -2 needs the final answer; add "Answer: {example}"')
    if options:
        chosen = parse_choice(answer, options)
        if not chosen.ok:
            return Parsed(None, f"action -2 needs one of the options: {chosen.problem}")
        return Parsed(Move(COMMIT, reasoning, answer, chosen.value), notes=notes + chosen.notes)
    return Parsed(Move(COMMIT, reasoning, answer), notes=notes)


_SUMMARY_PREAMBLE = re.compile(
    r"^(?:sure[,!.]?\s*)?(?:here(?:'s| is)\b[^\n:]*|(?:combined\s+)?summary(?: of [^\n:]*)?)\s*:\s*", re.I)
_SUMMARY_ECHO = ("summarize the following part", "combine them into one summary", "just give me the summary",
                 "just give me the combined summary")


def parse_summary(reply: str, source_words: int) -> Parsed[str]:
    """A leaf or parent summary. Preambles and quotes are removed; it must be shorter than
    what it summarises and must not repeat the instructions."""
    text = _SUMMARY_PREAMBLE.sub("", clean(reply)).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if not text:
        return Parsed(None, "the reply was empty")
    if any(echo in text.lower() for echo in _SUMMARY_ECHO):
        return Parsed(None, "the reply repeats the instructions instead of summarising")
    words = count_words(text)
    if words > max(source_words, 1):
        return Parsed(None, f"the summary ({words} words) is longer than what it summarises ({source_words} words)")
    return Parsed(text)


# --- the memory tree ----------------------------------------------------------------------------

@dataclass(frozen=True)
class TreeNode:
    id: int  # leaves are 0..n-1 in text order, then each level left to right; the root is last
    level: int  # 1 = leaf (the paper's l=1); the root has the highest level
    index: int  # position within its level
    children: tuple[int, ...]
    parent: int | None
    start: int  # first paragraph covered
    end: int  # one past the last paragraph covered
    summary: str
    summary_by: str  # the trace outcome that made the summary (model, re-asked, fallback, offline, ...)
    text: str = ""  # leaves: the raw segment
    tokens: int = 0  # leaves: tokens of the raw segment; parents: of all the leaves below
    summary_tokens: int = 0

    @property
    def is_leaf(self) -> bool:
        return not self.children


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
            raise GistError(f"--segment-tokens must be at least 50 (got {self.segment_tokens}); the paper uses 1000.")
        if self.max_children < 2:
            raise GistError(f"--max-children must be at least 2 (got {self.max_children}); the paper uses 5 to 8.")
        return self

    def key(self, engine_key: str, memory_id: int | None) -> str:
        """Identifies a tree: same document, engine, settings and prompts give the same tree."""
        blob = json.dumps({
            "engine": engine_key, "memory_id": memory_id, "max_children": self.max_children,
            "segment_tokens": None if memory_id else self.segment_tokens, "encoding": DEFAULT_ENCODING,
            "prompts": prompts.MEMWALKER_SUMMARY_LEAF.text + prompts.MEMWALKER_SUMMARY_PARENT.text,
        }, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Segment:
    start: int  # first paragraph
    end: int  # one past the last paragraph
    text: str
    tokens: int


def segment_paragraphs(paragraphs: Sequence[Paragraph], segment_tokens: int) -> list[Segment]:
    """Consecutive paragraphs up to ``segment_tokens`` tokens each (tiktoken cl100k_base).
    A paragraph longer than that is split between sentences; a heading that would end a
    segment starts the next one instead."""
    units: list[tuple[int, str, int, bool]] = []  # (paragraph, text, tokens, heading)
    for i, p in enumerate(paragraphs):
        tokens = count_tokens(p.text)
        if tokens <= segment_tokens:
            units.append((i, p.text, tokens, p.heading))
            continue
        piece, piece_tokens = [], 0
        for sentence in lexical.sentences(p.text) or [p.text]:
            t = count_tokens(sentence)
            if piece and piece_tokens + t > segment_tokens:
                units.append((i, " ".join(piece), piece_tokens, False))
                piece, piece_tokens = [], 0
            piece.append(sentence)
            piece_tokens += t
        if piece:
            units.append((i, " ".join(piece), piece_tokens, False))

    groups: list[list[tuple[int, str, int, bool]]] = []
    current: list[tuple[int, str, int, bool]] = []
    total = 0
    for unit in units:
        if current and total + unit[2] > segment_tokens:
            carried = [current.pop()] if len(current) > 1 and current[-1][3] else []
            groups.append(current)
            current, total = carried, sum(u[2] for u in carried)
        current.append(unit)
        total += unit[2]
    if current:
        groups.append(current)

    segments = []
    for group in groups:
        text = group[0][1]
        for previous, unit in zip(group, group[1:]):
            text += (" " if unit[0] == previous[0] else "\n") + unit[1]
        segments.append(Segment(group[0][0], group[-1][0] + 1, text, count_tokens(text)))
    return segments


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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def numbered_summaries(summaries: Sequence[str]) -> str:
    return "\n".join(f"Summary {i}: {_one_line(s)}" for i, s in enumerate(summaries))


# --- who decides: a model through the seam, or lexical rules --------------------------------

def lexical_triage(query: str, summaries: Sequence[str], can_revert: bool) -> tuple[int, dict]:
    """Offline triage: the summary with the best BM25 score for the question (and options).
    Going back (-1) when no summary shares a word with the question and there is a parent."""
    scores = lexical.bm25_scores(query, list(summaries))
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    if scores[best] <= 0 and can_revert:
        action, why = REVERT, "no summary shares a word with the question; went back to the parent"
    elif scores[best] <= 0:
        action, why = best, "no summary shares a word with the question; read on in text order"
    else:
        action, why = best, f"Summary {best} matches the question best (BM25 {scores[best]:.2f})"
    return action, {"method": "BM25 of the question and options against the children's summaries",
                    "scores": [round(s, 3) for s in scores], "reason": why}


LEAF_COVERAGE = 0.5  # share of the question's content words a segment must contain to answer from it


def lexical_leaf(question: Question, working_memory: str, text: str) -> tuple[int, Answer | None, dict]:
    """Offline leaf decision: answer (-2) when the segment contains at least half of the
    question's content words, or of one option's, else go back (-1). The answer is the
    offline engine's (option by lexical sliding window, or the best-matching sentences)."""
    present = set(lexical.terms(text))

    def coverage(words: str) -> float:
        wanted = set(lexical.terms(words))
        return len(wanted & present) / len(wanted) if wanted else 0.0

    q_cover = coverage(question.text) if lexical.terms(question.text) else 1.0
    o_cover = max((coverage(o) for o in question.options), default=0.0)
    best = max(q_cover, o_cover)
    detail = {"method": f"answer when the segment holds at least {LEAF_COVERAGE:.0%} of the words of the "
                        "question or of one option",
              "question_coverage": round(q_cover, 3), "best_option_coverage": round(o_cover, 3)}
    if best < LEAF_COVERAGE:
        detail["reason"] = (f"the segment holds {q_cover:.0%} of the question's words"
                            + (f" and at most {o_cover:.0%} of an option's" if question.options else "")
                            + "; went back")
        return REVERT, None, detail
    context = f"{working_memory}\n{text}" if working_memory else text
    answer, how = choose_option(context, question) if question.is_choice else extract_answer(context, question)
    which = "question's" if q_cover >= o_cover else "best option's"
    detail.update(reason=f"the segment holds {best:.0%} of the {which} words; answered from it", answer=how)
    return COMMIT, answer, detail


def _extractive(text: str) -> str:
    return lexical.shorten(text) or " ".join(text.split()[:60])


class _ModelDecider:
    def __init__(self, llm):
        self.llm = llm

    def summary(self, step: str, prompt: str, source: str) -> Decision[str]:
        words = count_words(source)

        def fallback(attempts):
            return _extractive(source), (f"no usable summary in {len(attempts)} replies; used an extractive "
                                         f"summary (offline, no LLM)")

        return model_step(self.llm, step, prompt, lambda r: parse_summary(r, words), fallback=fallback)

    def triage(self, prompt: str, query: str, summaries: Sequence[str], can_revert: bool) -> Decision[Move | None]:
        def fallback(attempts):
            return None, f"{len(attempts)} invalid replies in a row; the search ends with {NO_ANSWER!r}"

        return model_step(self.llm, "triage", prompt, lambda r: parse_triage(r, len(summaries), can_revert),
                          fallback=fallback, max_reasks=MAX_INVALID - 1)

    def leaf(self, prompt: str, question: Question, working_memory: str, text: str) -> Decision[Move | None]:
        def fallback(attempts):
            return None, f"{len(attempts)} invalid replies in a row; the search ends with {NO_ANSWER!r}"

        return model_step(self.llm, "leaf", prompt, lambda r: parse_leaf(r, question.options),
                          fallback=fallback, max_reasks=MAX_INVALID - 1)


class _OfflineDecider:
    """No LLM: extractive summaries, BM25 triage, word-coverage leaf decisions."""

    @staticmethod
    def _trace(step: str, value, detail: dict, started: float) -> StepTrace:
        return StepTrace(step=step, outcome=OFFLINE, value=value, detail=detail,
                         seconds=round(time.perf_counter() - started, 4))

    def summary(self, step: str, prompt: str, source: str) -> Decision[str]:
        started = time.perf_counter()
        summary = _extractive(source)
        detail = {"method": "extractive: the most informative sentences, in order"}
        return Decision(summary, self._trace(step, summary, detail, started))

    def triage(self, prompt: str, query: str, summaries: Sequence[str], can_revert: bool) -> Decision[Move | None]:
        started = time.perf_counter()
        action, detail = lexical_triage(query, summaries, can_revert)
        return Decision(Move(action, detail["reason"]), self._trace("triage", action, detail, started))

    def leaf(self, prompt: str, question: Question, working_memory: str, text: str) -> Decision[Move | None]:
        started = time.perf_counter()
        action, answer, detail = lexical_leaf(question, working_memory, text)
        move = Move(action, detail["reason"], answer.text if answer else "", answer.choice if answer else None)
        return Decision(move, self._trace("leaf", action, detail, started))


def decider(engine: Engine):
    return _ModelDecider(engine.llm) if engine.is_llm else _OfflineDecider()


# --- building (or reusing) a tree ---------------------------------------------------------------

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
    row = store.get_tree_row(tree_id)
    if row["status"] != "complete":
        raise GistError(f"Memory tree {tree_id} is {row['status']}; build it again with `python -m core tree`.")
    document = document or store.get_document(row["doc_id"])
    nodes = tuple(
        TreeNode(id=r["node"], level=r["level"], index=r["idx"], children=tuple(r["children"]), parent=r["parent"],
                 start=r["start"], end=r["end"], summary=r["summary"] or "", summary_by=r["summary_by"] or "",
                 text=r["text"] or "", tokens=r["tokens"] or 0, summary_tokens=r["summary_tokens"] or 0)
        for r in store.tree_node_rows(tree_id)
    )
    return MemoryTree(doc_id=document.id, title=document.title, words=document.words, nodes=nodes, tree_id=tree_id,
                      origin=row["origin"], memory_id=row["memory_id"], engine=row["engine"],
                      engine_label=row["engine_label"] or "", segment_tokens=row["segment_tokens"] or 0,
                      max_children=row["max_children"])


def latest_tree(store: Store, document: Document) -> MemoryTree | None:
    """The newest complete tree of a document (any engine or settings), for viewers."""
    rows = store.trees_for(document.id)
    return load_tree(store, rows[0]["id"], document) if rows else None


class _TreeBuilder:
    def __init__(self, store: Store, engine: Engine, run_id: int, concurrency: int,
                 progress: Callable[[TreeEvent], None] | None, cancel: threading.Event):
        self.store, self.engine, self.run_id = store, engine, run_id
        self.decide = decider(engine)
        self.concurrency = concurrency
        self.progress = progress
        self.cancel = cancel
        self.seq = itertools.count()
        self.lock = threading.Lock()

    def _summarise(self, step: str, prompt: str, source: str, node_id: int, level: int) -> Decision[str]:
        if self.cancel.is_set():
            raise Cancelled("the memory tree was not finished; run the same command again to resume "
                            "(finished model calls are reused)")
        decision = self.decide.summary(step, prompt, source)
        trace = decision.trace
        trace.detail.update(node=node_id, level=level)
        trace.value = decision.value
        self.store.add_step(self.run_id, next(self.seq), step, trace.outcome, trace.to_dict(), trace.seconds)
        return decision

    def level(self, jobs: list[Callable[[], Decision[str]]], level: int) -> list[Decision[str]]:
        """Run one level's summaries, concurrently for a model, reporting progress."""
        done = [0]

        def run(job):
            result = job()
            with self.lock:
                done[0] += 1
                if self.progress:
                    self.progress(TreeEvent(level, done[0], len(jobs)))
            return result

        if not self.engine.is_llm or self.concurrency <= 1 or len(jobs) <= 1:
            return [run(job) for job in jobs]
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="tree") as pool:
            futures = [pool.submit(run, job) for job in jobs]
            try:
                return [f.result() for f in futures]
            except BaseException:
                self.cancel.set()
                raise

    def leaves_from_segments(self, segments: list[Segment]) -> list[TreeNode]:
        jobs = [
            (lambda i=i, s=s: self._summarise("leaf-summary", prompts.MEMWALKER_SUMMARY_LEAF.format(text=s.text),
                                              s.text, i, 1))
            for i, s in enumerate(segments)
        ]
        decisions = self.level(jobs, 1)
        return [TreeNode(id=i, level=1, index=i, children=(), parent=None, start=s.start, end=s.end,
                         summary=d.value, summary_by=d.trace.outcome, text=s.text, tokens=s.tokens,
                         summary_tokens=count_tokens(d.value))
                for i, (s, d) in enumerate(zip(segments, decisions))]

    def parents(self, below: list[TreeNode], next_id: int, max_children: int) -> list[TreeNode]:
        level = below[0].level + 1
        groups = balanced_groups(len(below), max_children)
        jobs = []
        for k, group in enumerate(groups):
            summaries = [below[i].summary for i in group]
            listed = numbered_summaries(summaries)
            jobs.append(lambda listed=listed, summaries=summaries, k=k: self._summarise(
                "node-summary", prompts.MEMWALKER_SUMMARY_PARENT.format(summaries=listed),
                "\n".join(summaries), next_id + k, level))
        decisions = self.level(jobs, level)
        return [TreeNode(id=next_id + k, level=level, index=k, children=tuple(below[i].id for i in group),
                         parent=None, start=below[group[0]].start, end=below[group[-1]].end, summary=d.value,
                         summary_by=d.trace.outcome, tokens=sum(below[i].tokens for i in group),
                         summary_tokens=count_tokens(d.value))
                for k, (group, d) in enumerate(zip(groups, decisions))]


def _with_parents(nodes: list[TreeNode]) -> tuple[TreeNode, ...]:
    parent_of = {child: n.id for n in nodes for child in n.children}
    return tuple(replace(n, parent=parent_of.get(n.id)) for n in nodes)


def build_tree(store: Store, document: Document, engine: Engine, settings: TreeSettings = TreeSettings(), *,
               memory: GistMemory | None = None, concurrency: int = 8,
               progress: Callable[[TreeEvent], None] | None = None, cancel: threading.Event | None = None,
               rebuild: bool = False) -> tuple[MemoryTree, TreeResult]:
    """Build (or reuse) the memory tree of ``document``; on ``memory``'s pages if given.
    A stored tree with the same engine and settings is reopened with no model calls."""
    started = time.perf_counter()
    settings.check()
    store.save_document(document)
    memory_id = memory.memory_id if memory else None
    key = settings.key(engine.key, memory_id)
    if not rebuild and (row := store.find_tree(document.id, key)) is not None:
        tree = load_tree(store, row["id"], document)
        return tree, _tree_result(tree, row["run_id"], {"llm_calls": 0, "cached_calls": 0},
                                  time.perf_counter() - started, reused=True)
    origin = "pages" if memory else "segments"
    model = getattr(getattr(engine, "llm", None), "model", None)
    tree_id = store.create_tree(
        doc_id=document.id, memory_id=memory_id, origin=origin, engine=engine.key, engine_label=engine.label,
        model=model, segment_tokens=None if memory else settings.segment_tokens,
        max_children=settings.max_children, settings=json.dumps(asdict(settings)), settings_key=key,
        status="building")
    run_id = store.create_run("tree", doc_id=document.id, memory_id=memory_id, method="memwalker",
                              engine=engine.key, engine_label=engine.label, model=model,
                              params={**asdict(settings), "origin": origin, "tree_id": tree_id,
                                      "concurrency": concurrency})
    store.update_tree(tree_id, run_id=run_id)
    bound = engine.bind(run_id=run_id, doc_id=document.id)
    builder = _TreeBuilder(store, bound, run_id, max(1, concurrency), progress, cancel or threading.Event())
    try:
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
    except BaseException as exc:
        status = "interrupted" if isinstance(exc, (Cancelled, KeyboardInterrupt)) else "failed"
        store.update_tree(tree_id, status=status)
        store.finish_run(run_id, status=status, error=str(exc), seconds=round(time.perf_counter() - started, 3),
                         result=bound.usage())
        raise
    nodes = list(_with_parents(nodes))
    tree = MemoryTree(doc_id=document.id, title=document.title, words=document.words, nodes=tuple(nodes),
                      tree_id=tree_id, origin=origin, memory_id=memory_id, engine=engine.key,
                      engine_label=engine.label, segment_tokens=0 if memory else settings.segment_tokens,
                      max_children=settings.max_children)
    seconds = time.perf_counter() - started
    result = _tree_result(tree, run_id, bound.usage(), seconds, reused=False)
    rows = [{"node": n.id, "level": n.level, "idx": n.index, "parent": n.parent, "children": n.children,
             "start": n.start, "end": n.end, "text": n.text or None, "tokens": n.tokens, "summary": n.summary,
             "summary_tokens": n.summary_tokens, "summary_by": n.summary_by} for n in nodes]
    store.finish_tree(tree_id, rows, nodes=len(nodes), leaves=len(leaves), levels=len(tree.level_counts()),
                      tokens=tree.tokens)
    store.finish_run(run_id, status="done", result=result.as_json(), seconds=round(seconds, 3))
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


# --- navigation ----------------------------------------------------------------------------------

@dataclass
class Visit:
    """One navigation step: the node, what was shown, the action taken and why."""
    node: int
    level: int
    kind: str  # "triage" (children's summaries shown) or "leaf" (raw segment shown)
    move: str  # "down", "revert", "answer", "no answer"
    to: int | None  # the node moved to (None when the walk ended here)
    action: int | None  # the action as replied (a summary number as shown, -1, -2); None if unusable
    reasoning: str
    outcome: str  # the trace outcome (model, re-asked, fallback, offline, rule)
    shown: list[int] = field(default_factory=list)  # triage: node ids behind Summary 0, 1, ...
    working_memory_tokens: int = 0


@dataclass
class Walk:
    path: list[int]  # node ids in visit order, the root first; a revert revisits the parent
    visits: list[Visit]
    answered: bool
    answer: Answer
    reverts: int
    ended: str  # why the walk ended, in words
    leaves_read: list[int]  # leaf indices (segment or page numbers) read, in order
    tokens_read: int  # summaries shown and segments read, each counted once
    words_in_context: int  # the longest content shown in one step (working memory + summaries or segment)
    context: str  # the content of the last step (what an answer was given from)

    @property
    def strayed(self) -> bool:
        return self.reverts > 0


DEFAULT_WORKING_MEMORY_TOKENS = 1000


def working_memory(tree: MemoryTree, path: Sequence[int], budget: int) -> str:
    """The summaries of the nodes entered on the current path (not the root, whose summary
    the model never sees, nor a leaf being read raw), truncated to ``budget`` tokens:
    the nearest nodes are kept first, then cut at the start if needed."""
    ids = [n for n in path[1:] if not tree.node(n).is_leaf]
    kept: list[str] = []
    used = 0
    for node_id in reversed(ids):
        summary = _one_line(tree.node(node_id).summary)
        tokens = count_tokens(summary)
        if used + tokens > budget:
            room = budget - used
            if room > 20:
                words = summary.split()
                keep = max(1, int(len(words) * room / max(tokens, 1)))
                kept.insert(0, "... " + " ".join(words[-keep:]))
            break
        kept.insert(0, summary)
        used += tokens
    return "\n".join(kept)


def navigate(tree: MemoryTree, question: Question, engine: Engine, preset: Preset, *, max_steps: int = 20,
             working_memory_tokens: int = DEFAULT_WORKING_MEMORY_TOKENS) -> tuple[Walk, list[StepTrace]]:
    """Walk the tree from the root for ``question`` (see the module docstring)."""
    decide = decider(engine)
    root = tree.root.id
    stack = [root]  # the current path from the root
    path = [root]
    gone_back: set[int] = set()  # nodes reverted from: never offered again
    visits: list[Visit] = []
    traces: list[StepTrace] = []
    summaries_shown: set[int] = set()  # nodes whose summary was shown at a triage step
    leaves_read: list[int] = []
    longest = 0
    context = ""
    reverts = 0
    answer = Answer(NO_ANSWER, None)
    answered = False
    ended = ""

    def go_back(node: TreeNode) -> int | None:
        nonlocal reverts
        gone_back.add(node.id)
        stack.pop()
        if not stack:
            return None
        reverts += 1
        path.append(stack[-1])
        return stack[-1]

    while True:
        node = tree.node(stack[-1])
        if len(visits) >= max_steps:
            ended = f"stopped at the step cap ({max_steps} steps) with {NO_ANSWER!r}"
            if traces:
                traces[-1].detail["step_cap"] = ended
            break
        memory = working_memory(tree, stack, working_memory_tokens)
        memory_tokens = count_tokens(memory) if memory else 0
        if node.is_leaf:
            background = f"Background information: {memory}\n" if memory else ""
            prompt = prompts.MEMWALKER_LEAF.format(
                working_memory=background, text=node.text, question=question.with_options(),
                answer_format="(A) ..." if question.is_choice else "...")
            decision = decide.leaf(prompt, question, memory, node.text)
            leaves_read.append(node.index)
            context = f"{memory}\n{node.text}" if memory else node.text
            longest = max(longest, count_words(context))
            move: Move | None = decision.value
            kind, shown = "leaf", []
        else:
            shown = [c for c in node.children if c not in gone_back]
            can_revert = node.id != root
            if not shown:
                trace = StepTrace(step="triage", outcome=RULE, detail={
                    "node": node.id, "level": node.level, "reason": "every child was read and gone back from"})
                traces.append(trace)
                to = go_back(node) if can_revert else None
                trace.value = ({"action": REVERT, "move": "revert", "to": to} if can_revert
                               else {"action": None, "move": NO_ANSWER})
                visits.append(Visit(node.id, node.level, "triage", "revert" if can_revert else NO_ANSWER, to,
                                    REVERT if can_revert else None, trace.detail["reason"], RULE, [],
                                    memory_tokens))
                if not can_revert:
                    ended = f"every branch was read and gone back from; {NO_ANSWER!r}"
                    break
                continue
            summaries = [tree.node(c).summary for c in shown]
            background = f"Background information: {memory}\n\n" if memory else ""
            prompt = prompts.MEMWALKER_TRIAGE.format(
                a_doc_kind=preset.a_doc_kind, question=question.with_options(), working_memory=background,
                summaries=numbered_summaries(summaries),
                revert=("If none of the summaries is likely to contain the answer, reply with action -1 "
                        "to go back to the parent node.\n") if can_revert else "",
                actions=" / ".join([*map(str, range(len(shown))), *(["-1"] if can_revert else [])]))
            decision = decide.triage(prompt, question.with_options(), summaries, can_revert)
            summaries_shown.update(shown)
            longest = max(longest, count_words(memory) + sum(count_words(s) for s in summaries))
            move = decision.value
            kind = "triage"

        trace = decision.trace
        trace.detail.update(node=node.id, level=node.level, shown=shown, working_memory_tokens=memory_tokens)
        if move is not None:
            trace.detail["reasoning"] = move.reasoning
        if node.is_leaf:
            trace.page = node.index
        traces.append(trace)
        if move is None:
            ended = f"{MAX_INVALID} invalid replies in a row at node {node.id}; {NO_ANSWER!r}"
            visits.append(Visit(node.id, node.level, kind, NO_ANSWER, None, None, "", trace.outcome, shown,
                                memory_tokens))
            trace.value = {"action": None, "move": NO_ANSWER}
            break
        if move.action == COMMIT:
            answered = True
            answer = Answer(move.answer, move.choice)
            visits.append(Visit(node.id, node.level, kind, "answer", None, COMMIT, move.reasoning, trace.outcome,
                                shown, memory_tokens))
            trace.value = {"action": COMMIT, "move": "answer", "answer": move.answer, "choice": move.choice}
            ended = f"answered from leaf {node.index} (node {node.id})"
            break
        if move.action == REVERT:
            to = go_back(node)
            visits.append(Visit(node.id, node.level, kind, "revert" if to is not None else NO_ANSWER, to, REVERT,
                                move.reasoning, trace.outcome, shown, memory_tokens))
            trace.value = {"action": REVERT, "move": "revert", "to": to}
            if to is None:
                ended = f"the only segment does not answer the question; {NO_ANSWER!r}"
                break
            continue
        child = shown[move.action]
        stack.append(child)
        path.append(child)
        visits.append(Visit(node.id, node.level, kind, "down", child, move.action, move.reasoning, trace.outcome,
                            shown, memory_tokens))
        trace.value = {"action": move.action, "move": "down", "to": child}

    tokens_read = (sum(tree.node(n).summary_tokens for n in summaries_shown)
                   + sum(tree.leaves[i].tokens for i in set(leaves_read)))
    return Walk(path=path, visits=visits, answered=answered, answer=answer, reverts=reverts, ended=ended,
                leaves_read=leaves_read, tokens_read=tokens_read, words_in_context=longest,
                context=context), traces


# --- the method ------------------------------------------------------------------------------------

def memwalker(engine: Engine, store: Store, document: Document, question: Question, preset: Preset, *,
              memory: GistMemory | None = None, segment_tokens: int = 1000, max_children: int = 8,
              max_steps: int = 20, working_memory_tokens: int = DEFAULT_WORKING_MEMORY_TOKENS) -> MethodOutput:
    """Build (or reuse) the memory tree, walk it, and report the paper's per-question figures."""
    tree, built = build_tree(store, document, engine, TreeSettings(segment_tokens, max_children), memory=memory)
    walk, traces = navigate(tree, question, engine, preset, max_steps=max_steps,
                            working_memory_tokens=working_memory_tokens)
    share = round(walk.tokens_read / tree.tokens, 4) if tree.tokens else 0.0
    extra = {
        "path": walk.path,
        "reverts": walk.reverts,
        "answered": walk.answered,
        "steps": len(walk.visits),
        "strayed": walk.strayed,
        "strayed_and_recovered": walk.strayed and walk.answered,
        "share_read": share,
        "tokens_read": walk.tokens_read,
        "ended": walk.ended,
        "trajectory": [asdict(v) for v in walk.visits],
        "tree": {"tree_id": tree.tree_id, "origin": tree.origin, "levels": tree.level_counts(),
                 "nodes": len(tree.nodes), "tokens": tree.tokens, "built_now": not built.reused,
                 "build_llm_calls": built.llm_calls, "build_run_id": built.run_id},
    }
    return MethodOutput(walk.answer, walk.context, walk.words_in_context, document.words,
                        pages_looked_up=walk.leaves_read, expanded=walk.leaves_read[-1:] if walk.answered else [],
                        steps=traces, extra=extra)


def _register() -> None:
    from core.methods import Method, Param, register

    register(Method(
        "memwalker", "MemWalker",
        "Build a tree of summaries (segments -> leaves -> parents -> root), then walk it from the root, "
        "going back when a branch does not help, and answer from one leaf (Chen et al. 2023, Sec. 3).",
        False,
        lambda i, p: memwalker(i.engine, i.store, i.document, i.question, i.preset, memory=i.memory, **p),
        (Param("segment_tokens", int, 1000, "tokens per segment (leaf) of the memory tree"),
         Param("max_children", int, 8, "the most children a tree node has"),
         Param("max_steps", int, 20, "the most navigation steps before giving up with 'no answer'"),
         Param("working_memory_tokens", int, DEFAULT_WORKING_MEMORY_TOKENS,
               "tokens of path summaries carried as working memory")),
    ))


_register()
