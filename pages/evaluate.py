"""Evaluate: run methods over a dataset and read the results in the papers' form."""
import tempfile
from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

from components.state import choose_evaluation, current_engine, engine_settings, get_store
from components.ui import md
from core.datasets import BUNDLED, KINDS, load_dataset
from core.errors import GistError
from core.evaluate import results_csv, summarize
from core.jobs import DONE, RUNNING, get_job, start_eval
from core.methods import METHODS

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
            job = start_eval(store, current_engine(store), docs, methods, dataset=kind, path=name, runs=int(runs),
                             concurrency=int(concurrency), limit_questions=limit_questions or None)
            st.session_state.eval_job = job.id
        except GistError as exc:
            st.error(str(exc))


@st.fragment(run_every=0.5)
def live(job_id: int) -> None:
    job = get_job(job_id)
    if job.stage == "building":
        st.progress(0.0, text=f"Building gist memories: {job.done} of {job.total or '…'} documents")
    else:
        st.progress(job.done / max(1, job.total), text=f"{job.done} of {job.total} answers")
    if job.status != RUNNING:
        st.session_state.eval_id = job.eval_id
        st.rerun()


job = get_job(st.session_state.get("eval_job"))
if job is not None and job.status == RUNNING:
    if st.button("Stop", key="ev_stop"):
        job.stop()
        job.wait(30)
        st.rerun()
    live(job.id)
    st.stop()
if job is not None and job.status not in (RUNNING, DONE) and job.error:
    st.warning(job.error)

eval_id = choose_evaluation(store, key="ev_pick",
                            empty="No evaluations yet. Start one above: the QuALITY sample with the offline engine "
                                  "takes seconds.")
run = store.get_run(eval_id)
if run["status"] != "done":
    st.warning(f"This evaluation is {run['status']}: the table covers the answers made so far.")
    settings = run.get("params") or {}
    bundled = BUNDLED.get(settings.get("dataset"), ("",))[0] == settings.get("path")
    if bundled and st.button("Resume", key="ev_resume", help="Answers already made are kept; nothing is asked twice."):
        try:
            wanted = set(settings["docs"])
            docs = [d for d in load_dataset(settings["dataset"]) if d.document.id in wanted]
            if settings.get("limit_questions"):
                docs = [type(d)(d.document, d.questions[:settings["limit_questions"]]) for d in docs]
            job = start_eval(store, current_engine(store), docs, settings["methods"], dataset=settings["dataset"],
                             path=settings["path"], runs=settings["runs"], concurrency=settings["concurrency"],
                             params=settings.get("params"), limit_questions=settings.get("limit_questions"),
                             resume=eval_id)
            st.session_state.eval_job = job.id
            st.rerun()
        except GistError as exc:
            st.error(str(exc))
    elif not bundled:
        st.caption(f"Finish it with `python -m core eval --dataset {settings.get('dataset')} --path FILE "
                   f"--resume {eval_id}` and the same file.")
summary = summarize(store, eval_id)
rows = store.eval_results(eval_id)
offline = any(r["offline"] for r in summary)
if offline:
    st.info("Offline engine (no LLM): these are lexical baselines, not a model's results. LLM ratings need a model.")

free = any("rouge1" in r for r in summary)
table = pd.DataFrame([{
    "method": r["method_label"], "n": r["n"], "runs": r["runs"], "CR %": r["compression_rate"], "#LU": r["lookups"],
    **({"LR-1": r.get("lr1"), "LR-2": r.get("lr2"), "R-1": r.get("rouge1"), "R-2": r.get("rouge2"),
        "R-L": r.get("rougeL")} if free else {"accuracy %": r.get("accuracy"), "± std": r.get("accuracy_std")}),
    "resp. words": r["response_words"],
    "words consumed": "n/a (offline)" if r["offline"] else f"{r['words_consumed']:,}",
    "unparseable": r["unparseable"], "errors": r["errors"],
} for r in summary])
st.dataframe(table, hide_index=True, width="stretch", key="ev_table")
st.download_button("Download every result (CSV)", results_csv(rows), f"evaluation_{eval_id}.csv", "text/csv",
                   key="ev_csv")

palette = px.colors.qualitative.Safe
colors = {METHODS[m].label: palette[i % len(palette)] for i, m in enumerate(METHODS)}  # same colour everywhere
score = "accuracy" if not free else ("lr2" if any(r.get("lr2") is not None for r in summary) else "rougeL")
score_label = {"accuracy": "accuracy %", "lr2": "LR-2 %", "rougeL": "ROUGE-L"}[score]
c1, c2 = st.columns(2)
trade = pd.DataFrame([{"method": r["method_label"], "compression rate %": r["compression_rate"],
                       score_label: r.get(score)} for r in summary if r.get(score) is not None])
if not trade.empty:
    fig = px.scatter(trade, x="compression rate %", y=score_label, text="method", color="method",
                     color_discrete_map=colors, title=f"{score_label} vs compression rate (the paper's trade-off)")
    fig.update_traces(textposition="top center", marker_size=12)
    low, high = trade[score_label].min(), trade[score_label].max()
    pad = max(2.0, (high - low) * 0.25)
    fig.update_layout(height=380, showlegend=False, xaxis_range=[-8, 108], yaxis_range=[low - pad, high + pad])
    c1.plotly_chart(fig, width="stretch", key="ev_tradeoff")
answered = pd.DataFrame([{"method": METHODS[r["method"]].label, "look-ups": r["lookups"]} for r in rows
                         if not r["error"] and r["lookups"] is not None])
if not answered.empty:
    fig = px.histogram(answered, x="look-ups", color="method", barmode="group", title="Look-ups per question",
                       color_discrete_map=colors)
    fig.update_layout(height=380)
    c2.plotly_chart(fig, width="stretch", key="ev_lookups")
if not free:
    titles = {d["id"]: d["title"] for d in store.list_documents()}
    per_doc = pd.DataFrame([{"document": titles.get(r["doc_id"], r["doc_id"]), "method": METHODS[r["method"]].label,
                             "correct": r["correct"]} for r in rows if r["correct"] is not None])
    if not per_doc.empty:
        acc = per_doc.groupby(["document", "method"], as_index=False)["correct"].mean()
        acc["accuracy %"] = 100 * acc["correct"]
        fig = px.bar(acc, x="document", y="accuracy %", color="method", barmode="group", title="Accuracy per document",
                     color_discrete_map=colors)
        fig.update_layout(height=380)
        st.plotly_chart(fig, width="stretch", key="ev_per_doc")
st.caption("Open **Inspect** to go through the failures one by one.")
