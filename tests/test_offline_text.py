"""Offline text that reads well: answers end at sentence boundaries, and extractive gists
never quote front matter or boilerplate (Gutenberg headers, credits, tables of contents)."""
import pytest

from core.methods.answer import extract_answer
from core.methods.base import Question
from core.methods.readagent.rules import gist
from core.text import lexical
from core.text.documents import parse_text
from tests.conftest import book

HEADER = """The Project Gutenberg EBook of Pride and Prejudice, by Jane Austen

Title: Pride and Prejudice

Author: Jane Austen

Posting Date: August 26, 2008 [EBook #1342]
Release Date: June, 1998

*** START OF THE PROJECT GUTENBERG EBOOK PRIDE AND PREJUDICE ***

Produced by Anonymous Volunteers

PRIDE AND PREJUDICE

By Jane Austen

CONTENTS

Chapter 1
Chapter 2
CHAPTER III. The Assembly

"""


@pytest.mark.parametrize("sentence, boilerplate", [
    ("Posting Date: August 26, 2008 [EBook #1342]", True),
    ("*** START OF THE PROJECT GUTENBERG EBOOK PRIDE AND PREJUDICE ***", True),
    ("*** END OF THIS PROJECT GUTENBERG EBOOK ALICE ***", True),
    ("Produced by Anonymous Volunteers", True),
    ("This eBook is for the use of anyone anywhere at no cost and with almost no restrictions.", True),
    ("Release Date: June, 1998", True),
    ("Character set encoding: UTF-8", True),
    ("Title: Pride and Prejudice", True),
    ("CONTENTS", True),
    ("Table of Contents", True),
    ("Chapter 1", True),
    ("CHAPTER XII", True),
    ("Chapter IV The Rabbit Sends in a Little Bill", True),
    ("PRIDE AND PREJUDICE", True),
    ("Down the Rabbit-Hole", True),
    ("By Jane Austen", True),
    ("* * *", True),
    ("", True),
    # the story itself, however it begins
    ("It is a truth universally acknowledged, that a single man must be in want of a wife.", False),
    ("by the time she arrived, it was late.", False),
    ("Contents of the box spilled onto the floor.", False),
    ("Chapter the first was over, and she went home.", False),
    ('"Oh dear!"', False),
    ("Yes.", False),
    ("How doth the little crocodile", False),
    ("The title of the book was never spoken aloud.", False),
    ("Mr. Bennet replied that he had not.", False),
])
def test_is_boilerplate(sentence, boilerplate):
    assert lexical.is_boilerplate(sentence) is boilerplate


LONG = ("Mrs. Bennet, who had been waiting all morning for news of the ball and of the gentlemen who were to "
        "come down from town with their sisters and their friends and all their servants, and who would not "
        "be kept from the window by any argument of her husband's, however reasonable, and who had by then "
        "told every neighbour, every servant and every tradesman in Meryton what she expected of the evening, "
        "drew the attention of the whole room to her daughter.")


@pytest.mark.parametrize("sents, max_words, expected", [
    (["One two three.", "Four five six seven."], 10, "One two three. Four five six seven."),
    (["One two three.", "Four five six seven."], 5, "One two three."),
    (["One two three four five six."], 4, "One two three four five six."),  # up to twice the limit: whole
    ([], 10, ""),
    ([LONG], 34, "Mrs. Bennet, who had been waiting all morning for news of the ball and of the gentlemen who "
                 "were to come down from town with their sisters and their friends and all their servants…"),
    (["a " * 50 + "b."], 10, "a a a a a a a a a a…"),  # no clause to cut after: words, and "…" says so
])
def test_whole_sentences(sents, max_words, expected):
    assert lexical.whole_sentences(sents, max_words) == expected


def ends_a_sentence(text: str) -> bool:
    return text.rstrip("\"'”’)").endswith((".", "!", "?", "…"))


@pytest.mark.parametrize("name", ["pride_and_prejudice", "alice", "frankenstein"])
def test_free_form_offline_answers_end_at_sentence_boundaries(name):
    document = parse_text(book(name).read_text(encoding="utf-8-sig"))
    context = "\n".join(p.text for p in document.paragraphs[:400])
    for q in ("Why did Elizabeth refuse Darcy?", "What did Alice drink?", "Who made the creature?",
              "What drew the attention of the room?"):
        answer, detail = extract_answer(context, Question(q))
        assert answer.text and ends_a_sentence(answer.text), (q, answer.text)
        assert not any(lexical.is_boilerplate(s) for s in lexical.sentences(answer.text))


@pytest.mark.parametrize("page, must_not", [
    (HEADER + "It is a truth universally acknowledged, that a single man in possession of a good fortune, must "
     "be in want of a wife. However little known the feelings or views of such a man may be on his first "
     "entering a neighbourhood, this truth is so well fixed in the minds of the surrounding families.",
     ("Gutenberg", "Posting Date", "EBook", "Produced by", "CONTENTS", "Chapter 1", "PRIDE AND PREJUDICE")),
    ("CHAPTER I.\nDown the Rabbit-Hole\n\nAlice was beginning to get very tired of sitting by her sister on "
     "the bank, and of having nothing to do. Once or twice she had peeped into the book her sister was "
     "reading, but it had no pictures or conversations in it.", ("CHAPTER I", "Down the Rabbit-Hole")),
])
def test_extractive_gists_skip_front_matter(page, must_not):
    text, detail = gist(page)
    assert text and ends_a_sentence(text)
    for words in must_not:
        assert words not in text, (words, text)


@pytest.mark.parametrize("page, expected", [
    (HEADER, lexical.FRONT_MATTER),
    ("CHAPTER XII.\nAlice’s Evidence", "Front matter."),  # never longer than the page
    ("THE END", "THE END"),
    ("", ""),
])
def test_a_page_of_front_matter_alone_is_said_to_be_front_matter(page, expected):
    assert gist(page)[0] == expected


def test_the_first_gist_of_a_gutenberg_book_is_story():
    document = parse_text(book("pride_and_prejudice").read_text(encoding="utf-8-sig"))
    first_page = "\n\n".join(p.text for p in document.paragraphs[:12])
    text, _ = gist(first_page)
    assert "truth universally acknowledged" in text or "Bennet" in text, text
