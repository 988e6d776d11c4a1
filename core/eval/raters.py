"""The paper's two LLM raters (ReadAgent Sec. 4.1) for free-form answers.

Both the strict and the permissive prompt judge every answer. If either says it is an
exact match, it is exact; if the strict one says no but the permissive one says
partial, it is partial; otherwise no match. With several references the best rating
counts. LR-1 = % exact, LR-2 = % exact or partial. Raters need a model: the offline
engine has no rule for them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from core import prompts
from core.decisions import Step
from core.eval.metrics import EXACT, NONE, PARTIAL, RANK
from core.parsing import Parsed, clean
from core.trace import StepTrace


def parse_strict(reply: str) -> Parsed[bool]:
    """'YES' / 'NO' (any case, with punctuation or an explanation after it)."""
    text = clean(reply).lower()
    if not text:
        return Parsed(None, "The reply was empty; answer YES or NO.")
    first = re.match(r"\W*(yes|no)\b", text)
    if first:
        return Parsed(first.group(1) == "yes")
    found = set(re.findall(r"\b(yes|no)\b", text))
    if len(found) == 1:
        return Parsed(found.pop() == "yes", notes=("the verdict was not the first word",))
    return Parsed(None, "The reply did not say YES or NO." if not found else
                  "The reply said both YES and NO; answer with one of them.")


def parse_permissive(reply: str) -> Parsed[str]:
    """'Yes' -> exact, 'Yes, partially' -> partial, 'No' -> none."""
    text = clean(reply).lower().replace("\u201c", "").replace("\u201d", "").replace('"', "")
    if not text:
        return Parsed(None, 'The reply was empty; answer "Yes", "Yes, partially" or "No".')
    lead = re.match(r"\W*(yes\W*partially|partially|yes|no)\b", text)
    if lead:
        word = lead.group(1)
        return Parsed(PARTIAL if "partial" in word else EXACT if word == "yes" else NONE)
    if re.search(r"\byes\W*partially\b", text):
        return Parsed(PARTIAL, notes=("the verdict was not the first word",))
    found = set(re.findall(r"\b(yes|no)\b", text))
    if len(found) == 1:
        return Parsed(EXACT if found.pop() == "yes" else NONE, notes=("the verdict was not the first word",))
    return Parsed(None, 'The reply did not say "Yes", "Yes, partially" or "No".')


def combine(strict: bool | None, permissive: str | None) -> str:
    """The paper's rule for one reference."""
    if strict or permissive == EXACT:
        return EXACT
    if permissive == PARTIAL:
        return PARTIAL
    return NONE


@dataclass
class Rating:
    level: str  # exact | partial | none
    traces: list[StepTrace]
    best_reference: int | None = None


@dataclass(frozen=True)
class RateInput:
    question: str
    response: str
    reference: str
    n: int  # which reference


def _no_verdict(i: RateInput, attempts) -> tuple[None, str]:
    return None, "no usable verdict: counted as no match"


def _values(i: RateInput) -> dict:
    return {"question": i.question, "response": i.response, "reference": i.reference}


RATE_STRICT = Step(name="rate-strict", prompt=lambda i: prompts.RATER_STRICT.format(**_values(i)),
                   parse=lambda reply, i: parse_strict(reply), fallback=_no_verdict, rule=None,
                   detail=lambda i: {"reference": i.n})
RATE_PERMISSIVE = Step(name="rate-permissive", prompt=lambda i: prompts.RATER_PERMISSIVE.format(**_values(i)),
                       parse=lambda reply, i: parse_permissive(reply), fallback=_no_verdict, rule=None,
                       detail=lambda i: {"reference": i.n})


def rate(engine, question: str, response: str, references: Sequence[str]) -> Rating:
    """Rate ``response`` against each reference with both raters; the best rating counts.
    Needs a model; an unusable rater reply counts as no match and is traced."""
    best, traces, best_ref = NONE, [], None
    for n, reference in enumerate(references):
        inputs = RateInput(question, response, reference, n)
        strict = engine.decide(RATE_STRICT, inputs)
        permissive = engine.decide(RATE_PERMISSIVE, inputs)
        traces += [strict.trace, permissive.trace]
        level = combine(strict.value, permissive.value)
        if RANK[level] > RANK[best]:
            best, best_ref = level, n
        if best == EXACT:
            break
    return Rating(best, traces, best_ref)


