"""Segment+: tolerant note and label parsing, batching, the scripted pipeline (malformed JSON,
every note removed, several merge rounds), offline labelling, and the simulated server."""
import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import core.concurrency
from core import prompts
from core.text.documents import parse_text
from core.engine import make_engine
from core.errors import ModelError, SettingError
from core.methods.ask import ask
from core.engine import OFFLINE as OFFLINE_ENGINE
from core.methods.base import Question, compression_rate
from core.methods.segment_plus.gather import batches
from core.methods.segment_plus.notes import Note
from core.methods.segment_plus.parsers import parse_label, parse_note
from core.methods.segment_plus.steps import concatenated_note, lexical_label
from core.llm.simulator import MODEL
from core.trace import FALLBACK, MODEL as BY_MODEL, OFFLINE, REASKED, RULE
from tests.conftest import CORE_DATA
from tests.fakes import Gate

# --- parse_note: table-driven -------------------------------------------------------------------

GOOD = '{"Evidence": "Tomas sailed to Brest in June.", "Reasoning": "He went to Brest."}'

NOTE_CASES = [
    # (reply, evidence, reasoning, a repair note that must be recorded or None)
    (GOOD, "Tomas sailed to Brest in June.", "He went to Brest.", None),
    ("```json\n" + GOOD + "\n```", "Tomas sailed to Brest in June.", "He went to Brest.", "code fence"),
    ("```\n" + GOOD + "\n```\nHope this helps!", "Tomas sailed to Brest in June.", "He went to Brest.", "code fence"),
    ("Here is my note:\n" + GOOD + "\nLet me know if you need more.", "Tomas sailed to Brest in June.",
     "He went to Brest.", "text around"),
    ("{'Evidence': 'Tomas sailed to Brest.', 'Reasoning': \"He went to Brest, didn't he.\"}",
     "Tomas sailed to Brest.", "He went to Brest, didn't he.", "single-quoted"),
    ('{"Evidence": "A.", "Reasoning": "B.",}', "A.", "B.", "trailing commas"),
    ('{"evidence": ["Tomas sailed.", "In June."], "REASONING": "June."}', "Tomas sailed. In June.", "June.", None),
    ('{"Evidence": "Tomas sailed to Brest."}', "Tomas sailed to Brest.", "", "no Reasoning"),
    ('{"Reasoning": "The segment has no information about Tomas."}', "",
     "The segment has no information about Tomas.", "no Evidence"),
    ('{"Evidence": "Tomas sailed to Brest in June", "Reasoning": "He went to', "Tomas sailed to Brest in June",
     "He went to", "cut-off"),
    ('Evidence: "Tomas sailed to Brest."\nReasoning: He went to Brest.', "Tomas sailed to Brest.",
     "He went to Brest.", "key/value text"),
    ('{"Evidence": "He said \\"go\\" {twice}.", "Reasoning": ""}', 'He said "go" {twice}.', "", None),
    ('{"Evidence": null, "Reasoning": "No information."}', "", "No information.", None),
]


@pytest.mark.parametrize("reply,evidence,reasoning,repair", NOTE_CASES)
def test_parse_note_reads_what_models_write(reply, evidence, reasoning, repair):
    parsed = parse_note(reply)
    assert parsed.ok, parsed.problem
    assert parsed.value == Note(evidence, reasoning)
    if repair:
        assert any(repair in n for n in parsed.notes), parsed.notes


NOTE_REFUSALS = [
    ("", "empty"),
    ("   \n ", "empty"),
    ("I'm sorry, I can't help with that.", "not a note"),
    ("The answer is Brest.", "not a note"),
    ('{"Answer": "Brest"}', "not a note"),
    ('{"Evidence": "", "Reasoning": ""}', "both Evidence and Reasoning are empty"),
    ('{ "Evidence": "Your evidence content here",\n"Reasoning": "Your reasoning content here"}', "placeholder"),
    (prompts.SEGMENT_NOTE.format(segment="Tomas sailed.", question="Where?"), "repeats the instructions"),
    (prompts.SEGMENT_MERGE.format(notes=GOOD, question="Where?"), "repeats the instructions"),
]


