"""The Inspect screen's parts: an evaluation's results kept between reruns, the case table, the
position badge, labelling state (a draft per case and annotator, never lost on navigation), and
the annotators' agreement.

Navigation works on result ids (``in_case``), so a case keeps its place when filters change and
"save and next" goes to the case that followed it in the list the annotator saw.
"""
from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from components.ui import show_me
from core.eval import agreement as agree
from core.eval.report import DEFAULT_CATEGORIES
from core.store import Store
from core.store.records import EvalResult, Label

PAGE_ROWS = 15  # rows of the case table at once: the page holding the open case
NOTES = ("in_flash", "in_saved", "in_problem", "in_chosen")  # said once, on the run after the callback that set them


def init_state() -> None:
    """Inspect's session state (its widgets keep their own "in_" keys): the annotator's name and
    categories (kept when the page is left), the open case and its place, unsaved drafts, and the
    notes a callback leaves for the next run."""
    st.session_state.setdefault("in_name", "")
    st.session_state.setdefault("in_category_list", ", ".join(DEFAULT_CATEGORIES))
    st.session_state.setdefault("in_case", None)  # a result id
    st.session_state.setdefault("in_pos", 0)
    st.session_state.setdefault("in_drafts", {})  # "<result id>_<annotator>" -> {"category", "note"}
    for note in NOTES:
        st.session_state.setdefault(note, None)


def take_note(key: str) -> str | None:
    """A note left by a callback (``NOTES``), and forget it."""
    note, st.session_state[key] = st.session_state.get(key), None
    return note


def answered_differently(case: EvalResult, others: list[EvalResult]) -> list[EvalResult]:
    """The other methods' results for the case's question that answered (no error) and differ from
    it in choice, rating or correctness: shown beside it."""
    return [o for o in others if not o.error
            and (o.choice, o.rating, o.correct) != (case.choice, case.rating, case.correct)]


def same_document_results(rows: list[EvalResult], case: EvalResult) -> list[EvalResult]:
    """The case method's answered results over the case's document, in the same run."""
    return [r for r in rows if r.doc_id == case.doc_id and r.method == case.method
            and r.run_index == case.run_index and not r.error]


@st.cache_resource(max_entries=8, show_spinner=False)
def _results(where: str, eval_id: int, version: tuple[int, int],
             _store: Store) -> tuple[list[EvalResult], dict[int, EvalResult]]:
    rows = _store.eval_results(eval_id)
    return rows, {r.id: r for r in rows}


def eval_rows(store: Store, eval_id: int) -> tuple[list[EvalResult], dict[int, EvalResult]]:
    """An evaluation's results (and by id), loaded once per version of them: a rerun (a key press)
    costs one indexed count, not 10,000 rows. Shared, so read-only."""
    return _results(str(store.path or id(store)), eval_id, store.eval_results_version(eval_id), store)


# --- where the annotator is ------------------------------------------------------------------

def current_position(ids: list[int]) -> int:
    """The open case's place in ``ids``; a case that left the list (filters) gives way to the one
    now at its old place."""
    case = st.session_state.get("in_case")
    if case in ids:
        position = ids.index(case)
    else:
        position = max(0, min(st.session_state.get("in_pos", 0), len(ids) - 1))
    st.session_state.in_case, st.session_state.in_pos = ids[position], position
    return position


CASE = "in-case"  # the open case's header: brought into view whenever another case is opened


def go_to(result_id: int) -> None:
    st.session_state.in_case = result_id
    show_me(CASE)


def move(step: int, ids: list[int]) -> None:
    """Previous / next in the list the annotator saw."""
    case = st.session_state.get("in_case")
    at = ids.index(case) if case in ids else st.session_state.get("in_pos", 0)
    st.session_state.in_case = ids[max(0, min(at + step, len(ids) - 1))]
    show_me(CASE)


def jump(key: str, ids: list[int]) -> None:
    st.session_state.in_case = ids[max(0, min(int(st.session_state[key]) - 1, len(ids) - 1))]
    show_me(CASE)


WIDEN = {"in_show": "everything", "in_labelled": "any", "in_methods": [], "in_docs": [], "in_search": ""}


def open_anywhere(result_id: int, ids: list[int]) -> None:
    """Open a case; if the filters hide it, widen them so it is in the list."""
    if result_id not in ids:
        for key, value in WIDEN.items():
            st.session_state[key] = value
        st.session_state.in_flash = "The filters were widened to show every case."
    st.session_state.in_case = result_id
    show_me(CASE)


def position_badge(position: int, total: int, label: str = "") -> None:
    """"Case 17 of 128 · wrong look-up (unsaved)", pinned to the window's corner so it stays visible
    while scrolling: a key pressed (1-9, S, arrows) always changes something in sight."""
    st.html(f'<style>.gme-position {{ position: fixed; right: 1.2rem; bottom: 1rem; z-index: 999990; '
            f'background: #212529; color: white; padding: 0.35rem 0.8rem; border-radius: 999px; '
            f'font-size: 0.85rem; font-weight: 600; box-shadow: 0 2px 6px rgba(0,0,0,.25); }}</style>'
            f'<div class="gme-position" data-testid="gme-position">case {int(position) + 1} of {int(total)}'
            f'{" · " + html.escape(label) if label else ""}</div>')


# --- labelling: a draft per case and annotator ----------------------------------------------------

def slot_keys(result_id: int, annotator: str) -> tuple[str, str, str]:
    slot = f"{result_id}_{annotator}"
    return slot, f"in_category_{slot}", f"in_note_{slot}"


