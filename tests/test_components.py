"""What the app draws from document and model text is inert: escaped HTML, a safe graph."""
from components.ask_view import context_html, page_strip_html
from components.pages_view import pages_html
from dataclasses import asdict, replace

from components.tree_view import ANSWERED, REVERT, graph_elements, tree_chart, tree_graph_html, tree_sunburst
from core.methods.memwalker.drawing import depth_of, visible_nodes
from components.ui import REREAD
from core.text.documents import parse_text
from core.methods.memwalker.tree import MemoryTree, TreeNode
from core.methods.memwalker.walk import Visit, WalkDetails
from core.store.records import Page

EVIL = "</script><script>alert(1)</script> <img src=x onerror=alert(2)> a href=javascript:alert(3)"


def test_pages_are_escaped_and_say_who_chose_each_pause_point():
    doc = parse_text(f"{EVIL}\n\nSecond paragraph here.")
    pages = [Page(start=0, end=2, text=doc.span_text(0, 2), words=20, break_by="model", break_reason=EVIL, gist=EVIL,
                  gist_by="model")]
    out = pages_html(pages, 0, 0, by="gme-simulator")
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "Page 0 ends here" in out and "chosen by gme-simulator" in out


def test_context_marks_re_read_pages_and_escapes_them():
    context = f"<Page 0>\n{EVIL}\n<Page 1>\na gist"
    out = context_html(context, expanded=[0])
    assert out.count('class="gme-ctx raw"') == 1 and out.count('class="gme-ctx gist"') == 1
    assert "<script>" not in out and "&lt;Page 0&gt;" in out


def test_page_strip_numbers_pages_in_look_up_order():
    out = page_strip_html(5, [3, 1])
    assert out.count("gme-cell reread") == 2
    assert 'title="Page 3: re-read, look-up #1"' in out and 'title="Page 1: re-read, look-up #2"' in out


def visit(node: int, move: str, to: int | None, kind: str = "triage", shown=()) -> Visit:
    return Visit(node, 1, kind, move, to, None, "", "offline", list(shown))


def small_tree(summary: str) -> MemoryTree:
    leaves = [TreeNode(i, 1, i, (), 2, i, i + 1, summary, "model", text=summary, tokens=10) for i in range(2)]
    root = TreeNode(2, 2, 0, (0, 1), None, 0, 2, summary, "model", tokens=20)
    return MemoryTree("d", "t", 10, (*leaves, root), tree_id=1)


def test_tree_graph_keeps_summaries_inert_and_draws_the_walk():
    visits = [visit(2, "down", 0), visit(0, "revert", 2), visit(2, "down", 1), visit(1, "answer", None)]
    out = tree_graph_html(small_tree(EVIL), visits=visits)
    assert "<script>alert(1)" not in out and "<img src=x" not in out
    assert "popup.innerHTML" not in out  # pyvis's HTML tooltip is never switched on
    assert "#1,3" in out  # the root, visited at steps 1 and 3
    assert '"dashes": true' in out  # the revert


def test_sunburst_hover_text_is_escaped():
    fig = tree_sunburst(small_tree(EVIL))
    assert all("<script>" not in t and "<img" not in t for t in fig.data[0].hovertext)


# --- a method's details are drawn by their kind, from one registry ---------------------------------

def test_every_methods_details_kind_is_drawn_or_plain():
    from components.ask_view import DETAIL_VIEWS
    from core.methods.registry import METHODS

    plain = {"plain", "truncation"}  # the answer, figures, context and trace say everything
    kinds = {spec.details.kind for spec in METHODS.values()}
    assert kinds - plain <= set(DETAIL_VIEWS), kinds - plain - set(DETAIL_VIEWS)
    assert not plain & set(DETAIL_VIEWS)


def answer_with_details(kind: str) -> None:
    from components.ask_view import render_ask_result
    from core.methods.ask import AskResult, AskRun, ModelUsage, Reading
    from core.methods.base import Answer, Details, Question
    from core.store import open_db

    details = type("Some", (Details,), {"kind": kind})()
    result = AskResult(AskRun(1, "x", "X", "offline", "Offline", "d", "T", {}, 0.1), Question("Why?"),
                       Answer("Because."), Reading([2, 0], [2], 10, 100, 90.0, "<Page 0>\na gist"),
                       ModelUsage(0, 0, 0, 0, 0), details=details)
    render_ask_result(open_db(":memory:"), result, n_pages=4, key="k")


def test_details_of_an_unknown_kind_add_nothing_and_a_known_kind_draws_its_view():
    from streamlit.testing.v1 import AppTest

    unknown = AppTest.from_function(answer_with_details, args=("not-a-kind",), default_timeout=30).run()
    assert not unknown.exception
    assert not any(m.value.startswith("**Pages re-read**") for m in unknown.markdown)
    assert "gme-strip" not in "".join(h.proto.body for h in unknown.get("html"))
    assert unknown.metric[0].label == "Words in context"  # the rest of the answer is drawn as ever

    lookup = AppTest.from_function(answer_with_details, args=("lookup",), default_timeout=30).run()
    assert not lookup.exception
    assert any(m.value == "**Pages re-read** (in look-up order)" for m in lookup.markdown)
    strip = next(h.proto.body for h in lookup.get("html") if "gme-strip" in h.proto.body)
    assert strip.count("gme-cell reread") == 2 and 'title="Page 2: re-read, look-up #1"' in strip


