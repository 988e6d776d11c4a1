"""A MemWalker walk drawn on its memory tree, as an SVG that reads at 1280 px: one layout for the app
(Ask, Memory tree, Runs, Inspect) and for the HTML report.

What is drawn (``visible_nodes``): every node within ``levels`` levels below the root (None: only what
the walk needs), and whatever the size, every node the walk visited, its ancestors and the children each
triage step offered. A row never gets more boxes than fit the width at a readable size: children not
drawn, and runs of siblings the walk did not enter when a row is too full, become one small grey "+N"
box. Rows keep the text's order (left to right), centred, so the walked path sits in the middle.

The walk: visited nodes are green with the steps they were visited at ("#1", "#4"), each step down is a
green arrow numbered by its step, a revert is a red dashed arrow back to the parent labelled
"revert #n", and the leaf answered from has a dark ring. Labels are 12-13 px at the drawn size; the SVG
is drawn at its own width (never scaled down), so a narrow place asks for a narrower drawing.

Every text from the tree (summaries, in tooltips) is escaped.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from core.methods.memwalker.tree import MemoryTree
from core.methods.memwalker.walk import Visit

# The app's palette (components/ui.py uses the same values): gists amber, raw text blue, re-read green.
GIST, GIST_BG, RAW, REREAD = "#b7791f", "#fdf3dc", "#3b5bdb", "#2b8a3e"
REVERT, ANSWERED, COLLAPSED, COLLAPSED_TEXT, EDGE = "#e03131", "#1b4332", "#dee2e6", "#343a40", "#adb5bd"

BOX_W, BOX_H, MORE_W, GAP, ROW_H, MARGIN = 84, 42, 46, 12, 92, 16
FONT, SMALL = 13, 12


def node_label(tree: MemoryTree, node_id: int) -> str:
    node = tree.node(node_id)
    if node_id == tree.root.id:
        return "root"
    return f"leaf {node.index}" if node.is_leaf else f"L{node.level}·{node.index}"


def depth_of(tree: MemoryTree) -> int:
    """Levels below the root (a root with leaves for children: 1)."""
    return tree.root.level - 1


@dataclass
class WalkMarks:
    """A walk's trajectory, as the drawings need it."""
    order: dict[int, list[int]] = field(default_factory=dict)  # node -> the steps (1-based) it was visited at
    reverts: list[tuple[int, int, int]] = field(default_factory=list)  # (step, from node, to its parent)
    downs: list[tuple[int, int, int]] = field(default_factory=list)  # (step, from node, to a child)
    answered_at: int | None = None
    shown: set[int] = field(default_factory=set)  # children offered at a triage step

    @classmethod
    def of(cls, visits: list[Visit] | None) -> "WalkMarks":
        marks = cls()
        for n, v in enumerate(visits or [], 1):
            marks.order.setdefault(v.node, []).append(n)
            if v.move == "revert" and v.to is not None:
                marks.reverts.append((n, v.node, v.to))
            elif v.move == "down" and v.to is not None:
                marks.downs.append((n, v.node, v.to))
            if v.move == "answer":
                marks.answered_at = v.node
            marks.shown.update(v.shown)
        return marks


def visible_nodes(tree: MemoryTree, visits: list[Visit] | None = None, levels: int | None = None) -> set[int]:
    """The nodes drawn: those at most ``levels`` levels below the root (all when ``None``), every
    node visited with its ancestors, and the children each triage step offered."""
    top = tree.root.level
    keep = {n.id for n in tree.nodes if levels is None or top - n.level <= levels}
    marks = WalkMarks.of(visits)
    for node_id in set(marks.order) | (marks.shown & {n.id for n in tree.nodes}):
        while node_id is not None and node_id not in keep:
            keep.add(node_id)
            node_id = tree.node(node_id).parent
    for node_id in list(marks.order):  # the ancestors of nodes already kept (the loop stops at the first)
        parent = tree.node(node_id).parent
        while parent is not None:
            keep.add(parent)
            parent = tree.node(parent).parent
    return keep


@dataclass
class Box:
    """One box of the drawing: a node, or "+N" standing for ``hidden`` nodes of one parent."""
    node: int | None
    parent: int | None
    hidden: tuple[int, ...] = ()
    x: float = 0.0
    y: float = 0.0

    @property
    def width(self) -> int:
        return BOX_W if self.node is not None else MORE_W


def _row_width(row: list[Box]) -> int:
    return sum(b.width for b in row) + GAP * max(0, len(row) - 1)