def prepare_label_widgets(result_id: int, annotator: str, saved: Label | None, categories: list[str]) -> None:
    """Fill the category and note widgets of this case from the unsaved draft, else the saved label,
    else nothing (no category is preselected)."""
    slot, cat_key, note_key = slot_keys(result_id, annotator)
    drafts = st.session_state.setdefault("in_drafts", {})
    unsigned = slot_keys(result_id, "")[0]
    if annotator and slot not in drafts and unsigned in drafts:  # chosen before the name was typed: it is theirs
        drafts[slot] = drafts.pop(unsigned)
    draft = drafts.get(slot, {})
    if cat_key not in st.session_state:
        category = draft.get("category", saved.category if saved else None)
        st.session_state[cat_key] = category if category in categories else None
    elif st.session_state[cat_key] not in categories:
        st.session_state[cat_key] = None
    if note_key not in st.session_state:
        st.session_state[note_key] = draft.get("note", saved.note if saved else "")


def keep_draft(result_id: int, annotator: str) -> None:
    slot, cat_key, note_key = slot_keys(result_id, annotator)
    st.session_state.setdefault("in_drafts", {})[slot] = {"category": st.session_state.get(cat_key),
                                                          "note": st.session_state.get(note_key, "")}


def choose_category(result_id: int, annotator: str, category: str) -> None:
    st.session_state[slot_keys(result_id, annotator)[1]] = category
    keep_draft(result_id, annotator)
    st.session_state.in_chosen = f"Category: {category} (not saved yet: S saves it)"


def label_state(result_id: int, annotator: str, saved: Label | None) -> str:
    """This annotator's label of the case in a few words, for the corner badge."""
    category = st.session_state.get(slot_keys(result_id, annotator)[1])
    if is_unsaved(result_id, annotator, saved):
        return f"{category} (unsaved)" if category else "unsaved note"
    return f"saved: {saved.category}" if saved else "no label yet"


def is_unsaved(result_id: int, annotator: str, saved: Label | None) -> bool:
    slot, cat_key, note_key = slot_keys(result_id, annotator)
    if slot not in st.session_state.get("in_drafts", {}):
        return False
    now = (st.session_state.get(cat_key), st.session_state.get(note_key) or "")
    return now != ((saved.category, saved.note) if saved else (None, ""))


def save_and_next(store: Store, result_id: int, annotator: str, ids: list[int], categories: list[str]) -> None:
    """Save this annotator's label of the case and open the next case of the list."""
    slot, cat_key, note_key = slot_keys(result_id, annotator)
    category = st.session_state.get(cat_key)
    if not annotator:
        st.session_state.in_problem = "Type your name above first: labels are signed with it."
        return
    if category is None:
        keys = f"keys 1–{min(9, len(categories))}" if categories else "the list"
        st.session_state.in_problem = f"Choose a failure category first ({keys})."
        return
    store.save_label(result_id, annotator, category, st.session_state.get(note_key) or "")
    st.session_state.get("in_drafts", {}).pop(slot, None)
    at = ids.index(result_id) if result_id in ids else -1
    following = ids[at + 1] if 0 <= at < len(ids) - 1 else result_id
    st.session_state.in_saved = f"Saved as “{category}”." + (" Next case opened." if following != result_id else
                                                             " That was the last case of the list.")
    st.session_state.in_case = following
    show_me(CASE)


# --- the case table ----------------------------------------------------------------------------------

def case_table(rows: list[dict], *, key: str, on_open) -> None:
    """One page of the case table; clicking a row opens its case (``on_open(result_id)``)."""
    frame = pd.DataFrame(rows)
    ids = [r["result"] for r in rows]

    def opened() -> None:
        picked = st.session_state[key].selection.rows
        if picked:
            on_open(ids[picked[0]])

    st.dataframe(frame, key=key, on_select=opened, selection_mode="single-row", hide_index=True, width="stretch",
                 height=38 + 35 * max(1, len(rows)),
                 # What fits beside the case at 1280 px; the gold answer, the prediction, the document and the
                 # run are in the case's own header.
                 column_order=["", "#", "failure", "method", "labels", "question"],
                 # Sized to fit the table's half of the page at 1280 px: the question takes what is left.
                 column_config={"": st.column_config.TextColumn("", width=22),
                                "#": st.column_config.NumberColumn("#", width=44),
                                "failure": st.column_config.TextColumn("failure", width=62),
                                "method": st.column_config.TextColumn("method", width=88),
                                "labels": st.column_config.TextColumn("labels", width=70),
                                "question": st.column_config.TextColumn("question", width=140),
                                "result": st.column_config.NumberColumn("result id", width="small")})


# --- annotators --------------------------------------------------------------------------------------

def agreement_summary(result: dict) -> str:
    """One sentence for an agreement figure (our own words and numbers only, names escaped by the caller)."""
    if result["statistic"] is None:
        if len(result["annotators"]) < 2:
            return "Agreement needs a second annotator: labels from two or more names are compared."
        return "These annotators have no case in common yet: agreement is measured on cases all of them labelled."
    kappa = result["kappa"]
    figure = "undefined (every label in one category)" if kappa is None else \
        f"{kappa:.2f} ({agree.describe(kappa)})"
    return (f"{result['statistic']}: **{figure}** over {result['cases']} cases labelled by all of them · "
            f"identical labels on {100 * result['observed']:.0f}% of them")
