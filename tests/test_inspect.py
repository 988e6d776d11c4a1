"""The Inspect screen's logic: annotators' agreement (against published values), the case table
(filters, search, order, label status), comparisons, settings, progress, and the paged store
queries behind Inspect and Runs."""

import pytest

from core.engine import OFFLINE
from core.eval.agreement import (agreement, cohen_kappa, describe, disagreements, fleiss_kappa,
                                 fleiss_kappa_per_category)
from core.eval.datasets import load_dataset
from core.eval.report import (case_table_rows, compare, disagreeing_ids, failure_kind, find_cases,
                              label_counts, labelled_cases, method_setting, methods_disagree, say_duration, spread,
                              summarize, time_left)
from core.eval.runner import evaluate
from core.store.records import EvalResult, Label


def two_raters(both_yes: int, a_only: int, b_only: int, both_no: int) -> tuple[list[str], list[str]]:
    """Two annotators' yes/no labels from a 2x2 table."""
    a = ["yes"] * (both_yes + a_only) + ["no"] * (b_only + both_no)
    b = ["yes"] * both_yes + ["no"] * a_only + ["yes"] * b_only + ["no"] * both_no
    return a, b


# --- Cohen's kappa: Wikipedia's worked examples ------------------------------------------------

@pytest.mark.parametrize("table, kappa", [
    ((20, 5, 10, 15), 0.4),  # "Simple example": p_o 0.7, p_e 0.5
    ((45, 15, 25, 15), 0.1304),  # "Same percentages but different numbers", first table
    ((25, 35, 5, 35), 0.2593),  # ... second table
    ((10, 0, 0, 10), 1.0),  # perfect agreement
    ((0, 10, 10, 0), -1.0),  # always opposite
])
def test_cohens_kappa_matches_the_worked_examples(table, kappa):
    assert cohen_kappa(*two_raters(*table)) == pytest.approx(kappa, abs=5e-5)


@pytest.mark.parametrize("a, b, kappa", [
    (["x", "x", "x"], ["x", "x", "x"], None),  # one category throughout: chance explains everything
    ([], [], None),
    (["a", "b", "c", "a"], ["a", "b", "c", "a"], 1.0),
    (["a", "b", "c"], ["b", "c", "a"], -0.5),
])
def test_cohens_kappa_edge_cases(a, b, kappa):
    assert cohen_kappa(a, b) == (kappa if kappa is None else pytest.approx(kappa))


# --- Fleiss' kappa: Wikipedia's worked example (10 subjects, 14 raters, 5 categories) -----------

