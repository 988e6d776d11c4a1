"""What an evaluation's results say: the papers' table, the failures an annotator goes
through (the case table: filters, search, order, label status), two evaluations compared,
and exports (results CSV, labelled cases as JSONL or CSV)."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from typing import Callable, Iterable

from core.eval.metrics import EXACT, NONE, PARTIAL, mean_std
from core.errors import GistError
from core.methods.registry import get_method
from core.store import Store
from core.store.records import EvalResult, Label, MemoryRead, Run

FAIL_ROUGE_L = 20.0  # a free-form answer with no LLM rating fails below this ROUGE-L


# --- what counts as a failure --------------------------------------------------------------------

def is_failure(r: EvalResult) -> bool:
    """Wrong choice, no exact rating, ROUGE-L under the threshold (when unrated), or an error."""
    if r.error:
        return True
    if r.options:
        return not r.correct
    if r.rating is not None:
        return r.rating != EXACT
    return (r.rougeL or 0) < FAIL_ROUGE_L


def methods_disagree(r: EvalResult, rows: list[EvalResult]) -> bool:
    """Another method gave a different answer (choice or rating) to the same question in the same run."""
    return any((o.choice, o.rating) != (r.choice, r.rating) for o in rows
               if o.question_id == r.question_id and o.run_index == r.run_index
               and o.method != r.method)


def is_unparseable(r: EvalResult) -> bool:
    """A multiple-choice answer no option could be read from. A MemWalker search that ended with
    no answer is counted as "no answer" only, not also as unparseable."""
    return bool(r.options) and r.choice is None and not r.error and r.answered != 0


FAILURES = "failures (wrong, no match, unparseable, no answer)"
FILTERS: dict[str, Callable[[EvalResult, list[EvalResult]], bool]] = {
    FAILURES: lambda r, rows: is_failure(r),
    "everything": lambda r, rows: True,
    "wrong": lambda r, rows: r.correct == 0,
    "unparseable answer": lambda r, rows: is_unparseable(r),
    "pages chosen by a fallback": lambda r, rows: (r.fallbacks or 0) > 0,
    "MemWalker: no answer": lambda r, rows: r.answered == 0,
    "difficult questions": lambda r, rows: bool(r.meta.get("difficult")),
    "methods disagree": methods_disagree,
}


def select(rows: list[EvalResult], show: str) -> list[EvalResult]:
    """The results the filter named ``show`` keeps (failures when the name is unknown)."""
    keep = FILTERS.get(show, FILTERS[FAILURES])
    if keep is methods_disagree:  # one pass over the questions, not every pair of results
        ids = disagreeing_ids(rows)
        return [r for r in rows if r.id in ids]
    return [r for r in rows if keep(r, rows)]


def disagreeing_ids(rows: list[EvalResult]) -> set[int]:
    """The results whose question (in the same run) another method answered differently."""
    groups: dict[tuple, list[EvalResult]] = {}
    for r in rows:
        groups.setdefault((r.doc_id, r.question_id, r.run_index), []).append(r)
    return {r.id for group in groups.values() if len({(o.choice, o.rating) for o in group}) > 1
            for r in group}


# --- the paper's table ---------------------------------------------------------------------------

def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def summarize(store: Store, eval_id: int, results: list[EvalResult] | None = None) -> list[dict]:
    """One row per method, the paper's columns; means and standard deviations across runs.
    ``results``: the evaluation's results when the caller has them already."""
    run = store.get_run(eval_id)
    everything = store.eval_results(eval_id) if results is None else results
    rows = [r for r in everything if not r.error]
    errors = [r for r in everything if r.error]
    settings = run.params
    memories: dict[str, list[MemoryRead]] = {}
    for m in store.eval_memories(eval_id):
        memories.setdefault(m.method, []).append(m)
    out = []
    for method in settings.get("methods") or sorted({r.method for r in rows}):
        mine = [r for r in rows if r.method == method]
        by_run: dict[int, list[EvalResult]] = {}
        for r in mine:
            by_run.setdefault(r.run_index, []).append(r)
        per_run = []
        for k, rs in sorted(by_run.items()):
            choice = [r for r in rs if r.options]
            free = [r for r in rs if not r.options]
            rated = [r for r in free if r.rating is not None]
            per_run.append({
                "accuracy": 100 * _mean([r.correct for r in choice]) if choice else None,
                "lr1": 100 * _mean([r.rating == EXACT for r in rated]) if rated else None,
                "lr2": 100 * _mean([r.rating in (EXACT, PARTIAL) for r in rated]) if rated else None,
                "rouge1": _mean([r.rouge1 for r in free]), "rouge2": _mean([r.rouge2 for r in free]),
                "rougeL": _mean([r.rougeL for r in free]),
                "words_consumed": sum(r.words_consumed or 0 for r in rs),
            })
        first_run = by_run.get(min(by_run), []) if by_run else []
        spec_needs_memory = get_method(method).needs_memory
        build_words = 0
        if spec_needs_memory:
            for doc_id in {r.doc_id for r in mine}:
                build_words += _build_words(store, doc_id, run)
        entry = {
            "method": method, "method_label": get_method(method).label, "n": len(first_run),
            "runs": len(by_run), "engine": run.engine_label, "offline": not settings.get("is_llm", False),
            "compression_rate": _round(_mean([r.compression_rate for r in mine])),
            "lookups": _round(_mean([r.lookups for r in mine])),
            "response_words": _round(_mean([r.response_words for r in mine])),
            "unparseable": sum(1 for r in mine if is_unparseable(r)),
            "no_answer": sum(1 for r in mine if r.answered == 0),
            "setting": method_setting(method, (settings.get("params") or {}).get(method)),
            **_fallbacks(memories.get(method), spec_needs_memory),
            "errors": sum(1 for r in errors if r.method == method),
        }
        for key in ("accuracy", "lr1", "lr2", "rouge1", "rouge2", "rougeL"):
            mean, std = mean_std([p[key] for p in per_run])
            if mean is not None:  # a spread needs two runs: with one it is undefined (None), not 0
                entry[key], entry[f"{key}_std"] = _round(mean), _round(std) if len(per_run) > 1 else None
        consumed = mean_std([p["words_consumed"] for p in per_run])[0]
        entry["words_consumed"] = int((consumed or 0) + build_words)
        entry["build_words"] = build_words
        out.append(entry)
    return out


