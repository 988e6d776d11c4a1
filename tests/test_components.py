"""What the app draws from document and model text is inert: escaped HTML, a safe graph."""
from components.ask_view import context_html, page_strip_html
from components.pages_view import pages_html
from components.tree_view import tree_graph_html, tree_sunburst
from core.documents import parse_text
from core.memwalker import MemoryTree, TreeNode

EVIL = "</script><script>alert(1)</script> <img src=x onerror=alert(2)> a href=javascript:alert(3)"


def test_pages_are_escaped_and_say_who_chose_each_pause_point():
    doc = parse_text(f"{EVIL}\n\nSecond paragraph here.")
    pages = [{"start": 0, "end": 2, "words": 20, "break_by": "model", "break_reason": EVIL, "gist": EVIL,
              "gist_by": "model"}]
    out = pages_html(doc, pages, 0, 0, by="gme-simulator")
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


def small_tree(summary: str) -> MemoryTree:
    leaves = [TreeNode(i, 1, i, (), 2, i, i + 1, summary, "model", text=summary, tokens=10) for i in range(2)]
    root = TreeNode(2, 2, 0, (0, 1), None, 0, 2, summary, "model", tokens=20)
    return MemoryTree("d", "t", 10, (*leaves, root), tree_id=1)


def test_tree_graph_keeps_summaries_inert_and_draws_the_walk():
    visits = [{"node": 2, "move": "down", "to": 0}, {"node": 0, "move": "revert", "to": 2},
              {"node": 2, "move": "down", "to": 1}, {"node": 1, "move": "answer", "to": None}]
    out = tree_graph_html(small_tree(EVIL), visits=visits)
    assert "<script>alert(1)" not in out and "<img src=x" not in out
    assert "popup.innerHTML" not in out  # pyvis's HTML tooltip is never switched on
    assert "#1,3" in out  # the root, visited at steps 1 and 3
    assert '"dashes": true' in out  # the revert


def test_sunburst_hover_text_is_escaped():
    fig = tree_sunburst(small_tree(EVIL))
    assert all("<script>" not in t and "<img" not in t for t in fig.data[0].hovertext)
