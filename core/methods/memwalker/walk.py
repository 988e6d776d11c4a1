"""MemWalker's navigation (Chen et al., Sec. 3 "Navigation"): from the root, the triage
prompt shows the children's summaries and asks for reasoning and an action (a child, or
-1 to go back to the parent when not at the root); at a leaf, the leaf prompt shows the
working memory and the raw segment and asks for -2 (answer) or -1 (go back). Invalid
replies are re-asked; three invalid replies in a row end the search with "no answer". A
node gone back from is not offered again, and a step cap bounds the walk.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from core.methods.base import Answer, Details, Method, MethodOutput, Param, Question, holding
from core.methods.memwalker.parsers import COMMIT, MAX_INVALID, NO_ANSWER, REVERT, Move
from core.llm.window import cut_to_tokens, describe, input_budget
from core.methods.memwalker.steps import LEAF, NAVIGATE_TOKENS, TRIAGE, LeafInput, TriageInput, one_line
from core.methods.memwalker.tree import MemoryTree, TreeNode, TreeSettings, build_tree
from core.methods.readagent.memory import GistMemory
from core.methods.readagent.presets import Preset
from core.store import Store
from core.text.documents import Document, count_words
from core.text.tokens import count_tokens
from core.trace import RULE, StepTrace


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
        summary = one_line(tree.node(node_id).summary)
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


def _room(engine, step, inputs) -> int | None:
    """Tokens left in ``step``'s prompt for ``inputs`` in the model's window (None: no window)."""
    window = getattr(engine, "context_tokens", None)
    if window is None:
        return None
    return input_budget(window, NAVIGATE_TOKENS) - count_tokens(step.prompt(inputs), getattr(engine, "model", None))


def _leaf_text(engine, question: Question, node: TreeNode) -> tuple[str, dict]:
    """The leaf's segment, cut with a sentence saying so when it does not fit in the leaf prompt
    with the question (a leaf longer than the window it is read in: a gist memory's page)."""
    left = _room(engine, LEAF, LeafInput(question, "", ""))
    if left is None or count_tokens(node.text) <= left:
        return node.text, {}
    kept = cut_to_tokens(node.text, left - 40)
    note = (f"[The text is cut here: the {count_words(node.text) - count_words(kept):,} words after this point do "
            "not fit in the model's context window.]")
    return f"{kept}\n{note}", {"fitted": f"the segment is cut to {count_words(kept):,} of {count_words(node.text):,} "
                                          f"words to fit the {describe(engine.context_tokens)}"}


def _fit_memory(engine, tree: MemoryTree, stack: Sequence[int], budget: int, memory: str, fitted: dict,
                step, without_memory) -> tuple[str, int]:
    """The working memory, trimmed to the room the prompt leaves for it in the model's window."""
    left = _room(engine, step, without_memory)
    if left is not None and count_tokens(f"Background information: {memory}\n\n") > left:
        room = max(0, left - 12)
        memory = working_memory(tree, stack, room) if room > 20 else ""
        fitted["working_memory_fitted"] = (f"working memory trimmed to {room:,} tokens to fit the "
                                           f"{describe(engine.context_tokens)}")
    return memory, count_tokens(memory) if memory else 0


def navigate(tree: MemoryTree, question: Question, engine, preset: Preset, *, max_steps: int = 20,
             working_memory_tokens: int = DEFAULT_WORKING_MEMORY_TOKENS) -> tuple[Walk, list[StepTrace]]:
    """Walk the tree from the root for ``question`` (see the module docstring)."""
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
        fitted: dict = {}
        if node.is_leaf:
            text, fitted = _leaf_text(engine, question, node)
            memory, memory_tokens = _fit_memory(engine, tree, stack, working_memory_tokens, memory, fitted,
                                                LEAF, LeafInput(question, text, ""))
            decision = engine.decide(LEAF, LeafInput(question, text, memory))
            leaves_read.append(node.index)
            context = f"{memory}\n{text}" if memory else text
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
            summaries = tuple(tree.node(c).summary for c in shown)
            memory, memory_tokens = _fit_memory(engine, tree, stack, working_memory_tokens, memory, fitted, TRIAGE,
                                                TriageInput(question, summaries, "", can_revert, preset.a_doc_kind))
            decision = engine.decide(TRIAGE, TriageInput(question, summaries, memory, can_revert, preset.a_doc_kind))
            summaries_shown.update(shown)
            longest = max(longest, count_words(memory) + sum(count_words(s) for s in summaries))
            move = decision.value
            kind = "triage"

        trace = decision.trace
        trace.detail.update(node=node.id, level=node.level, shown=shown, working_memory_tokens=memory_tokens,
                            **fitted)
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


@dataclass(frozen=True)
class TreeUsed:
    """The memory tree a walk went down, and whether it was built for it."""
    tree_id: int | None = None
    origin: str = ""
    levels: list[int] = field(default_factory=list)  # nodes per level, leaves first
    nodes: int = 0
    tokens: int = 0
    built_now: bool = False
    build_llm_calls: int = 0
    build_run_id: int | None = None


@dataclass
class WalkDetails(Details):
    """A walk down the memory tree, for the trace viewer, the tree drawing and the JSON."""
    kind = "walk"
    path: list[int] = field(default_factory=list)  # node ids in visit order, the root first
    reverts: int = 0
    answered: bool = False
    steps: int = 0
    strayed: bool = False
    strayed_and_recovered: bool = False
    share_read: float = 0.0  # share of the tree's tokens shown (summaries) or read (segments)
    tokens_read: int = 0
    ended: str = ""
    trajectory: list[Visit] = holding(Visit, default_factory=list)
    tree: TreeUsed = holding(TreeUsed, default_factory=TreeUsed)

    def summary(self) -> str:
        return (f"path {' > '.join(map(str, self.path))} | {self.reverts} reverts | "
                f"{'answered' if self.answered else 'no answer'}")


def memwalker(engine, store: Store, document: Document, question: Question, preset: Preset, *,
              memory: GistMemory | None = None, segment_tokens: int = 1000, max_children: int = 8,
              max_steps: int = 20, working_memory_tokens: int = DEFAULT_WORKING_MEMORY_TOKENS) -> MethodOutput:
    """Build (or reuse) the memory tree, walk it, and report the paper's per-question figures."""
    tree, built = build_tree(store, document, engine, TreeSettings(segment_tokens, max_children), memory=memory)
    walk, traces = navigate(tree, question, engine, preset, max_steps=max_steps,
                            working_memory_tokens=working_memory_tokens)
    share = round(walk.tokens_read / tree.tokens, 4) if tree.tokens else 0.0
    details = WalkDetails(
        path=walk.path, reverts=walk.reverts, answered=walk.answered, steps=len(walk.visits), strayed=walk.strayed,
        strayed_and_recovered=walk.strayed and walk.answered, share_read=share, tokens_read=walk.tokens_read,
        ended=walk.ended, trajectory=walk.visits,
        tree=TreeUsed(tree_id=tree.tree_id, origin=tree.origin, levels=tree.level_counts(), nodes=len(tree.nodes),
                      tokens=tree.tokens, built_now=not built.reused, build_llm_calls=built.llm_calls,
                      build_run_id=built.run_id))
    return MethodOutput(walk.answer, walk.context, walk.words_in_context, document.words,
                        pages_looked_up=walk.leaves_read, expanded=walk.leaves_read[-1:] if walk.answered else [],
                        steps=traces, details=details)


METHOD = Method(
    "memwalker", "MemWalker",
    "Build a tree of summaries (segments -> leaves -> parents -> root), then walk it from the root, going back "
    "when a branch does not help, and answer from one leaf (Chen et al. 2023, Sec. 3).",
    False,
    lambda i, p: memwalker(i.engine, i.store, i.document, i.question, i.preset, memory=i.memory, **p),
    (Param("segment_tokens", int, 1000, "tokens per segment (leaf) of the memory tree", minimum=50,
           why="the paper uses 1000"),
     Param("max_children", int, 8, "the most children a tree node has", minimum=2, why="the paper uses 5 to 8"),
     Param("max_steps", int, 20, "the most navigation steps before giving up with 'no answer'", minimum=1),
     Param("working_memory_tokens", int, DEFAULT_WORKING_MEMORY_TOKENS,
           "tokens of path summaries carried as working memory", minimum=0)),
    WalkDetails,
)
