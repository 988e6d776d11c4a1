"""The walk's drawing (core/methods/memwalker/drawing.py): readable at the width it is given, the walk
always drawn, the rest folded and counted, every text from the tree escaped."""
import re

import pytest

from core.engine import OFFLINE
from core.methods.ask import ask
from core.methods.base import Question
from core.methods.memwalker.drawing import BOX_W, GAP, MORE_W, layout, legend_html, node_label, walk_svg
from core.methods.memwalker.tree import load_tree
from core.methods.memwalker.walk import Visit
from core.text.documents import load_path

QUESTION = "Where does Victor create the creature?"


@pytest.fixture(scope="module")
def frankenstein(tmp_path_factory):
    """Frankenstein's tree (116 nodes: 100 leaves, 13, 2, root) and an offline walk on it."""
    from core.store import open_db
    from tests.conftest import book

    store = open_db(tmp_path_factory.mktemp("draw") / "d.db")
    document = load_path(book("frankenstein"))
    store.save_document(document)
    result = ask(store, OFFLINE, document.id, Question(QUESTION), method="memwalker")
    tree = load_tree(store, result.details.tree.tree_id)
    yield tree, result.details.trajectory
    store.close()


def texts(svg: str) -> list[tuple[int, str]]:
    return [(int(size), text) for size, text in re.findall(r'<text [^>]*font-size="(\d+)"[^>]*>([^<]*)</text>', svg)]


@pytest.mark.parametrize("width", [880, 430])
@pytest.mark.parametrize("levels", [None, 1, 3])
def test_every_row_fits_and_every_label_is_readable(frankenstein, width, levels):
    tree, visits = frankenstein
    rows = layout(tree, visits, levels=levels, width=width)
    for row in rows:
        assert all(b.x >= 0 and b.x + b.width <= width for b in row), [(b.node, b.x) for b in row]
    svg = walk_svg(tree, visits, levels=levels, width=width)
    assert f'width="{width}"' in svg and "max-width:none" in svg  # drawn at its own size, never scaled down
    assert texts(svg) and min(size for size, _ in texts(svg)) >= 12


@pytest.mark.parametrize("levels", [None, 3])
def test_the_walk_is_always_drawn_and_what_is_folded_is_counted(frankenstein, levels):
    tree, visits = frankenstein
    rows = layout(tree, visits, levels=levels, width=880)
    drawn = {b.node for row in rows for b in row if b.node is not None}
    folded = [h for row in rows for b in row if b.node is None for h in b.hidden]
    assert {v.node for v in visits} | {v.to for v in visits if v.to is not None} <= drawn
    assert not drawn & set(folded) and len(folded) == len(set(folded))
    if levels == 3:  # every node is drawn, counted in a "+N" box, or below one
        below = set(folded)
        stack = list(folded)
        while stack:
            for child in tree.node(stack.pop()).children:
                below.add(child)
                stack.append(child)
        assert drawn | below == {n.id for n in tree.nodes}
    labels = [t for _, t in texts(walk_svg(tree, visits, levels=levels))]
    for n, visit in enumerate(visits, 1):
        if visit.move == "revert":
            assert f"revert #{n}" in labels
        elif visit.move == "down":
            assert f"#{n}" in labels
    assert node_label(tree, tree.root.id) in labels


def test_a_narrow_drawing_folds_more(frankenstein):
    tree, visits = frankenstein
    wide = layout(tree, visits, levels=2, width=880)
    narrow = layout(tree, visits, levels=2, width=430)
    count = lambda rows: sum(1 for row in rows for b in row if b.node is not None)  # noqa: E731
    assert count(narrow) < count(wide)
    assert all(sum(b.width for b in row) + GAP * (len(row) - 1) <= 430 for row in narrow)
    assert MORE_W < BOX_W  # folded siblings are small


def test_summaries_and_labels_are_escaped(frankenstein):
    tree, visits = frankenstein
    from dataclasses import replace

    evil = "<script>alert(1)</script> & \"quoted\" <img src=x onerror=alert(2)>"
    nodes = tuple(replace(n, summary=evil) for n in tree.nodes)
    svg = walk_svg(replace(tree, nodes=nodes), visits)
    assert "<script" not in svg and "<img" not in svg and "&lt;script&gt;" in svg
    assert "\n" not in svg  # one line: Markdown leaves an HTML block alone only without blank lines


def test_a_walk_that_answers_marks_its_leaf(frankenstein):
    tree, _ = frankenstein
    leaf = tree.leaves[3]
    parents = [leaf.parent]
    while tree.node(parents[-1]).parent is not None:
        parents.append(tree.node(parents[-1]).parent)
    path = list(reversed(parents))
    visits = [Visit(node, tree.node(node).level, "triage", "down", nxt, 0, "", "offline")
              for node, nxt in zip(path, path[1:] + [leaf.id])]
    visits.append(Visit(leaf.id, 1, "leaf", "answer", None, -2, "found it", "offline"))
    svg = walk_svg(tree, visits)
    assert "✓ answered here" in svg and f">{node_label(tree, leaf.id)}<" in svg
    assert 'stroke="#1b4332" stroke-width="4"' in svg  # the ring


def test_the_legend_names_the_colours_it_uses():
    legend = legend_html()
    for words in ("visited", "summary node", "leaf (raw segment)", "+N: nodes not drawn", "revert", "answered here"):
        assert words in legend
    assert "#dee2e6" in legend  # the "+N" grey, as drawn (the old legend said grey and drew orange)
