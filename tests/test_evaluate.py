"""Datasets, the papers' metrics, and evaluations end to end (offline and through the simulator)."""
import json
import threading
from types import SimpleNamespace

import pytest

from core.eval.datasets import load_dataset
from core.errors import Cancelled, DocumentError
from core.eval.report import format_table, labelled_cases, labels_csv, labels_jsonl, summarize
from core.eval.runner import evaluate
from core.eval.metrics import EXACT, NONE, PARTIAL, mean_std, rouge
from core.eval.raters import combine, parse_permissive, parse_strict, rate
from core.engine import OFFLINE
from core.engine import make_engine
from core.methods.readagent.memory import load_memory
from tests.conftest import CORE_DATA


# --- datasets ------------------------------------------------------------------------------

def test_loaders_read_the_bundled_files():
    quality = load_dataset("quality", CORE_DATA / "eval" / "quality_dev_16.jsonl")
    assert len(quality) == 16 and sum(len(d.questions) for d in quality) == 279
    q = quality[0].questions[0]
    assert len(q.options) == 4 and q.gold in "ABCD"
    qmsum = load_dataset("qmsum", CORE_DATA / "eval" / "qmsum_val_3.jsonl", limit_docs=2)
    assert len(qmsum) == 2 and all(q.references and not q.options for q in qmsum[0].questions)
    assert qmsum[0].document.paragraphs[0].text.startswith("Professor E: ")
    nqa = load_dataset("narrativeqa", CORE_DATA / "eval" / "narrativeqa_valid_mini_2.jsonl")
    assert [d.document.title for d in nqa] == ["An Ideal Husband"]  # Crito ships without its text


@pytest.mark.parametrize("line, says", [
    ('{"text": "x"}', 'needs "text" and "questions"'),
    ('{"text": "Some words here.", "questions": [{"question": "Q?", "options": ["a", "b"]}]}', 'no "gold"'),
    ('{"text": "Some words here.", "questions": [{"question": "Q?", "options": ["a", "b"], "gold": "C"}]}',
     "not one of the 2 options"),
    ('{"text": "Some words here.", "questions": [{"question": "Q?"}]}', '"answers"'),
    ('not json', "is not JSON"),
])
def test_generic_jsonl_errors_say_what_is_wrong(tmp_path, line, says):
    path = tmp_path / "mine.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(DocumentError, match=says):
        load_dataset("jsonl", path)


def test_generic_jsonl_accepts_letters_numbers_and_references(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"title": "Mine", "text": "Alpha beta gamma.\n\nDelta epsilon.", "questions": [
        {"id": "a", "question": "Which?", "options": ["x", "y", "z"], "gold": 2},
        {"id": "b", "question": "Which?", "options": ["x", "y"], "gold": "a"},
        {"id": "c", "question": "What?", "answers": ["one", "two"]}]}) + "\n")
    [doc] = load_dataset("jsonl", path)
    assert [q.gold for q in doc.questions] == ["B", "A", None]
    assert doc.questions[2].references == ("one", "two")


# --- metrics -----------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, value", [
    ("YES", True), ("No.", False), ("yes, it agrees", True), ("**NO**", False),
    ("The answers agree, so yes", True), ("", None), ("Maybe", None), ("It could be yes or no", None),
    ("Does John's answer agree with the ground truth answer? Please answer YES or NO.", None),
])
def test_strict_rater_replies(reply, value):
    parsed = parse_strict(reply)
    assert parsed.value == value and parsed.ok == (value is not None)


@pytest.mark.parametrize("reply, value", [
    ("Yes", EXACT), ("Yes, partially", PARTIAL), ("“Yes, partially”.", PARTIAL), ("No", NONE),
    ("partially", PARTIAL), ("I would say yes, partially.", PARTIAL), ("", None), ("unclear", None),
])
def test_permissive_rater_replies(reply, value):
    assert parse_permissive(reply).value == value


@pytest.mark.parametrize("strict, permissive, level", [
    (True, NONE, EXACT), (False, EXACT, EXACT), (False, PARTIAL, PARTIAL), (False, NONE, NONE),
    (None, PARTIAL, PARTIAL), (None, None, NONE), (True, None, EXACT),
])
def test_either_rater_saying_exact_makes_it_exact(strict, permissive, level):
    assert combine(strict, permissive) == level


def test_rating_takes_the_best_reference_and_stops_at_exact(scripted):
    # reference 1: strict NO, permissive partial; reference 2: strict YES -> exact, no more calls
    engine, backend = scripted(["NO", "Yes, partially", "YES", "No"])
    rating = rate(engine, "Who?", "the British army", ["the French", "the British"])
    assert rating.level == EXACT and rating.best_reference == 1
    assert len(backend.prompts) == 4 and "the British" in backend.prompts[2]


def test_an_unusable_rater_reply_is_re_asked_then_counts_as_no_match(scripted):
    engine, _ = scripted(["hmm", "still unsure", "Yes, partially"])
    rating = rate(engine, "Who?", "someone", ["the British"])
    assert rating.level == PARTIAL
    assert rating.traces[0].outcome == "fallback" and rating.traces[1].outcome == "model"


