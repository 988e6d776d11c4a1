"""Inspect: the annotators' screen. Filter an evaluation's results, read each case with everything
the model saw, compare methods that disagree, and label failures."""
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from components.ask_view import render_ask_result
from components.state import choose_evaluation, get_store
from components.ui import REREAD, md
from core.errors import GistError
from core.evaluate import DEFAULT_CATEGORIES, labelled_cases, labels_csv, labels_jsonl
from core.memory import load_memory
from core.methods import METHODS, load_ask

store = get_store()
st.title("Inspect")
eval_id = choose_evaluation(store, key="in_eval", empty="No evaluations yet. Run one on the **Evaluate** page, "
                                                        "then come back to go through its failures.")
rows = store.eval_results(eval_id)
titles = {d["id"]: d["title"] for d in store.list_documents()}

# --- annotator and categories ------------------------------------------------------------------
c1, c2 = st.columns([1, 2])
annotator = c1.text_input("Your name (labels are signed with it)", st.session_state.get("annotator", ""),
                          key="in_annotator").strip()
st.session_state.annotator = annotator
categories_text = c2.text_input("Failure categories (comma-separated, editable)",
                                st.session_state.get("categories", ", ".join(DEFAULT_CATEGORIES)), key="in_categories")
st.session_state.categories = categories_text
categories = [c.strip() for c in categories_text.split(",") if c.strip()] or DEFAULT_CATEGORIES

# --- filters -------------------------------------------------------------------------------------
f1, f2, f3 = st.columns(3)
methods = sorted({r["method"] for r in rows})
docs = sorted({r["doc_id"] for r in rows}, key=lambda d: titles.get(d, d))
pick_methods = f1.multiselect("Methods", methods, default=methods, format_func=lambda m: METHODS[m].label,
                              key="in_methods")
pick_docs = f2.multiselect("Documents", docs, default=docs, format_func=lambda d: titles.get(d, d), key="in_docs")
show = f3.selectbox("Show", ["failures (wrong, no match, unparseable, no answer)", "everything", "wrong",
                             "unparseable answer", "pages chosen by a fallback", "MemWalker: no answer",
                             "difficult questions", "methods disagree"], key="in_show")


def failed(r: dict) -> bool:
    if r["error"]:
        return True
    if r["options"]:
        return not r["correct"]
    if r["rating"] is not None:
        return r["rating"] != "exact"
    return (r["rougeL"] or 0) < 20


def disagree(r: dict) -> bool:
    others = [o for o in rows if o["question_id"] == r["question_id"] and o["run_index"] == r["run_index"]
              and o["method"] != r["method"]]
    return any((o["choice"], o["rating"]) != (r["choice"], r["rating"]) for o in others)


keep = {
    "everything": lambda r: True,
    "wrong": lambda r: r["correct"] == 0,
    "unparseable answer": lambda r: bool(r["options"]) and r["choice"] is None and not r["error"],
    "pages chosen by a fallback": lambda r: (r["fallbacks"] or 0) > 0,
    "MemWalker: no answer": lambda r: r["answered"] == 0,
    "difficult questions": lambda r: bool(r["meta"].get("difficult")),
    "methods disagree": disagree,
}.get(show, failed)
shown = sorted((r for r in rows if r["method"] in pick_methods and r["doc_id"] in pick_docs and keep(r)),
               key=lambda r: (titles.get(r["doc_id"], ""), r["question_id"], r["method"], r["run_index"]))
labelled = {(l["result_id"], l["annotator"]): l for l in store.labels(eval_id)}
st.caption(f"{len(shown)} of {len(rows)} results · {len({k[0] for k in labelled})} labelled")
if not shown:
    st.info("Nothing matches these filters.")
    st.stop()

# --- moving through the cases --------------------------------------------------------------------
def move(step: int) -> None:
    st.session_state.in_pos = st.session_state.get("in_pos", 0) + step


position = max(0, min(st.session_state.get("in_pos", 0), len(shown) - 1))
st.session_state.in_pos = position
n1, n2, n3 = st.columns([1, 1, 4])
n1.button("← Previous", disabled=position == 0, key="in_prev", on_click=move, args=(-1,))
n2.button("Next →", disabled=position >= len(shown) - 1, key="in_next", on_click=move, args=(1,))
case = shown[position]
n3.markdown(f"**Case {position + 1} of {len(shown)}** · {md(METHODS[case['method']].label)} · "
            f"{md(titles.get(case['doc_id'], case['doc_id']))} · run {case['run_index'] + 1}")

