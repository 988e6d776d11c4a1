"""Inspect: the annotators' screen. Find cases in a table (filter, search, order), read each case
with everything the model saw beside a method that answered differently, label it from the
keyboard, and see where annotators agree."""
import zlib

import pandas as pd
import streamlit as st

from components.entry import through_app
from components import charts
from components import inspect_view as view
from components.ask_view import render_ask_result
from components.state import choose_evaluation, get_store
from components.ui import error_text, md
from core.errors import GistError
from core.eval.agreement import agreement, disagreements
from core.eval.report import (DEFAULT_CATEGORIES, FILTERS, LABEL_FILTERS, ORDERS, case_table_rows, failure_kind,
                              find_cases, label_counts, labelled_cases, labels_csv, labels_jsonl, same_question)
from core.methods.ask import load_ask
from core.methods.registry import METHODS

through_app()

view.init_state()
store = get_store()
st.title("Inspect")
eval_id = choose_evaluation(store, key="in_eval", empty="No evaluations yet. Run one on the **Evaluate** page, "
                                                        "then come back to go through its failures.")
rows, by_id = view.eval_rows(store, eval_id)
titles = {d.id: d.title for d in store.list_documents()}
labels = store.labels(eval_id)

# --- annotator and categories ------------------------------------------------------------------
c1, c2 = st.columns([1, 2])
annotator = c1.text_input("Your name (labels are signed with it)", st.session_state.in_name,
                          key="in_annotator").strip()
st.session_state.in_name = annotator
categories_text = c2.text_input("Failure categories (comma-separated, editable; keys 1–9 choose them)",
                                st.session_state.in_category_list, key="in_categories")
st.session_state.in_category_list = categories_text
categories = list(dict.fromkeys(c.strip() for c in categories_text.split(",") if c.strip())) or DEFAULT_CATEGORIES

# --- which cases: filters, search, order -------------------------------------------------------
f1, f2, f3 = st.columns([6, 3, 3])
show = f1.selectbox("Show", list(FILTERS), key="in_show")
labelled = f2.selectbox("Labels", list(LABEL_FILTERS), key="in_labelled")
search = f3.text_input("Search", key="in_search", placeholder="words from the question, answers, document, labels")
g1, g2, g3 = st.columns([3, 3, 2])
methods = sorted({r.method for r in rows}, key=list(METHODS).index)
docs = sorted({r.doc_id for r in rows}, key=lambda d: titles.get(d, d))
pick_methods = g1.multiselect("Methods", methods, key="in_methods", placeholder="All methods",
                              format_func=lambda m: METHODS[m].label)
pick_docs = g2.multiselect("Documents", docs, key="in_docs", placeholder="All documents",
                           format_func=lambda d: titles.get(d, d))
order = g3.selectbox("Order", list(ORDERS), key="in_order")
shown = find_cases(rows, labels, show=show, methods=pick_methods, docs=pick_docs, labelled=labelled,
                   annotator=annotator, search=search, order=order, titles=titles)
names = sorted({label.annotator for label in labels})
st.caption(f"{len(shown)} of {len(rows)} results · {len({label.result_id for label in labels})} labelled"
           + (f" by {len(names)} annotators" if len(names) > 1 else ""))
if flash := view.take_note("in_flash"):
    st.info(flash)
if not shown:
    st.info("Nothing matches these filters.")
    st.stop()

ids = [r.id for r in shown]
position = view.current_position(ids)
case = shown[position]

table, current = st.columns([6, 5], gap="medium")

# --- the case table: the page holding the open case ---------------------------------------------
with table:
    first = position // view.PAGE_ROWS * view.PAGE_ROWS
    page = shown[first:first + view.PAGE_ROWS]
    view.case_table(case_table_rows(page, labels, annotator=annotator, current=case.id, titles=titles,
                                    first_position=first + 1), key=f"in_table_{case.id}", on_open=view.go_to)
    t1, t2 = st.columns([3, 2], vertical_alignment="bottom")
    t1.caption(f"Cases {first + 1}–{first + len(page)} of {len(shown)} · click a row to open it · "
               "← → move, 1–9 choose a category, S saves and opens the next")
    st.session_state.in_goto = position + 1
    t2.number_input("Go to case", 1, len(shown), key="in_goto", on_change=view.jump, args=("in_goto", ids))