@pytest.mark.parametrize("reply,problem", NOTE_REFUSALS)
def test_parse_note_refuses_with_a_reason(reply, problem):
    parsed = parse_note(reply)
    assert not parsed.ok and parsed.value is None and problem in parsed.problem


LABEL_CASES = [
    ("Label: Keep\nReason: it names the port.", True, "it names the port"),
    ("Label: Remove\nReason: nothing to keep here.", False, "nothing to keep here"),
    ("**Label:** **Remove**", False, ""),
    ("Keep. The note quotes where Tomas sailed.", True, "The note quotes where Tomas sailed"),
    ("remove", False, ""),
    ('{"label": "Keep", "reason": "useful"}', True, "useful"),
    ("I would keep this note because it is relevant.", True, ""),
    ("Decision: REMOVE - the evidence is empty", False, "the evidence is empty"),
]


@pytest.mark.parametrize("reply,keep,reason", LABEL_CASES)
def test_parse_label(reply, keep, reason):
    parsed = parse_label(reply)
    assert parsed.ok, parsed.problem
    assert parsed.value.keep is keep
    assert reason in parsed.value.reason


@pytest.mark.parametrize("reply,problem", [
    ("", "empty"),
    ("Hmm, hard to say.", "names no label"),
    ("I could keep it or remove it.", "names both"),
    (prompts.SEGMENT_FILTER.format(question="Where?", note=GOOD), "repeats the instructions"),
])
def test_parse_label_refuses(reply, problem):
    parsed = parse_label(reply)
    assert not parsed.ok and problem in parsed.problem


def test_batches_fit_the_budget_hold_two_notes_at_least_and_keep_order():
    assert batches([40, 40, 40, 40], 100) == [range(0, 2), range(2, 4)]
    assert batches([40, 40, 40], 100) == [range(0, 2), range(2, 3)]  # the last one is passed on
    assert batches([30, 30, 30], 100) == [range(0, 3)]
    assert batches([500, 500, 500], 100) == [range(0, 2), range(2, 3)]  # oversized notes still pair up
    assert batches([10], 100) == [range(0, 1)]


def test_the_papers_prompts_are_kept_word_for_word():
    assert 'categorize information into two distinct types: "Evidence" and "Reasoning"' in prompts.SEGMENT_NOTE.text
    assert "2. Reasoning Enhancement: Ensure the reasoning is clear, well-structured" in prompts.SEGMENT_MERGE.text
    assert "Appendix C" in prompts.SEGMENT_NOTE.source and "Appendix C" in prompts.SEGMENT_MERGE.source
    assert prompts.SEGMENT_FILTER.source.startswith("Ours")


# --- the pipeline with a scripted model ------------------------------------------------------------

PARAGRAPHS = [
    "Mara kept the lighthouse on the island of Sein for twenty years, and she trimmed the lamp every night "
    "before the fishing boats came home, whatever the weather.",
    "In June her brother Tomas sailed to Brest with a cargo of salted fish, promising to return before the "
    "autumn storms began, and he left his dog with the harbour master.",
    "The winter was long and grey. Gulls crowded the rocks below the tower, the cistern froze twice, and the "
    "supply boat was late.",
    "When Tomas came back from Brest he brought Mara a brass telescope, a sack of flour and news that their "
    "cousin Yann had married.",
]
DOC = parse_text("\n\n".join(PARAGRAPHS), title="The Keeper")
QUESTION = Question("Where did Tomas sail with the fish?")


def _segment_of(prompt: str) -> int:
    return next(i for i, p in enumerate(PARAGRAPHS) if p in prompt)


def _note_json(i: int) -> str:
    if i == 2:
        return json.dumps({"Evidence": "", "Reasoning": "No information about Tomas in this segment."})
    return json.dumps({"Evidence": PARAGRAPHS[i], "Reasoning": f"Segment {i} speaks of Tomas or Mara."})


def _keep_all_but_empty(prompt: str) -> str:
    return "Label: Remove\nReason: no evidence." if '"Evidence": ""' in prompt else "Label: Keep\nReason: useful."


def _merged(prompt: str) -> str:
    notes = [json.loads(line) for line in prompt.split("Collected information: ")[1].split("\n—\n")[0].split("\n")]
    return json.dumps({"Evidence": " ".join(n["Evidence"] for n in notes)[:400],
                       "Reasoning": "Tomas sailed to Brest."})


