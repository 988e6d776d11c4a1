"""Table-driven tests of every reply parser, including malformed model replies."""
import pytest

from core import prompts
from core.methods.answer import parse_choice, parse_freeform
from core.methods.memwalker.parsers import parse_summary
from core.methods.readagent.memory import load_memory
from core.methods.readagent.parsers import STOP, parse_gist, parse_next_page, parse_page_list, parse_pause_point
from core.methods.segment_plus.parsers import parse_label, parse_note
from core.parsing import prompt_echo
from core.samples import open_sample

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
    ("Break point: <57>\n Because ...", None, "own example"),  # the prompt's example echoed
    ("Break point: <57>\n Because the scene changes.", None, "not one of the labels"),
    ("I'm sorry, but I can't help with that request.", None, "does not name a label"),
    ("Hmm, let me think about this carefully before I decide.", None, "does not name a label"),
    ("<think>Maybe <5>? No.</think>\nBreak point: <8>\nBecause the dialogue ends.", 8, None),
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
     "repeats the instructions", None),
    ("I want to look up Page [7, 12] to ...", None, "own example", None),  # the example, word for word
    ("I want to look up Page [7] to ...", [7], None, None),  # not an example: a choice without a reason
    ("I want to look up Page [7, 12] to see who lands.", [7], None, "dropped page 12"),
    ("I'm sorry, but I can't help with that request.", None, "refuses", None),
    ("Break point: <99999>\nBecause it is late.", None, "does not list pages", None),
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
    ('To read a page again, respond with "Page $PAGE_NUM"', None, "repeats the instructions"),  # echo
    ("Page $PAGE_NUM", None, "repeats the instructions"),
    ("Break point: <99999>\nBecause it is late.", None, "neither"),
    ("Hmm, let me think about this carefully before I decide.", None, "neither"),
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
    ('For example, if (C) is correct, answer with "Answer: (C) ..."', None, "example"),  # an echo is no choice
    ("Answer: (C) ...", None, "example"),  # the example itself, slot unfilled
    ("Answer: (C)", "C", None),
    ("I'm sorry, but I can't help with that request.", None, "does not name an option"),
    ("Break point: <99999>\nBecause it is late.", None, "does not name an option"),
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
    ("I cannot tell from the passage.", "I cannot tell from the passage.", None),  # an answer, not a refusal
    ("STOP", "STOP", None),  # could be what a sign says
    ("Let me think. The British army.", "The British army.", None),
    ("I'm sorry, but I can't help with that request.", None, "refuses"),
    ("Break point: <99999>\nBecause it is late.", None, "pause-point label"),
    ("Label: <12>", None, "pause-point label"),
    ("I want to look up Page [3, 5] to find the answer.", None, "look-up answer"),
    ("Hmm, let me think about this carefully before I decide.", None, "thinking"),
    ("Answer the question based on the above passage and retrieved pages. Your answer should be short and "
     "concise.", None, "repeats the instructions"),
])
def test_parse_freeform(reply, value, problem):
    parsed = parse_freeform(reply)
    assert parsed.value == value
    assert (problem is None and parsed.ok) or (problem in parsed.problem)


GIST_PAGE = ("First on the scene were Larry Dermott and Tim Casey, patrolmen. The egg-shaped craft had landed "
             "in the park, and out of it stepped Dameri Tass, purple-faced and yawning. He offered Casey a metal "
             "cap connected to a box, and through it learned English in a few minutes.")
GIST_WORDS = len(GIST_PAGE.split())