st.subheader(md(case["question"]))
if case["options"]:
    st.markdown("\n".join(f"- **({'ABCDEFGHIJ'[i]})** {md(o)}" + (" ← gold" if 'ABCDEFGHIJ'[i] == case["gold"] else "")
                          for i, o in enumerate(case["options"])))
else:
    st.caption("Reference answers: " + md(" / ".join(case["references"])))
if case["error"]:
    st.error(f"This question failed: {case['error']}")

# --- labelling ---------------------------------------------------------------------------------------
mine = labelled.get((case["id"], annotator))
with st.form(f"label_{case['id']}", clear_on_submit=False):
    l1, l2 = st.columns([1, 2])
    slot = f"{case['id']}_{annotator}"  # each case and annotator starts from their saved label
    category = l1.selectbox("Failure category", categories, key=f"in_category_{slot}",
                            index=categories.index(mine["category"]) if mine and mine["category"] in categories else 0)
    note = l2.text_area("Note", mine["note"] if mine else "", height=80, key=f"in_note_{slot}")
    if st.form_submit_button("Save label", type="primary"):
        if not annotator:
            st.error("Type your name above first: labels are signed with it.")
        else:
            store.save_label(case["id"], annotator, category, note)
            st.session_state.in_saved = f"Saved: {category}."
            st.rerun()
    if st.session_state.get("in_saved"):
        st.success(st.session_state.pop("in_saved"))
others = [l for (rid, who), l in labelled.items() if rid == case["id"] and who != annotator]
for l in others:
    st.caption(f"{md(l['annotator'])}: {md(l['category'])} — {md(l['note'])}")

# --- the case, and a method that answered differently ------------------------------------------
peers = [o for o in rows if o["question_id"] == case["question_id"] and o["run_index"] == case["run_index"]
         and o["method"] != case["method"] and not o["error"]
         and (o["choice"], o["rating"], o["correct"]) != (case["choice"], case["rating"], case["correct"])]
shown_runs = [case] + peers[:1]
document = store.get_document(case["doc_id"])
gold = {"gold": case["gold"], "answers": case["references"]}
if peers:
    st.caption(f"{METHODS[peers[0]['method']].label} answered differently: shown side by side.")
columns = st.columns(len(shown_runs)) if len(shown_runs) > 1 else [st.container()]
for col, r in zip(columns, shown_runs):
    with col:
        if not r["ask_run_id"]:
            continue
        try:
            result = load_ask(store, r["ask_run_id"])
        except GistError as exc:
            st.warning(str(exc))
            continue
        n_pages = len(load_memory(store, result.memory_id, document).pages) if result.memory_id else None
        render_ask_result(store, result, n_pages=n_pages, gold=gold, key=f"in{r['id']}")

# --- which pages were re-read, across the document's questions ------------------------------------
same_doc = [r for r in rows if r["doc_id"] == case["doc_id"] and r["method"] == case["method"]
            and r["run_index"] == case["run_index"] and not r["error"]]
if any(r["pages_looked_up"] for r in same_doc):
    n_pages = max(max(r["pages_looked_up"] or [0]) for r in same_doc) + 1
    z = [[1 if p in (r["pages_looked_up"] or []) else 0 for p in range(n_pages)] for r in same_doc]
    fig = go.Figure(go.Heatmap(z=z, x=list(range(n_pages)), y=[f"Q{i + 1}" for i in range(len(same_doc))],
                               colorscale=[[0, "#f1f3f5"], [1, REREAD]], showscale=False))
    fig.update_layout(height=140 + 18 * len(same_doc), margin=dict(l=10, r=10, t=40, b=10),
                      title=f"Pages re-read by {METHODS[case['method']].label} across this document's questions",
                      xaxis_title="page")
    st.plotly_chart(fig, width="stretch", key="in_heatmap")

# --- export ----------------------------------------------------------------------------------------
cases = labelled_cases(store, eval_id)
e1, e2, _ = st.columns([1, 1, 3])
e1.download_button("Export labels (JSONL)", labels_jsonl(cases), f"labels_eval_{eval_id}.jsonl",
                   "application/jsonl", disabled=not cases, key="in_export_jsonl")
e2.download_button("Export labels (CSV)", labels_csv(cases), f"labels_eval_{eval_id}.csv", "text/csv",
                   disabled=not cases, key="in_export_csv")
if cases:
    st.dataframe(pd.DataFrame([{k: c[k] for k in ("result_id", "annotator", "category", "note", "method", "question")}
                               for c in cases]), hide_index=True, width="stretch", key="in_labels")
