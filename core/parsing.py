"""What every reply parser returns, and the clean-up they share.

Parsers are pure ``str -> Parsed`` functions, one module per method beside its
steps. Each accepts every format its prompt asks for (and the common ways models
stray from it), and otherwise says in one sentence what was wrong, so the step can
re-ask with that sentence and the trace can show it.

A reply is not usable just because it parses: ``screen_text`` refuses free text that is
a refusal, the start of the model's thinking, another step's answer ("Break point: <n>",
"I want to look up Page [..]"), JSON, or about nothing in its source; ``prompt_echo``
(applied to every step by ``core.decisions.ask_model``) refuses a reply that repeats the
prompt's instructions or its own example.
"""
from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Generic, TypeVar

from core import prompts
from core.text import lexical

T = TypeVar("T")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    value: T | None
    problem: str = ""  # empty when the reply was usable
    notes: tuple[str, ...] = field(default=())  # what was repaired: duplicates, out-of-range pages...

    @property
    def ok(self) -> bool:
        return not self.problem


def bad(problem: str) -> Parsed:
    return Parsed(None, problem)


def clean(reply: str | None) -> str:
    """Strip a ``<think>`` block, markdown emphasis, code fences and surrounding whitespace."""
    text = strip_thinking(reply).strip()
    text = re.sub(r"^```[a-zA-Z]*\n?|\n?```$", "", text).strip()
    return re.sub(r"\*\*|__|`", "", text).strip()


def strip_thinking(reply: str | None) -> str:
    """The reply without a reasoning model's ``<think>...</think>`` block (an unclosed one, cut
    off by the token budget, runs to the end and is dropped whole)."""
    return _THINK_BLOCK.sub("", reply or "")


_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|$)", re.I | re.S)


# --- replies that are not what was asked for ------------------------------------------------
# A gist, a summary or a note is free text, so any reply "parses"; these say which replies are
# something else: a refusal, the start of the model's thinking, another step's answer, JSON,
# text about nothing on the page, or the prompt's own instructions and examples.

_TASK_VERBS = (r"help|assist|comply|provide|fulfil+|do (?:that|this)|answer|summari[sz]e|shorten|process|complete|"
               r"continue|generate|write|access|read|determine|find|tell|engage|create|produce")
_CANT = r"(?:can(?:no|')?t|cannot|am unable to|'m unable to|unable to|am not able to|not able to|won't|will not)"
_REFUSAL = re.compile(
    rf"^\W*(?:(?:i'?m|i am)\s+(?:really\s+|so\s+|very\s+)?sorry|sorry|i apologi[sz]e|apologies|unfortunately|"
    rf"as an ai(?: language model| assistant)?|as a language model)\b[^\n]{{0,120}}?\b{_CANT}\s+(?:\w+\s+){{0,2}}?"
    rf"(?:{_TASK_VERBS})\b"
    rf"|^\W*i\s+{_CANT}\s+(?:help|assist)(?:\s+you)?\s*(?:with\b|[.!,]|$)"
    rf"|^\W*i\s+{_CANT}\s+(?:comply|fulfil+|complete (?:this|that|the|your) request|shorten|summari[sz]e)\b",
    re.I)
_TASK_REFUSAL = re.compile(
    rf"^\W*(?:(?:i'?m|i am)\s+sorry|sorry|i apologi[sz]e|unfortunately|as an ai[\w ]*)?[,.]?\s*(?:but\s+)?"
    rf"i\s+{_CANT}\s+(?:help|assist|comply|fulfil+)(?:\s+you)?\s*(?:with (?:that|this|your)\b|[.!]|$)", re.I)


def refusal(text: str, *, task_only: bool = False) -> bool:
    """Whether the reply declines the task ("I'm sorry, but I can't help with that request.").
    ``task_only``: only a refusal of the request itself, not "Sorry, I cannot determine ..."
    (which is an answer to a question)."""
    text = (text or "").replace("’", "'").strip()
    return bool((_TASK_REFUSAL if task_only else _REFUSAL).search(text))