# --- the open case, and labelling it ---------------------------------------------------------------
with current:
    st.html(f'<div id="{view.CASE}"></div>')
    st.markdown(f"**Case {position + 1} of {len(shown)}** · {md(METHODS[case.method].label)} · "
                f"{md(titles.get(case.doc_id, case.doc_id))} · run {case.run_index + 1} · "
                f"{md(failure_kind(case))}")
    with st.container(horizontal=True, key="in_nav", gap="small"):
        st.button("← Previous", disabled=position == 0, key="in_prev", shortcut="Left", on_click=view.move,
                  args=(-1, ids))
        st.button("Next →", disabled=position >= len(shown) - 1, key="in_next", shortcut="Right", on_click=view.move,
                  args=(1, ids))

    st.markdown(f"#### {md(case.question)}")
    if case.options:
        st.markdown("\n".join(f"- **({'ABCDEFGHIJ'[i]})** {md(o)}"
                              + (" ← gold" if 'ABCDEFGHIJ'[i] == case.gold else "")
                              + (" ← answered" if 'ABCDEFGHIJ'[i] == case.choice else "")
                              for i, o in enumerate(case.options)))
    else:
        st.caption("Reference answers: " + md(" / ".join(case.references)))
    if case.error:
        st.error(f"This question failed: {md(case.error)}")

    mine = next((label for label in labels if label.result_id == case.id and label.annotator == annotator),
                None)
    slot, cat_key, note_key = view.slot_keys(case.id, annotator)
    view.prepare_label_widgets(case.id, annotator, mine, categories)
    st.selectbox("Failure category", categories, index=None, key=cat_key, on_change=view.keep_draft,
                 args=(case.id, annotator), placeholder=f"Choose one, or press 1–{min(9, len(categories))}")
    with st.container(horizontal=True, key="in_keys", gap="small"):
        for i, category in enumerate(categories[:9]):
            st.button(md(category), key=f"in_cat_{i}", shortcut=str(i + 1),
                      type="primary" if st.session_state.get(cat_key) == category else "secondary",
                      on_click=view.choose_category, args=(case.id, annotator, category))
    st.text_area("Note", height=80, key=note_key, on_change=view.keep_draft, args=(case.id, annotator))
    s1, s2 = st.columns([2, 3], vertical_alignment="center")
    s1.button("Save label & next", type="primary", key="in_save", shortcut="S", on_click=view.save_and_next,
              args=(store, case.id, annotator, ids, categories))
    if view.is_unsaved(case.id, annotator, mine):
        s2.caption("Unsaved change: it stays with this case while you move around. **S** saves it.")
    elif mine:
        s2.caption(f"Your saved label: {md(mine.category)}.")
    view.position_badge(position, len(shown), view.label_state(case.id, annotator, mine))
    if saved := view.take_note("in_saved"):
        st.success(saved)
        st.toast(saved, icon=":material/check:")  # in sight, wherever the page is scrolled
    if chosen := view.take_note("in_chosen"):
        st.toast(chosen)
    if problem := view.take_note("in_problem"):
        st.error(problem)
    for label in labels:
        if label.result_id == case.id and label.annotator != annotator:
            st.caption(f"{md(label.annotator)}: {md(label.category)}"
                       + (f" — {md(label.note)}" if label.note else ""))

    others = same_question(rows, case)
    if others:
        st.markdown("**The same question, other methods**")
        with st.container(horizontal=True, key="in_others", gap="small"):
            for o in others:
                st.button(f"{md(METHODS[o.method].label)}: {md(failure_kind(o))}", key=f"in_other_{o.id}",
                          on_click=view.open_anywhere, args=(o.id, ids))

