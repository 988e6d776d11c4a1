"""Evaluate: run methods over a dataset and read the results in the papers' form."""
import tempfile
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from components.entry import through_app
from components import charts
from components.state import choose_evaluation, current_engine, engine_settings, get_store, open_evaluation
from components.inspect_view import eval_rows
from components.ui import error_text, md, show_me
from core.eval.datasets import BUNDLED, KINDS, load_dataset
from core.errors import GistError
from core.eval.report import (compare, eval_settings, memory_table, method_setting, results_csv, say_duration, spread,
                              summarize, time_left)
from core.eval.runner import EvalRequest, can_resume_here, resume_request, start_eval
from core.jobs import get_job
from core.status import DONE, RUNNING
from core.methods.registry import METHODS

through_app()

# This page's session state: the evaluation job it started or resumed, and the clock of the
# time-left estimate. Runs hands an evaluation over with ?resume=ID (see resume() below).
st.session_state.setdefault("ev_job", None)
st.session_state.setdefault("ev_clock", None)

store = get_store()
st.title("Evaluate")
st.caption("Run methods over a dataset, as the papers do. Each document's gist memory is built once and shared; "
           "results are stored as they come, so a stopped evaluation can be finished later.")

with st.expander("New evaluation", expanded=not store.list_runs(kind="eval", limit=1)):
    source = st.radio("Dataset", ["Bundled sample", "Upload a file"], horizontal=True, key="ev_source")
    if source == "Bundled sample":
        kind = st.selectbox("Sample", list(BUNDLED), format_func=lambda k: BUNDLED[k][1], key="ev_kind")
        upload = None
    else:
        kind = st.selectbox("Format", KINDS, key="ev_upload_kind",
                            help="jsonl: one document per line: {\"title\", \"text\", \"questions\": "
                                 "[{\"question\", \"options\", \"gold\"} or {\"question\", \"answers\"}]}")
        upload = st.file_uploader("Dataset file (.jsonl)", type=["jsonl", "json"], key="ev_upload")
    c1, c2, c3, c4 = st.columns(4)
    limit_docs = c1.number_input("Documents (0 = all)", 0, 1000, 2, key="ev_limit_docs")
    limit_questions = c2.number_input("Questions per document (0 = all)", 0, 1000, 0, key="ev_limit_q")
    runs = c3.number_input("Runs", 1, 5, 1, key="ev_runs", help="Several runs give mean ± standard deviation.")
    concurrency = c4.number_input("Questions at once", 1, 32, 4, key="ev_concurrency")
    methods = st.multiselect("Methods", list(METHODS), default=["readagent-p", "gistmem", "full"],
                             format_func=lambda m: METHODS[m].label, key="ev_methods")
    params: dict[str, dict] = {}  # each method's setting (the paper's tables have a row per setting)
    for name in methods:
        settable = [p for p in METHODS[name].params if p.name != "concurrency"]  # how fast, not what is done
        for col, p in zip(st.columns(max(4, len(settable))) if settable else (), settable):
            label, key = f"{METHODS[name].label}: {p.name.replace('_', ' ')}", f"ev_param_{name}_{p.name}"
            if p.type is int:
                value = col.number_input(label, 1, max(100, 10 * int(p.default)), int(p.default), help=p.help, key=key)
            else:  # text parameters (an embedding model name): empty means the default
                value = col.text_input(label, str(p.default or ""), help=p.help, key=key).strip() or None
            if value is not None:
                params.setdefault(name, {})[p.name] = value
    st.caption(f"Engine: {md(engine_settings().label)}. Offline results are labelled offline and are never "
               "shown as a model's.")
    if st.button("Run evaluation", type="primary", disabled=not methods, key="ev_run"):
        try:
            if upload is not None:
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / upload.name
                    path.write_bytes(upload.getvalue())
                    docs = load_dataset(kind, path, limit_docs=limit_docs or None)
                name = upload.name
            elif source == "Upload a file":
                raise GistError("Choose a dataset file to upload first.")
            else:
                docs, name = load_dataset(kind, limit_docs=limit_docs or None), BUNDLED[kind][0]
            if limit_questions:
                docs = [type(d)(d.document, d.questions[:limit_questions]) for d in docs]
            request = EvalRequest(docs, methods, kind, name, int(runs), int(concurrency), params=params,
                                  limit_questions=limit_questions or None)
            st.session_state.ev_job = start_eval(store, current_engine(store), request).id
            show_me("ev-progress")  # the progress below the form, in view
        except GistError as exc:
            st.error(error_text(exc))