FLEISS_EXAMPLE = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                  [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


@pytest.mark.parametrize("counts, kappa", [
    (FLEISS_EXAMPLE, 0.210),  # P-bar 0.378, P-bar-e 0.213
    ([[3, 0], [0, 3], [3, 0]], 1.0),
    ([[2, 1], [1, 2]], -1 / 3),
    ([[3, 0], [3, 0]], None),
    ([], None),
])
def test_fleiss_kappa_matches_the_worked_example(counts, kappa):
    got = fleiss_kappa(counts)
    assert got == (None if kappa is None else pytest.approx(kappa, abs=5e-4))


def test_fleiss_per_category_kappas_average_to_the_overall_one():
    per = fleiss_kappa_per_category(FLEISS_EXAMPLE)
    share = [sum(r[j] for r in FLEISS_EXAMPLE) / 140 for j in range(5)]
    assert share == pytest.approx([0.143, 0.200, 0.279, 0.150, 0.229], abs=5e-4)
    weights = [p * (1 - p) for p in share]
    assert sum(k * w for k, w in zip(per, weights)) / sum(weights) == pytest.approx(fleiss_kappa(FLEISS_EXAMPLE))
    two = [[2, 1], [3, 0], [0, 3], [1, 2]]  # with two categories each one's kappa is the overall kappa
    assert fleiss_kappa_per_category(two) == pytest.approx([fleiss_kappa(two)] * 2)
    assert fleiss_kappa_per_category([[3, 0], [2, 1]])[0] is not None
    assert fleiss_kappa_per_category([[3, 0, 0], [2, 1, 0]])[2] is None  # nobody used it


@pytest.mark.parametrize("counts", [[[2, 1], [1, 1]], [[1, 0]], [[1, 1], [1, 1, 0]]])
def test_fleiss_kappa_refuses_uneven_tables(counts):
    with pytest.raises(ValueError):
        fleiss_kappa(counts)


@pytest.mark.parametrize("kappa, words", [(None, "undefined"), (-0.2, "poor"), (0.1, "slight"), (0.3, "fair"),
                                          (0.5, "moderate"), (0.7, "substantial"), (0.95, "almost perfect")])
def test_kappa_in_words(kappa, words):
    assert describe(kappa) == words


def label(result_id, annotator, category):
    return Label(id=0, result_id=result_id, annotator=annotator, category=category, note="", updated_at="")


def test_agreement_of_two_annotators_is_cohens_over_the_cases_both_labelled():
    labels = [label(1, "ana", "gist"), label(2, "ana", "look-up"), label(3, "ana", "pagination"),
              label(1, "ben", "gist"), label(2, "ben", "look-up"), label(3, "ben", "dataset"),
              label(4, "ana", "gist")]  # case 4: ana only, not compared
    result = agreement(labels, categories=["pagination", "gist", "look-up", "dataset", "other"])
    assert result["statistic"] == "Cohen's kappa" and result["annotators"] == ["ana", "ben"]
    assert result["cases"] == 3 and result["observed"] == pytest.approx(2 / 3)
    assert result["kappa"] == pytest.approx(4 / 7)  # p_o 2/3, p_e 2/9
    per = {c["category"]: c for c in result["categories"]}
    assert per["gist"]["kappa"] == pytest.approx(1.0) and per["gist"]["labels"] == 2
    assert per["other"]["kappa"] is None and per["other"]["labels"] == 0
    assert [c["category"] for c in result["categories"]] == ["pagination", "gist", "look-up", "dataset", "other"]
    assert disagreements(labels) == [{"result_id": 3, "labels": {"ana": "pagination", "ben": "dataset"}}]


def test_agreement_of_three_annotators_is_fleiss():
    labels = [label(r, who, c) for r, row in enumerate([("a", "a", "a"), ("a", "b", "a"), ("b", "b", "b")])
              for who, c in zip(("ana", "ben", "cy"), row)]
    result = agreement(labels)
    assert result["statistic"] == "Fleiss' kappa" and result["cases"] == 3
    assert result["kappa"] == pytest.approx(fleiss_kappa([[3, 0], [2, 1], [0, 3]]))
    assert agreement(labels, ["ana", "cy"])["statistic"] == "Cohen's kappa"
    assert agreement(labels, ["ana", "cy"])["kappa"] == pytest.approx(1.0)


def test_agreement_needs_two_annotators_with_a_case_in_common():
    assert agreement([label(1, "ana", "a")])["statistic"] is None
    apart = agreement([label(1, "ana", "a"), label(2, "ben", "a")])
    assert apart["statistic"] is None and apart["cases"] == 0


# --- the case table ----------------------------------------------------------------------------

def result(rid, method="readagent-p", *, q="q1", doc="d1", run=0, choice="A", gold="A", error=None, options=True,
           rating=None, rougeL=None, answer="", answered=1, fallbacks=0, difficult=False, question=None, lookups=2):
    return EvalResult(
        id=rid, eval_id=1, run_index=run, doc_id=doc, question_id=q, method=method, ask_run_id=100 + rid,
        question=question or f"Question {q}?", options=("alpha", "beta", "gamma", "delta") if options else (),
        gold=gold if options else None, references=() if options else ("the reference",),
        answer=answer or (f"({choice})" if choice else ""), choice=choice if options and not error else None,
        correct=int(choice == gold) if options and not error else None, rating=rating, rouge1=rougeL, rouge2=rougeL,
        rougeL=rougeL, compression_rate=50.0, lookups=lookups, pages_looked_up=tuple(range(lookups)),
        response_words=3, words_consumed=10, llm_calls=0, fallbacks=fallbacks, answered=answered, error=error,
        meta={"difficult": difficult})


ROWS = [result(1, q="q1", choice="B"), result(2, "gistmem", q="q1", choice="B"), result(3, "full", q="q1"),
        result(4, q="q2", doc="d2", choice=None), result(5, "gistmem", q="q2", doc="d2", error="timed out"),
        result(6, q="q3", question="Why did the army march north?", choice="C", fallbacks=1, difficult=True),
        result(7, "gistmem", q="q3", choice="C")]
TITLES = {"d1": "Off Course", "d2": "Alice"}


@pytest.mark.parametrize("row, kind", [
    (result(1), "right"), (result(1, choice="B"), "wrong"), (result(1, choice=None), "unparseable"),
    (result(1, error="boom"), "error"), (result(1, "memwalker", answered=0, choice=None), "no answer"),
    (result(1, options=False, rating="exact"), "right"), (result(1, options=False, rating="partial"), "partial match"),
    (result(1, options=False, rating="none"), "no match"), (result(1, options=False, rougeL=35.0), "right"),
    (result(1, options=False, rougeL=5.0), "low ROUGE-L"),
])
def test_failure_kinds(row, kind):
    assert failure_kind(row) == kind


@pytest.mark.parametrize("kwargs, ids", [
    ({}, [5, 4, 2, 1, 7, 6]),  # failures, by document title (Alice first), question, method
    ({"show": "everything"}, [5, 4, 3, 2, 1, 7, 6]),
    ({"show": "unparseable answer"}, [4]),
    ({"show": "pages chosen by a fallback"}, [6]),
    ({"show": "difficult questions"}, [6]),
    ({"show": "methods disagree", "order": "method"}, [3, 2, 1]),
    ({"methods": ["gistmem"]}, [5, 2, 7]),
    ({"docs": ["d2"]}, [5, 4]),
    ({"search": "ARMY north"}, [6]),
    ({"search": "alice timed"}, [5]),
    ({"search": "reasoning"}, [1]),  # a label's category
    ({"search": "nothing like this"}, []),
    ({"labelled": "unlabelled"}, [5, 4, 2, 7, 6]),
    ({"labelled": "labelled by me", "annotator": "ana"}, [1]),
    ({"labelled": "not labelled by me", "annotator": "ben"}, [5, 4, 2, 7, 6]),
    ({"labelled": "annotators disagree"}, [1]),
    ({"order": "failure kind"}, [5, 4, 2, 7, 1, 6]),
    ({"order": "label status"}, [2, 4, 5, 6, 7, 1]),
])
def test_find_cases_filters_searches_and_orders(kwargs, ids):
    labels = [label(1, "ana", "reasoning"), label(1, "ben", "wrong look-up")]
    assert [r.id for r in find_cases(ROWS, labels, titles=TITLES, **kwargs)] == ids


def test_methods_disagree_is_one_pass_and_agrees_with_the_pairwise_definition():
    small = ROWS + [result(8, q="q4"), result(9, "gistmem", q="q4")]
    assert disagreeing_ids(small) == {r.id for r in small if methods_disagree(r, small)}
    many = [result(i, ("readagent-p", "gistmem", "full")[i % 3], q=f"q{i // 3}", choice="ABCD"[i % 4])
            for i in range(15_000)]
    kept = find_cases(many, [], show="methods disagree")  # one pass (benchmarks/inspect_scale.py times it)
    assert len(kept) == 15_000  # every question has two answers


def test_case_table_rows_say_what_an_annotator_needs():
    labels = [label(1, "ana", "reasoning"), label(1, "ben", "wrong look-up"), label(2, "ana", "gist"),
              label(6, "ana", "pagination"), label(6, "ben", "pagination")]
    cases = find_cases(ROWS, labels, show="everything", titles=TITLES)
    table = case_table_rows(cases, labels, annotator="ana", current=2, titles=TITLES, first_position=11)
    by_id = {r["result"]: r for r in table}
    assert [r["#"] for r in table] == list(range(11, 18))
    assert by_id[1]["labels"] == "annotators disagree" and by_id[2]["labels"] == "you: gist"
    assert by_id[6]["labels"] == "2 agree: pagination" and by_id[3]["labels"] == "unlabelled"
    assert by_id[2][""] == "▶" and by_id[1][""] == ""
    assert by_id[1]["gold"] == "(A) alpha" and by_id[1]["prediction"] == "(B) beta" and by_id[1]["failure"] == "wrong"
    assert by_id[4]["prediction"] == "(no option chosen)" and by_id[5]["prediction"] == ""
    assert by_id[1]["method"] == "ReadAgent-P" and by_id[4]["document"] == "Alice"


def test_label_counts_by_category_and_method():
    labels = [label(1, "ana", "reasoning"), label(1, "ben", "reasoning"), label(2, "ana", "reasoning"),
              label(99, "ana", "gone")]
    assert label_counts(labels, {r.id: r for r in ROWS}) == [
        {"category": "reasoning", "method": "gistmem", "labels": 1},
        {"category": "reasoning", "method": "readagent-p", "labels": 2}]


# --- Evaluate: settings, spread, comparison, time left ------------------------------------------

@pytest.mark.parametrize("method, params, says", [
    ("bm25", None, "k = 5"), ("bm25", {"top_k": 3}, "k = 3"), ("first-words", None, "first 6000 words"),
    ("last-words", {"words": 500}, "last 500 words"), ("readagent-p", None, "max pages 5"),
    ("readagent-s", {"max_pages": 2}, "max pages 2"), ("gistmem", None, ""), ("full", {"anything": 1}, ""),
    ("bm25", {"top_k": 0}, "k = 0"),  # stored by another version: said as stored
])
def test_each_method_names_its_setting(method, params, says):
    assert method_setting(method, params) == says


@pytest.mark.parametrize("value, runs, shown", [(0.0, 1, "—"), (None, 3, "—"), (2.5, 2, "2.50"), (0.0, 2, "0.00")])
def test_a_spread_needs_two_runs(value, runs, shown):
    assert spread(value, runs) == shown


def test_one_run_has_no_spread(store):
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:3])]
    eval_id = evaluate(store, OFFLINE, docs, ["gistmem", "bm25"], dataset="quality")
    assert all(r["accuracy"] is not None and r["accuracy_std"] is None for r in summarize(store, eval_id))


