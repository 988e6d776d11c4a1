"""MemWalker's memory tree to explore: an interactive graph (pyvis, inline so it works offline) and an
icicle or sunburst of the whole tree, each with the path a walk took drawn on it. The walk itself is
drawn for reading by ``core.methods.memwalker.drawing`` (an SVG, the same in the report).

What the graph draws (``graph_elements``): every node within ``levels`` levels below the root,
and whatever the size, every node a walk visited, its ancestors and the children it was shown
at each step; the other children of a drawn node are collapsed into one "+N" box. Reverts are
red dashed arrows, the leaf answered from has a dark border.

Text safety: pyvis writes nodes with Jinja's ``tojson`` (``<`` becomes ``\\u003c``) and
vis-network shows a string tooltip with ``innerText``, so summaries display as text. pyvis
switches to an ``innerHTML`` tooltip when any title contains "href"; titles are kept free
of that word so the safe tooltip is always used. Plotly hover text is HTML-escaped.
"""
from __future__ import annotations

import html
import re
import textwrap

import plotly.graph_objects as go
from pyvis.network import Network

from components.ui import GIST, GIST_BG, RAW, RAW_BG, REREAD
from core.methods.memwalker.drawing import ANSWERED, COLLAPSED, REVERT, WalkMarks, node_label, visible_nodes
from core.methods.memwalker.tree import MemoryTree
from core.methods.memwalker.walk import Visit

ZWSP = "\u200b"


def _title(text: str) -> str:
    return text.replace("href", f"h{ZWSP}ref").replace("HREF", f"H{ZWSP}REF")


def _wrap(text: str, width: int = 70, limit: int = 900) -> str:
    text = text if len(text) <= limit else text[:limit] + "…"
    return "\n".join(textwrap.wrap(text, width)) or "(no summary)"


def _below(tree: MemoryTree, node_id: int) -> int:
    node = tree.node(node_id)
    return 1 + sum(_below(tree, c) for c in node.children)


def graph_elements(tree: MemoryTree, visits: list[Visit] | None = None,
                   levels: int | None = None) -> tuple[list[dict], list[dict]]:
    """The graph as vis-network nodes and edges (plain dicts, so tests read what is drawn)."""
    top = tree.root.level
    marks = WalkMarks.of(visits)
    shown = visible_nodes(tree, visits, levels)
    nodes, edges = [], []
    for node in tree.nodes:
        if node.id not in shown:
            continue
        steps = marks.order.get(node.id)
        answered = node.id == marks.answered_at
        color = REREAD if steps else (RAW if node.is_leaf else GIST)
        label = node_label(tree, node.id) + (f"\n#{','.join(map(str, steps))}" if steps else "")
        label += "\n✓ answer" if answered else ""
        kind = "Leaf (raw segment)" if node.is_leaf else f"Level {node.level} summary"
        title = f"{kind} · paragraphs {node.start}–{node.end - 1}\n\n{_wrap(node.summary)}"
        nodes.append(dict(id=node.id, label=label, title=_title(title), level=top - node.level, shape="box",
                          color={"background": color, "border": ANSWERED if answered else color},
                          borderWidth=5 if answered else 1, font={"color": "white", "size": 18 if steps else 16}))
        hidden = [c for c in node.children if c not in shown]
        if hidden and not steps:  # a node the walk did not enter: its hidden children are counted on it
            nodes[-1]["label"] += f"\n▸ +{len(hidden)}"
            nodes[-1]["title"] = _title(f"{len(hidden)} children not drawn\n\n") + nodes[-1]["title"]
        elif hidden:  # a node on the walk: the children it did not take stand as one "+N" box beside those it did
            total = sum(_below(tree, c) for c in hidden)
            first, last = tree.node(hidden[0]), tree.node(hidden[-1])
            nodes.append(dict(
                id=f"more-{node.id}", label=f"+{len(hidden)}", shape="box", level=top - node.level + 1,
                title=f"{len(hidden)} children not on the walk ({total} nodes with what is below them), "
                      f"{node_label(tree, first.id)} … {node_label(tree, last.id)}. "
                      "Draw more levels, or use the icicle, to see them.",
                color={"background": COLLAPSED, "border": "#adb5bd"}, font={"color": "#343a40", "size": 16}))
            edges.append(dict(source=node.id, to=f"more-{node.id}", color="#ced4da", width=1, dashes=True))
    for node in tree.nodes:
        if node.parent is not None and node.id in shown and node.parent in shown:
            walked = node.id in marks.order and node.parent in marks.order
            edges.append(dict(source=node.parent, to=node.id, color=REREAD if walked else "#adb5bd",
                              width=3 if walked else 1))
    for step, child, parent in marks.reverts:
        if child in shown and parent in shown:
            edges.append(dict(source=child, to=parent, color=REVERT, dashes=True, width=2,
                              label=f"revert #{step}", font={"color": REVERT, "size": 16}))
    return nodes, edges


