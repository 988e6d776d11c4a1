"""Ask: a question, one or more methods, and what each read to answer it: the answers and
figures of every method in one table, then a tab a method for what it read and its trace."""
import uuid

import streamlit as st

from components.entry import through_app
from components.ask_view import render_comparison
from components.state import (choose_memory, current_engine, document_token, engine_settings, get_store,
                              require_document)
from components.ui import bring_into_view, error_text, md, show_me
from components.urlstate import ids_from_url, publish
from core.errors import GistError
from core.status import DONE
from core.methods.ask import ask, load_ask
from core.methods.registry import METHODS
from core.methods.memwalker.tree import TreeSettings, has_tree
from core.methods.base import Question

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
    return run.kind == "ask" and run.doc_id == document.id and run.status == DONE


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
memory = None
if any(METHODS[m].needs_memory for m in methods):
    memory = choose_memory(store, document, key="ask_memory")
    if memory is None:
        st.warning("These methods read a gist memory, and this document has none yet. "
                   "Build one on the **Read** page, or choose Full text.")

def tree_settings(values: dict | None) -> TreeSettings:
    values = values or {}
    defaults = TreeSettings()
    return TreeSettings(values.get("segment_tokens") or defaults.segment_tokens,
                        values.get("max_children") or defaults.max_children)


text = (st.session_state.get("ask_text") or "").strip()
options = tuple(o.strip() for o in (st.session_state.get("ask_options") or "").splitlines() if o.strip())
ready = bool(text and methods and (memory is not None or not any(METHODS[m].needs_memory for m in methods)))
if st.button("Run", type="primary", disabled=not ready, key="ask_run"):
    runs, question = [], Question(text, options)
    group = uuid.uuid4().hex if len(methods) > 1 else None  # the runs of this click are one comparison
    try:
        engine = current_engine(store)
    except GistError as exc:
        st.error(error_text(exc))
        st.stop()
    st.html('<div id="ask-running"></div>')
    bring_into_view("ask-running")  # the progress is where the eye is, however long the form above it
    with st.status(f"Asking {len(methods)} method{'s' if len(methods) > 1 else ''}…", expanded=True) as status:
        for name in methods:
            label = METHODS[name].label
            if name == "memwalker" and not has_tree(store, document, engine, tree_settings(params.get(name))):
                status.write(f"{label}: this document has no memory tree for these settings yet, so MemWalker "
                             "builds one first (a summary of each segment, then of each level up to the root). "
                             "It is kept: the next question reuses it.")
            status.write(f"{label}…")
            try:
                result = ask(store, engine, document.id, question, method=name, params=params.get(name),
                             memory_id=memory.id if METHODS[name].needs_memory else None, group=group)
            except GistError as exc:
                st.error(f"{label}: {error_text(exc, labels.get(name))}")
                continue
            runs.append(result.run.id)
        status.update(label=f"Answered by {len(runs)} of {len(methods)} method{'s' if len(methods) > 1 else ''}",
                      state="complete" if len(runs) == len(methods) else "error", expanded=False)
    show_me("ask-answers")
    st.session_state.ask_runs = {"runs": runs, "doc": document_token()}
elif not text:
    st.caption("Type a question (or pick one) to run.")

held = st.session_state.ask_runs
run_ids = held["runs"] if held and held["doc"] == document_token() else []
publish(runs=run_ids or None)
if not run_ids:
    st.stop()
render_comparison(store, document, [load_ask(store, r) for r in run_ids], key="ask")