# Every hostile reply seen from real and faulty servers, and what the gist parser says of it.
HOSTILE_GISTS = [
    ("", "empty"),
    ("   \n  ", "empty"),
    ("I'm sorry, but I can't help with that request.", "refuses"),
    ("I apologize, but I cannot shorten this passage.", "refuses"),
    ("As an AI language model, I can't provide a summary of copyrighted text.", "refuses"),
    ("Break point: <99999>\nBecause it is late.", "pause-point label"),
    ("Break point: <999>", "pause-point label"),
    ("Label: <12>\nBecause the topic changes.", "pause-point label"),
    ("<7>", "pause-point label"),
    ("I want to look up Page [2, 5] to find the answer.", "look-up answer"),
    ("STOP", "look-up answer"),
    ("Page 3", "look-up answer"),
    ('{"Evidence": "Casey met the alien.", "Reasoning": "It answers."}', "JSON"),
    ('```json\n{"gist": "Casey met the alien."}\n```', "JSON"),
    ("Hmm, let me think about this carefully before I decide.", "thinking"),
    ("Hmm, let me think…", "thinking"),
    ("Okay.", "thinking"),
    ("<think>The passage is about an alien. I should shorten it", "thinking"),  # cut off while thinking
    ("Please shorten the following passage.\nJust give me a shortened version.", "repeats the instructions"),
    ("The stock market fell sharply on Tuesday as investors worried about inflation.", "shares almost no words"),
    ("Casey met the alien. " * 20, "longer than the page"),
]


@pytest.mark.parametrize("reply, problem", HOSTILE_GISTS)
def test_parse_gist_refuses_hostile_replies(reply, problem):
    parsed = parse_gist(reply, page_words=GIST_WORDS, page_text=GIST_PAGE)
    assert not parsed.ok and parsed.value is None and problem in parsed.problem, parsed.problem


@pytest.mark.parametrize("reply, value, note", [
    ("Dameri lands and meets two patrolmen.", "Dameri lands and meets two patrolmen.", None),
    ("Here is a shortened version of the passage:\nDameri lands.", "Dameri lands.", None),
    ("Shortened version: Dameri lands.", "Dameri lands.", None),
    ('"Dameri lands."', "Dameri lands.", None),
    # abstractive: most words are new, but the names and nouns are the page's
    ("Two policemen encounter an alien visitor, Dameri Tass, who acquires English via a helmet device.",
     "Two policemen encounter an alien visitor, Dameri Tass, who acquires English via a helmet device.", None),
    ("Let me think. Casey meets Dameri Tass, who learns English.", "Casey meets Dameri Tass, who learns English.",
     "thinking"),
    ("<think>Short is best.</think>\nCasey meets the alien Dameri Tass.", "Casey meets the alien Dameri Tass.", None),
    ("I'm sorry, Casey says to the alien, who lands in the park.",  # a character's apology is not a refusal
     "I'm sorry, Casey says to the alien, who lands in the park.", None),
])
def test_parse_gist_keeps_good_gists(reply, value, note):
    parsed = parse_gist(reply, page_words=GIST_WORDS, page_text=GIST_PAGE)
    assert parsed.ok and parsed.value == value, parsed.problem
    assert note is None or any(note in n for n in parsed.notes)


def test_parse_gist_without_the_page_checks_only_the_reply():
    assert parse_gist("The stock market fell.", page_words=20).ok
    assert "refuses" in parse_gist("I'm sorry, but I can't help with that request.", page_words=20).problem


def test_every_gist_palm_2_wrote_in_the_paper_passes(store):
    """The overlap threshold is small: the paper's abstractive gists of Off Course all pass."""
    document, memory_id = open_sample(store, "off-course")
    for page in load_memory(store, memory_id).pages:
        parsed = parse_gist(page.gist, page.words, page.text)
        assert parsed.ok and parsed.value == page.gist, (page.index, parsed.problem)


SOURCE = "Ro climbed down the cliff to the river, where the traders from the east were waiting with salt."


@pytest.mark.parametrize("reply, problem", [
    ("I'm sorry, but I can't help with that request.", "refuses"),
    ("Break point: <99999>\nBecause it is late.", "pause-point label"),
    ("Hmm, let me think about this carefully before I decide.", "thinking"),
    ("I want to look up Page [8] to ...", "look-up answer"),
    ('{"summary": "Ro climbs."}', "JSON"),
    ("The stock market fell sharply on Tuesday.", "shares almost no words"),
    ("Summarize the following part of a longer text.", "repeats the instructions"),
])
def test_parse_summary_refuses_hostile_replies(reply, problem):
    parsed = parse_summary(reply, 100, SOURCE)
    assert not parsed.ok and problem in parsed.problem, parsed.problem