def test_comparing_two_evaluations_finds_the_answers_that_changed():
    a = [result(1, q="q1", choice="B"), result(2, q="q2"), result(3, q="q3", choice="C"), result(4, q="q4"),
         result(5, "gistmem", q="q1")]
    b = [result(11, q="q1"), result(12, q="q2", choice="B"), result(13, q="q3", choice="D"), result(14, q="q4"),
         result(16, q="q9")]
    diff = compare(a, b)
    assert (diff["common"], diff["only_a"], diff["only_b"]) == (4, 1, 1)
    [m] = diff["methods"]
    assert (m["questions"], m["both right"], m["fixed"], m["broken"], m["both wrong"], m["answer changed"]) == \
        (4, 1, 1, 1, 1, 3)
    changed = {c["question_id"]: c for c in diff["changed"]}
    assert set(changed) == {"q1", "q2", "q3"}
    assert changed["q1"]["a"] == "(B) beta" and changed["q1"]["b"] == "(A) alpha" and changed["q1"]["b_right"]
    assert not changed["q3"]["a_right"] and not changed["q3"]["b_right"]


@pytest.mark.parametrize("args, left", [
    ((0, 100, 5.0), None), ((10, 100, 5.0), 45.0), ((60, 100, 10.0, 50), 40.0), ((100, 100, 3.0), 0.0),
    ((50, 100, 0.0, 50), None),
])
def test_time_left_at_the_pace_so_far(args, left):
    assert time_left(*args) == left