def test_rouge_matches_the_reference_implementation():
    assert rouge("the british army", ["the British"]) == {"rouge1": 80.0, "rouge2": 66.67, "rougeL": 80.0}
    assert rouge("cats sat", ["dogs ran", "the cats sat down"])["rouge1"] == pytest.approx(66.67)
    assert rouge("", ["anything"])["rouge1"] == 0.0


def test_mean_and_standard_deviation():
    assert mean_std([80.0, 90.0, 100.0]) == (90.0, 10.0)
    assert mean_std([5.0]) == (5.0, 0.0)
    assert mean_std([None]) == (None, None)


# --- evaluations -------------------------------------------------------------------------------

def test_offline_evaluation_on_quality_gives_the_papers_columns(store):
    docs = load_dataset("quality", limit_docs=2)
    eval_id = evaluate(store, OFFLINE, docs, ["readagent-p", "gistmem", "full"], dataset="quality")
    summary = {r["method"]: r for r in summarize(store, eval_id)}
    n = sum(len(d.questions) for d in docs)
    assert all(r["n"] == n and r["offline"] for r in summary.values())
    assert summary["full"]["compression_rate"] == 0.0 and summary["full"]["lookups"] == 0.0
    assert summary["gistmem"]["lookups"] == 0.0 and summary["gistmem"]["compression_rate"] > 70
    assert 0 < summary["readagent-p"]["lookups"] <= 5
    assert all(0 <= r["accuracy"] <= 100 for r in summary.values())
    assert len(store.memories_for(docs[0].document.id)) == 1  # one memory shared by every method
    assert "n/a (offline)" in format_table(list(summary.values()))


def test_a_stopped_evaluation_resumes_without_repeating_calls(store, sim):
    docs = load_dataset("qmsum", limit_docs=1)
    engine = make_engine("openai", store, model="gme-simulator", base_url=sim.base_url, backoff=0.01)
    cancel = threading.Event()
    seen = []

    def stop_after_three(p):
        if p.stage == "asking":
            seen.append(p)
            if len(seen) == 3:
                cancel.set()

    with pytest.raises(Cancelled):
        evaluate(store, engine, docs, ["readagent-p", "gistmem"], dataset="qmsum", concurrency=1,
                 progress=stop_after_three, cancel=cancel)
    eval_id = store.list_runs(kind="eval")[0].id
    assert store.get_run(eval_id).status == "stopped"  # stopped on request, not interrupted
    kept = len(store.eval_results(eval_id))
    assert 3 <= kept < 2 * len(docs[0].questions)
    prompts_before = list(sim.prompts)
    evaluate(store, engine, docs, ["readagent-p", "gistmem"], dataset="qmsum", concurrency=4, resume=eval_id)
    rows = store.eval_results(eval_id)
    assert len(rows) == 2 * len(docs[0].questions)
    assert not set(sim.prompts[len(prompts_before):]) & set(prompts_before)  # nothing asked twice
    summary = summarize(store, eval_id)
    assert all(r["lr1"] is not None and r["rouge1"] is not None and r["words_consumed"] > 0 for r in summary)
    assert store.get_run(eval_id).status == "done"


def test_repeated_runs_ask_again_and_report_spread(store, sim):
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:3])]
    engine = make_engine("openai", store, model="gme-simulator", base_url=sim.base_url, backoff=0.01)
    eval_id = evaluate(store, engine, docs, ["gistmem"], dataset="quality", runs=2)
    answers = [c for c in sim.prompts if "Answer: (C)" in c]
    assert len(answers) == 6  # run 2 did not replay run 1
    [row] = summarize(store, eval_id)
    assert row["runs"] == 2 and row["accuracy_std"] is not None and not row["offline"]


def test_labels_are_kept_per_annotator_and_export_the_whole_case(store):
    docs = load_dataset("quality", limit_docs=1)
    eval_id = evaluate(store, OFFLINE, docs, ["gistmem"], dataset="quality")
    wrong = next(r for r in store.eval_results(eval_id) if not r.correct)
    store.save_label(wrong.id, "ana", "wrong look-up", "first try")
    store.save_label(wrong.id, "ana", "gist lost the detail", "the gist drops the date")
    store.save_label(wrong.id, "ben", "reasoning", "")
    cases = labelled_cases(store, eval_id)
    assert [(c["annotator"], c["category"]) for c in cases] == [("ana", "gist lost the detail"), ("ben", "reasoning")]
    first = json.loads(labels_jsonl(cases).splitlines()[0])
    assert first["question"] == wrong.question and first["gold"] == wrong.gold
    assert first["ask_run_id"] == wrong.ask_run_id and first["note"] == "the gist drops the date"
    assert labels_csv(cases).splitlines()[0].startswith("eval_id,result_id,annotator,category,note")


def test_every_quality_question_has_its_own_id():
    docs = load_dataset("quality")
    ids = [q.id for d in docs for q in d.questions]
    assert len(ids) == len(set(ids)) == 279