_INTERJECTION = r"(?:hmm+|h+m+|umm*|uh+|er+m*|well|ok(?:ay)?|alright|so|right|wait)"
_THINKING = re.compile(
    rf"^\W*(?:{_INTERJECTION}\b[\s,.!…-]*)+$"  # "Hmm." "Okay, so..."
    rf"|^\W*(?:{_INTERJECTION}\b[\s,.!…-]*)*(?:(?:let me|let's|lemme)\s+(?:first\s+|carefully\s+|now\s+)?"
    r"(?:think|see|consider|analy[sz]e|figure|work|reason|break|go through|look|read|start|begin|check|review|"
    r"summari[sz]e|shorten|decide|choose)\b"
    r"|(?:i need to|i'll|i will|i should|i must|i have to|first,? i(?:'ll| will| need to)?)\s+(?:first\s+|carefully\s+)?"
    r"(?:think|consider|analy[sz]e|figure out|reason about|decide)\b)", re.I)
_FIRST_SENTENCE = re.compile(r"\s*(.*?(?:[.!?…:]+(?=\s|$)|\n|$))", re.S)


def drop_thinking(text: str) -> tuple[str, bool]:
    """The reply without leading sentences that only start the model's thinking ("Hmm, let me
    think..."), and whether any were dropped. An empty result means there was nothing else."""
    dropped = False
    for _ in range(4):
        match = _FIRST_SENTENCE.match(text)
        sentence = match.group(1) if match else ""
        if not sentence.strip() or not _THINKING.match(sentence.replace("’", "'").strip()):
            break
        text, dropped = text[match.end():].strip(), True
    return text.strip(), dropped


_LABEL_ANSWER = re.compile(r"^\W*(?:(?:break|pause)\s*-?\s*points?|labels?)\s*(?:is\s*)?"
                           r"(?:[:=]\s*(?:<|⟨|&lt;)?|<|⟨|&lt;)\s*\d+"
                           r"|^\W*(?:<|⟨|&lt;)\s*\d+\s*(?:>|⟩|&gt;)\W*$", re.I)
_LOOKUP_ANSWER = re.compile(r"\blook\s*-?\s*up\s+pages?\s*\[|^\W*(?:stop|page\s*\d+)\W*$", re.I)


def other_answer(text: str) -> str:
    """What the reply is, when it is another step's kind of answer or JSON ("" when neither)."""
    text = (text or "").strip()
    if _LABEL_ANSWER.search(text):
        return 'a pause-point label ("Break point: <n>")'
    if _LOOKUP_ANSWER.search(text):
        return 'a look-up answer ("I want to look up Page [..]" or "STOP")'
    if text and text[0] in "{[" and text[-1] in "}]":
        try:
            json.loads(text)
            return "JSON"
        except ValueError:
            if re.match(r"^[{\[]\s*[\"']", text):
                return "JSON"
    return ""


MIN_OVERLAP = 0.2  # the paper's PaLM 2-L gists of Off Course share 44-100% of their content words with the page


def overlap(text: str, source: str) -> float:
    """The share of the reply's content words (stemmed) that occur in ``source``."""
    words = set(lexical.terms(text))
    if not words:
        return 0.0
    return len(words & set(lexical.terms(source))) / len(words)


def screen_text(reply: str | None, what: str, *, source: str | None = None, source_name: str = "the text",
                preamble: re.Pattern | None = None, echoes: tuple[str, ...] = ()) -> Parsed[str]:
    """A free-text reply (a gist, a summary) made ready to keep, or why it cannot be. The
    model's thinking, a ``preamble`` ("Here is a shortened version:") and enclosing quotes are
    removed; a reply holding one of ``echoes`` (the prompt's instructions, lower case), a
    refusal, another step's answer, JSON, or text sharing almost none of its content words
    with ``source`` is refused, saying why."""
    text, dropped = drop_thinking(clean(reply))
    if preamble is not None:
        text = preamble.sub("", text).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if not text:
        if dropped or _THINK_BLOCK.search(reply or ""):
            return bad(f"it only starts thinking aloud (\"Hmm, let me think...\") and gives no {what}")
        return bad("the reply was empty")
    if any(echo in text.lower() for echo in echoes):
        return bad(f"the reply repeats the instructions instead of giving the {what}")
    if refusal(text):
        return bad(f"it refuses instead of giving the {what}")
    kind = other_answer(text)
    if kind:
        return bad(f"it is {kind}, not the {what}; reply with plain text")
    if source is not None and lexical.terms(source):  # a page of "* * *" has no words to share
        share = overlap(text, source)
        if share < MIN_OVERLAP:
            return bad(f"it shares almost no words with {source_name} (only {share:.0%} of its content words "
                       f"occur there); write the {what} from {source_name} itself")
    notes = ("dropped the model's thinking before the text",) if dropped else ()
    return Parsed(text, notes=notes)