def _fallbacks(memories: list[MemoryRead] | None, needs_memory: bool) -> dict:
    """How many gist memories a method read, and their pause points and gists made by a fallback
    (summed over the memories, each counted once however many questions read it); None when the
    method reads no gist memory."""
    if not needs_memory and not memories:
        return {"memories": None, "fallback_breaks": None, "fallback_gists": None}
    memories = memories or []
    return {"memories": len(memories), "fallback_breaks": sum(m.fallback_breaks for m in memories),
            "fallback_gists": sum(m.fallback_gists for m in memories)}


def memory_table(store: Store, eval_id: int) -> list[dict]:
    """Each gist memory an evaluation read, once: its document, pages, and the pause points and
    gists a fallback made (not the model), with the methods that read it."""
    by_memory: dict[int, dict] = {}
    for m in store.eval_memories(eval_id):
        row = by_memory.setdefault(m.memory_id, {"memory_id": m.memory_id, "doc_id": m.doc_id, "pages": m.pages,
                                                 "fallback_breaks": m.fallback_breaks,
                                                 "fallback_gists": m.fallback_gists, "methods": []})
        row["methods"].append(get_method(m.method).label)
    return sorted(by_memory.values(), key=lambda r: r["memory_id"])


def _build_words(store: Store, doc_id: str, run: Run) -> int:
    for memory in store.memories_for(doc_id):
        if memory.engine == run.engine and memory.run_id:
            return (store.get_run(memory.run_id).result or {}).get("prompt_words", 0)
    return 0


def _round(value, digits=2):
    return None if value is None else round(value, digits)


def format_table(summary: list[dict]) -> str:
    """The paper's layout: method and its setting (a row per setting rebuilds the paper's multi-row
    tables), CR (#LU), then accuracy or LR-1/LR-2/ROUGE, length, words; then what went wrong:
    unparseable answers, MemWalker's "no answer", and the pause points and gists of the gist
    memories read that a fallback made ("—" for a method that reads no gist memory)."""
    free = any("rouge1" in r for r in summary)
    head = ["method", "setting", "n", "CR (#LU)"] + (["LR-1", "LR-2", "R-1", "R-2", "R-L"] if free else ["accuracy"]) + \
           ["resp. words", "words consumed", "unparseable", "no answer", "fallback breaks", "fallback gists"]

    def pm(r, key):
        if r.get(key) is None:
            return "—"
        std = r.get(f"{key}_std")
        return f"{r[key]:.2f}" + (f" ± {std:.2f}" if r.get("runs", 1) > 1 and std is not None else "")

    lines = [head]
    for r in summary:
        cr = "—" if r["compression_rate"] is None else f"{r['compression_rate']:.2f} ({r['lookups']:.2f})"
        scores = [pm(r, k) for k in (("lr1", "lr2", "rouge1", "rouge2", "rougeL") if free else ("accuracy",))]
        lines.append([r["method_label"], r.get("setting") or "—", str(r["n"]), cr, *scores,
                      "—" if r["response_words"] is None else f"{r['response_words']:.1f}",
                      f"{r['words_consumed']:,}" if not r["offline"] else "n/a (offline)",
                      str(r.get("unparseable", 0)), str(r.get("no_answer", 0)),
                      *("—" if r.get(k) is None else str(r[k]) for k in ("fallback_breaks", "fallback_gists"))])
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines)


