"""MemWalker's decisions, each stated once (see ``core/decisions.py``): the summaries that
build the tree, the triage at a node, and the decision at a leaf; with the offline
engine's lexical rule for each.

| step | prompt | offline rule | fallback |
| --- | --- | --- | --- |
| leaf / node summary | ours (App. A.1 is not in our copy) | extractive summary | extractive summary |
| triage | the paper's Table 1 | best BM25 summary; -1 when none shares a word | "no answer" |
| leaf | the paper's Table 1 | answer when the segment holds half the question's words | "no answer" |

Triage and leaf replies are re-asked up to twice: three invalid replies in a row end the
search with "no answer", as the paper says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from core import prompts
from core.decisions import Step
from core.llm.window import input_budget
from core.methods.answer import choose_option, extract_answer
from core.methods.base import Answer, Question
from core.methods.memwalker.parsers import (COMMIT, MAX_INVALID, NO_ANSWER, REVERT, Move, parse_leaf,
                                            parse_summary, parse_triage)
from core.text import lexical
from core.text.documents import count_words
from core.text.tokens import count_tokens


def one_line(text: str) -> str:
    return " ".join(text.split())


def numbered_summaries(summaries: Sequence[str]) -> str:
    return "\n".join(f"Summary {i}: {one_line(s)}" for i, s in enumerate(summaries))


def extractive(text: str) -> str:
    return lexical.shorten(text) or " ".join(text.split()[:60])


# --- summaries (building the tree) -------------------------------------------------------------

SUMMARY_TOKENS = 512  # a summary's reply budget, in a window large enough (see ``summary_tokens``)
NAVIGATE_TOKENS = 320  # triage and leaf replies: "Reasoning: ..." then "Action: n" (and "Answer: ...")
QUESTION_TOKENS = 300  # room kept for the question when a tree is built (it is asked later)


def summary_tokens(window: int | None) -> int:
    """A summary's reply budget: 512 tokens, less in a window where two summaries must still
    fit in one triage prompt with the question and its reply."""
    if window is None:
        return SUMMARY_TOKENS
    return min(SUMMARY_TOKENS, max(32, triage_room(window) // 2))


def triage_room(window: int) -> int:
    """Tokens left for the children's summaries in a triage prompt (no working memory, a
    question of up to ``QUESTION_TOKENS``)."""
    empty = prompts.MEMWALKER_TRIAGE.format(a_doc_kind="", question="", working_memory="", summaries="", revert="",
                                            actions="")
    return input_budget(window, NAVIGATE_TOKENS) - count_tokens(empty) - 40 - QUESTION_TOKENS


def segment_room(window: int) -> int:
    """The most tokens a leaf's segment may have to be summarised, and read at a leaf with a
    question of up to ``QUESTION_TOKENS``, in ``window``."""
    leaf = prompts.MEMWALKER_LEAF.format(working_memory="", text="", question="", answer_format="(A) ...")
    summary = prompts.MEMWALKER_SUMMARY_LEAF.format(text="")
    return min(input_budget(window, NAVIGATE_TOKENS) - count_tokens(leaf) - QUESTION_TOKENS,
               input_budget(window, summary_tokens(window)) - count_tokens(summary))


@dataclass(frozen=True)
class SummaryInput:
    source: str  # a leaf's segment, or a parent's children's summaries joined by newlines
    summaries: tuple[str, ...] = ()  # a parent's children's summaries ("" for a leaf)
    reply_tokens: int = SUMMARY_TOKENS


def _summary_fallback(i: SummaryInput, attempts) -> tuple[str, str]:
    return extractive(i.source), (f"no usable summary in {len(attempts)} replies; used an extractive summary "
                                  "(offline, no LLM)")


def _summary_rule(i: SummaryInput) -> tuple[str, dict]:
    return extractive(i.source), {"method": "extractive: the most informative sentences, in order"}


LEAF_SUMMARY = Step(
    name="leaf-summary",
    prompt=lambda i: prompts.MEMWALKER_SUMMARY_LEAF.format(text=i.source),
    parse=lambda reply, i: parse_summary(reply, count_words(i.source), i.source),
    fallback=_summary_fallback, rule=_summary_rule,
    max_tokens=lambda i: i.reply_tokens, min_tokens=32,
    too_long=lambda i: "The segment is longer than this window can hold; build the tree with smaller segments.",
)
NODE_SUMMARY = Step(
    name="node-summary",
    prompt=lambda i: prompts.MEMWALKER_SUMMARY_PARENT.format(summaries=numbered_summaries(i.summaries)),
    parse=lambda reply, i: parse_summary(reply, count_words(i.source), i.source),
    fallback=_summary_fallback, rule=_summary_rule,
    max_tokens=lambda i: i.reply_tokens, min_tokens=32,
    too_long=lambda i: "The children's summaries do not fit in this window together.",
)


# --- triage (at a node) ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TriageInput:
    question: Question
    summaries: tuple[str, ...]  # the children offered, in order (Summary 0, 1, ...)
    working_memory: str
    can_revert: bool  # not at the root
    a_doc_kind: str


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


def _triage_prompt(i: TriageInput) -> str:
    background = f"Background information: {i.working_memory}\n\n" if i.working_memory else ""
    return prompts.MEMWALKER_TRIAGE.format(
        a_doc_kind=i.a_doc_kind, question=i.question.with_options(), working_memory=background,
        summaries=numbered_summaries(i.summaries),
        revert=("If none of the summaries is likely to contain the answer, reply with action -1 "
                "to go back to the parent node.\n") if i.can_revert else "",
        actions=" / ".join([*map(str, range(len(i.summaries))), *(["-1"] if i.can_revert else [])]))


def _no_answer(i, attempts) -> tuple[None, str]:
    return None, f"{len(attempts)} invalid replies in a row; the search ends with {NO_ANSWER!r}"


def _triage_rule(i: TriageInput) -> tuple[Move, dict]:
    action, detail = lexical_triage(i.question.with_options(), i.summaries, i.can_revert)
    return Move(action, detail["reason"]), detail


TRIAGE = Step(
    name="triage", prompt=_triage_prompt,
    parse=lambda reply, i: parse_triage(reply, len(i.summaries), i.can_revert),
    fallback=_no_answer, rule=_triage_rule, max_reasks=MAX_INVALID - 1,
    max_tokens=lambda i: NAVIGATE_TOKENS, min_tokens=64,
    too_long=lambda i: (f"This node's {len(i.summaries)} summaries and the question do not fit even without working "
                        "memory; a tree built with this window groups its nodes to fit (build it again), or the "
                        "question is too long."),
)


# --- at a leaf -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LeafInput:
    question: Question
    text: str  # the leaf's raw segment
    working_memory: str


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


def _leaf_rule(i: LeafInput) -> tuple[Move, dict]:
    action, answer, detail = lexical_leaf(i.question, i.working_memory, i.text)
    return Move(action, detail["reason"], answer.text if answer else "", answer.choice if answer else None), detail


def _leaf_prompt(i: LeafInput) -> str:
    background = f"Background information: {i.working_memory}\n" if i.working_memory else ""
    return prompts.MEMWALKER_LEAF.format(working_memory=background, text=i.text, question=i.question.with_options(),
                                         answer_format="(A) ..." if i.question.is_choice else "...")


LEAF = Step(
    name="leaf", prompt=_leaf_prompt,
    parse=lambda reply, i: parse_leaf(reply, i.question.options),
    fallback=_no_answer, rule=_leaf_rule, max_reasks=MAX_INVALID - 1,
    max_tokens=lambda i: NAVIGATE_TOKENS, min_tokens=64,
    too_long=lambda i: "The question is too long to read a segment with it in this window.",
)
