"""Tree: MemWalker's memory tree of summaries, as a graph or a sunburst, with the last walk on it."""
import streamlit as st

from components.entry import through_app
from components.state import chosen_memory, current_engine, engine_settings, get_store, require_document
from components.walk_view import render_tree, render_walk_steps
from core.methods.memwalker.drawing import node_label
from components.ui import error_text, md
from components.urlstate import ids_from_url, publish
from core.errors import GistError
from core.methods.ask import load_ask
from core.status import DONE
from core.methods.readagent.memory import with_pages
from core.methods.memwalker.tree import TreeSettings, build_tree, load_tree
from core.store.records import Tree

through_app()


def tree_label(tree: Tree) -> str:
    """A stored tree as the picker names it: its engine, its leaves and its fan-out."""
    leaves = (f"gist memory #{tree.memory_id}'s pages as leaves" if tree.origin == "pages"
              else f"{tree.segment_tokens} tokens a segment")
    return f"#{tree.id} · {tree.engine_label} · {leaves} · ≤{tree.max_children} children"


SETTING_LABELS = {"segment_tokens": "Tokens per segment", "max_children": "Most children per node"}

# This page's session state: the tree open (kept across pages; the picker's own key is "tree_pick").
st.session_state.setdefault("tree_id", None)
for tree_in_link in ids_from_url("tree"):  # a reload or a link opens the tree it names
    st.session_state.tree_id = tree_in_link

store = get_store()
st.title("Memory tree")
st.caption("MemWalker (Chen et al. 2023) reads differently from ReadAgent: it cuts the text into segments, "
           "summarises them, summarises the summaries up to one root, then walks down from the root to "
           "answer, going back when a branch does not help.")
document = require_document(store)

trees = store.trees_for(document.id)
with st.expander("Build a tree", expanded=not trees):
    c1, c2, c3 = st.columns(3)
    segment_tokens = c1.number_input("Tokens per segment", 100, 8000, 1000, step=100, key="tree_segment_tokens",
                                     help="The paper uses 1000 (QuALITY, SummScreenFD) and 1200 (GovReport).")
    max_children = c2.number_input("Most children per node", 2, 16, 8, key="tree_max_children",
                                   help="The paper uses 8 (QuALITY, GovReport) and 5 (SummScreenFD).")
    memories = store.memories_for(document.id)
    on_pages = c3.checkbox("Use a gist memory's pages as leaves", key="tree_on_pages", disabled=not memories,
                           help="Pages become leaves and gists their summaries, so both methods share one pagination.")
    st.caption(f"Summaries by {md(engine_settings().label)}.")
    if st.button("Build or open tree", type="primary", key="tree_build"):
        try:
            engine = current_engine(store)
            memory = None
            if on_pages and memories:
                memory = with_pages(store, next((m for m in memories if m.id == chosen_memory()), memories[0]),
                                    document)
            with st.spinner("Summarising, level by level…"):
                tree, built = build_tree(store, document, engine, TreeSettings(int(segment_tokens), int(max_children)),
                                         memory=memory)
        except GistError as exc:
            st.error(error_text(exc, SETTING_LABELS))
        else:
            st.session_state.tree_id = tree.tree_id
            st.session_state.tree_pick = tree.tree_id  # the picker below opens the tree just built
            st.success(("Reopened the stored tree: no model calls." if built.reused else
                        f"Built in {built.seconds:.1f} s with {built.llm_calls} model calls.")
                       + f" Levels (leaves first): {' / '.join(str(c) for c in tree.level_counts())}.")
            trees = store.trees_for(document.id)

if not trees:
    st.info("No tree yet for this document. Build one above; with the offline engine it takes a moment.")
    st.stop()

ids = [t.id for t in trees]
if st.session_state.tree_id not in ids:
    st.session_state.tree_id = ids[0]
if st.session_state.get("tree_pick") not in ids:
    st.session_state.tree_pick = st.session_state.tree_id
tree_id = st.selectbox("Tree", ids, format_func=lambda i: tree_label(next(t for t in trees if t.id == i)),
                       key="tree_pick")
st.session_state.tree_id = tree_id
publish(tree=tree_id)
tree = load_tree(store, tree_id, document)


def last_walk(tree_id: int):
    """The newest MemWalker question answered on this tree (from the database, so it survives a reload)."""
    for listed in store.list_runs(kind="ask", doc_id=document.id):
        if listed.method == "memwalker" and listed.status == DONE:
            result = load_ask(store, listed.id)
            if result.details.tree.tree_id == tree_id:
                return result
    return None


walk = last_walk(tree.tree_id)
visits = walk.details.trajectory if walk is not None else None
counts = tree.level_counts()
m1, m2, m3, m4 = st.columns(4)
m1.metric("Nodes", len(tree.nodes))
m2.metric("Leaves", counts[0])
m3.metric("Levels", len(counts))
m4.metric("Leaf tokens", f"{tree.tokens:,}")
if visits:
    st.caption(f"Showing the walk for “{md(walk.question.text)}” (run #{walk.run.id}).")
render_tree(tree, visits, key="tree")
if visits:
    render_walk_steps(tree, visits)

st.subheader("Read a node")
node_id = st.selectbox("Node", [n.id for n in reversed(tree.nodes)], format_func=lambda i: node_label(tree, i),
                       key="tree_node")
node = tree.node(node_id)
st.markdown(f"**Summary** ({md(node.summary_by)})")
st.text(node.summary)
if node.is_leaf:
    st.markdown("**Raw segment**")
    st.text(node.text)
