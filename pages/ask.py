"""Ask: a question, one or more methods, and what each read to answer it."""
import streamlit as st

from components.ask_view import render_ask_result
from components.state import choose_memory, current_engine, engine_settings, get_store, require_document
from components.ui import legend, md
from core.errors import GistError
from core.memory import load_memory
from core.methods import METHODS, ask, load_ask
from core.readagent import Question

store = get_store()
st.title("Ask")
document = require_document(store)
st.caption(f"{md(document.title)} · {document.words:,} words · answers by {md(engine_settings().label)}")

questions = document.meta.get("questions") or []


def use_sample_question() -> None:
    pick = st.session_state.get("sample_question")
    if pick is None:
        return
    q = questions[pick]
    st.session_state.q_text = q["question"]
    st.session_state.q_options = "\n".join(q.get("options") or [])


if questions:
    st.selectbox(f"A question from the data ({document.meta.get('question_source', 'bundled')})",
                 list(range(len(questions))), index=None, placeholder="Pick one, or type your own below",
                 format_func=lambda i: questions[i]["question"], key="sample_question",
                 on_change=use_sample_question)

st.text_area("Question", key="q_text", height=80)
st.text_area("Options (one per line; leave empty for a free-form answer)", key="q_options", height=130)

methods = st.multiselect("Methods (two or more run side by side)", list(METHODS), default=["readagent-p"],
                         format_func=lambda m: METHODS[m].label, key="q_methods")
params: dict[str, dict] = {}
for name in methods:
    spec = METHODS[name]
    if spec.params:
        cols = st.columns(max(4, len(spec.params)))
        for col, p in zip(cols, spec.params):
            label, key = f"{spec.label}: {p.name.replace('_', ' ')}", f"param_{name}_{p.name}"
            if p.type is int:
                value = col.number_input(label, 1, max(100, 10 * int(p.default)), int(p.default), help=p.help, key=key)
            else:  # text parameters (an embedding model name): empty means the default
                value = col.text_input(label, str(p.default or ""), help=p.help, key=key).strip() or None
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

text = (st.session_state.get("q_text") or "").strip()
options = tuple(o.strip() for o in (st.session_state.get("q_options") or "").splitlines() if o.strip())
ready = bool(text and methods and (memory_id is not None or not any(METHODS[m].needs_memory for m in methods)))
if st.button("Run", type="primary", disabled=not ready, key="run_question"):
    runs, question = [], Question(text, options)
    try:
        engine = current_engine(store)
    except GistError as exc:
        st.error(str(exc))
        st.stop()
    for name in methods:
        with st.spinner(f"{METHODS[name].label}…"):
            try:
                result = ask(store, engine, document.id, question, method=name, params=params.get(name),
                             memory_id=memory_id if METHODS[name].needs_memory else None)
            except GistError as exc:
                st.error(f"{METHODS[name].label}: {exc}")
                continue
        runs.append(result.run_id)
    st.session_state.ask_runs = runs
elif not text:
    st.caption("Type a question (or pick one) to run.")

run_ids = st.session_state.get("ask_runs") or []
if not run_ids:
    st.stop()
results = [load_ask(store, r) for r in run_ids]
gold = next((q for q in questions if q["question"] == results[0].question), None)
paper = next((p for p in document.meta.get("paper_lookups") or []
              if gold and p["question_unique_id"] == gold.get("id")), None)
if paper:
    st.info(f"In the paper, ReadAgent with PaLM 2-L re-read pages {', '.join(map(str, paper['readagent_pages']))} "
            f"and chose ({paper['readagent_choice']}); neural retrieval read pages "
            f"{', '.join(map(str, paper['neural_retrieval_pages']))} and chose ({paper['neural_retrieval_choice']}).")
st.subheader(md(results[0].question))
legend()
pages_of = {}
for r in results:
    if r.memory_id and r.memory_id not in pages_of:
        pages_of[r.memory_id] = len(load_memory(store, r.memory_id, document).pages)
if len(results) > 1:
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[r.method_label for r in results], y=[r.words_in_context for r in results],
                           text=[f"CR {r.compression_rate:.0f}%" for r in results], textposition="outside",
                           marker_color="#5c7cfa"))
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=40, b=10), title="Words in context per method",
                      yaxis_title="words")
    st.plotly_chart(fig, width="stretch", key="ask_words_chart")
columns = st.columns(len(results)) if len(results) > 1 else [st.container()]
for col, result in zip(columns, results):
    with col:
        render_ask_result(store, result, n_pages=pages_of.get(result.memory_id), gold=gold, key=f"r{result.run_id}",
                          compact=len(results) > 2)