def handler(notes=_note_json, label=_keep_all_but_empty, merge=_merged, answer="Brest."):
    def reply(prompt: str) -> str:
        if prompt.startswith("You are provided with a segment"):
            return notes(_segment_of(prompt.split("\n—\nQuestion")[0]))
        if prompt.startswith("You are given a question about a long document and a note"):
            return label(prompt)
        if prompt.startswith("You are presented with the collection of information"):
            return merge(prompt)
        return answer
    return reply


def run(engine, **params):
    store = engine.llm.store  # the scripted engine's store
    store.save_document(DOC)
    return ask(store, engine, DOC.id, QUESTION, method="segmentplus",
               params={"segment_tokens": 50, "merge_tokens": 1000, "concurrency": 4, **params})


def test_notes_filter_merge_answer_from_the_final_note_only(scripted):
    engine, backend = scripted(handler=handler())
    result = run(engine)
    assert result.details.kind == "notes" and "notes kept from segments [0, 1, 3]" in result.details.summary()
    extra = result.details.to_dict()
    assert extra["segments"] == 4 and extra["notes_kept"] == 3 and extra["notes_removed"] == 1
    assert [n["kept"] for n in extra["notes"]] == [True, True, False, True]
    assert extra["notes"][2]["reason"] == "no evidence"
    assert result.reading.pages_looked_up == [0, 1, 3]  # the notes used, in document order
    assert result.reading.lookups == 3
    assert extra["merge_rounds"] == 1 and extra["rounds"][0]["batches"] == [[0, 1, 3]]
    assert result.answer.text == "Brest."
    answer_prompt = backend.prompts[-1]
    assert "Tomas sailed to Brest." in answer_prompt and "Evidence: " in answer_prompt
    assert "cistern froze" not in answer_prompt  # the removed segment never reaches the answer
    merge_prompt = next(p for p in backend.prompts if p.startswith("You are presented"))
    lines = merge_prompt.split("Collected information: ")[1].split("\n—\n")[0].split("\n")
    assert [_segment_of(line) for line in lines] == [0, 1, 3]  # kept notes merged in document order
    steps = [s.step for s in result.steps]
    assert steps == ["note"] * 4 + ["filter"] * 4 + ["merge", "answer"]
    assert all(s.outcome == BY_MODEL for s in result.steps)
    assert [s.page for s in result.steps[:8]] == [0, 1, 2, 3] * 2
    assert result.usage.llm_calls == 4 + 4 + 1 + 1


def test_notes_are_written_in_parallel_within_the_limit(scripted):
    gate = Gate(3)  # the first notes wait until three are being written at once (the limit), then all go on
    engine, backend = scripted(handler=handler(notes=gate.wrap(_note_json)))
    result = run(engine, concurrency=3)
    assert gate.most == 3 and result.details.segments == 4 and result.answer.text == "Brest."


def test_compression_rate_is_measured_on_the_longest_context(scripted):
    engine, _ = scripted(handler=handler())
    result = run(engine)
    longest_segment = max(len(p.split()) for p in PARAGRAPHS)
    assert result.reading.words_in_context >= longest_segment
    assert result.reading.compression_rate == compression_rate(result.reading.words_in_context, DOC.words)
    assert 0 < result.reading.compression_rate < 100
    assert result.details.final_note_words == len(result.reading.context.split())


