"""The papers' metrics that need no model: ROUGE, response length, mean and standard
deviation, and the rating levels the LLM raters give (``raters.py``)."""
from __future__ import annotations

import statistics
from functools import lru_cache
from typing import Sequence

EXACT, PARTIAL, NONE = "exact", "partial", "none"
RANK = {NONE: 0, PARTIAL: 1, EXACT: 2}


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
