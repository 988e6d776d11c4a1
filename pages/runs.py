"""Runs: every build and question, newest first, reopened exactly as it happened."""
import pandas as pd
import streamlit as st

from components.entry import through_app
from components.ask_view import render_ask_result, render_comparison
from components.pages_view import render_pages
from components.state import current_engine, get_store, open_document, open_evaluation
from components.timeline_view import render_build_timeline
from components.trace_view import render_step_table
from components.ui import error_text, md, model_name, show_me
from core.errors import GistError
from core.jobs import start_job
from core.resume import RESUMABLE, check_resumable, resume_run
from core.status import FAILED, INTERRUPTED, RUNNING, STOPPED
from core.methods.readagent.memory import load_memory
from core.methods.ask import load_ask
from core.report import report_html
from core.store.records import Run, RunListing
from core.samples import find_question, paper_lookup

through_app()

store = get_store()
st.title("Runs")
st.caption("Every build and question is stored with its prompts, replies and decisions; a run reopens "
           "from the database as it was, with no model needed.")

PAGE = 100  # runs listed at once; an evaluation's question runs are listed under it, a page at a time
KINDS = {"every kind": None, "builds": "build", "questions": "ask", "memory trees": "tree", "evaluations": "eval"}
WHAT = {"build": "build gist memory", "tree": "build memory tree", "ask": "question", "eval": "evaluation"}
EVERY_DOCUMENT = ""
documents = {d.id: d.title for d in store.list_documents()}
l1, l2, l3, l4 = st.columns([2, 3, 4, 2], vertical_alignment="bottom")
kind = KINDS[l1.selectbox("Show", list(KINDS), key="runs_kind")]
doc_id = l2.selectbox("Document", [EVERY_DOCUMENT, *documents], key="runs_doc",
                      format_func=lambda d: documents.get(d, d) if d else "every document") or None
search = l3.text_input("Search", key="runs_search", placeholder="words from the question, document, method or engine")
total = store.count_runs(kind=kind, search=search.strip(), doc_id=doc_id)
if not total:
    st.info("No runs yet. Build a gist memory on **Read** or ask a question on **Ask**."
            if kind is None and not search and not doc_id else "No run matches.")
    st.stop()