def test_malformed_json_is_repaired_or_re_asked_then_falls_back(scripted):
    seen: dict[int, int] = {}

    def notes(i):
        seen[i] = seen.get(i, 0) + 1
        if i == 0:  # repairable at once: a fence and single quotes
            return "```json\n{'Evidence': 'Mara kept the lighthouse.', 'Reasoning': 'Not about Tomas.',}\n```"
        if i == 1:  # unusable, then good after the re-ask
            return "Sure, here you go!" if seen[i] == 1 else _note_json(1)
        if i == 3:  # never usable: the fallback quotes the segment
            return "I cannot do that."
        return _note_json(i)

    def label(prompt):
        return "Maybe." if "Mara kept the lighthouse" in prompt else _keep_all_but_empty(prompt)

    engine, backend = scripted(handler=handler(notes=notes, label=label))
    result = run(engine)
    note_steps = {s.page: s for s in result.steps if s.step == "note"}
    assert note_steps[0].outcome == BY_MODEL and "removed a code fence" in note_steps[0].attempts[0].notes
    assert note_steps[1].outcome == REASKED and len(note_steps[1].attempts) == 2
    assert "not a note" in note_steps[1].attempts[0].problem
    assert "That reply could not be used" in backend.prompts[[i for i, p in enumerate(backend.prompts)
                                                              if "Sure, here you go!" in p][0]]
    assert note_steps[3].outcome == FALLBACK and "extractive note" in note_steps[3].fallback
    assert len(note_steps[3].attempts) == 2  # one re-ask, no more
    assert "Brest" in result.details.notes[3].evidence and result.details.notes[3].note_by == FALLBACK
    filter0 = next(s for s in result.steps if s.step == "filter" and s.page == 0)
    assert filter0.outcome == FALLBACK and result.details.notes[0].kept  # unreadable label: kept


def test_every_note_removed_answers_from_no_notes(scripted):
    engine, backend = scripted(handler=handler(label=lambda p: "Label: Remove\nReason: nothing useful."))
    result = run(engine)
    assert result.details.all_removed and result.details.notes_kept == 0 and result.reading.pages_looked_up == []
    assert result.details.merge_rounds == 0 and result.details.final_notes == []
    assert not any(p.startswith("You are presented") for p in backend.prompts)
    merge = next(s for s in result.steps if s.step == "merge")
    assert merge.outcome == RULE and "removed every note" in merge.detail["reason"]
    assert "filter removed every segment's note" in backend.prompts[-1]
    assert result.reading.lookups == 0


def test_merges_repeat_in_rounds_until_the_notes_fit(scripted):
    rounds_seen = []

    def merge(prompt):
        listed = prompt.split("Collected information: ")[1].split("\n—\n")[0].split("\n")
        rounds_seen.append(len(listed))
        return json.dumps({"Evidence": " ".join(json.loads(line)["Evidence"] for line in listed),
                           "Reasoning": "Tomas sailed to Brest and came back."})

    engine, backend = scripted(handler=handler(notes=lambda i: json.dumps(
        {"Evidence": PARAGRAPHS[i], "Reasoning": f"About segment {i}."}), merge=merge))
    result = run(engine, merge_tokens=100)
    extra = result.details.to_dict()
    assert extra["notes_kept"] == 4
    assert [r["batches"] for r in extra["rounds"]] == [[[0, 1], [2, 3]], [[0, 1, 2, 3]]]
    assert extra["merge_rounds"] == 2 and sorted(rounds_seen) == [2, 2, 2]
    second = [p for p in backend.prompts if p.startswith("You are presented")][-1]
    assert "Tomas sailed to Brest and came back." in second  # round 2 merges round 1's notes
    assert [s.detail["round"] for s in result.steps if s.step == "merge" and s.outcome != RULE] == [1, 1, 2]
    # The merged note exceeds the budget: the final context is cut to fit, and the trace says so.
    assert extra["final_trimmed"] and any(s.outcome == RULE and "cut to fit" in s.detail["reason"]
                                          for s in result.steps)


def test_a_failing_server_stops_the_run_without_starting_the_other_notes(scripted, monkeypatch):
    dropped = threading.Event()  # set when the failed run has dropped the calls not yet started

    class Pool(ThreadPoolExecutor):
        def shutdown(self, wait=True, *, cancel_futures=False):
            super().shutdown(wait=False, cancel_futures=cancel_futures)
            if cancel_futures:
                dropped.set()
            if wait:
                super().shutdown(wait=True)

    monkeypatch.setattr(core.concurrency, "ThreadPoolExecutor", Pool)

    def notes(i):
        if i == 0:
            raise ModelError("Could not reach the model server (simulated).")
        dropped.wait(timeout=30)  # still writing this note when the failure stops the run
        return _note_json(i)

    engine, backend = scripted(handler=handler(notes=notes))
    with pytest.raises(ModelError, match="Could not reach"):
        run(engine, concurrency=2)
    # Two workers: one fails at once (and may start the third note before the run stops), the
    # other is still writing the second note; the fourth, not started, is dropped.
    assert dropped.is_set()
    assert len(backend.prompts) in (2, 3) and not any(PARAGRAPHS[3] in p for p in backend.prompts)
    run_row = engine.llm.store.list_runs(kind="ask")[0]
    assert run_row.status == "failed"