def left_text(job_id: int, stage: str, done: int, total: int) -> str:
    """ " · about 2 min left" at the pace of this stage so far (a resumed evaluation's earlier answers
    do not count toward the pace)."""
    clock = st.session_state.ev_clock
    if not clock or clock["job"] != job_id or clock["stage"] != stage:
        clock = st.session_state.ev_clock = {"job": job_id, "stage": stage, "t": time.monotonic(), "done": done}
    left = time_left(done, total, time.monotonic() - clock["t"], clock["done"])
    return f" · {say_duration(left)} left" if left else " · estimating the time left…" if total > done else ""


@st.fragment(run_every=0.5)
def live(job_id: int) -> None:
    job = get_job(job_id)
    done = job.progress
    if done.stage == "building":
        st.progress(done.done / max(1, done.total or 1),
                    text=f"Building gist memories: {done.done} of {done.total or '…'} documents"
                         + (left_text(job_id, "building", done.done, done.total) if done.total else ""))
    else:
        st.progress(done.done / max(1, done.total), text=f"{done.done} of {done.total} answers"
                    + left_text(job_id, "asking", done.done, done.total))
    if job.finished:
        if done.eval_id is not None:
            open_evaluation(done.eval_id)
        st.rerun()


def resume(eval_id: int) -> None:
    """Finish a stopped evaluation in the background: answers already made are kept."""
    try:
        st.session_state.ev_job = start_eval(store, current_engine(store), resume_request(store, eval_id),
                                             resume=eval_id).id
    except GistError as exc:
        st.error(error_text(exc))
    else:
        open_evaluation(eval_id)
        st.rerun()


if "resume" in st.query_params:  # from Runs: resume this evaluation here, where its progress shows
    asked = st.query_params.pop("resume")
    if asked.isdigit():
        resume(int(asked))

job = get_job(st.session_state.ev_job)
if job is not None and job.status == RUNNING:
    st.html('<div id="ev-progress"></div>')
    if st.button("Stop", key="ev_stop"):
        job.stop()
        job.wait(30)
        st.rerun()
    live(job.id)
    st.stop()
if job is not None and job.status not in (RUNNING, DONE) and job.exception is not None:
    st.warning(error_text(job.exception))

eval_id = choose_evaluation(store, key="ev_pick",
                            empty="No evaluations yet. Start one above: the QuALITY sample with the offline engine "
                                  "takes seconds.")
run = store.get_run(eval_id)
if run.status != DONE:
    st.warning(f"This evaluation is {run.status}: the table covers the answers made so far.")
    settings = run.params
    if not can_resume_here(store, eval_id):
        st.caption(f"It was started from the command line on a file of your own, so it is finished there: "
                   f"`python -m core eval --dataset {settings.get('dataset')} --path FILE --resume {eval_id}` "
                   "with the same file.")
    elif st.button("Resume", key="ev_resume", help="Answers already made are kept; nothing is asked twice."):
        resume(eval_id)
rows, _ = eval_rows(store, eval_id)  # kept between reruns until the results change
summary = summarize(store, eval_id, rows)
offline = any(r["offline"] for r in summary)
if offline:
    st.info("Offline engine (no LLM): these are lexical baselines, not a model's results. LLM ratings need a model.")

free = any("rouge1" in r for r in summary)
setting = eval_settings(run)
score, score_label = charts.score_of(summary)


def problems(r: dict) -> str:
    """What went wrong for a method, in words (the paper's table has no room for a column each)."""
    counts = (("unparseable", r["unparseable"]), ("no answer", r["no_answer"]),
              ("fallback breaks", r.get("fallback_breaks")), ("fallback gists", r.get("fallback_gists")),
              ("errors", r["errors"]))
    return " · ".join(f"{n} {what}" for what, n in counts if n) or "none"