def tree_graph_html(tree: MemoryTree, *, visits: list[Visit] | None = None, levels: int | None = None,
                    height: int = 560) -> str:
    """The tree top-down (see ``graph_elements`` for what is drawn), as a page with nothing to fetch."""
    nodes, edges = graph_elements(tree, visits, levels)
    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", layout=True)
    for node in nodes:
        net.add_node(node.pop("id"), **node)
    for edge in edges:
        net.add_edge(edge.pop("source"), edge.pop("to"), **edge)
    wide = sum(1 for n in nodes if n["level"] == max(x["level"] for x in nodes)) > 30
    net.set_options("""{
      "layout": {"hierarchical": {"enabled": true, "direction": "UD", "sortMethod": "directed",
                 "levelSeparation": 110, "nodeSpacing": %d}},
      "physics": {"enabled": false},
      "interaction": {"hover": true, "tooltipDelay": 120, "navigationButtons": true, "zoomView": true}
    }""" % (70 if wide else 95))
    return _offline(net.generate_html(notebook=False))


_CDN = re.compile(r'<(?:link|script)\b[^>]*\b(?:href|src)="https?://[^"]*"[^>]*>(?:\s*</script>)?')


# A graph first drawn in a hidden tab is laid out at zero size: fit it again when it gets a size.
_REFIT = ('<script>window.addEventListener("resize", function () {'
          ' if (typeof network !== "undefined") { network.redraw(); network.fit(); } });</script>')


def _offline(page: str) -> str:
    """pyvis's page with vis-network inline and nothing fetched from elsewhere (its Bootstrap
    links, styling for a card frame we do not show, are dropped), refitted when resized."""
    return _CDN.sub("", page).replace("</body>", _REFIT + "</body>", 1)


def node_colors(tree: MemoryTree, visits: list[Visit] | None = None) -> list[str]:
    """One colour a node for the whole-tree charts: the walk's path strong (the answering leaf
    darkest, nodes gone back from red), everything else pale."""
    marks = WalkMarks.of(visits)
    reverted = {child for _, child, _ in marks.reverts}
    colors = []
    for n in tree.nodes:
        if n.id == marks.answered_at:
            colors.append(ANSWERED)
        elif n.id in reverted:
            colors.append(REVERT)
        elif n.id in marks.order:
            colors.append(REREAD)
        elif visits:
            colors.append(RAW_BG if n.is_leaf else GIST_BG)
        else:
            colors.append(RAW if n.is_leaf else GIST)
    return colors


def tree_chart(tree: MemoryTree, visits: list[Visit] | None = None, *, kind: str = "icicle",
               height: int = 560) -> go.Figure:
    """The whole tree, root on top (icicle) or in the middle (sunburst), sized by tokens, with the
    walk's path highlighted and each visited node's steps in its label."""
    marks = WalkMarks.of(visits)
    labels = [node_label(tree, n.id) + (f" #{','.join(map(str, marks.order[n.id]))}" if n.id in marks.order else "")
              for n in tree.nodes]
    hover = [html.escape(_wrap(n.summary, 60, 400), quote=False).replace("\n", "<br>") for n in tree.nodes]
    common = dict(ids=[str(n.id) for n in tree.nodes], labels=labels,
                  parents=["" if n.parent is None else str(n.parent) for n in tree.nodes],
                  values=[max(1, n.tokens) for n in tree.nodes], branchvalues="total", hovertext=hover,
                  hoverinfo="label+text", marker={"colors": node_colors(tree, visits)}, sort=False)
    if kind == "sunburst":
        trace = go.Sunburst(**common)
    else:
        trace = go.Icicle(**common, tiling={"orientation": "v"}, root={"color": "white"})
    fig = go.Figure(trace)
    fig.update_layout(height=height, margin=dict(l=0, r=0, t=10, b=0))
    return fig


def tree_sunburst(tree: MemoryTree, visits: list[Visit] | None = None) -> go.Figure:
    return tree_chart(tree, visits, kind="sunburst")
