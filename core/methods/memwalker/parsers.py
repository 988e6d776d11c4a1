"""MemWalker's reply parsers: pure ``str -> Parsed`` functions for the triage prompt
("Reasoning: ... Action: 2"), the leaf prompt ("Action: -2 ... Answer: (A) ...") and
the summaries that build the tree."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from core.methods.answer import parse_choice
from core.parsing import Parsed, clean, screen_text
from core.text.documents import count_words

REVERT, COMMIT = -1, -2  # the paper's actions: go back to the parent; answer from this leaf
MAX_INVALID = 3  # "If the LLM fails to generate parsable output three consecutive times ... 'no answer'"
NO_ANSWER = "no answer"


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


def parse_summary(reply: str, source_words: int, source: str | None = None) -> Parsed[str]:
    """A leaf or parent summary. The model's thinking, preambles and quotes are removed; it must
    be shorter than what it summarises, must not repeat the instructions, and must not be a
    refusal, the start of the model's thinking, another step's answer ("Break point: <n>",
    "I want to look up Page [..]"), JSON, or (given ``source``) text sharing almost no words
    with what it summarises."""
    parsed = screen_text(reply, "summary", source=source, source_name="the text it summarises",
                         preamble=_SUMMARY_PREAMBLE, echoes=_SUMMARY_ECHO)
    if not parsed.ok:
        return parsed
    words = count_words(parsed.value)
    if words > max(source_words, 1):
        return Parsed(None, f"the summary ({words} words) is longer than what it summarises ({source_words} words)")
    return parsed