def number(value, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


table = pd.DataFrame([{
    "method": r["method_label"], "setting": setting.get(r["method"], method_setting(r["method"])) or "—",
    "n": r["n"], "runs": r["runs"], "CR % (#LU)": f"{number(r['compression_rate'])} ({number(r['lookups'], 2)})",
    **({"LR-1 / LR-2": f"{number(r.get('lr1'))} / {number(r.get('lr2'))}",
        "R-1 / R-2 / R-L": " / ".join(number(r.get(k)) for k in ("rouge1", "rouge2", "rougeL")),
        f"± std ({score_label})": spread(r.get(f"{score}_std"), r["runs"])} if free
       else {"accuracy %": number(r.get("accuracy")), "± std": spread(r.get("accuracy_std"), r["runs"])}),
    "resp. words": r["response_words"],
    "words consumed": "n/a (offline)" if r["offline"] else f"{r['words_consumed']:,}",
    "problems": problems(r),
} for r in summary])
st.dataframe(table, hide_index=True, width="stretch", key="ev_table", column_config={
    "method": st.column_config.TextColumn(width=105), "setting": st.column_config.TextColumn(width=100),
    "n": st.column_config.NumberColumn(width=45), "runs": st.column_config.NumberColumn(width=45),
    "CR % (#LU)": st.column_config.TextColumn(width=95), "accuracy %": st.column_config.TextColumn(width=80),
    "LR-1 / LR-2": st.column_config.TextColumn(width=95), "R-1 / R-2 / R-L": st.column_config.TextColumn(width=120),
    "resp. words": st.column_config.NumberColumn(width=80), "words consumed": st.column_config.TextColumn(width=110),
    "problems": st.column_config.TextColumn(width="medium", help="Unparseable answers, MemWalker searches with no "
                                            "answer, fallback pause points and gists in the memories read, errors"),
})
st.caption("Settings are the evaluation's own, else the method's defaults (k: pages retrieved; N: words of text; "
           "max pages: the most pages looked up). ± std is the spread across runs: \"—\" with one run. "
           "CR (#LU) is the compression rate and the mean look-ups, as the paper writes them. Problems: unparseable "
           "(no option could be read from the answer), no answer (MemWalker's search ended without one), fallback "
           "breaks and gists (in the gist memories the method read, pause points and gists made by a fallback because "
           "the model's replies were unusable), errors.")
memories = memory_table(store, eval_id)
if memories:
    titles = {d.id: d.title for d in store.list_documents()}
    st.markdown("**Gist memories read** (each once, however many questions read it)")
    st.dataframe(pd.DataFrame([{
        "document": titles.get(m["doc_id"], m["doc_id"]), "memory": m["memory_id"], "pages": m["pages"],
        "fallback breaks": m["fallback_breaks"], "fallback gists": m["fallback_gists"],
        "read by": ", ".join(m["methods"])} for m in memories]), hide_index=True, width="stretch",
        key="ev_memories")
st.download_button("Download every result (CSV)", lambda: results_csv(rows), f"evaluation_{eval_id}.csv",
                   "text/csv", key="ev_csv")

c1, c2 = st.columns(2)
for place, fig, key in ((c1, charts.tradeoff(summary), "ev_tradeoff"), (c2, charts.lookups_per_question(rows), "ev_lookups")):
    if fig is not None:
        place.plotly_chart(fig, width="stretch", key=key)
if not free:
    fig = charts.accuracy_per_document(rows, {d.id: d.title for d in store.list_documents()})
    if fig is not None:
        st.plotly_chart(fig, width="stretch", key="ev_per_doc")
st.caption("Open **Inspect** to go through the failures one by one.")

# --- two evaluations over the same questions ------------------------------------------------------
st.subheader("Compare with another evaluation")
others = [e for e in store.list_runs(kind="eval") if e.id != eval_id]
if not others:
    st.caption("Run a second evaluation over the same questions (another model, engine or setting) to see here "
               "which answers changed.")
else:
    labels = {e.id: f"#{e.id} · {e.question} · {e.method} · {e.engine_label}" for e in others}
    other = st.selectbox("The other evaluation", list(labels), index=None, format_func=labels.get, key="ev_compare",
                         placeholder="Choose an evaluation over the same questions")
    if other is not None:
        diff = compare(rows, store.eval_results(other))
        if not diff["common"]:
            st.info("These two evaluations have no question in common (the same document, question, method and "
                    "run): choose one run over the same dataset and methods.")
        else:
            st.caption(f"{diff['common']} results in both · {diff['only_a']} only in #{eval_id} · "
                       f"{diff['only_b']} only in #{other}. Fixed: wrong in #{eval_id}, right in #{other}; "
                       "broken: the reverse.")
            st.dataframe(pd.DataFrame([{"method": m["label"], "questions": m["questions"],
                                        "both right": m["both right"], "fixed": m["fixed"], "broken": m["broken"],
                                        "both wrong": m["both wrong"], "answer changed": m["answer changed"]}
                                       for m in diff["methods"]]), hide_index=True, width="stretch",
                         key="ev_compare_methods")
            st.markdown(f"**Questions whose answer changed** ({len(diff['changed'])})")
            if diff["changed"]:
                st.dataframe(pd.DataFrame([{
                    "method": METHODS[c["method"]].label, "question": c["question"], "gold": c["gold"],
                    f"#{eval_id}": ("✓ " if c["a_right"] else "✗ ") + c["a"][:200],
                    f"#{other}": ("✓ " if c["b_right"] else "✗ ") + c["b"][:200],
                    "run": c["run_index"] + 1} for c in diff["changed"]]), hide_index=True, width="stretch",
                    key="ev_compare_changed",
                    column_order=["method", "question", f"#{eval_id}", f"#{other}", "gold", "run"],
                    column_config={"question": st.column_config.TextColumn(width="medium"),
                                   f"#{eval_id}": st.column_config.TextColumn(width="medium"),
                                   f"#{other}": st.column_config.TextColumn(width="medium")})