@pytest.mark.parametrize("seconds, says", [(None, ""), (2, "a few seconds"), (42.4, "about 42 s"),
                                           (200, "about 3 min 20 s"), (1260, "about 21 min"),
                                           (7500, "about 2 h 5 min")])
def test_durations_in_words(seconds, says):
    assert say_duration(seconds) == says


# --- charts -------------------------------------------------------------------------------------

def test_lookups_are_counted_in_whole_numbers_with_the_zero_bar():
    from components.charts import lookup_counts, lookups_per_question

    rows = [result(1, lookups=0), result(2, lookups=3), result(3, "gistmem", lookups=0), result(4, error="x")]
    counts = lookup_counts(rows)
    assert list(counts[counts.method == "ReadAgent-P"]["look-ups"]) == [0, 1, 2, 3]
    assert list(counts[counts.method == "ReadAgent-P"]["questions"]) == [1, 0, 0, 1]
    assert list(counts[counts.method == "GistMem"]["questions"]) == [1, 0, 0, 0]
    axis = lookups_per_question(rows).layout.xaxis
    assert axis.dtick == 1 and axis.range[0] < -0.5


def test_the_heatmap_marks_the_open_case():
    from components.charts import pages_reread

    rows = [result(i, q=f"q{i}", question=f"<b>Q{i}</b>") for i in range(60)]
    fig = pages_reread(rows, "ReadAgent-P", current=45)
    names = list(fig.data[0].y)
    assert len(names) == 40 and any(n.endswith("◀ this case") and n.startswith("Q46") for n in names)
    assert len(fig.layout.shapes) == 1 and "40 of 60" in fig.layout.title.text
    assert "&lt;b&gt;" in fig.data[0].customdata[0][0]


# --- the store: labels by every annotator, runs grouped under their evaluation, paging ----------