# --- the case, and a method that answered differently ------------------------------------------
peers = view.answered_differently(case, others)
shown_runs = [case] + peers[:1]
gold = {"gold": case.gold, "answers": case.references}
if peers:
    st.caption(f"{md(METHODS[peers[0].method].label)} answered differently: shown side by side.")
columns = st.columns(len(shown_runs)) if len(shown_runs) > 1 else [st.container()]
for col, r in zip(columns, shown_runs):
    with col:
        if not r.ask_run_id:
            continue
        try:
            result = load_ask(store, r.ask_run_id)
        except GistError as exc:
            st.warning(error_text(exc))
            continue
        n_pages = store.page_count(result.memory.id) if result.memory else None
        render_ask_result(store, result, n_pages=n_pages, gold=gold, key=f"in{r.id}", narrow=len(shown_runs) > 1)

# --- which pages were re-read, across the document's questions ------------------------------------
heatmap = charts.pages_reread(view.same_document_results(rows, case), METHODS[case.method].label,
                              current=case.id)
if heatmap is not None:
    st.plotly_chart(heatmap, width="stretch", key="in_heatmap")

# --- annotators: agreement, disagreements, counts ------------------------------------------------
st.subheader("Annotators")
if not labels:
    st.caption("No labels yet. Labels from two or more names are compared here (Cohen's kappa for two, "
               "Fleiss' kappa for more).")
else:
    a1, a2 = st.columns([1, 1], gap="medium")
    with a1:
        compared = st.multiselect("Compare", names, default=names,  # a new annotator joins the comparison
                                  key=f"in_compare_{zlib.crc32('|'.join(names).encode())}",
                                  help="Agreement is measured on the cases every one of them labelled.")
        measured = agreement(labels, compared, categories)
        st.markdown(view.agreement_summary(measured))
        if measured["categories"]:
            st.dataframe(pd.DataFrame([{"category": c["category"], "kappa": "—" if c["kappa"] is None else
                                        f"{c['kappa']:.2f}", "labels": c["labels"]} for c in measured["categories"]]),
                         hide_index=True, width="stretch", key="in_agreement")
    with a2:
        figure = charts.labels_by_category(label_counts(labels, by_id), categories)
        if figure is not None:
            st.plotly_chart(figure, width="stretch", key="in_label_counts")
    apart = [d for d in disagreements(labels) if d["result_id"] in by_id]
    st.markdown(f"**Cases where annotators disagree** ({len(apart)})")
    if apart:
        apart_rows = [{"result": d["result_id"], "method": METHODS[by_id[d["result_id"]].method].label,
                       "question": by_id[d["result_id"]].question,
                       **{f"by {who}": category for who, category in d["labels"].items()}} for d in apart]
        apart_ids = [d["result_id"] for d in apart]

        def open_disagreement() -> None:
            picked = st.session_state["in_apart"].selection.rows
            if picked:
                view.open_anywhere(apart_ids[picked[0]], ids)

        st.dataframe(pd.DataFrame(apart_rows), hide_index=True, width="stretch", key="in_apart",
                     on_select=open_disagreement, selection_mode="single-row")

# --- export: every annotator's label, with the whole case ----------------------------------------
e1, e2, _ = st.columns([1, 1, 3])
e1.download_button("Export labels (JSONL)", lambda: labels_jsonl(labelled_cases(store, eval_id)),
                   f"labels_eval_{eval_id}.jsonl", "application/jsonl", disabled=not labels, key="in_export_jsonl")
e2.download_button("Export labels (CSV)", lambda: labels_csv(labelled_cases(store, eval_id)),
                   f"labels_eval_{eval_id}.csv", "text/csv", disabled=not labels, key="in_export_csv")
if labels:
    with st.expander(f"Every label ({len(labels)})"):
        st.dataframe(pd.DataFrame([{"result_id": label.result_id, "annotator": label.annotator,
                                    "category": label.category, "note": label.note,
                                    "method": by_id[label.result_id].method if label.result_id in by_id else "",
                                    "question": by_id[label.result_id].question if label.result_id in by_id else ""}
                                   for label in labels]), hide_index=True, width="stretch", key="in_labels")
