"""How far annotators agree on failure categories: Cohen's kappa for two annotators, Fleiss' kappa
for three or more, over the cases every compared annotator labelled; overall and per category.

Kappa is agreement corrected for chance: 1 is perfect agreement, 0 what chance alone gives,
below 0 worse than chance. It is undefined (``None``) when chance already explains everything
(every label in one and the same category).
"""
from __future__ import annotations

from collections import Counter
from typing import Hashable, Sequence

from core.store.records import Label


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two annotators' labels of the same cases (``a[i]`` and ``b[i]`` label case i)."""
    if len(a) != len(b):
        raise ValueError("both annotators must label the same cases")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def _check_counts(counts: Sequence[Sequence[int]]) -> tuple[list[list[int]], int]:
    rows = [list(r) for r in counts]
    raters = {sum(r) for r in rows}
    if len(raters) > 1:
        raise ValueError("Fleiss' kappa needs the same number of labels for every case")
    n = raters.pop() if raters else 0
    if rows and n < 2:
        raise ValueError("Fleiss' kappa needs at least two labels per case")
    if len({len(r) for r in rows}) > 1:
        raise ValueError("every case needs a count for every category")
    return rows, n


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a table of counts: ``counts[i][j]`` annotators put case i in category j
    (every case has the same number of labels)."""
    rows, n = _check_counts(counts)
    if not rows:
        return None
    cases, k = len(rows), len(rows[0])
    share = [sum(r[j] for r in rows) / (cases * n) for j in range(k)]
    per_case = [(sum(x * x for x in r) - n) / (n * (n - 1)) for r in rows]
    observed = sum(per_case) / cases
    expected = sum(p * p for p in share)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


def fleiss_kappa_per_category(counts: Sequence[Sequence[int]]) -> list[float | None]:
    """Fleiss' kappa of each category against the rest (Fleiss 1971, eq. 13):
    1 - sum_i n_ij (n - n_ij) / (N n (n - 1) p_j q_j); ``None`` for a category nobody (or everybody) used."""
    rows, n = _check_counts(counts)
    if not rows:
        return []
    cases, k = len(rows), len(rows[0])
    out: list[float | None] = []
    for j in range(k):
        p = sum(r[j] for r in rows) / (cases * n)
        if p <= 0 or p >= 1:
            out.append(None)
            continue
        spread = sum(r[j] * (n - r[j]) for r in rows)
        out.append(1 - spread / (cases * n * (n - 1) * p * (1 - p)))
    return out


def describe(kappa: float | None) -> str:
    """Landis and Koch's words for a kappa (1977)."""
    if kappa is None:
        return "undefined"
    for bound, word in ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa <= bound:
            return word
    return "almost perfect"


def by_case(labels: Sequence[Label]) -> dict[int, dict[str, str]]:
    """Labels as {case (result id): {annotator: category}}."""
    out: dict[int, dict[str, str]] = {}
    for label in labels:
        out.setdefault(label.result_id, {})[label.annotator] = label.category
    return out


def disagreements(labels: Sequence[Label]) -> list[dict]:
    """The cases two or more annotators labelled differently: ``{"result_id", "labels": {annotator: category}}``."""
    return [{"result_id": rid, "labels": dict(sorted(who.items()))}
            for rid, who in sorted(by_case(labels).items()) if len(set(who.values())) > 1]


def agreement(labels: Sequence[Label], annotators: Sequence[str] | None = None,
              categories: Sequence[str] | None = None) -> dict:
    """Agreement of ``annotators`` (default: everyone who labelled) over the cases all of them labelled.

    Returns ``{"annotators", "statistic" ("Cohen's kappa", "Fleiss' kappa" or None with fewer than two),
    "cases", "kappa", "observed" (share of cases where all agree), "categories": [{"category", "kappa",
    "labels"}]}``; a category's kappa is that category against the rest."""
    cases = by_case(labels)
    names = sorted(set(annotators) if annotators is not None else {a for who in cases.values() for a in who})
    common = {rid: who for rid, who in cases.items() if all(a in who for a in names)}
    used = Counter(who[a] for who in common.values() for a in names)
    cats = list(categories or [])
    cats += sorted(c for c in used if c not in cats)
    out = {"annotators": names, "statistic": None, "cases": len(common) if len(names) > 1 else 0,
           "kappa": None, "observed": None, "categories": []}
    if len(names) < 2 or not common:
        return out
    rids = sorted(common)
    out["observed"] = sum(len({common[r][a] for a in names}) == 1 for r in rids) / len(rids)
    if len(names) == 2:
        first, second = ([common[r][a] for r in rids] for a in names)
        out["statistic"], out["kappa"] = "Cohen's kappa", cohen_kappa(first, second)
        per = [cohen_kappa([x == c for x in first], [y == c for y in second]) if used[c] else None for c in cats]
    else:
        counts = [[sum(common[r][a] == c for a in names) for c in cats] for r in rids]
        out["statistic"], out["kappa"] = "Fleiss' kappa", fleiss_kappa(counts)
        per = fleiss_kappa_per_category(counts)
    out["categories"] = [{"category": c, "kappa": k, "labels": used[c]} for c, k in zip(cats, per)]
    return out
