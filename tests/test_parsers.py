"""Table-driven tests of every reply parser, including malformed model replies."""
import pytest

from core.parsers import (STOP, parse_choice, parse_freeform, parse_gist, parse_next_page, parse_page_list,
                          parse_pause_point)

LABELS = [5, 6, 7, 8, 9]
ECHO = ("You are given a passage that is taken from a larger text (article, book, ...) and some numbered labels "
        "between the paragraphs in the passage.")


@pytest.mark.parametrize("reply, value, problem", [
    ("Break point: <7>\n Because the scene changes.", 7, None),
    ("Label: <8>\n Because the topic changes.", 8, None),  # the QMSum prompt's own format
    ("The break point is: <9>", 9, None),  # the notebook's parser falls back on this
    ("**Break point:** <6>", 6, None),
    ("Break point: ⟨5⟩", 5, None),
    ("<8>", 8, None),
    ("8", 8, None),
    ("Break point: 7 because", 7, None),
    ("I choose label 6 since the dialogue ends.", 6, None),
    ("Break point: <57>\n Because ...", None, "not one of the labels"),  # the prompt's example echoed
    ("Break point: <2>", None, "not one of the labels"),  # before the window
    ("Break point: <10>", None, "not one of the labels"),  # after the window
    ("", None, "empty"),
    ("   \n  ", None, "empty"),
    (ECHO, None, "repeats the instructions"),
    ("<5>\nShe left.\n<6>\nHe stayed.\n<7>", None, "repeats the passage"),
    ("I think the passage is lovely.", None, "does not name a label"),
])
def test_parse_pause_point(reply, value, problem):
    parsed = parse_pause_point(reply, LABELS)
    assert parsed.value == value
    assert (problem is None and parsed.ok) or (problem in parsed.problem)


@pytest.mark.parametrize("reply, pages, problem, note", [
    ("I want to look up Page [2, 5] to find the answer.", [2, 5], None, None),
    ("I want to look up Page [5, 2] to ...", [5, 2], None, None),  # importance order is kept
    ("Page [3, 3, 4]", [3, 4], None, "duplicate"),
    ("Page [1, 12, 2]", [1, 2], None, "dropped page 12"),
    ("Page [0, 1, 2, 3, 4, 5, 6]", [0, 1, 2], None, "kept the first 3"),
    ("Pages 1 and 6", [1, 6], None, None),
    ("I want to look up Page [Page 2, Page 4]", [2, 4], None, None),
    ("I don't need to look up any pages; the gists suffice.", [], None, "declined"),
    ("[]", [], None, "empty list"),
    ("[9, 10, -1]", None, "none of the pages", None),
    ("I want to look up Page [x] to ...", None, "no page numbers", None),
    ("I want to look up Page [", None, "does not list pages", None),
    ('For example, if you only need to read Page 8, respond with "I want to look up Page [8] to ..."', None,
     "none of the pages", None),  # prompt echo asks for a page that does not exist
    ("", None, "empty", None),
    ("Hmm.", None, "does not list pages", None),
])
def test_parse_page_list(reply, pages, problem, note):
    parsed = parse_page_list(reply, num_pages=8, max_pages=3)
    assert parsed.value == pages
    if problem:
        assert problem in parsed.problem
    else:
        assert parsed.ok
    if note:
        assert any(note in n for n in parsed.notes)


@pytest.mark.parametrize("reply, value, problem", [
    ("Page 3", 3, None),
    ("page: 4", 4, None),
    ("I would like to read Page 6 next.", 6, None),
    ("5", 5, None),
    ("STOP", STOP, None),
    ("stop.", STOP, None),
    ("**STOP**", STOP, None),
    ("I have enough information now. STOP", STOP, None),
    ("Page 1", None, "already read"),
    ("Page 8", None, "no Page 8"),
    ('To read a page again, respond with "Page $PAGE_NUM"', None, "neither"),  # echo
    ("", None, "empty"),
    ("The answer is (B).", None, "neither"),
])
def test_parse_next_page(reply, value, problem):
    parsed = parse_next_page(reply, num_pages=8, already_read=[1, 2])
    assert parsed.value == value
    assert (problem is None and parsed.ok) or (problem in parsed.problem)


OPTIONS = ["He wanted to share knowledge", "His spaceship needed repairs", "He collects animals",
           "He arrived on accident while exploring"]


@pytest.mark.parametrize("reply, letter, problem", [
    ("Answer: (D) He arrived on accident", "D", None),
    ("Answer: D", "D", None),
    ("answer: d", "D", None),
    ("The answer is (B).", "B", None),
    ("The correct answer is C because ...", "C", None),
    ("(A) He wanted to share knowledge", "A", None),
    ("C.", "C", None),
    ("B", "B", None),
    ("I pick option A.", "A", None),
    ("He arrived on accident while exploring, clearly.", "D", None),  # the option's own words
    ("Answer: (E)", None, "not one of the options"),
    ("", None, "empty"),
    ('For example, if (C) is correct, answer with "Answer: (C) ..."', "C", None),  # echo looks like C: recorded
    ("The answer is a mystery to me.", None, "does not name an option"),
    ("I cannot tell from the article.", None, "does not name an option"),
])
def test_parse_choice(reply, letter, problem):
    parsed = parse_choice(reply, OPTIONS)
    assert parsed.value == letter
    assert (problem is None and parsed.ok) or (problem in parsed.problem)


@pytest.mark.parametrize("reply, value, problem", [
    ("Answer: The British army.", "The British army.", None),
    ("  Dameri was a zoo collector.  ", "Dameri was a zoo collector.", None),
    ("```\nIn Washington.\n```", "In Washington.", None),
    ("", None, "empty"),
    ("Answer:", None, "empty"),
])
def test_parse_freeform(reply, value, problem):
    parsed = parse_freeform(reply)
    assert parsed.value == value
    assert (problem is None and parsed.ok) or (problem in parsed.problem)


@pytest.mark.parametrize("reply, value, problem", [
    ("Dameri lands and meets two patrolmen.", "Dameri lands and meets two patrolmen.", None),
    ("Here is a shortened version of the passage:\nDameri lands.", "Dameri lands.", None),
    ("Shortened version: Dameri lands.", "Dameri lands.", None),
    ('"Dameri lands."', "Dameri lands.", None),
    ("", None, "empty"),
    ("Please shorten the following passage.\nJust give me a shortened version.", None, "repeats the instructions"),
    ("word " * 50, None, "longer than the page"),
])
def test_parse_gist(reply, value, problem):
    parsed = parse_gist(reply, page_words=20)
    assert parsed.value == value
    assert (problem is None and parsed.ok) or (problem in parsed.problem)
