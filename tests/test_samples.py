"""The bundled samples open, and Off Course carries the paper's own PaLM 2-L gist memory."""
import json

import pytest

from core.methods.readagent.memory import load_memory
from core.methods.ask import ask
from core.engine import OFFLINE
from core.methods.base import Question
from core.samples import DATA, PAPER_ENGINE, SAMPLES, open_sample


def test_off_course_imports_the_papers_memory_page_by_page(store):
    document, memory_id = open_sample(store, "off-course")
    memory = load_memory(store, memory_id)
    paper = json.loads((DATA / "off_course_readagent_paper.json").read_text(encoding="utf-8"))
    assert memory.engine == PAPER_ENGINE and "paper" in memory.engine_label
    assert [p.gist for p in memory.pages] == [p["gist"] for p in paper["pages"]]
    # Pages tile the whole story, in order, each starting where Table 9 says.
    assert memory.pages[0].start == 0 and memory.pages[-1].end == len(document.paragraphs)
    assert all(a.end == b.start for a, b in zip(memory.pages, memory.pages[1:]))
    assert memory.pages[3].text.startswith('"Sure, and it\'s quite a reception')
    assert memory.pages[7].text.startswith("The others drew back")
    assert sum(p.words for p in memory.pages) == document.words
    assert {p.break_by for p in memory.pages} == {"paper"}


def test_opening_a_sample_twice_reuses_it(store):
    first = open_sample(store, "off-course")
    second = open_sample(store, "off-course")
    assert first[0].id == second[0].id and first[1] == second[1]
    assert len(store.memories_for(first[0].id)) == 1


@pytest.mark.parametrize("key", list(SAMPLES))
def test_every_sample_opens_with_its_questions(store, key):
    document, _ = open_sample(store, key)
    assert document.words > 2000
    stored = store.get_document(document.id)
    assert stored.meta["sample"] == key
    if key != "alice":
        assert len(stored.meta["questions"]) == 8


def test_the_papers_question_over_the_papers_gists_with_offline_look_ups(store):
    document, memory_id = open_sample(store, "off-course")
    q = next(q for q in document.meta["questions"] if q["id"] == "30035_SLGX7NNR_3")
    result = ask(store, OFFLINE, document.id, Question(q["question"], tuple(q["options"])),
                 method="readagent-p", memory_id=memory_id, params={"max_pages": 2})
    assert result.memory.label.startswith("PaLM 2-L")
    assert result.run.engine == "offline"
    assert 1 <= len(result.reading.pages_looked_up) <= 2
    assert result.reading.context.count("<Page ") == 8
