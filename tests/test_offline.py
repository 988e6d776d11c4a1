"""The offline engine: real behaviour on real text, labelled as offline."""
import json


from core.methods.readagent.build import BuildSettings, build_memory
from core.text.documents import load_path, parse_text, sections
from core.text.lexical import rank, sentences, shorten, terms
from core.methods.readagent.memory import load_memory
from core.methods.ask import ask
from core.engine import OFFLINE
from core.methods.answer import choose_option
from core.methods.base import Question
from core.methods.readagent.pagination import make_window
from core.methods.readagent.presets import PRESETS
from core.methods.readagent.rules import score_pause_points
from core.methods.readagent.steps import PAUSE_POINT, PauseInput
from tests.conftest import CORE_DATA, book


def test_terms_stem_and_drop_stopwords():
    assert terms("The horses were landing; Dameri landed on Earth's fields.") == [
        "horse", "land", "dameri", "land", "earth", "field"]


def test_sentences_respect_abbreviations():
    assert sentences("Mr. Bennet replied. “Is he married?” He is. Mrs. Long knows.") == [
        "Mr. Bennet replied.", "“Is he married?”", "He is.", "Mrs. Long knows."]


def test_bm25_ranks_the_page_that_mentions_the_question_first():
    pages = ["The patrolmen met an alien in a field.", "A horse was inspected by the alien.",
             "The United Nations assembly waited for a speech."]
    assert rank("Who inspected the horse?", pages)[0][0] == 1


def test_shorten_keeps_sentences_of_the_page_in_order():
    facts = ["Dameri landed in a field near the highway.", "Two patrolmen watched the strange egg-shaped craft.",
             "Casey wore the metal cap and taught the alien English.", "A horse grazed beside the fence.",
             "The general arrived in a helicopter with soldiers.", "Reporters crowded around the police cordon.",
             "The United Nations demanded a speech from the visitor.", "Everyone waited for a message from space."]
    text = " ".join(f"{fact} It was day {i}." for i, fact in enumerate(facts * 3))
    gist = shorten(text)
    assert 25 <= len(gist.split()) <= 150
    kept = sentences(gist)
    assert all(s in text for s in kept)
    assert [text.index(s) for s in kept] == sorted(text.index(s) for s in kept)


def test_pause_point_prefers_a_chapter_heading_and_a_topic_change():
    sea = " ".join(["The ship sailed across the stormy sea while sailors pulled ropes."] * 4)
    farm = " ".join(["The farmer fed his cows and ploughed the wheat field at dawn."] * 4)
    paragraphs = [sea] * 6 + [farm] * 6
    doc = parse_text("\n\n".join(paragraphs))
    window = make_window(doc.paragraphs, 0, len(doc.paragraphs), PRESETS["quality"].with_words(100, 500))
    scores = {s["label"]: s for s in score_pause_points(window)}
    best = max(scores.values(), key=lambda s: s["score"])
    assert best["label"] == 6  # where the sea gives way to the farm
    decision = OFFLINE.decide(PAUSE_POINT, PauseInput(window, PRESETS["quality"]))
    assert decision.value == 6 and decision.trace.outcome == "offline"
    assert "cohesion" in decision.trace.detail["reason"]


def test_offline_choice_on_a_plain_fact():
    context = ("The alien Dameri Tass landed by accident while exploring planets of the Galactic League. "
               "He was a collector for a zoo. He liked the horse very much.")
    answer, detail = choose_option(context, Question("Why did Dameri land?", (
        "To repair his ship", "By accident while exploring planets", "To give a speech", "To find water")))
    assert answer.choice == "B" and answer.text.startswith("Answer: (B)")
    assert detail["scores"]["B"] > detail["scores"]["A"]


def test_offline_build_of_a_whole_book(store):
    doc = load_path(book("pride_and_prejudice"))
    events = []
    result = build_memory(store, doc, OFFLINE, BuildSettings(PRESETS["narrativeqa"]), progress=events.append)
    memory = load_memory(store, result.memory_id)
    pages = memory.pages
    assert result.llm_calls == 0 and result.engine_label == "Offline engine (no LLM)"
    assert pages[0].start == 0 and pages[-1].end == len(doc.paragraphs)
    assert all(a.end == b.start for a, b in zip(pages, pages[1:]))  # pages tile the book
    # hard breaks: no page runs across a chapter (front matter and tiny chapters join their neighbour)
    starts = {start for start, _ in sections(doc.paragraphs, 500)}
    assert all(not (p.start < s < p.end) for p in pages for s in starts)
    assert len(starts) >= 60
    assert all(p.words <= 3000 + max(x.words for x in doc.paragraphs[p.start:p.end]) for p in pages)
    assert all(p.gist_by == "offline" and 0 < p.gist_words < p.words for p in pages)
    assert 85 < result.compression_rate < 97
    assert events[0].kind == "page" and events[0].page.start == 0
    assert sum(e.kind == "gist" for e in events) == len(pages)
    assert {p.break_by for p in pages} <= {"offline", "rule"}


def test_every_chosen_page_with_its_next_paragraph_has_min_words(store):
    """The notebook offers <j> once paragraphs i..j hold min_words, so a chosen page (i..j-1) may
    be shorter than min_words, but never by more than the paragraph after it."""
    doc = load_path(book("alice"))
    result = build_memory(store, doc, OFFLINE, BuildSettings(PRESETS["quality"]))
    pages = load_memory(store, result.memory_id).pages
    chosen = [p for p in pages if p.break_by != "rule"]
    assert chosen and all(p.words + doc.paragraphs[p.end].words >= 280 for p in chosen)


def test_offline_answers_the_case_study_question_from_the_papers_demo(store):
    story = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())
    doc = parse_text(story["article"], title="Off Course")
    build_memory(store, doc, OFFLINE, BuildSettings(PRESETS["quality"]))
    q = next(q for q in story["questions"] if q["question_unique_id"] == "30035_SLGX7NNR_3")
    result = ask(store, OFFLINE, doc.id, Question(q["question"], tuple(q["options"])), method="readagent-p")
    assert result.answer.choice in "ABCD" and result.run.engine_label == "Offline engine (no LLM)"
    assert 1 <= result.reading.lookups <= 5 and result.usage.llm_calls == 0
    assert result.steps[0].outcome == "offline"


def test_offline_accuracy_on_quality_is_above_chance(store):
    """An honest baseline: lexical rules are weak on QuALITY (its distractors are written to
    share the story's words), but every method does better than guessing (25%) on dev_16."""
    rows = [json.loads(line) for line in (CORE_DATA / "eval" / "quality_dev_16.jsonl").read_text().splitlines()]
    methods = ["readagent-p", "readagent-s", "gistmem", "full"]
    correct = dict.fromkeys(methods, 0)
    total = 0
    engine = OFFLINE
    for row in rows:
        doc = parse_text(row["article"], title=row["title"])
        build_memory(store, doc, engine, BuildSettings(PRESETS["quality"]))
        for q in row["questions"]:
            total += 1
            for method in methods:
                result = ask(store, engine, doc.id, Question(q["question"], tuple(q["options"])), method=method)
                correct[method] += result.answer.choice == "ABCD"[q["gold_label"] - 1]
    assert total == 279
    accuracy = {m: c / total for m, c in correct.items()}
    assert all(a > 0.27 for a in accuracy.values()), accuracy