# --- echoes of the prompt ------------------------------------------------------------------------

_TOKEN = re.compile(r"\.\.\.|…|\$[a-z_]+|[a-z0-9]+")
_NGRAM = 6  # words: a run this long copied from the instructions is not chance
_PREFIX = 8  # a reply opening with the first 8 words of the prompt's instructions repeats the prompt


def _tokens(text: str) -> list[str]:
    return ["..." if t == "…" else t for t in _TOKEN.findall((text or "").replace("\\n", " ").lower())]


def _fixed_pieces(template: prompts.Prompt) -> list[str]:
    return [literal for literal, _, _, _ in string.Formatter().parse(template.text) if literal]


@lru_cache(maxsize=None)
def _template_text(name: str) -> tuple[frozenset, tuple[tuple[str, ...], ...]]:
    """A template's fixed-text word 6-grams (never across a placeholder) and its examples: the
    quoted strings with an unfilled slot ("Answer: (C) ...", "Page $PAGE_NUM")."""
    template = next(t for t in prompts.ALL if t.name == name)
    grams, examples = set(), []
    for piece in _fixed_pieces(template):
        words = _tokens(piece)
        grams.update(tuple(words[i:i + _NGRAM]) for i in range(len(words) - _NGRAM + 1))
        for quoted in re.findall(r'"([^"\n]{2,120})"', piece.replace("{{", "{").replace("}}", "}")):
            if "..." in quoted or "$" in quoted:
                examples.append(tuple(_tokens(quoted)))
    return frozenset(grams), tuple(examples)


def _templates_in(prompt: str) -> list[prompts.Prompt]:
    """The templates ``prompt`` was made from (all of its fixed text occurs in it, in order)."""
    found = []
    for template in prompts.ALL:
        at, ok = 0, True
        for piece in _fixed_pieces(template):
            at = prompt.find(piece, at)
            if at < 0:
                ok = False
                break
            at += len(piece)
        if ok:
            found.append(template)
    return found


def repeats_example(reply: str | None, *templates: prompts.Prompt) -> bool:
    """Whether ``reply`` is one of the templates' examples with its slot unfilled, word for word
    ("I want to look up Page [8] to ...", "Answer: (C) ...")."""
    words = tuple(_tokens(strip_thinking(reply)))
    return bool(words) and any(words in _template_text(t.name)[1] for t in templates)


def prompt_echo(reply: str | None, prompt: str) -> str:
    """Why ``reply`` repeats ``prompt`` instead of answering it, or "" if it does not: it opens
    with the first words of the prompt's instructions, equals one of the prompt's examples ("I
    want to look up Page [8] to ..."), or is almost all the prompt's instruction text. Only the
    fixed text of the templates in ``core.prompts`` counts: a reply may quote the document."""
    words = _tokens(strip_thinking(reply))
    if not words:
        return ""
    made_from = _templates_in(prompt)
    for template in made_from:  # a prompt opening with a placeholder (the context) is skipped: quoting it is fine
        opening = _tokens(next(string.Formatter().parse(template.text))[0])[:_PREFIX]
        if len(opening) == _PREFIX and words[:_PREFIX] == opening:
            return "the reply repeats the prompt instead of answering it"
    grams: set = set()
    for template in [*made_from, prompts.REASK]:
        template_grams, examples = _template_text(template.name)
        if tuple(words) in examples:
            return "the reply repeats the prompt's example instead of answering"
        grams |= template_grams
    covered = [False] * len(words)
    for i in range(len(words) - _NGRAM + 1):
        if tuple(words[i:i + _NGRAM]) in grams:
            covered[i:i + _NGRAM] = [True] * _NGRAM
    copied = sum(covered)
    longest = max((len(run) for run in "".join("x" if c else " " for c in covered).split()), default=0)
    if (copied >= 8 and copied >= 0.95 * len(words)) or longest >= 25:
        return "the reply repeats the prompt's instructions instead of answering"
    return ""