def _squeeze(row: list[Box], walked: set[int], width: int) -> list[Box]:
    """The row with runs of nodes the walk did not enter folded into "+N" boxes until it fits ``width``
    (the longest run first; a run never crosses from one parent's children to another's)."""
    while _row_width(row) > width:
        runs, k = [], 0
        while k < len(row):
            if row[k].node is not None and row[k].node in walked:
                k += 1
                continue
            end = k
            while (end + 1 < len(row) and row[end + 1].parent == row[k].parent
                   and (row[end + 1].node is None or row[end + 1].node not in walked)):
                end += 1
            if end > k or row[k].node is not None:  # a lone "+N" box folds into nothing smaller
                runs.append((k, end))
            k = end + 1
        if not runs:
            break  # only the walk's own nodes are left: nothing more can fold
        k, end = max(runs, key=lambda r: r[1] - r[0])
        hidden = tuple(h for b in row[k:end + 1] for h in ((b.node,) if b.node is not None else b.hidden))
        row = row[:k] + [Box(None, row[k].parent, hidden)] + row[end + 1:]
    return row


def layout(tree: MemoryTree, visits: list[Visit] | None = None, *, levels: int | None = None,
           width: int = 880) -> list[list[Box]]:
    """The rows of boxes, root first, placed in a drawing ``width`` pixels wide."""
    marks = WalkMarks.of(visits)
    keep = visible_nodes(tree, visits, levels if levels is not None else (0 if visits else None))
    walked = set(marks.order)
    rows: list[list[Box]] = [[Box(tree.root.id, None)]]
    while True:
        row: list[Box] = []
        for box in rows[-1]:
            if box.node is None:
                continue
            children = tree.node(box.node).children
            shown = [c for c in children if c in keep]
            hidden = tuple(c for c in children if c not in keep)
            row += [Box(c, box.node) for c in shown]
            if hidden:
                row.append(Box(None, box.node, hidden))
        if not row:
            break
        rows.append(_squeeze(row, walked, width - 2 * MARGIN))
    for depth, row in enumerate(rows):
        x = (width - _row_width(row)) / 2
        for box in row:
            box.x, box.y = x, MARGIN + 14 + depth * ROW_H
            x += box.width + GAP
    return rows


def _centre(box: Box) -> tuple[float, float]:
    return box.x + box.width / 2, box.y + BOX_H / 2


def _text(x: float, y: float, text: str, *, size: int = FONT, color: str = "#212529", weight: str = "normal",
          anchor: str = "middle", halo: bool = False) -> str:
    halo_attr = ' stroke="white" stroke-width="4" paint-order="stroke"' if halo else ""
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" fill="{color}" '
            f'text-anchor="{anchor}" font-family="sans-serif"{halo_attr}>{html.escape(text)}</text>')


def _head(x1: float, y1: float, x2: float, y2: float, color: str, size: float = 9.0) -> str:
    """An arrowhead at (x2, y2) pointing along (x1, y1) -> (x2, y2) (drawn, not a marker: the report
    refers to nothing, not even inside itself)."""
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    bx, by = x2 - ux * size, y2 - uy * size
    points = f"{x2:.1f},{y2:.1f} {bx - uy * size / 2:.1f},{by + ux * size / 2:.1f} {bx + uy * size / 2:.1f},{by - ux * size / 2:.1f}"
    return f'<polygon points="{points}" fill="{color}"/>'


def _tip(text: str, limit: int = 400) -> str:
    text = " ".join((text or "").split())
    return html.escape(text if len(text) <= limit else text[:limit] + "…")


