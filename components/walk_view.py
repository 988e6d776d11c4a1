"""One view of a memory tree and a walk on it, the same on Memory tree, Ask, Runs and Inspect: the walk
drawn for reading (an SVG laid out by ``core.methods.memwalker.drawing``, as in the HTML report), or the
whole tree to explore (an interactive graph, an icicle or a sunburst), then the walk step by step."""
from __future__ import annotations

import streamlit as st

from components.tree_view import tree_chart, tree_graph_html
from components.ui import esc
from core.methods.memwalker.drawing import depth_of, legend_html, node_label, walk_svg
from core.methods.memwalker.tree import MemoryTree
from core.methods.memwalker.walk import Visit

VIEWS = ("Walk", "Explore", "Icicle", "Sunburst")
HELP = ("Walk: the path drawn on the tree, readable at any size (siblings not taken folded into \"+N\"). "
        "Explore: drag and zoom the tree. Icicle and sunburst: the whole tree at any size.")
WIDE, NARROW = 880, 430  # px: the main column at 1280 px, and half of it (two answers side by side)


def render_tree(tree: MemoryTree, visits: list[Visit] | None, *, key: str, levels: int | None = None,
                narrow: bool = False) -> None:
    """The tree with ``visits`` drawn on it. ``levels`` is where the level slider starts (default:
    the walk alone when there is one, else the root's children)."""
    depth = depth_of(tree)
    c1, c2 = st.columns([1, 1], vertical_alignment="bottom")
    view = c1.segmented_control("View", VIEWS, default="Walk", key=f"{key}_view", required=True, help=HELP)
    if view in ("Walk", "Explore"):
        start = levels if levels is not None else (0 if visits else min(1, depth))
        lowest = 0 if visits else 1
        shown = start if depth <= lowest else c2.slider(
            "Levels below the root to draw", lowest, depth, min(start, depth), key=f"{key}_levels",
            help="0: only what the walk visited and was offered. Nodes a walk visited are always drawn.")
        if view == "Walk":
            # st.html drops SVG; Markdown keeps it as HTML (one line, every text in it escaped by walk_svg).
            st.markdown(f'<div class="gme-walk">{walk_svg(tree, visits, levels=shown, width=NARROW if narrow else WIDE)}'
                        "</div>", unsafe_allow_html=True)
            st.html(legend_html())
        else:
            st.iframe(tree_graph_html(tree, visits=visits, levels=shown or None, height=520), height=540)
    else:
        st.plotly_chart(tree_chart(tree, visits, kind=view.lower(), height=520), width="stretch",
                        key=f"{key}_chart")


def walk_steps_html(tree: MemoryTree, visits: list[Visit]) -> str:
    """Each step of the walk: where it was, what it was shown, what it did and why (wraps: never cut)."""
    rows = "".join(
        f'<tr class="{"revert" if v.move == "revert" else ""}"><td>{n}</td>'
        f'<td class="node">{esc(node_label(tree, v.node))}</td><td>{esc(v.kind)}</td>'
        f'<td>{esc(v.move)}{" to " + esc(node_label(tree, v.to)) if v.to is not None else ""}</td>'
        f'<td>{esc(v.reasoning)}</td></tr>'
        for n, v in enumerate(visits, 1))
    return ('<table class="gme-steps"><thead><tr><th>#</th><th>node</th><th>shown</th><th>move</th>'
            f'<th>reasoning</th></tr></thead><tbody>{rows}</tbody></table>')


def render_walk_steps(tree: MemoryTree, visits: list[Visit]) -> None:
    st.html(walk_steps_html(tree, visits))
