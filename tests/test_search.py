"""Searching a book's pages and gists: literal, case-blind, quote-blind, limited, and safe to show."""
import pytest

from components.pages_view import marked
from core.text.search import clean_query, find_spans, search_pages, snippet

TEXT = "Mr. Darcy’s estate, Pemberley, was large.\nShe said: “Pemberley!” (a+b) * [x] ^$ | \\d"


@pytest.mark.parametrize("query, found", [
    ("pemberley", ["Pemberley", "Pemberley"]),
    ("PEMBERLEY", ["Pemberley", "Pemberley"]),
    ("Darcy's", ["Darcy’s"]),  # a straight quote finds a curly one
    ("Darcy’s", ["Darcy’s"]),
    ('"Pemberley"', ["Pemberley", "Pemberley"]),  # quotes around the query are dropped
    ("“Pemberley!”", ["Pemberley!"]),
    ('said: "Pemberley', ["said: “Pemberley"]),  # quotes inside are kept, curly or not
    ("large. She", ["large.\nShe"]),  # spaces in the query match a line break
    ("  estate,   Pemberley ", ["estate, Pemberley"]),
    ("(a+b)", ["(a+b)"]),  # regex metacharacters are letters
    ("[x] ^$ |", ["[x] ^$ |"]),
    ("*", ["*"]),
    ("\\d", ["\\d"]),
    (".*", []),
    ("a|b", []),
    ("", []),
    ("   ", []),
    ("Wickham", []),
])
def test_find_spans_is_literal_and_case_and_quote_blind(query, found):
    assert [TEXT[s:e] for s, e in find_spans(TEXT, query)] == found


@pytest.mark.parametrize("text, query, found", [
    ("İstanbul and Pemberley", "pemberley", ["Pemberley"]),  # İ lowers to two letters: offsets stay true
    ("a İ b", "İ", ["İ"]),
    ("ÉLIZABETH", "élizabeth", ["ÉLIZABETH"]),
])
def test_offsets_stay_true_when_a_letter_lowers_to_two(text, query, found):
    assert [text[s:e] for s, e in find_spans(text, query)] == found


@pytest.mark.parametrize("query, cleaned", [
    ('"Pemberley"', "Pemberley"), ("‘Lizzy’", "Lizzy"), ("  a   b ", "a b"), ('""', '""'), ("x" * 500, "x" * 200),
])
def test_clean_query(query, cleaned):
    assert clean_query(query) == cleaned


PAGES = [("Nothing here.", "a gist"), ("Pemberley woods", "They visit Pemberley."), ("", "Gist of pemberley only"),
         ("<script>alert('Pemberley')</script> **Pemberley** [x](javascript:alert(1))", "")]


@pytest.mark.parametrize("query, limit, pages, listed, hits, where", [
    ("pemberley", 30, 3, [1, 2, 3], 5, ["text", "gist", "text"]),
    ("pemberley", 2, 3, [1, 2], 5, ["text", "gist"]),
    ("gist", 30, 2, [0, 2], 2, ["gist", "gist"]),
    ("<script>", 30, 1, [3], 1, ["text"]),
    ("**Pemberley**", 30, 1, [3], 1, ["text"]),
    ("](javascript:", 30, 1, [3], 1, ["text"]),
    ("nowhere", 30, 0, [], 0, []),
])
def test_search_pages_lists_pages_in_order_and_counts_them_all(query, limit, pages, listed, hits, where):
    result = search_pages(PAGES, query, limit=limit)
    assert result.pages == pages and result.hits == hits
    assert [m.page for m in result.matches] == listed and [m.where for m in result.matches] == where
    assert result.cut == (pages > len(listed))
    for m in result.matches:
        assert m.spans and all(m.snippet[s:e].lower().replace("’", "'") in query.lower() or
                               query.lower() in m.snippet[s:e].lower() for s, e in m.spans)


def test_a_snippet_is_cut_at_spaces_with_ellipses_and_keeps_the_spans():
    text = ("word " * 40) + "Pemberley\nhere " + ("more " * 40)
    spans = find_spans(text, "pemberley")
    quoted, inside = snippet(text, spans, chars=30)
    assert quoted.startswith("…word") and quoted.endswith("more…") and "\n" not in quoted
    assert [quoted[s:e] for s, e in inside] == ["Pemberley"]
    assert snippet("Pemberley", [(0, 9)]) == ("Pemberley", ((0, 9),))


@pytest.mark.parametrize("text, query, html", [
    ("<script>Pemberley</script>", "pemberley", "&lt;script&gt;<mark>Pemberley</mark>&lt;/script&gt;"),
    ("a <b> b", "<b>", "a <mark>&lt;b&gt;</mark> b"),
    ("Tom & Jerry", "&", "Tom <mark>&amp;</mark> Jerry"),
    ("amp; &amp;", "amp", "<mark>amp</mark>; &amp;<mark>amp</mark>;"),  # escaping never makes a match
    ("**bold** [l](x)", "bold", "**<mark>bold</mark>** [l](x)"),
    ("no match", "zzz", "no match"),
    ("x", "", "x"),
])
def test_matches_are_marked_in_escaped_text(text, query, html):
    assert marked(text, find_spans(text, query)) == html


def test_pages_html_marks_matches_in_text_and_gist_escaped_and_outlines_the_target():
    from components.pages_view import pages_html
    from core.store.records import Page
    from core.text.documents import parse_text

    doc = parse_text("<script>alert('Pemberley')</script>\n\nSecond paragraph.")
    pages = [Page(start=0, end=1, text=doc.span_text(0, 1), words=3, break_by="offline", gist="<b>Pemberley</b>",
                  gist_by="offline"),
             Page(start=1, end=2, text=doc.span_text(1, 2), words=2, break_by="rule")]
    out = pages_html(pages, 0, 1, query="pemberley", target=1)
    assert "<script>" not in out and "<b>Pemberley" not in out
    assert "&lt;script&gt;alert(&#x27;<mark>Pemberley</mark>&#x27;)" in out and "&lt;b&gt;<mark>Pemberley</mark>" in out
    assert 'class="gme-page" id="page-0"' in out and 'class="gme-page target" id="page-1"' in out