@pytest.fixture
def evaluated(store):
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:4])]
    eval_id = evaluate(store, OFFLINE, docs, ["gistmem", "bm25"], dataset="quality")
    return store, eval_id


def test_runs_list_an_evaluations_question_runs_under_it(evaluated):
    from core.methods.ask import ask
    from core.methods.base import Question

    store, eval_id = evaluated
    rows = store.eval_results(eval_id)
    doc_id = rows[0].doc_id
    own = ask(store, OFFLINE, doc_id, Question("Who is there?"), method="full").run.id
    listed = store.runs_page()
    builds = [r.id for r in listed if r.kind == "build"]
    assert [r.id for r in listed] == sorted([own, eval_id, *builds], reverse=True) and len(builds) == 1
    assert not {r.ask_run_id for r in rows} & {r.id for r in listed}
    assert next(r for r in listed if r.id == eval_id).results == 8
    assert store.count_runs() == len(listed) == 3
    assert [r.id for r in store.runs_page(kind="eval")] == [eval_id] and store.count_runs(kind="ask") == 1
    assert [r.id for r in store.runs_page(search="Who is there")] == [own]
    assert store.count_eval_question_runs(eval_id) == 8
    page = store.eval_question_runs(eval_id, offset=2, limit=3)
    assert [r.id for r in page] == sorted(r.ask_run_id for r in rows)[2:5]
    assert {r.result_id for r in page} <= {r.id for r in rows} and all(r.kind == "ask" for r in page)
    everyone = store.eval_question_runs(eval_id, limit=100)  # the evaluation's question runs, and no others
    assert rows[0].ask_run_id in {r.id for r in everyone} and own not in {r.id for r in everyone}
    assert [r.id for r in store.runs_page(limit=1, offset=2)] == [r.id for r in listed][2:3]


def test_a_question_asked_with_several_methods_is_one_entry_and_filters_by_document(evaluated):
    from core.methods.ask import ask
    from core.methods.base import Question

    store, eval_id = evaluated
    doc_id = store.eval_results(eval_id)[0].doc_id
    question = Question("Who is there?")
    compared = [ask(store, OFFLINE, doc_id, question, method=m, group="g1").run.id for m in ("full", "bm25", "gistmem")]
    alone = ask(store, OFFLINE, doc_id, question, method="full").run.id
    questions = store.runs_page(kind="ask")
    assert [r.id for r in questions] == [alone, compared[0]] and store.count_runs(kind="ask") == 2
    row = questions[1]
    assert row.group_ids == tuple(compared) and row.group_methods == ("full", "bm25", "gistmem")
    assert questions[0].group_ids == ()
    assert store.group_runs(compared[2]) == compared and store.group_runs(alone) == [alone]
    assert store.count_runs(doc_id=doc_id) == 3 and store.count_runs(doc_id="no-such-document") == 0  # two entries, the build
    assert [r.id for r in store.runs_page(doc_id=doc_id, kind="ask")] == [alone, compared[0]]


def test_every_annotators_label_is_exported_and_the_version_changes_with_the_results(evaluated):
    store, eval_id = evaluated
    first, second = store.eval_results(eval_id)[:2]
    version = store.eval_results_version(eval_id)
    assert version == (8, max(r.id for r in store.eval_results(eval_id)))
    store.save_label(first.id, "ana", "reasoning", "")
    store.save_label(first.id, "ben", "pagination", "why <b>not</b>")
    store.save_label(second.id, "ben", "other", "")
    cases = labelled_cases(store, eval_id)
    assert [(c["result_id"], c["annotator"], c["category"]) for c in cases] == [
        (first.id, "ana", "reasoning"), (first.id, "ben", "pagination"), (second.id, "ben", "other")]
    assert cases[1]["note"] == "why <b>not</b>" and cases[1]["question"] == first.question
    assert cases[0]["options"] == first.options and cases[0]["ask_run_id"] == first.ask_run_id
    store.add_eval_result(eval_id=eval_id, run_index=1, doc_id=first.doc_id, question_id="extra", method="full",
                          question="?", options=[], references_=[], meta={})
    assert store.eval_results_version(eval_id) != version


def test_the_indexes_for_screens_at_scale_exist(store):
    indexes = {tuple(i.columns) for t in ("eval_results", "runs") for i in store.db[t].indexes}
    assert {("ask_run_id",), ("eval_id", "ask_run_id"), ("kind", "id")} <= indexes