def test_parse_summary_keeps_a_good_summary():
    parsed = parse_summary("Summary: Ro meets eastern traders by the river.", 100, SOURCE)
    assert parsed.ok and parsed.value == "Ro meets eastern traders by the river."


@pytest.mark.parametrize("reply, problem", [
    ("I'm sorry, but I can't help with that request.", "not a note but a refusal"),
    ("Break point: <99999>\nBecause it is late.", "not a note but a pause-point label"),
    ("Hmm, let me think about this carefully before I decide.", "not a note but only the start"),
    ("I want to look up Page [8] to ...", "not a note but a look-up answer"),
])
def test_parse_note_says_what_a_hostile_reply_is(reply, problem):
    parsed = parse_note(reply)
    assert not parsed.ok and problem in parsed.problem, parsed.problem


def test_note_and_label_parsers_skip_the_models_thinking():
    assert parse_note('<think>Is it JSON? {"x": 1}</think>{"Evidence": "Ro", "Reasoning": "r"}').value.evidence == "Ro"
    assert parse_label("<think>keep? remove?</think>Label: Remove\nReason: empty.").value.keep is False


LOOKUP_PROMPT = prompts.LOOKUP_PARALLEL.format(
    a_doc_kind="an article", doc_kind="article", question_kind="a question", max_pages=3,
    gist_memory="<Page 0>\nDameri lands.\n<Page 1>\nCasey talks.", question="Who lands?")
CHOICE_PROMPT = prompts.ANSWER_CHOICE.format(context="<Page 0>\nDameri lands.", question="Who lands?",
                                             options="(A) Dameri\n(B) Casey\n(C) Dermott")
FREE_PROMPT = prompts.ANSWER_FREEFORM.format(context="Dameri Tass lands in the park with his egg-shaped craft.",
                                             question="Who lands?")
LEAF_PROMPT = prompts.MEMWALKER_LEAF.format(working_memory="", text="Ro climbs.", question="Why?",
                                            answer_format="...")
FILTER_PROMPT = prompts.SEGMENT_FILTER.format(question="Who?", note='{"Evidence": "a", "Reasoning": "b"}')
GIST_PROMPT = prompts.GIST.format(page=GIST_PAGE)


@pytest.mark.parametrize("prompt, reply, echo", [
    (LOOKUP_PROMPT, "I want to look up Page [8] to ...", "example"),
    (LOOKUP_PROMPT, "I want to look up Page [2, 3, 7, 15, 18] to ...", "example"),
    (LOOKUP_PROMPT, LOOKUP_PROMPT[:200], "repeats the prompt"),
    (CHOICE_PROMPT, 'For example, if (C) is correct, answer with "Answer: (C) ..."', "instructions"),
    (CHOICE_PROMPT, "Answer: (C) ...", "example"),
    (CHOICE_PROMPT, CHOICE_PROMPT[:200], "repeats the prompt"),
    (FREE_PROMPT, "Answer the question based on the above passage and retrieved pages.", "instructions"),
    (GIST_PROMPT, GIST_PROMPT[:200], "repeats the prompt"),
    (prompts.LOOKUP_SEQUENTIAL.format(a_doc_kind="a book", doc_kind="book", context="x", already_read="None",
                                      question="Who?"), "Page $PAGE_NUM", "example"),
    # not echoes: a choice, a reply reusing a phrase of the instructions, a quote of the document
    (LOOKUP_PROMPT, "I want to look up Page [1] to see who lands.", ""),
    (CHOICE_PROMPT, "Answer: (C) Dermott", ""),
    (CHOICE_PROMPT, "Answer: (C)", ""),
    (LEAF_PROMPT, "Reasoning: The answer CANNOT be inferred from the text above.\nAction: -1", ""),
    (FILTER_PROMPT, "Label: Keep\nReason: the note provides at least one piece of useful information for "
                    "answering the question.", ""),
    (FREE_PROMPT, "Dameri Tass lands in the park with his egg-shaped craft.", ""),  # the context's first words
    (GIST_PROMPT, GIST_PAGE, ""),  # an extractive gist quotes the page, not the instructions
])
def test_prompt_echo(prompt, reply, echo):
    found = prompt_echo(reply, prompt)
    assert (echo in found) if echo else found == "", found
