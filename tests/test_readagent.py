"""Each ReadAgent step with a scripted model: build -> call -> parse -> validate -> fallback."""
import json
import re

import pytest

from core.methods.base import Question, compression_rate
from core.methods.readagent.build import BuildSettings, build_memory
from core.methods.readagent.lookup import full_text, gistmem, readagent_p, readagent_s
from core.methods.readagent.memory import GistMemory, Page, load_memory
from core.methods.readagent.pagination import forced_break, make_window
from core.methods.readagent.parsers import STOP
from core.methods.readagent.presets import PRESETS
from core.methods.readagent.steps import GIST, PAUSE_POINT, GistInput, PauseInput
from core.text.documents import Document, Paragraph, parse_text
from tests.conftest import CORE_DATA

QUALITY = PRESETS["quality"]


def paras(*sizes, heading_at=()):
    return [Paragraph(" ".join([f"w{i}"] * n), n, i in heading_at) for i, n in enumerate(sizes)]


# --- the window -------------------------------------------------------------------------------

def test_window_offers_a_label_once_the_count_with_its_paragraph_reaches_min_words():
    paragraphs = paras(*[100] * 12)
    window = make_window(paragraphs, 0, len(paragraphs), QUALITY)
    # The notebook adds paragraph j's words before deciding on <j>: paragraphs 0..2 hold 300 >= 280,
    # so <2> is offered (a 200-word page), and labels run until the count reaches 600
    assert window.labels == (2, 3, 4, 5, 6)
    assert window.end == 6 and window.words == 600
    assert all(window.words_before(label + 1) >= QUALITY.min_words for label in window.labels)
    assert window.words_before(2) == 200 < QUALITY.min_words
    passage = window.passage().split("\n")
    assert passage[-1] == "<6>" and passage.count("<2>") == 1 and "<1>" not in passage
    assert window.following.startswith("w6") and window.following.endswith("\n...")


def test_window_shows_the_previous_page_and_a_book_preset_caps_it():
    paragraphs = paras(*[100] * 12)
    previous = tuple(p.text for p in paragraphs[:6])
    quality = make_window(paragraphs, 6, 12, QUALITY, previous)
    assert quality.preceding.startswith("...\n") and quality.preceding.count("w0") == 100  # the whole page
    book = make_window(paragraphs, 6, 12, PRESETS["narrativeqa"].with_words(200, 600), previous)
    assert "w0" not in book.preceding and "w5" in book.preceding  # only the tail


def test_short_rest_of_a_section_becomes_the_last_page_without_asking():
    paragraphs = paras(100, 100, 100)
    window = make_window(paragraphs, 0, 3, QUALITY)
    decision = forced_break(window, 3, QUALITY)
    assert decision.value == 3 and decision.trace.outcome == "rule"


def test_a_single_overlong_paragraph_is_a_page_by_itself():
    paragraphs = paras(700, 100, 100, 100, 100)
    window = make_window(paragraphs, 0, 5, QUALITY)
    assert window.labels == (1,)
    assert forced_break(window, 5, QUALITY).value == 1


# --- pagination with a model ----------------------------------------------------------------------

def window_10():
    return make_window(paras(*[100] * 12), 0, 12, QUALITY)


def test_pause_point_from_the_model(scripted):
    engine, backend = scripted(["Break point: <4>\nBecause the scene ends."])
    decision = engine.decide(PAUSE_POINT, PauseInput(window_10(), QUALITY))
    assert decision.value == 4 and decision.trace.outcome == "model"
    assert decision.trace.detail["reason"] == "Because the scene ends."
    assert "<3>" in backend.prompts[0] and "Break point: <57>" in backend.prompts[0]


def test_pause_point_re_asks_once_then_accepts(scripted):
    engine, backend = scripted(["Break point: <57>", "Label: <5>"])
    decision = engine.decide(PAUSE_POINT, PauseInput(window_10(), QUALITY))
    assert decision.value == 5 and decision.trace.outcome == "re-asked"
    assert "<57> is not one of the labels" in decision.trace.attempts[0].problem
    assert "Your previous reply was:\nBreak point: <57>" in backend.prompts[1]


def test_pause_point_falls_back_to_the_largest_page_and_says_so(scripted):
    engine, _ = scripted(["", "No idea."])
    decision = engine.decide(PAUSE_POINT, PauseInput(window_10(), QUALITY))
    assert decision.value == 6 and decision.trace.outcome == "fallback"
    assert "largest page <6>" in decision.trace.fallback
    assert [a.problem for a in decision.trace.attempts][0] == "the reply was empty"