def walk_svg(tree: MemoryTree, visits: list[Visit] | None = None, *, levels: int | None = None,
             width: int = 880) -> str:
    """The tree and the walk on it (see the module docstring) as one ``<svg>`` element."""
    marks = WalkMarks.of(visits)
    rows = layout(tree, visits, levels=levels, width=width)
    boxes = {b.node: b for row in rows for b in row if b.node is not None}
    height = MARGIN * 2 + 14 + ROW_H * (len(rows) - 1) + BOX_H + 22
    out = [f'<svg width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="MemWalker memory tree and walk" '
           f'style="max-width:none">']
    # the tree's edges, under everything
    for row in rows[1:]:
        for box in row:
            parent = boxes.get(box.parent)
            if parent is None:
                continue
            (x1, y1), (x2, y2) = _centre(parent), _centre(box)
            dash = ' stroke-dasharray="4,4"' if box.node is None else ""
            out.append(f'<line x1="{x1:.0f}" y1="{y1 + BOX_H / 2:.0f}" x2="{x2:.0f}" y2="{y2 - BOX_H / 2:.0f}" '
                       f'stroke="{EDGE}" stroke-width="1.2"{dash}/>')
    # the walk: steps down (green, numbered), reverts (red dashed, curved back up)
    labels = []
    for step, frm, to in marks.downs:
        if frm in boxes and to in boxes:
            (x1, y1), (x2, y2) = _centre(boxes[frm]), _centre(boxes[to])
            y1, y2 = y1 + BOX_H / 2, y2 - BOX_H / 2 - 2
            out.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="{REREAD}" '
                       f'stroke-width="3"/>' + _head(x1, y1, x2, y2, REREAD))
            labels.append(_text((x1 + x2) / 2 + 10, (y1 + y2) / 2 + 4, f"#{step}", size=SMALL, color=REREAD,
                                weight="bold", anchor="start", halo=True))
    for step, frm, to in marks.reverts:
        if frm in boxes and to in boxes:
            (x1, y1), (x2, y2) = _centre(boxes[frm]), _centre(boxes[to])
            y1, y2 = y1 - BOX_H / 2, y2 + BOX_H / 2 + 2
            bend = -50 if x1 <= x2 else 50
            cx, cy = (x1 + x2) / 2 + bend, (y1 + y2) / 2
            out.append(f'<path d="M{x1 - 8:.0f},{y1:.0f} Q{cx:.0f},{cy:.0f} {x2 - 8:.0f},{y2:.0f}" fill="none" '
                       f'stroke="{REVERT}" stroke-width="2.5" stroke-dasharray="6,4"/>' + _head(cx, cy, x2 - 8, y2, REVERT))
            labels.append(_text(cx + (-6 if bend < 0 else 6), cy + 4, f"revert #{step}", size=SMALL, color=REVERT,
                                weight="bold", anchor="end" if bend < 0 else "start", halo=True))
    # the boxes
    for row in rows:
        for box in row:
            if box.node is None:
                first, last = box.hidden[0], box.hidden[-1]
                tip = (f"{len(box.hidden)} nodes not drawn: {node_label(tree, first)} … {node_label(tree, last)}. "
                       "Draw more levels, or open the icicle, to see them.")
                out.append(f'<g><title>{html.escape(tip)}</title><rect x="{box.x:.0f}" y="{box.y + 8:.0f}" '
                           f'width="{box.width}" height="{BOX_H - 16}" rx="5" fill="{COLLAPSED}" stroke="{EDGE}"/>'
                           + _text(box.x + box.width / 2, box.y + BOX_H / 2 + 4, f"+{len(box.hidden)}", size=SMALL,
                                   color=COLLAPSED_TEXT) + "</g>")
                continue
            node = tree.node(box.node)
            steps = marks.order.get(box.node)
            fill = REREAD if steps else (RAW if node.is_leaf else GIST)
            ring = (f' stroke="{ANSWERED}" stroke-width="4"' if box.node == marks.answered_at
                    else ' stroke="white" stroke-width="1"')
            kind = "Leaf (raw segment)" if node.is_leaf else f"Level {node.level} summary"
            tip = f"{node_label(tree, box.node)} · {kind} · paragraphs {node.start}–{node.end - 1}: {node.summary}"
            label_y = box.y + (BOX_H / 2 - 2 if steps else BOX_H / 2 + 5)
            parts = [f'<g><title>{_tip(tip)}</title><rect x="{box.x:.0f}" y="{box.y:.0f}" width="{box.width}" '
                     f'height="{BOX_H}" rx="6" fill="{fill}"{ring}/>',
                     _text(box.x + box.width / 2, label_y, node_label(tree, box.node), color="white", weight="bold")]
            if steps:
                parts.append(_text(box.x + box.width / 2, box.y + BOX_H - 7, "#" + ",".join(map(str, steps)),
                                   size=SMALL, color="white"))
            if box.node == marks.answered_at:
                parts.append(_text(box.x + box.width / 2, box.y + BOX_H + 16, "✓ answered here", size=SMALL,
                                   color=ANSWERED, weight="bold"))
            out.append("".join(parts) + "</g>")
    return "".join(out + labels) + "</svg>"


LEGEND = (("visited (steps #n)", REREAD, "box"), ("summary node", GIST, "box"), ("leaf (raw segment)", RAW, "box"),
          ("+N: nodes not drawn", COLLAPSED, "box"), ("step down", REREAD, "line"), ("revert", REVERT, "dash"),
          ("answered here", ANSWERED, "ring"))


def legend_html() -> str:
    """The drawing's legend, in the colours it uses."""
    items = []
    for text, color, shape in LEGEND:
        if shape == "box":
            mark = f'<span style="display:inline-block;width:14px;height:12px;border-radius:3px;background:{color};' \
                   f'border:1px solid {EDGE};vertical-align:-1px"></span>'
        elif shape == "ring":
            mark = f'<span style="display:inline-block;width:14px;height:12px;border-radius:3px;' \
                   f'border:3px solid {color};vertical-align:-2px"></span>'
        else:
            style = "dashed" if shape == "dash" else "solid"
            mark = f'<span style="display:inline-block;width:22px;border-top:3px {style} {color};vertical-align:3px">' \
                   '</span>'
        items.append(f'<span style="margin-right:1.1em;white-space:nowrap">{mark} {html.escape(text)}</span>')
    return f'<div class="gme-walk-legend" style="font-size:0.85rem;line-height:1.8">{"".join(items)}</div>'
