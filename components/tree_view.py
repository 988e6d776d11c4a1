"""MemWalker's memory tree: an interactive graph (pyvis, inline so it works offline) or a
sunburst for large trees, with the path a walk took drawn on it.

Text safety: pyvis writes nodes with Jinja's ``tojson`` (``<`` becomes ``\\u003c``) and
vis-network shows a string tooltip with ``innerText``, so summaries display as text. pyvis
switches to an ``innerHTML`` tooltip when any title contains "href"; titles are kept free
of that word so the safe tooltip is always used.
"""
from __future__ import annotations

import html
import re
import textwrap

import plotly.graph_objects as go
from pyvis.network import Network

from components.ui import GIST, RAW, REREAD
from core.methods.memwalker.tree import MemoryTree

REVERT = "#e03131"
ZWSP = "\u200b"


def _title(text: str) -> str:
    return text.replace("href", f"h{ZWSP}ref").replace("HREF", f"H{ZWSP}REF")


def _wrap(text: str, width: int = 70, limit: int = 900) -> str:
    text = text if len(text) <= limit else text[:limit] + "…"
    return "\n".join(textwrap.wrap(text, width)) or "(no summary)"


def node_label(tree: MemoryTree, node_id: int) -> str:
    node = tree.node(node_id)
    if node_id == tree.root.id:
        return "root"
    return f"leaf {node.index}" if node.is_leaf else f"L{node.level}·{node.index}"


def tree_graph_html(tree: MemoryTree, *, visits: list[dict] | None = None, levels: int | None = None,
                    height: int = 560) -> str:
    """The tree top-down. ``visits`` (a walk's trajectory) numbers visited nodes in order, draws
    reverts in red and marks the leaf answered from. ``levels`` limits how many levels below the
    root are drawn (large trees)."""
    top = tree.root.level
    lowest = top - levels if levels is not None else 0
    order: dict[int, list[int]] = {}
    reverts: list[tuple[int, int]] = []
    answered_at = None
    for n, v in enumerate(visits or [], 1):
        order.setdefault(v["node"], []).append(n)
        if v.get("move") == "revert" and v.get("to") is not None:
            reverts.append((v["node"], v["to"]))
        if v.get("move") == "answer":
            answered_at = v["node"]
    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", layout=True)
    shown = set()
    for node in tree.nodes:
        if node.level <= lowest:
            continue
        shown.add(node.id)
        steps = order.get(node.id)
        color = REREAD if steps else (RAW if node.is_leaf else GIST)
        label = node_label(tree, node.id) + (f"\n#{','.join(map(str, steps))}" if steps else "")
        kind = "Leaf (raw segment)" if node.is_leaf else f"Level {node.level} summary"
        title = f"{kind} · paragraphs {node.start}–{node.end - 1}\n\n{_wrap(node.summary)}"
        net.add_node(node.id, label=label, title=_title(title), level=top - node.level, shape="box",
                     color={"background": color, "border": "#1b4332" if node.id == answered_at else color},
                     borderWidth=4 if node.id == answered_at else 1,
                     font={"color": "white", "size": 14 if steps else 12})
    for node in tree.nodes:
        if node.parent is not None and node.id in shown and node.parent in shown:
            walked = node.id in order and node.parent in order
            net.add_edge(node.parent, node.id, color=REREAD if walked else "#adb5bd", width=3 if walked else 1)
    for child, parent in reverts:
        if child in shown and parent in shown:
            net.add_edge(child, parent, color=REVERT, dashes=True, width=2, title="revert")
    net.set_options("""{
      "layout": {"hierarchical": {"enabled": true, "direction": "UD", "sortMethod": "directed",
                 "levelSeparation": 110, "nodeSpacing": 95}},
      "physics": {"enabled": false},
      "interaction": {"hover": true, "tooltipDelay": 120, "navigationButtons": true, "zoomView": true}
    }""")
    return _offline(net.generate_html(notebook=False))


_CDN = re.compile(r'<(?:link|script)\b[^>]*\b(?:href|src)="https?://[^"]*"[^>]*>(?:\s*</script>)?')


def _offline(page: str) -> str:
    """pyvis's page with vis-network inline and nothing fetched from elsewhere: its Bootstrap
    links (styling for a card frame we do not show) are dropped."""
    return _CDN.sub("", page)


def tree_sunburst(tree: MemoryTree, visited: set[int] | None = None) -> go.Figure:
    """The same tree as a sunburst (root in the middle, leaves outside), sized by tokens."""
    visited = visited or set()
    ids = [str(n.id) for n in tree.nodes]
    fig = go.Figure(go.Sunburst(
        ids=ids, labels=[node_label(tree, n.id) for n in tree.nodes],
        parents=["" if n.parent is None else str(n.parent) for n in tree.nodes],
        values=[max(1, n.tokens) for n in tree.nodes], branchvalues="total",
        hovertext=[html.escape(_wrap(n.summary, 60, 400), quote=False).replace("\n", "<br>") for n in tree.nodes],
        hoverinfo="label+text",
        marker={"colors": [REREAD if n.id in visited else (RAW if n.is_leaf else GIST) for n in tree.nodes]},
        maxdepth=4,
    ))
    fig.update_layout(height=560, margin=dict(l=0, r=0, t=10, b=0))
    return fig