def paper_page_starts(paragraphs, pages) -> list[int]:
    """The paragraph each of the paper's pages starts at, from the opening words its Table 9 quotes
    (page 0 starts the document)."""
    def words(text):
        return re.sub(r"[^a-z ]", " ", text.lower().replace("’", "'").replace("'", "")).split()

    starts = [0]
    for page in pages[1:]:
        opening = words(page["starts_with"].rstrip("."))
        starts.append(next(n for n in range(starts[-1] + 1, len(paragraphs))
                           if words(paragraphs[n].text)[:len(opening)] == opening))
    return starts


def test_an_oracle_choosing_the_papers_breaks_rebuilds_its_8_off_course_pages(scripted, store):
    """The paper's pages 2 and 3 hold 246 and 229 words (under min_words 280): only the notebook's
    rule, which counts paragraph j before offering <j>, offers those breaks."""
    paper = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())
    document = parse_text(paper["article"], title="Off Course")
    starts = paper_page_starts(document.paragraphs, paper["pages"])
    assert starts == [0, 31, 50, 61, 68, 86, 100, 115]

    def oracle(prompt: str) -> str:
        labels = {int(n) for n in re.findall(r"^<(\d+)>$", prompt, flags=re.M)}
        if not labels:  # a gist prompt
            return "Dameri Tass lands, and the patrolmen meet him."
        return f"Break point: <{min(s for s in starts if s in labels)}>\nBecause the paper broke there."

    engine, _ = scripted(handler=oracle)
    store.save_document(document)
    result = build_memory(store, document, engine, BuildSettings(QUALITY, hard_breaks=False))
    pages = load_memory(store, result.memory_id).pages
    assert [p.start for p in pages] == starts
    assert [p.break_by for p in pages] == ["model"] * 7 + ["rule"]  # the last 70 words: the short tail
    assert [p.words for p in pages][2:4] == [246, 229]


# --- gisting -----------------------------------------------------------------------------------------

PAGE = ("Dameri Tass stepped out of the egg-shaped craft and yawned. The patrolmen stared at his purple face. "
        "He offered them a metal cap connected to a box. Casey put it on, and the alien learned English from him.")


def test_gist_from_the_model_with_its_preamble_removed(scripted):
    engine, backend = scripted(["Here is a shortened version:\nAn alien lands and learns English."])
    decision = engine.decide(GIST, GistInput(PAGE, 40, QUALITY))
    assert decision.value == "An alien lands and learns English." and decision.trace.outcome == "model"
    assert backend.prompts[0].startswith("Please shorten the following passage.")
    assert backend.params[0]["max_tokens"] == 64  # a gist is shorter than its page: a short page, a short budget


def test_a_gists_reply_budget_is_about_its_pages_tokens_capped_at_512(scripted):
    engine, backend = scripted(handler=lambda prompt: "Dameri Tass lands, and the alien learns English.")
    engine.decide(GIST, GistInput(" ".join([PAGE] * 3), 120, QUALITY))
    engine.decide(GIST, GistInput(" ".join([PAGE] * 30), 1200, QUALITY))
    assert 100 < backend.params[0]["max_tokens"] < 200 and backend.params[1]["max_tokens"] == 512


def test_gist_fallback_is_extractive_and_labelled(scripted):
    engine, _ = scripted(["", "Please shorten the following passage. Sure!"])
    decision = engine.decide(GIST, GistInput(PAGE, 40, QUALITY))
    assert decision.trace.outcome == "fallback" and "extractive" in decision.trace.fallback
    from core.text.lexical import sentences

    assert decision.value and all(sentence in PAGE for sentence in sentences(decision.value))


def test_movie_gists_are_capped_at_128_tokens(scripted):
    engine, backend = scripted(["Dameri Tass stepped out."])
    engine.decide(GIST, GistInput(" ".join([PAGE] * 5), 200, PRESETS["narrativeqa-movie"]))
    assert backend.params[0]["max_tokens"] == 128


# --- look-up and answer -------------------------------------------------------------------------------

def memory(n=8):
    pages = tuple(Page(index=i, start=i, end=i + 1, text=f"raw text of page {i} " * 10, words=50,
                       gist=f"gist {i}", gist_words=2) for i in range(n))
    return GistMemory(doc_id="d", title="t", words=400, pages=pages)


QUESTION = Question("What was Dameri's purpose?", ("Share knowledge", "Repairs", "Collect animals", "Accident"))