def format_memories(memories: list[dict], titles: dict[str, str] | None = None) -> str:
    """One line per gist memory read: its pages and how many pause points and gists a fallback made."""
    if not memories:
        return ""
    titles = titles or {}
    return "Gist memories read:\n" + "\n".join(
        f"  memory {m['memory_id']} ({titles.get(m['doc_id'], m['doc_id'])}): {m['pages']} pages, "
        f"{m['fallback_breaks']} fallback breaks, {m['fallback_gists']} fallback gists; read by "
        f"{', '.join(m['methods'])}" for m in memories)


RESULT_COLUMNS = ["id", "run_index", "doc_id", "question_id", "method", "question", "options", "gold", "references",
                  "answer", "choice", "correct", "rating", "rouge1", "rouge2", "rougeL", "compression_rate",
                  "lookups", "pages_looked_up", "response_words", "words_consumed", "llm_calls", "answered",
                  "error", "ask_run_id"]


def results_csv(rows: list[EvalResult]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, RESULT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, tuple, dict)) else v
                         for k, v in asdict(r).items()})
    return out.getvalue()


# --- labels -----------------------------------------------------------------------------------

DEFAULT_CATEGORIES = ["pagination", "gist lost the detail", "wrong look-up", "reasoning", "dataset problem",
                      "other"]


def labelled_cases(store: Store, eval_id: int) -> list[dict]:
    """Every label (every annotator's, one row each) with what is needed to reproduce its case
    (question, options, gold, prediction, method, engine, the ask run holding the full trace)."""
    run = store.get_run(eval_id)
    cases = []
    for r, label in store.labelled_results(eval_id):
        cases.append({"eval_id": eval_id, "result_id": r.id, "annotator": label.annotator,
                      "category": label.category, "note": label.note, "labelled_at": label.updated_at,
                      "engine": run.engine_label, "dataset": run.params.get("dataset"),
                      **{k: getattr(r, k) for k in RESULT_COLUMNS if k != "id"}})
    return cases


def labels_jsonl(cases: list[dict]) -> str:
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)


def labels_csv(cases: list[dict]) -> str:
    if not cases:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, list(cases[0]))
    writer.writeheader()
    for c in cases:
        writer.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, tuple, dict)) else v
                         for k, v in c.items()})
    return out.getvalue()


def label_counts(labels: Iterable[Label], rows_by_id: dict[int, EvalResult]) -> list[dict]:
    """How many labels each category got, per method: ``{"category", "method", "labels"}`` rows
    (every annotator's label counts)."""
    counts: dict[tuple[str, str], int] = {}
    for label in labels:
        r = rows_by_id.get(label.result_id)
        if r is not None:
            key = (label.category, r.method)
            counts[key] = counts.get(key, 0) + 1
    return [{"category": c, "method": m, "labels": n} for (c, m), n in sorted(counts.items())]


# --- each method's setting ------------------------------------------------------------------------

def method_setting(method: str, params: dict | None = None) -> str:
    """The setting a method ran with, in a few words ("k = 5", "first 6000 words", "max pages 5"):
    the evaluation's stored parameters, else the method's defaults; "" for a method without any."""
    spec = get_method(method)
    try:
        values = spec.resolve(params)
    except GistError:  # stored by another version: say what was stored
        values = {p.name: (params or {}).get(p.name, p.default) for p in spec.params}
    parts = []
    for p in spec.params:
        value = values.get(p.name)
        if p.name == "concurrency" or value in ("", None):  # how fast, not what was done
            continue
        if p.name == "top_k":
            parts.append(f"k = {value}")
        elif p.name == "words":
            parts.append(f"{'last' if method.startswith('last') else 'first'} {value} words")
        else:
            parts.append(f"{p.name.replace('_', ' ')} {value}")
    return ", ".join(parts)