def test_resuming_with_another_engine_is_refused(store, sim):
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:2])]
    eval_id = evaluate(store, OFFLINE, docs, ["gistmem"], dataset="quality")
    engine = make_engine("openai", store, model="gme-simulator", base_url=sim.base_url)
    from core.errors import GistError
    with pytest.raises(GistError, match="same engine and model"):
        evaluate(store, engine, docs, ["gistmem"], dataset="quality", resume=eval_id)


# --- what went wrong, counted once, and each row's setting ----------------------------------------

@pytest.mark.parametrize("result, unparseable, no_answer", [
    ({"options": ["a", "b"], "choice": "A", "answered": 1, "error": None}, False, False),
    ({"options": ["a", "b"], "choice": None, "answered": 1, "error": None}, True, False),  # no option read
    ({"options": ["a", "b"], "choice": None, "answered": 0, "error": None}, False, True),  # MemWalker: no answer
    ({"options": ["a", "b"], "choice": None, "answered": None, "error": None}, True, False),  # stored before "answered"
    ({"options": ["a", "b"], "choice": None, "answered": 1, "error": "boom"}, False, False),  # an error, not a reply
    ({"options": [], "choice": None, "answered": 1, "error": None}, False, False),  # free form has no choice
    ({"options": [], "choice": None, "answered": 0, "error": None}, False, True),
])
def test_a_result_is_unparseable_or_no_answer_never_both(result, unparseable, no_answer):
    from core.eval.report import FILTERS, is_unparseable

    result = SimpleNamespace(**result)  # the fields of an EvalResult these read
    assert is_unparseable(result) is unparseable
    assert FILTERS["unparseable answer"](result, [result]) is unparseable
    assert FILTERS["MemWalker: no answer"](result, [result]) is no_answer


def test_a_model_with_unusable_replies_counts_fallbacks_per_memory_and_no_answer_once(scripted, store):
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:3])]
    engine, _ = scripted(handler=lambda prompt: "Hmm.")  # never a label, a gist, a page list or an answer
    eval_id = evaluate(store, engine, docs, ["readagent-p", "bm25", "memwalker", "full"], dataset="quality",
                       concurrency=1)
    summary = {r["method"]: r for r in summarize(store, eval_id)}
    [memory] = store.memories_for(docs[0].document.id)
    pages = load_memory(store, memory.id).pages
    breaks = sum(p.break_by == "fallback" for p in pages)
    gists = sum(p.gist_by == "fallback" for p in pages)
    assert breaks > 0 and gists == len(pages)
    for method in ("readagent-p", "bm25"):  # both read the one memory: its counts, once each
        assert (summary[method]["memories"], summary[method]["fallback_breaks"],
                summary[method]["fallback_gists"]) == (1, breaks, gists)
    assert summary["full"]["fallback_breaks"] is None and summary["full"]["memories"] is None
    assert summary["readagent-p"]["unparseable"] == 3 and summary["readagent-p"]["no_answer"] == 0
    assert summary["memwalker"]["no_answer"] == 3 and summary["memwalker"]["unparseable"] == 0  # once, not twice
    table = format_table(list(summary.values())).splitlines()
    head = table[0].split()
    assert head[:2] == ["method", "setting"] and "no answer" in table[0] and "fallback gists" in table[0]
    memwalker = next(line for line in table if line.startswith("MemWalker"))
    assert memwalker.split()[-4:] == ["0", "3", "—", "—"]
    readagent = next(line for line in table if line.startswith("ReadAgent-P"))
    assert readagent.split()[-4:] == ["3", "0", str(breaks), str(gists)]
    from core.eval.report import memory_table

    assert memory_table(store, eval_id) == [{"memory_id": memory.id, "doc_id": docs[0].document.id,
                                             "pages": len(pages), "fallback_breaks": breaks, "fallback_gists": gists,
                                             "methods": ["BM25 top-k", "ReadAgent-P"]}]


def test_each_row_names_its_setting_and_truncation_reads_6000_words_by_default(store):
    docs = load_dataset("quality", limit_docs=1)
    docs = [type(docs[0])(docs[0].document, docs[0].questions[:2])]
    methods = ["readagent-p", "bm25", "first-words", "last-words"]
    defaults = evaluate(store, OFFLINE, docs, methods, dataset="quality")
    chosen = evaluate(store, OFFLINE, docs, methods, dataset="quality", params={
        "readagent-p": {"max_pages": 2}, "bm25": {"top_k": 3}, "first-words": {"words": 500},
        "last-words": {"words": 700}})
    assert [r["setting"] for r in summarize(store, defaults)] == [
        "max pages 5", "k = 5", "first 6000 words", "last 6000 words"]
    settings = [r["setting"] for r in summarize(store, chosen)]
    assert settings == ["max pages 2", "k = 3", "first 500 words", "last 700 words"]
    table = format_table(summarize(store, chosen))
    assert all(s in table for s in settings)
