"""The papers' metrics: accuracy, LLM-Rating-1/2 with the paper's two raters, ROUGE,
compression rate, look-ups, response length, words consumed; mean and standard deviation.

Raters (ReadAgent Sec. 4.1): both the strict and the permissive prompt judge every answer.
If either says it is an exact match, it is exact; if the strict one says no but the
permissive one says partial, it is partial; otherwise no match. With several references
the best rating counts. LR-1 = % exact, LR-2 = % exact or partial.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from core import prompts
from core.parsers import Parsed, clean
from core.trace import StepTrace

EXACT, PARTIAL, NONE = "exact", "partial", "none"
_RANK = {NONE: 0, PARTIAL: 1, EXACT: 2}


# --- raters: parsers ---------------------------------------------------------------------

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


def rate(engine, question: str, response: str, references: Sequence[str]) -> Rating:
    """Rate ``response`` against each reference with both raters; the best rating counts.
    Needs a model (``engine.llm``); an unusable rater reply counts as no match and is traced."""
    from core.llm_engine import model_step

    best, traces, best_ref = NONE, [], None
    for n, reference in enumerate(references):
        values = {"question": question, "response": response, "reference": reference}
        strict = model_step(engine.llm, "rate-strict", prompts.RATER_STRICT.format(**values), parse_strict,
                            fallback=lambda a: (None, "no usable verdict: counted as no match"),
                            detail={"reference": n})
        permissive = model_step(engine.llm, "rate-permissive", prompts.RATER_PERMISSIVE.format(**values),
                                parse_permissive, fallback=lambda a: (None, "no usable verdict: counted as no match"),
                                detail={"reference": n})
        traces += [strict.trace, permissive.trace]
        level = combine(strict.value, permissive.value)
        if _RANK[level] > _RANK[best]:
            best, best_ref = level, n
        if best == EXACT:
            break
    return Rating(best, traces, best_ref)


# --- ROUGE ---------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(response: str, references: Sequence[str]) -> dict[str, float]:
    """ROUGE-1/2/L F-measures (Google's rouge-score), the best over the references, in %."""
    best = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
    for reference in references:
        scores = _scorer().score(reference, response)
        for key in best:
            best[key] = max(best[key], 100 * scores[key].fmeasure)
    return {k: round(v, 2) for k, v in best.items()}


# --- aggregation ---------------------------------------------------------------------------

def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (None when there is nothing, 0 for one value)."""
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def response_words(text: str) -> int:
    return len(text.split())