def eval_settings(run: Run) -> dict[str, str]:
    """Every method of an evaluation run and its setting."""
    settings = run.params
    stored = settings.get("params") or {}
    return {m: method_setting(m, stored.get(m)) for m in settings.get("methods") or []}


def spread(value: float | None, runs: int) -> str:
    """A standard deviation as the table shows it: "—" when there is no spread to speak of (one run)."""
    return "—" if value is None or runs < 2 else f"{value:.2f}"


# --- the case table (Inspect) ---------------------------------------------------------------------

LETTERS = "ABCDEFGHIJ"


def failure_kind(r: EvalResult) -> str:
    """What went wrong with a result, in a word or two ("right" when nothing did)."""
    if r.error:
        return "error"
    if r.answered == 0:
        return "no answer"
    if r.options:
        if r.choice is None:
            return "unparseable"
        return "right" if r.correct else "wrong"
    if r.rating is not None:
        return {EXACT: "right", PARTIAL: "partial match", NONE: "no match"}.get(r.rating, r.rating)
    return "right" if (r.rougeL or 0) >= FAIL_ROUGE_L else "low ROUGE-L"


def _option(r: EvalResult, letter: str | None) -> str:
    if not letter:
        return ""
    i = LETTERS.find(letter)
    text = r.options[i] if 0 <= i < len(r.options) else ""
    return f"({letter}) {text}".strip()


def gold_text(r: EvalResult) -> str:
    return _option(r, r.gold) if r.options else " / ".join(r.references or [])


def prediction_text(r: EvalResult) -> str:
    if r.error:
        return ""
    if r.options:
        return _option(r, r.choice) or "(no option chosen)"
    return r.answer or ""


def label_status(who: dict[str, str], annotator: str = "") -> str:
    """A case's labels in a few words: "unlabelled", "you: X", "ana, ben agree", "disagree"."""
    if not who:
        return "unlabelled"
    if len(set(who.values())) > 1:
        return "annotators disagree"
    if len(who) == 1:
        [(name, category)] = who.items()
        return f"{'you' if name == annotator else name}: {category}"
    return f"{len(who)} agree: {next(iter(who.values()))}"


LABEL_FILTERS: dict[str, Callable[[dict[str, str], str], bool]] = {
    "any": lambda who, me: True,
    "not labelled by me": lambda who, me: me not in who,
    "labelled by me": lambda who, me: me in who,
    "unlabelled": lambda who, me: not who,
    "labelled by anyone": lambda who, me: bool(who),
    "annotators disagree": lambda who, me: len(set(who.values())) > 1,
}

_KIND_ORDER = {k: i for i, k in enumerate(["error", "no answer", "unparseable", "wrong", "no match", "low ROUGE-L",
                                           "partial match", "right"])}
ORDERS: dict[str, Callable[[EvalResult, dict, dict], tuple]] = {
    "document and question": lambda r, t, who: (t.get(r.doc_id, r.doc_id), r.question_id, r.method,
                                                 r.run_index),
    "method": lambda r, t, who: (r.method, t.get(r.doc_id, r.doc_id), r.question_id, r.run_index),
    "failure kind": lambda r, t, who: (_KIND_ORDER.get(failure_kind(r), 99), r.method, r.question_id),
    "label status": lambda r, t, who: (bool(who) and len(set(who.values())) == 1, bool(who), r.id),
    "question": lambda r, t, who: (r.question.lower(), r.method, r.run_index),
}


def _haystack(r: EvalResult, title: str, who: dict[str, str]) -> str:
    return " ".join([r.question, r.answer or "", r.gold or "", *r.options, *(r.references or []),
                     title, r.method, get_method(r.method).label, r.error or "",
                     *who, *who.values()]).lower()


def find_cases(rows: list[EvalResult], labels: Iterable[Label], *, show: str = FAILURES, methods: Iterable[str] = (),
               docs: Iterable[str] = (), labelled: str = "any", annotator: str = "", search: str = "",
               order: str = "document and question", titles: dict[str, str] | None = None) -> list[EvalResult]:
    """The cases the Inspect screen lists, in order: kept by ``show`` (a ``FILTERS`` name), the methods
    and documents picked (none picked: all), the label status (``LABEL_FILTERS``), and every word of
    ``search`` (question, options, answers, document, method, labels)."""
    titles = titles or {}
    who = {}
    for label in labels:
        who.setdefault(label.result_id, {})[label.annotator] = label.category
    methods, docs = set(methods), set(docs)
    keep_label = LABEL_FILTERS.get(labelled, LABEL_FILTERS["any"])
    words = search.lower().split()
    kept = [r for r in select(rows, show)
            if (not methods or r.method in methods) and (not docs or r.doc_id in docs)
            and keep_label(who.get(r.id, {}), annotator)]
    if words:
        kept = [r for r in kept if all(w in _haystack(r, titles.get(r.doc_id, ""), who.get(r.id, {}))
                                       for w in words)]
    key = ORDERS.get(order, ORDERS["document and question"])
    return sorted(kept, key=lambda r: key(r, titles, who.get(r.id, {})))