def test_readagent_p_expands_chosen_pages_in_place_in_page_order(scripted):
    engine, backend = scripted(["I want to look up Page [6, 2, 6, 11] to check.", "Answer: (D) Accident"])
    out = readagent_p(engine, memory(), QUESTION, QUALITY, max_pages=5)
    assert out.pages_looked_up == [6, 2] and out.expanded == [6, 2]  # the model's order; the context's is the page order
    lookup, answer = out.steps
    assert any("duplicate" in n for n in lookup.attempts[0].notes)
    assert any("dropped page 11" in n for n in lookup.attempts[0].notes)
    context = backend.prompts[1]
    assert context.index("<Page 2>\nraw text of page 2") < context.index("<Page 3>\ngist 3") < \
        context.index("<Page 6>\nraw text of page 6")
    assert "You may read 1 to 5 page(s)" in backend.prompts[0] and "(D) Accident" in backend.prompts[0]
    assert out.answer.choice == "D"
    # CR at the final answer step: 6 gists x 2 words + 2 pages x 50 words of 400
    assert out.words_in_context == 112 and out.compression_rate == pytest.approx(72.0)


@pytest.mark.parametrize("reply, pages", [
    ("I want to look up Page [5, 1, 3] to see who wins.", [5, 1, 3]),  # most important first
    ("I want to look up Page [7, 0, 7, 2] to ...check the ending.", [7, 0, 2]),  # a duplicate dropped
    ("I want to look up Page [4, 12, 1, -1] to find the letter.", [4, 1]),  # pages that do not exist dropped
    ("I want to look up Page [6, 5, 4, 3, 2, 1] to be sure.", [6, 5, 4]),  # the first max_pages kept
    ("Pages 3 and 0, to see the scene.", [3, 0]),  # no brackets
])
def test_ranked_look_up_keeps_the_models_order_in_the_trace_and_the_expanded_pages(scripted, reply, pages):
    """NarrativeQA's look-up asks for pages "in the order of importance": that order is the result."""
    engine, backend = scripted([reply, "Answer: (B) Repairs"])
    out = readagent_p(engine, memory(), QUESTION, PRESETS["narrativeqa"], max_pages=3)
    assert "in the order of importance" in backend.prompts[0]
    lookup = out.steps[0]
    assert lookup.value == pages and lookup.to_dict()["value"] == pages
    assert out.pages_looked_up == out.expanded == out.details.pages == pages
    context = backend.prompts[1]  # the raw pages still replace their gists in place, in page order
    assert [n for n in range(8) if f"<Page {n}>\nraw text of page {n}" in context] == sorted(pages)


def test_readagent_p_caps_pages_and_falls_back_to_gists(scripted):
    engine, _ = scripted(["Page [0, 1, 2, 3]", "Answer: A"])
    assert readagent_p(engine, memory(), QUESTION, QUALITY, max_pages=2).pages_looked_up == [0, 1]
    engine, _ = scripted(["no idea", "still no idea", "Answer: B"])
    out = readagent_p(engine, memory(), QUESTION, QUALITY, max_pages=2)
    assert out.pages_looked_up == [] and out.steps[0].outcome == "fallback"
    assert out.answer.choice == "B"


def test_readagent_s_reads_one_page_at_a_time_until_stop(scripted):
    engine, backend = scripted(["Page 3", "Page 3", "Page 5", "STOP", "Answer: (C)"])
    out = readagent_s(engine, memory(), QUESTION, QUALITY, max_steps=6)
    assert out.pages_looked_up == [3, 5] and out.answer.choice == "C"
    assert "Pages re-read already (DO NOT ask to read them again):\nNone" in backend.prompts[0]
    assert "Pages re-read already (DO NOT ask to read them again):\n3" in backend.prompts[1]
    assert "already read" in out.steps[1].attempts[0].problem and out.steps[1].outcome == "re-asked"
    assert "<Page 3>\nraw text of page 3" in backend.prompts[2]
    assert out.steps[2].value == STOP


def test_readagent_s_stops_at_the_step_cap(scripted):
    engine, _ = scripted(["Page 0", "Page 1", "Answer: A"])
    out = readagent_s(engine, memory(), QUESTION, QUALITY, max_steps=2)
    assert out.pages_looked_up == [0, 1]
    assert "maximum of 2" in out.steps[1].detail["step_cap"]


def test_unparseable_answer_is_recorded_as_such(scripted):
    engine, _ = scripted(["I cannot decide.", "Truly, I cannot."])
    out = gistmem(engine, memory(), QUESTION)
    assert out.answer.choice is None and out.answer.text == "Truly, I cannot."
    assert out.steps[0].outcome == "fallback" and "unparseable" in out.steps[0].fallback


def test_free_form_answer_and_full_text(scripted):
    engine, backend = scripted(["Answer: He collects animals for a zoo."])
    paragraphs = paras(30, 20)
    out = full_text(engine, Document("d", "t", tuple(paragraphs)), Question("Why did he come?"))
    assert out.answer.text == "He collects animals for a zoo." and out.answer.choice is None
    assert out.compression_rate == 0.0
    assert "Your answer should be short and concise." in backend.prompts[0]


def test_compression_rate_is_the_papers():
    assert compression_rate(650, 4122) == pytest.approx(84.23, abs=0.01)
    assert compression_rate(0, 0) == 0.0