pages = -(-total // PAGE)
page_no = int(l4.number_input(f"Page (of {pages})", 1, pages, key="runs_page")) if pages > 1 else 1
runs = store.runs_page(kind=kind, search=search.strip(), doc_id=doc_id, offset=(page_no - 1) * PAGE, limit=PAGE)


def methods_of(r: RunListing) -> str:
    """The method, or a comparison's methods in the order they answered."""
    return ", ".join(r.group_methods) if r.group_ids else r.method


def what_of(r: RunListing) -> str:
    return f"comparison of {len(r.group_ids)} methods" if len(r.group_ids) > 1 else WHAT.get(r.kind, r.kind)


def seconds_of(r: RunListing | Run) -> str:
    return RUNNING if r.status == RUNNING else f"{r.seconds:.1f}" if r.seconds is not None else ""


def build_settings_text(params: dict) -> str:
    """A build's settings as a reader says them, not as they are stored."""
    if params.get("fit_tokens"):
        return (f"fitted to a {params['fit_tokens']:,}-token window from gist memory {params.get('from_memory')} "
                "(pages merged, App. I; gists gisted again, App. G.3)")
    parts = [f"preset {params.get('preset', '?')} ({params.get('min_words', '?')}–{params.get('max_words', '?')} words "
             "a page)",
             "chapter headings end pages" if params.get("hard_breaks", True) else "pages may cross chapter headings"]
    if params.get("conditional"):
        parts.append(f"gists written knowing the question “{params['conditional']}” (App. G.1)")
    if (params.get("concurrency") or 0) > 1:
        parts.append(f"up to {params['concurrency']} model calls at once")
    if params.get("resumed"):
        parts.append("resumed")
    return " · ".join(parts)


def describe(r: RunListing) -> str:
    question = r.question.strip()
    parts = [f"#{r.id}", what_of(r), methods_of(r), r.title or r.doc_id or "",
             question[:70] + ("…" if len(question) > 70 else ""),
             f"{r.results} question runs" if r.kind == "eval" else "", r.status]
    return " · ".join(p.strip() for p in parts if p and p.strip())


st.caption(f"{total:,} run{'' if total == 1 else 's'}, newest first" + (f" · page {page_no} of {pages}" if pages > 1 else "")
           + " · a question asked with several methods is one comparison · an evaluation's question runs are "
             "listed under it")
st.dataframe(pd.DataFrame([{
    "run": r.id, "kind": what_of(r) + (f" · {r.results} question runs" if r.kind == "eval" else ""),
    "document": r.title or r.doc_id or "", "method": methods_of(r), "engine": model_name(r.engine_label),
    "question": r.question, "status": r.status + (f" · {seconds_of(r)} s" if seconds_of(r) not in ("", RUNNING) else ""),
    "started": (r.started_at or "")[:16].replace("T", " "),
} for r in runs]), hide_index=True, width="stretch", height=min(240, 35 * (len(runs) + 1) + 3), key="runs_table",
    column_config={"run": st.column_config.NumberColumn(width=50), "kind": st.column_config.TextColumn(width=125),
                   "document": st.column_config.TextColumn(width=110), "method": st.column_config.TextColumn(width=105),
                   "engine": st.column_config.TextColumn(width=115), "question": st.column_config.TextColumn(width=180),
                   "status": st.column_config.TextColumn(width=105),
                   "started": st.column_config.TextColumn("started (UTC)", width=120)})

ids = [r.id for r in runs]
by_id = {r.id: r for r in runs}
run_id = st.selectbox("Open run", ids, format_func=lambda i: describe(by_id[i]), key="runs_open",
                      on_change=show_me, args=("run-view",))  # the run opened is brought into view
if by_id[run_id].kind == "eval" and by_id[run_id].results:
    grouped = store.count_eval_question_runs(run_id)
    with st.expander(f"The {grouped:,} question runs of evaluation #{run_id} (select one to open it)"):
        q_pages = -(-grouped // PAGE)
        q_page = int(st.number_input(f"Page (of {q_pages})", 1, q_pages, key=f"runs_q_page_{run_id}")) \
            if q_pages > 1 else 1
        question_runs = store.eval_question_runs(run_id, offset=(q_page - 1) * PAGE, limit=PAGE)
        picked = st.dataframe(pd.DataFrame([{
            "run": q.id, "method": q.method, "document": q.title or q.doc_id or "", "question": q.question,
            "repeat": q.run_index + 1, "status": q.status, "seconds": q.seconds} for q in question_runs]),
            hide_index=True, width="stretch", height=280, key=f"runs_questions_{run_id}_{q_page}", on_select="rerun",
            selection_mode="single-row")
        if picked.selection.rows:
            run_id = question_runs[picked.selection.rows[0]].id
run = store.get_run(run_id)
st.html('<div id="run-view"></div>')
if run.kind in RESUMABLE and run.status in (STOPPED, INTERRUPTED, FAILED):
    st.warning(f"This {run.kind} is {run.status}: what it made is kept. Resume it to finish; replies already "
               "logged are reused, so no model call is repeated.")
    if st.button("Resume", type="primary", key="runs_resume"):
        try:
            engine = current_engine(store)
            check_resumable(store, run_id, engine)
            if run.kind == "eval":  # Evaluate resumes it, and shows its progress
                open_evaluation(run_id)
                st.switch_page("pages/evaluate.py", query_params={"resume": str(run_id)})
            document = store.get_document(run.doc_id)
            open_document(document, run.memory_id)
            job = start_job(run.kind, f"{document.title}: resume run {run_id}",
                            lambda job: resume_run(store, run_id, engine, cancel=job.cancel))
            with st.spinner(f"Resuming the {run.kind}…"):
                job.wait()
        except GistError as exc:
            st.error(error_text(exc))
        else:
            if job.exception is not None:  # a bug shows a short message; the run row keeps the traceback
                st.error(error_text(job.exception))
            else:
                st.success(f"Finished: the {run.kind} is complete.")
if run.kind == "eval":
    st.subheader(f"Evaluation #{run_id}: {md(run.question)}")
    st.caption(f"{md(run.engine_label)} · methods {md(run.method)} · {run.status}")
    if run.error:
        st.warning(md(run.error))
    if st.button("Open in Evaluate", key="runs_open_eval"):
        open_evaluation(run_id)
        st.switch_page("pages/evaluate.py")
    st.stop()
document = store.get_document(run.doc_id)
if st.button(f"Work on this document ({md(document.title)})", key="runs_open_document"):
    open_document(document, run.memory_id)
    st.switch_page("pages/read.py")
if run.kind == "tree":
    st.subheader(f"Memory tree of {md(document.title)}")
    st.caption(f"{md(run.engine_label)} · {run.status}"
               + (f" · {seconds_of(run)} s" if run.status != RUNNING and run.seconds is not None else ""))
    st.markdown("**Steps** (summaries, level by level)")
    render_step_table(store, [s.trace for s in store.steps(run_id)], key=f"tree{run_id}",
                      by=model_name(run.engine_label))
    st.stop()

if run.kind == "ask" and len(group := store.group_runs(run_id)) > 1:  # a comparison reopens as Ask showed it
    try:
        results = [load_ask(store, r) for r in group]
    except GistError as exc:
        st.warning(f"{error_text(exc)} Error: {md(run.error or 'none recorded')}")
        st.stop()
    st.caption(f"One question asked with {len(results)} methods at once: runs "
               + ", ".join(f"#{r}" for r in group))
    render_comparison(store, document, results, key=f"runs_cmp{group[0]}")
    st.stop()
if run.kind == "ask":
    try:
        result = load_ask(store, run_id)
    except GistError as exc:
        st.warning(f"{error_text(exc)} Error: {md(run.error or 'none recorded')}")
        st.stop()
    gold = find_question(document.meta.get("questions") or [], result.question.text)
    n_pages = store.page_count(result.memory.id) if result.memory else None
    st.download_button("Download report (HTML)", report_html(store, [run_id]), file_name=f"report-run-{run_id}.html",
                       mime="text/html", key="runs_report",
                       help="One self-contained file: the answer, pages re-read, the context and the trace. "
                            "It opens offline.")
    render_ask_result(store, result, n_pages=n_pages, gold=gold, key=f"run{run_id}",
                      paper=paper_lookup(document, result.question.text))
    st.stop()

st.subheader(f"Build of {md(document.title)}")
res = run.result or {}
c1, c2, c3, c4 = st.columns(4)
c1.metric("Status", run.status)
c2.metric("Pages", res.get("pages", "—"))
c3.metric("Model calls", res.get("llm_calls", 0), help=f"{res.get('cached_calls', 0)} replayed from the cache")
c4.metric("Seconds", seconds_of(run) or "—")
st.caption(f"Engine: {md(run.engine_label)} · {md(build_settings_text(run.params))}")
if run.error:
    st.warning(md(run.error))
st.markdown("**Timeline**")
render_build_timeline(store, run_id, key=f"build{run_id}")
steps = [s.trace for s in store.steps(run_id)]
st.markdown("**Steps** (pagination and gists, in the order they finished)")
render_step_table(store, steps, key=f"build{run_id}", by=model_name(run.engine_label))
if run.memory_id:
    try:
        memory = load_memory(store, run.memory_id, document)
    except GistError:
        memory = None
    if memory is not None and memory.pages:
        st.markdown("**Pages**")
        render_pages(memory.pages, key=f"build_pages{run_id}", by=model_name(memory.engine_label))
