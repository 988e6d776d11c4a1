"""Runs: every build and question, newest first, reopened exactly as it happened."""
import pandas as pd
import streamlit as st

from components.ask_view import render_ask_result
from components.pages_view import memory_pages, render_pages
from components.state import get_store, open_document
from components.trace_view import render_step_table
from components.ui import md, model_name
from core.errors import GistError
from core.memory import load_memory
from core.methods import load_ask

store = get_store()
st.title("Runs")
st.caption("Every build and question is stored with its prompts, replies and decisions; a run reopens "
           "from the database as it was, with no model needed.")

runs = store.list_runs()
if not runs:
    st.info("No runs yet. Build a gist memory on **Read** or ask a question on **Ask**.")
    st.stop()



def describe(r: dict) -> str:
    what = r["question"] if r["kind"] == "ask" else "build gist memory"
    return (f"#{r['id']} · {r['kind']} · {r.get('method') or ''} · {r.get('title') or r['doc_id']} · "
            f"{(what or '')[:70]} · {r['status']}")


st.dataframe(pd.DataFrame([{
    "run": r["id"], "kind": r["kind"], "document": (r.get("title") or r["doc_id"]),
    "method": r.get("method") or "", "engine": r.get("engine_label") or "", "question": r.get("question") or "",
    "status": r["status"], "started": r["started_at"], "seconds": r.get("seconds"),
} for r in runs]), hide_index=True, width="stretch", height=240, key="runs_table")

ids = [r["id"] for r in runs]
by_id = {r["id"]: r for r in runs}
run_id = st.selectbox("Open run", ids, format_func=lambda i: describe(by_id[i]), key="open_run")
run = store.get_run(run_id)
if run["kind"] == "eval":
    st.subheader(f"Evaluation #{run_id}: {md(run.get('question') or '')}")
    st.caption(f"{md(run.get('engine_label') or '')} · methods {md(run.get('method') or '')} · {run['status']}")
    if run.get("error"):
        st.warning(run["error"])
    if st.button("Open in Evaluate", key="open_eval"):
        st.session_state.eval_id = run_id
        st.switch_page("pages/evaluate.py")
    st.stop()
document = store.get_document(run["doc_id"])
if st.button(f"Work on this document ({document.title})", key="open_run_document"):
    open_document(document, run.get("memory_id"))
    st.switch_page("pages/read.py")
if run["kind"] == "tree":
    st.subheader(f"Memory tree of {md(document.title)}")
    st.caption(f"{md(run.get('engine_label') or '')} · {run['status']} · {run.get('seconds') or 0:.1f} s")
    st.markdown("**Steps** (summaries, level by level)")
    render_step_table(store, [s["data"] for s in store.steps(run_id)], key=f"tree{run_id}",
                      by=model_name(run.get("engine_label") or ""))
    st.stop()

if run["kind"] == "ask":
    try:
        result = load_ask(store, run_id)
    except GistError as exc:
        st.warning(f"{exc} Error: {run.get('error') or 'none recorded'}")
        st.stop()
    questions = document.meta.get("questions") or []
    gold = next((q for q in questions if q["question"] == result.question), None)
    n_pages = len(load_memory(store, result.memory_id, document).pages) if result.memory_id else None
    render_ask_result(store, result, n_pages=n_pages, gold=gold, key=f"run{run_id}")
    st.stop()

st.subheader(f"Build of {md(document.title)}")
res = run.get("result") or {}
c1, c2, c3, c4 = st.columns(4)
c1.metric("Status", run["status"])
c2.metric("Pages", res.get("pages", "—"))
c3.metric("Model calls", res.get("llm_calls", 0), help=f"{res.get('cached_calls', 0)} replayed from the cache")
c4.metric("Seconds", run.get("seconds") or "—")
st.caption(f"Engine: {md(run.get('engine_label') or '')} · settings: {md(run.get('params') or {})}")
if run.get("error"):
    st.warning(run["error"])
steps = [s["data"] for s in store.steps(run_id)]
st.markdown("**Steps** (pagination and gists, in the order they finished)")
render_step_table(store, steps, key=f"build{run_id}", by=model_name(run.get("engine_label") or ""))
if run.get("memory_id"):
    try:
        memory = load_memory(store, run["memory_id"], document)
    except GistError:
        memory = None
    if memory is not None and memory.pages:
        st.markdown("**Pages**")
        render_pages(document, memory_pages(memory), key=f"build_pages{run_id}", by=model_name(memory.engine_label))