@pytest.mark.parametrize("params, setting, says", [
    ({"segment_tokens": 10}, "segment_tokens", "--segment-tokens must be at least 50 (got 10)"),
    ({"merge_tokens": 5}, "merge_tokens", "--merge-tokens must be at least 100 (got 5)"),
])
def test_bad_settings_are_refused_with_a_next_step(store, params, setting, says):
    store.save_document(DOC)
    with pytest.raises(SettingError) as refused:
        ask(store, OFFLINE_ENGINE, DOC.id, QUESTION, method="segmentplus", params=params)
    assert refused.value.setting == setting and refused.value.for_cli().startswith(says)
    assert refused.value.why  # says why the limit is there


# --- offline ------------------------------------------------------------------------------------------

def test_lexical_filter_and_concatenating_merge():
    keep, _ = lexical_label(Note("In June Tomas sailed to Brest with fish.", ""), QUESTION)
    drop, _ = lexical_label(Note("Gulls crowded the rocks.", ""), QUESTION)
    empty, _ = lexical_label(Note("", "No information."), QUESTION)
    assert keep.keep and not drop.keep and not empty.keep and "no evidence" in empty.reason
    note, detail = concatenated_note([Note("A cat sat. Tomas sailed to Brest.", "x"),
                                      Note("Tomas sailed to Brest. Fish were salted.", "y")], QUESTION, 10_000)
    assert note.evidence == "A cat sat. Tomas sailed to Brest. Fish were salted." and note.reasoning == "x y"
    small, detail = concatenated_note([Note(" ".join(PARAGRAPHS), "")], QUESTION, 60)
    assert detail["dropped_sentences"] > 0 and "Tomas sailed to Brest" in small.evidence


def test_offline_segment_plus_is_labelled_offline(store):
    store.save_document(DOC)
    result = ask(store, OFFLINE_ENGINE, DOC.id, QUESTION, method="segmentplus", params={"segment_tokens": 50})
    assert result.usage.llm_calls == 0 and "no LLM" in result.run.engine_label
    assert {s.outcome for s in result.steps} <= {OFFLINE, RULE}
    assert 1 in result.reading.pages_looked_up and 2 not in result.reading.pages_looked_up
    assert "Brest" in result.answer.text


# --- through the simulated OpenAI-compatible server ------------------------------------------------

OFF_COURSE = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())


def test_segment_plus_through_the_simulated_server(store, sim):
    document = parse_text(OFF_COURSE["article"], title="Off Course")
    store.save_document(document)
    engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01, timeout=5.0)
    q = OFF_COURSE["questions"][2]
    question = Question(q["question"], tuple(q["options"]))
    params = {"segment_tokens": 400, "merge_tokens": 300, "concurrency": 4}
    first = ask(store, engine, document.id, question, method="segmentplus", params=params)
    extra = first.details.to_dict()
    assert sim.stats.max_in_flight <= 4  # never more calls at once than the limit
    assert extra["segments"] > 4 and first.answer.choice in "ABCD"
    assert {"segmentplus_note", "segmentplus_filter", "answer_choice"} <= set(sim.stats.steps)
    assert all(s.outcome in (BY_MODEL, RULE) for s in first.steps)
    assert first.reading.pages_looked_up == [n["segment"] for n in extra["notes"] if n["kept"]]
    # Asked again: every call is replayed from the cache.
    again = ask(store, engine, document.id, question, method="segmentplus", params=params)
    assert again.usage.llm_calls == 0 and again.usage.cached_calls == first.usage.llm_calls
    assert again.answer == first.answer
    # A malformed reply to the first note is re-asked.
    sim.script = ["malformed"]
    other = ask(store, engine, document.id, Question("Who is Dameri Tass?"), method="segmentplus",
                params={**params, "concurrency": 1})
    assert other.steps[0].step == "note" and other.steps[0].outcome == REASKED
    assert re.search(r"\w", other.answer.text)