def test_a_setting_error_names_the_setting_as_the_screen_does():
    from components.ui import error_text
    from core.errors import SettingError

    said = error_text(SettingError("context_tokens", 5, "at least 256")).replace("\\", "")
    assert said.startswith("Context window (tokens) must be at least 256") and "--" not in said
    said = error_text(SettingError("segment_tokens", 5, "at least 50"), {"segment_tokens": "Tokens per segment"})
    assert said.replace("\\", "").startswith("Tokens per segment must be at least 50")
    bug = error_text(ZeroDivisionError("division by zero")).replace("\\", "")
    assert bug.startswith("Something went wrong (ZeroDivisionError") and "trace keeps the details" in bug


# --- the memory tree at any size: what the graph draws --------------------------------------------

def wide_tree(leaves: int = 100, fan: int = 8) -> MemoryTree:
    """A tree shaped as MemWalker builds Frankenstein's (100 leaves, fan-out 8: 116 nodes)."""
    from core.methods.memwalker.tree import balanced_groups

    nodes = [TreeNode(i, 1, i, (), None, i, i + 1, f"leaf {i}", "offline", text="x", tokens=10) for i in range(leaves)]
    level, below = 1, list(range(leaves))
    while len(below) > 1:
        level += 1
        above = []
        for index, group in enumerate(balanced_groups(len(below), fan)):
            children = tuple(below[g] for g in group)
            node_id = len(nodes)
            nodes.append(TreeNode(node_id, level, index, children, None, nodes[children[0]].start,
                                  nodes[children[-1]].end, f"summary {node_id}", "offline",
                                  tokens=sum(nodes[c].tokens for c in children)))
            for c in children:
                nodes[c] = replace(nodes[c], parent=node_id)
            above.append(node_id)
        below = above
    return MemoryTree("d", "t", 1000, tuple(nodes), tree_id=1)


def ten_steps_three_reverts(tree: MemoryTree) -> list[Visit]:
    """Down to a leaf, back up (1), another leaf, back twice (2, 3), down another branch, answer."""
    root = tree.root
    a, b = root.children[0], root.children[1]
    a0 = tree.node(a).children[0]
    b0 = tree.node(b).children[0]
    l1, l2 = tree.node(a0).children[:2]
    l3 = tree.node(b0).children[0]
    moves = [(root.id, "down", a), (a, "down", a0), (a0, "down", l1), (l1, "revert", a0), (a0, "down", l2),
             (l2, "revert", a0), (a0, "revert", a), (a, "revert", root.id), (root.id, "down", b), (b, "down", b0)]
    visits = [visit(n, m, t, "leaf" if tree.node(n).is_leaf else "triage", tree.node(n).children) for n, m, t in moves]
    return visits + [visit(b0, "down", l3, "triage", tree.node(b0).children), visit(l3, "answer", None, "leaf")]


def test_the_level_control_means_what_it_says_down_to_the_leaves():
    tree = wide_tree()
    assert len(tree.nodes) == 116 and tree.level_counts() == [100, 13, 2, 1] and depth_of(tree) == 3
    drawn = {levels: visible_nodes(tree, None, levels) for levels in (1, 2, 3)}
    assert [len(drawn[n]) for n in (1, 2, 3)] == [1 + 2, 1 + 2 + 13, 116]  # leaves at the slider's maximum
    nodes, _ = graph_elements(tree, None, 3)
    assert len(nodes) == 116 and not any(str(n["id"]).startswith("more-") for n in nodes)


def test_a_walk_is_drawn_node_for_node_with_its_reverts_and_answer_at_any_level():
    tree = wide_tree()
    visits = ten_steps_three_reverts(tree)
    visited = {v.node for v in visits}
    for levels in (1, 2, 3):
        nodes, edges = graph_elements(tree, visits, levels)
        ids = {n["id"] for n in nodes}
        assert visited <= ids
        assert sum(1 for e in edges if e.get("dashes") and e["color"] == REVERT) == 4
        answer = next(n for n in nodes if n["id"] == visits[-1].node)
        assert "✓ answer" in answer["label"] and answer["borderWidth"] == 5
    nodes, edges = graph_elements(tree, visits, 1)
    root = next(n for n in nodes if n["id"] == tree.root.id)
    assert root["label"] == "root\n#1,9"
    # what the walk did not enter is collapsed: the root's branches' other children as "+N" or "▸ +N"
    assert sum("▸ +" in n["label"] for n in nodes) == 11  # the branches offered but not entered
    assert len(nodes) == 1 + 2 + 13 + 8 + 8  # root, its children, theirs, and the two level-2 nodes entered
    stored = [{k: v for k, v in asdict(visit).items() if k != "shown"} for visit in visits]  # stored without "shown"
    old = WalkDetails.from_dict({"trajectory": stored}).trajectory
    nodes, _ = graph_elements(tree, old, 1)
    assert {v.node for v in visits} <= {n["id"] for n in nodes}
    assert any(str(n["id"]).startswith("more-") for n in nodes)  # the children it did not take, as "+N"


def test_the_icicle_highlights_the_path_and_escapes_summaries():
    tree = wide_tree()
    visits = ten_steps_three_reverts(tree)
    fig = tree_chart(small_tree(EVIL), [visit(2, "down", 1), visit(1, "answer", None)])
    assert all("<script>" not in t and "<img" not in t for t in fig.data[0].hovertext)
    fig = tree_chart(tree, visits)
    colors = dict(zip(map(int, fig.data[0].ids), fig.data[0].marker.colors))
    assert colors[visits[-1].node] == ANSWERED and colors[visits[2].to] == REVERT
    assert colors[tree.root.id] == REREAD and list(colors.values()).count(REREAD) == 3  # root, b, b0; a, a0 and two leaves were gone back from
    assert "#1,9" in fig.data[0].labels[-1]
