"""Ask: a question, one or more methods, and what each read to answer it: the answers and
figures of every method in one table, then a tab a method for what it read and its trace."""
import streamlit as st

from components.entry import through_app
from components import charts
from components.ask_view import comparison_html, render_ask_result
from components.state import (choose_memory, current_engine, document_token, engine_settings, get_store,
                              require_document)
from components.ui import error_text, legend, md
from components.urlstate import ids_from_url, publish
from core.errors import GistError
from core.status import DONE
from core.methods.readagent.memory import load_memory
from core.methods.ask import ask, load_ask
from core.methods.registry import METHODS
from core.methods.base import Question
from core.report import report_html
from core.samples import find_question, paper_lookup

through_app()

# This page's session state: the runs of the last question asked, with the document they belong to
# ({"runs": [run ids], "doc": document_token()}); the question's widgets keep their own "ask_" keys,
# kept across pages ("session") and, for the question, options and methods, in the URL.
st.session_state.setdefault("ask_runs", None)
KEEP = dict(persist_state="session")
IN_URL = dict(persist_state="session", bind="query-params")

store = get_store()
st.title("Ask")
document = require_document(store)



def answered_here(run_id: int) -> bool:
    """A question run of the open document (a link may name runs of another database)."""
    try:
        run = store.get_run(run_id)
    except GistError:
        return False
    return run["kind"] == "ask" and run["doc_id"] == document.id and run["status"] == DONE


linked = [r for r in ids_from_url("runs") if answered_here(r)]
if linked:  # a reload or a link shows the answers it names
    st.session_state.ask_runs = {"runs": linked, "doc": document_token()}
st.caption(f"{md(document.title)} · {document.words:,} words · answers by {md(engine_settings().label)}")

questions = document.meta.get("questions") or []


def use_sample_question() -> None:
    pick = st.session_state.get("ask_sample")
    if pick is None:
        return
    q = questions[pick]
    st.session_state.ask_text = q["question"]
    st.session_state.ask_options = "\n".join(q.get("options") or [])


if questions:
    st.selectbox(f"A question from the data ({document.meta.get('question_source', 'bundled')})",
                 list(range(len(questions))), index=None, placeholder="Pick one, or type your own below",
                 format_func=lambda i: questions[i]["question"], key="ask_sample",
                 on_change=use_sample_question, **KEEP)

st.text_area("Question", key="ask_text", height=80, **IN_URL)
st.text_area("Options (one per line; leave empty for a free-form answer)", key="ask_options", height=130, **IN_URL)

methods = st.multiselect("Methods (two or more run side by side)", list(METHODS), default=["readagent-p"],
                         format_func=lambda m: METHODS[m].label, key="ask_methods", **IN_URL)
params: dict[str, dict] = {}
labels: dict[str, dict[str, str]] = {}  # per method, a setting's name -> its label here, for error messages
for name in methods:
    spec = METHODS[name]
    if spec.params:
        cols = st.columns(max(4, len(spec.params)))
        for col, p in zip(cols, spec.params):
            label, key = f"{spec.label}: {p.name.replace('_', ' ')}", f"ask_param_{name}_{p.name}"
            labels.setdefault(name, {})[p.name] = label
            if p.type is int:
                value = col.number_input(label, 1, max(100, 10 * int(p.default)), int(p.default), help=p.help, key=key,
                                         **KEEP)
            else:  # text parameters (an embedding model name): empty means the default
                value = col.text_input(label, str(p.default or ""), help=p.help, key=key, **KEEP).strip() or None
            params.setdefault(name, {})[p.name] = value

if "embedding" in methods and engine_settings().kind == "offline":
    st.warning("Neural retrieval needs an embeddings endpoint: choose an OpenAI-compatible server in the "
               "sidebar (OpenAI, vLLM and Ollama serve /v1/embeddings). The offline engine has none.")
memory_id = None
if any(METHODS[m].needs_memory for m in methods):
    memory_id = choose_memory(store, document, key="ask_memory")
    if memory_id is None:
        st.warning("These methods read a gist memory, and this document has none yet. "
                   "Build one on the **Read** page, or choose Full text.")

text = (st.session_state.get("ask_text") or "").strip()
options = tuple(o.strip() for o in (st.session_state.get("ask_options") or "").splitlines() if o.strip())
ready = bool(text and methods and (memory_id is not None or not any(METHODS[m].needs_memory for m in methods)))
if st.button("Run", type="primary", disabled=not ready, key="ask_run"):
    runs, question = [], Question(text, options)
    try:
        engine = current_engine(store)
    except GistError as exc:
        st.error(error_text(exc))
        st.stop()
    for name in methods:
        with st.spinner(f"{METHODS[name].label}…"):
            try:
                result = ask(store, engine, document.id, question, method=name, params=params.get(name),
                             memory_id=memory_id if METHODS[name].needs_memory else None)
            except GistError as exc:
                st.error(f"{METHODS[name].label}: {error_text(exc, labels.get(name))}")
                continue
        runs.append(result.run_id)
    st.session_state.ask_runs = {"runs": runs, "doc": document_token()}
elif not text:
    st.caption("Type a question (or pick one) to run.")

held = st.session_state.ask_runs
run_ids = held["runs"] if held and held["doc"] == document_token() else []
publish(runs=run_ids or None)
if not run_ids:
    st.stop()
results = [load_ask(store, r) for r in run_ids]
gold = find_question(questions, results[0].question)  # quote style and spacing aside
paper = paper_lookup(document, results[0].question)
if paper:
    st.info(f"In the paper, ReadAgent with PaLM 2-L re-read pages {', '.join(map(str, paper['readagent_pages']))} "
            f"and chose ({paper['readagent_choice']}); neural retrieval read pages "
            f"{', '.join(map(str, paper['neural_retrieval_pages']))} and chose ({paper['neural_retrieval_choice']}).")
st.subheader(md(results[0].question))
st.download_button("Download report (HTML)", report_html(store, run_ids), file_name=f"report-runs-{'-'.join(map(str, run_ids))}.html",
                   mime="text/html", key="ask_report",
                   help="One self-contained file: answers, pages re-read, the walk, the context and the trace. "
                        "It opens offline.")
st.html(comparison_html(results, gold))
if gold and gold.get("gold") and results[0].options:
    st.caption(f"The answer is ({gold['gold']}).")
elif gold and gold.get("answers"):
    st.caption("Reference answer: " + md(" / ".join(gold["answers"])))
if len(results) > 1:
    st.plotly_chart(charts.words_in_context(results), width="stretch", key="ask_words_chart")
legend()
pages_of = {}
for r in results:
    if r.memory_id and r.memory_id not in pages_of:
        pages_of[r.memory_id] = len(load_memory(store, r.memory_id, document).pages)
tabs = st.tabs([f"{r.method_label} · #{r.run_id}" for r in results], key="ask_result_tab")
for tab, result in zip(tabs, results):
    with tab:
        render_ask_result(store, result, n_pages=pages_of.get(result.memory_id), gold=gold, key=f"r{result.run_id}",
                          compact=True, paper=paper)
