"""One view of a memory tree and a walk on it, the same on Memory tree, Ask and Runs: the graph
(the walk's nodes always drawn, the rest to the levels chosen) or the whole tree as an icicle or
sunburst, full width, then the walk step by step."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from components.tree_view import depth_of, node_label, tree_chart, tree_graph_html
from core.methods.memwalker.tree import MemoryTree
from core.methods.memwalker.walk import Visit

VIEWS = ("Graph", "Icicle", "Sunburst")
LEGEND = ("Green nodes were visited (numbered in walk order), red dashed arrows are reverts and red cells "
          "nodes gone back from, the leaf answered from has a dark border (dark green in the icicle). "
          "Grey \"+N\" boxes and \"▸ +N\" stand for children not drawn.")


def render_tree(tree: MemoryTree, visits: list[Visit] | None, *, key: str, levels: int | None = None,
                height: int = 560) -> None:
    """The tree with ``visits`` drawn on it; ``levels`` is the graph's starting depth (default:
    everything for a small tree, the root's children for a large one)."""
    depth = depth_of(tree)
    c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
    view = c1.segmented_control("View", VIEWS, default="Graph", key=f"{key}_view", required=True,
                                help="The icicle and sunburst show the whole tree at any size.")
    if view == "Graph":
        start = levels if levels is not None else (depth if len(tree.nodes) <= 40 else 1)
        shown = depth if depth <= 1 else c2.slider(
            "Levels below the root to draw", 1, depth, min(start, depth), key=f"{key}_levels",
            help=f"{depth} draws every node, leaves included. Nodes a walk visited are always drawn.")
        st.iframe(tree_graph_html(tree, visits=visits, levels=shown, height=height), height=height + 20)
    else:
        st.plotly_chart(tree_chart(tree, visits, kind=view.lower(), height=height), width="stretch",
                        key=f"{key}_chart")
    if visits:
        st.caption(LEGEND)


def walk_table(tree: MemoryTree, visits: list[Visit]) -> pd.DataFrame:
    return pd.DataFrame([{
        "#": n, "node": node_label(tree, v.node), "shown": v.kind, "move": v.move,
        "to": node_label(tree, v.to) if v.to is not None else "", "reasoning": v.reasoning,
    } for n, v in enumerate(visits, 1)])


def render_walk_steps(tree: MemoryTree, visits: list[Visit]) -> None:
    st.dataframe(walk_table(tree, visits), hide_index=True, width="stretch",
                 column_config={"reasoning": st.column_config.TextColumn(width="large")})