def case_table_rows(cases: list[EvalResult], labels: Iterable[Label], *, annotator: str = "",
                    current: int | None = None, titles: dict[str, str] | None = None,
                    first_position: int = 1) -> list[dict]:
    """The case table's rows for ``cases`` (one page of them; ``first_position`` numbers the first)."""
    titles = titles or {}
    who: dict[int, dict[str, str]] = {}
    for label in labels:
        who.setdefault(label.result_id, {})[label.annotator] = label.category
    return [{"": "▶" if r.id == current else "", "#": first_position + i,
             "labels": label_status(who.get(r.id, {}), annotator), "failure": failure_kind(r),
             "method": get_method(r.method).label, "question": r.question,
             "gold": gold_text(r), "prediction": prediction_text(r)[:200],
             "document": titles.get(r.doc_id, r.doc_id), "run": r.run_index + 1, "result": r.id}
            for i, r in enumerate(cases)]


def same_question(rows: list[EvalResult], case: EvalResult) -> list[EvalResult]:
    """The other methods' results for the case's question, in the same run."""
    return [o for o in rows if o.question_id == case.question_id and o.doc_id == case.doc_id
            and o.run_index == case.run_index and o.id != case.id]


# --- two evaluations compared -----------------------------------------------------------------

def _key(r: EvalResult) -> tuple:
    return r.doc_id, r.question_id, r.method, r.run_index


def _answer_of(r: EvalResult) -> str:
    if r.error:
        return "error"
    return (r.choice or "(none)") if r.options else (r.answer or "").strip()


def compare(rows_a: list[EvalResult], rows_b: list[EvalResult]) -> dict:
    """Evaluation A against B over the results both hold (same document, question, method and run):
    per method how many stayed right, were fixed (wrong in A, right in B), broke, stayed wrong, and
    whose answer changed; and every question whose answer changed."""
    b = {_key(r): r for r in rows_b}
    pairs = [(r, b[_key(r)]) for r in rows_a if _key(r) in b]
    methods: dict[str, dict] = {}
    changed = []
    for ra, rb in pairs:
        right_a, right_b = not is_failure(ra), not is_failure(rb)
        m = methods.setdefault(ra.method, {"method": ra.method, "label": get_method(ra.method).label,
                                              "questions": 0, "both right": 0, "fixed": 0, "broken": 0,
                                              "both wrong": 0, "answer changed": 0})
        m["questions"] += 1
        m["both right" if right_a and right_b else "fixed" if right_b else "broken" if right_a else "both wrong"] += 1
        if _answer_of(ra) != _answer_of(rb) or right_a != right_b:
            m["answer changed"] += 1
            changed.append({"method": ra.method, "doc_id": ra.doc_id, "question_id": ra.question_id,
                            "run_index": ra.run_index, "question": ra.question, "gold": gold_text(ra),
                            "a": prediction_text(ra) or _answer_of(ra), "b": prediction_text(rb) or _answer_of(rb),
                            "a_right": right_a, "b_right": right_b, "a_id": ra.id, "b_id": rb.id})
    return {"common": len(pairs), "only_a": len(rows_a) - len(pairs), "only_b": len(rows_b) - len(pairs),
            "methods": list(methods.values()), "changed": changed}


# --- progress -----------------------------------------------------------------------------------

def time_left(done: int, total: int, seconds: float, done_at_start: int = 0) -> float | None:
    """Seconds left at the pace so far: ``done_at_start`` items were already made when the clock
    started (a resumed evaluation), ``seconds`` have passed since; None before there is a pace."""
    made = done - done_at_start
    if total <= done:
        return 0.0
    if made <= 0 or seconds <= 0:
        return None
    return (total - done) * seconds / made


def say_duration(seconds: float | None) -> str:
    """ "about 3 min 20 s" / "about 40 s" / "a few seconds" / "" (not known yet)."""
    if seconds is None:
        return ""
    if seconds < 5:
        return "a few seconds"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"about {seconds} s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"about {hours} h {minutes} min"
    return f"about {minutes} min" + (f" {secs} s" if minutes < 10 and secs else "")
