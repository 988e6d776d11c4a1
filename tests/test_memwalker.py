"""MemWalker: parsing navigation replies, building the memory tree, walking it."""
import json
import re
from dataclasses import replace

import pytest

from core import prompts
from core.errors import SettingError
from core.store import open_db
from core.text.documents import Paragraph, load_path, parse_text
from core.engine import make_engine
from core.methods.memwalker.parsers import COMMIT, NO_ANSWER, REVERT, parse_leaf, parse_summary, parse_triage
from core.methods.memwalker.tree import MemoryTree, TreeNode, TreeSettings, balanced_groups, build_tree, load_tree
from core.methods.memwalker.walk import navigate
from core.text.segments import segment_paragraphs
from core.methods.ask import ask
from core.engine import OFFLINE as OFFLINE_ENGINE
from core.methods.readagent.presets import PRESETS
from core.methods.base import Question
from core.llm.simulator import MODEL
from core.text.tokens import count_tokens
from core.trace import FALLBACK, MODEL as BY_MODEL, OFFLINE, REASKED, RULE
from tests.conftest import CORE_DATA, book, cli, cli_json
from tests.fakes import Gate

OPTIONS = ("one", "two", "three", "four")
TRIAGE_PROMPT = prompts.MEMWALKER_TRIAGE.format(
    a_doc_kind="a story", question="Why?", working_memory="", summaries="Summary 0: a\nSummary 1: b",
    revert="", actions="0 / 1")
LEAF_PROMPT = prompts.MEMWALKER_LEAF.format(working_memory="", text="Text.", question="Why?", answer_format="(A) ...")


# --- parsers (table-driven) ------------------------------------------------------------------

@pytest.mark.parametrize("reply, children, can_revert, action, problem", [
    ("Reasoning: Summary 1 mentions Ro's talk with the Earthmen.\nAction: 1", 3, False, 1, ""),
    ("#####\nReasoning: the second part.\nAction: 0\n#####", 2, True, 0, ""),
    ("**Action:** 2", 3, False, 2, ""),
    ("Reasoning: nothing here fits.\nAction: -1", 3, True, REVERT, ""),
    ("action = summary 1", 2, False, 1, ""),
    ("2", 3, False, 2, ""),
    ("Reasoning: Action: 0 looked right, but no.\nAction: 1", 2, False, 1, ""),  # the last action wins
    ("I think Summary 2 is the one that covers the trial.", 3, False, 2, ""),  # no Action line, one summary named
    ("Reasoning: nothing fits.\nAction: -1", 3, False, None, "root"),  # revert at the root
    ("Reasoning: the fifth.\nAction: 5", 3, True, None, "no Summary 5"),  # a child that does not exist
    ("Action: -2\nAnswer: (A)", 3, True, None, "-2 answers only"),
    ("Reasoning: ...\nAction: 0 / 1 / 2, ...", 3, False, None, "several actions"),  # the format line echoed
    (TRIAGE_PROMPT, 2, False, None, "repeats the instructions"),  # the prompt echoed
    ("Summary 0 and Summary 2 both mention the ship.", 3, False, None, "no action"),
    ("I'm sorry, but I can't help with that request.", 3, False, None, "no action"),
    ("", 3, False, None, "empty"),
    ("   \n ", 3, False, None, "empty"),
])
def test_parse_triage(reply, children, can_revert, action, problem):
    parsed = parse_triage(reply, children, can_revert)
    if problem:
        assert not parsed.ok and problem in parsed.problem
    else:
        assert parsed.ok and parsed.value.action == action


def test_parse_triage_keeps_the_reasoning():
    parsed = parse_triage("Reasoning: Summary 0 is about the landing.\nAction: 0", 2, False)
    assert parsed.value.reasoning == "Summary 0 is about the landing."


@pytest.mark.parametrize("reply, options, action, choice, answer, problem", [
    ("Reasoning: he says so.\nAction: -2\nAnswer: (A) He realized ...", OPTIONS, COMMIT, "A", "(A) He realized ...", ""),
    ("#####\nReasoning: yes\nAction: -2\nAnswer: C\n#####", OPTIONS, COMMIT, "C", "C", ""),
    ("Reasoning: not in this part.\nAction: -1", OPTIONS, REVERT, None, "", ""),
    ("Action: -1\nAnswer: (A) ...", OPTIONS, REVERT, None, "", ""),  # the format's Answer line is not an answer
    ("Reasoning: clear.\nAnswer: (B) two", OPTIONS, COMMIT, "B", "(B) two", ""),  # answered without an action
    ("Reasoning: yes\nAction: -2\nAnswer: In New York.", (), COMMIT, None, "In New York.", ""),
    ("Reasoning: yes\nAction: -2", OPTIONS, None, None, "", "needs the final answer"),
    ("Reasoning: yes\nAction: -2\nAnswer: ...", (), None, None, "", "needs the final answer"),
    ("Reasoning: yes\nAction: -2\nAnswer: (F)", OPTIONS, None, None, "", "one of the options"),
    ("Reasoning: the second summary.\nAction: 1", OPTIONS, None, None, "", "action 1"),  # a triage action at a leaf
    ("Reasoning: ...\nAction: -2 or -1\nAnswer: (A) ...", OPTIONS, None, None, "", "several actions"),
    (LEAF_PROMPT, OPTIONS, None, None, "", "repeats the instructions"),
    ("I cannot tell.", OPTIONS, None, None, "", "no action"),
    ("", OPTIONS, None, None, "", "empty"),
])
def test_parse_leaf(reply, options, action, choice, answer, problem):
    parsed = parse_leaf(reply, options)
    if problem:
        assert not parsed.ok and problem in parsed.problem
    else:
        assert parsed.ok and parsed.value.action == action
        assert parsed.value.choice == choice and parsed.value.answer == answer


@pytest.mark.parametrize("reply, source_words, expected, problem", [
    ("Ro climbs down the cliff.", 100, "Ro climbs down the cliff.", ""),
    ("Summary: Ro climbs down.", 100, "Ro climbs down.", ""),
    ("Here is the combined summary: Ro and Earth.", 100, "Ro and Earth.", ""),
    ('"Ro climbs."', 100, "Ro climbs.", ""),
    ("", 100, None, "empty"),
    ("one two three four five six", 3, None, "longer than"),
    ("Summarize the following part of a longer text. Keep the people...", 100, None, "repeats the instructions"),
])
def test_parse_summary(reply, source_words, expected, problem):
    parsed = parse_summary(reply, source_words)
    assert (parsed.problem == "" if not problem else problem in parsed.problem)
    assert parsed.value == expected


# --- the tree's shape --------------------------------------------------------------------------

@pytest.mark.parametrize("n, most, sizes", [(9, 8, [5, 4]), (8, 8, [8]), (17, 8, [6, 6, 5]), (1, 8, [1]),
                                            (10, 4, [4, 3, 3])])
def test_balanced_groups(n, most, sizes):
    groups = balanced_groups(n, most)
    assert [len(g) for g in groups] == sizes
    assert [i for g in groups for i in g] == list(range(n))


def _paragraph(tokens: int, word: str = "cat") -> Paragraph:
    text = " ".join([word] * tokens)
    assert count_tokens(text) == tokens
    return Paragraph(text, tokens)


def test_segments_are_paragraph_aligned_and_within_the_budget():
    paragraphs = [_paragraph(100) for _ in range(20)]
    segments = segment_paragraphs(paragraphs, 250)
    assert [(s.start, s.end) for s in segments] == [(i, i + 2) for i in range(0, 20, 2)]
    assert all(s.tokens <= 250 for s in segments)


def test_a_heading_starts_the_next_segment_and_a_long_paragraph_is_split_between_sentences():
    heading = Paragraph("Chapter 2", 2, heading=True)
    long = Paragraph(" ".join(f"Sentence number {i} is here." for i in range(60)), 300)
    segments = segment_paragraphs([_paragraph(100), _paragraph(100), heading, _paragraph(100), long], 210)
    assert segments[0].text.count("cat") == 200 and segments[1].text.startswith("Chapter 2\n")
    assert all(s.tokens <= 210 for s in segments)
    assert " ".join(s.text for s in segments[2:]).replace("\n", " ").endswith(long.text.split(" ", 1)[1])
    assert "Sentence number 59 is here." in segments[-1].text


def test_tree_shape_for_a_known_document(store):
    document = load_path(book("off_course"))
    tree, built = build_tree(store, document, OFFLINE_ENGINE, TreeSettings(segment_tokens=300, max_children=4))
    # 3,824 tokens in paragraphs of up to 300 -> 14 leaves; 14 under at most 4 -> 4 + 4 + 3 + 3; then the root.
    assert tree.level_counts() == [14, 4, 1]
    assert [lv["nodes"] for lv in built.levels] == [14, 4, 1] and built.llm_calls == 0
    assert sum(n.tokens for n in tree.leaves) == tree.tokens and tree.root.tokens == tree.tokens
    assert [len(n.children) for n in tree.nodes if n.level == 2] == [4, 4, 3, 3]
    assert all(n.text and n.summary and n.summary_by == OFFLINE for n in tree.leaves)  # leaves keep raw text
    assert tree.leaves[0].start == 0 and tree.leaves[-1].end == len(document.paragraphs)
    assert all(a.end == b.start or a.end == b.start + 1 for a, b in zip(tree.leaves, tree.leaves[1:]))
    assert tree.root.parent is None and all(tree.node(c).parent == n.id for n in tree.nodes for c in n.children)


def test_synthetic_tree_levels(store):
    document = parse_text("\n\n".join(" ".join(["cat"] * 100) for _ in range(20)), title="Cats")
    tree, _ = build_tree(store, document, OFFLINE_ENGINE, TreeSettings(segment_tokens=250, max_children=4))
    assert tree.level_counts() == [10, 3, 1]


def test_bad_settings_say_what_to_do(store):
    document = parse_text("A short text. " * 50, title="Short")
    with pytest.raises(SettingError) as refused:
        build_tree(store, document, OFFLINE_ENGINE, TreeSettings(1000, 1))
    assert refused.value.setting == "max_children" and refused.value.value == 1
    assert refused.value.for_cli().startswith("--max-children must be at least 2 (got 1)")


def _summary_handler(prompt: str) -> str:
    """A summary that, like a real one, shares words with what it summarises."""
    if prompt.startswith("Summarize the following part"):
        return "Summary: " + " ".join(prompt.split("\nText:\n", 1)[1].split()[:8])
    if prompt.startswith("The following are summaries"):
        return " ".join(" ".join(s.split()[:3]) for s in re.findall(r"(?m)^Summary \d+: (.*)$", prompt))
    raise AssertionError(f"unexpected prompt: {prompt[:200]}")


def test_a_stored_tree_reopens_without_model_calls(tmp_path, scripted):
    document = load_path(book("off_course"))
    path = tmp_path / "trees.db"
    first = open_db(path)
    engine, backend = scripted(handler=_summary_handler)
    engine.llm.store = first
    tree, built = build_tree(first, document, engine, TreeSettings(500, 4))
    assert built.llm_calls == len(tree.nodes) == len(backend.prompts) and not built.reused
    first.close()
    again = open_db(path)
    engine2, backend2 = scripted()  # an empty queue fails loudly if the model is called
    engine2.llm.store = again
    reopened, result = build_tree(again, document, engine2, TreeSettings(500, 4))
    assert result.reused and result.llm_calls == 0 and backend2.prompts == []
    assert reopened == load_tree(again, tree.tree_id) and reopened.nodes == tree.nodes
    other, _ = build_tree(again, document, OFFLINE_ENGINE, TreeSettings(500, 4))
    assert other.tree_id != tree.tree_id  # another engine, another tree
    again.close()


def test_summaries_of_a_level_run_concurrently_within_the_limit(store, scripted):
    gate = Gate(3)  # the first calls wait until three are in flight at once (the limit), then all go on
    engine, backend = scripted(handler=gate.wrap(_summary_handler))
    document = parse_text("\n\n".join(" ".join(["cat"] * 100) for _ in range(20)), title="Cats")
    tree, built = build_tree(store, document, engine, TreeSettings(250, 4), concurrency=3)
    assert gate.most == 3 and built.llm_calls == 14


def test_tree_on_a_gist_memory_uses_its_pages_and_gists(store, scripted):
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.memory import load_memory

    document = load_path(book("off_course"))
    built = build_memory(store, document, OFFLINE_ENGINE, BuildSettings(PRESETS["quality"]))
    memory = load_memory(store, built.memory_id)
    engine, backend = scripted(handler=_summary_handler)
    tree, result = build_tree(store, document, engine, TreeSettings(max_children=4), memory=memory)
    assert [n.text for n in tree.leaves] == [p.text for p in memory.pages]
    assert [n.summary for n in tree.leaves] == [p.gist for p in memory.pages]
    assert result.origin == "pages" and result.memory_id == memory.memory_id
    assert result.llm_calls == len(tree.nodes) - len(tree.leaves)  # only the parents were summarised
    assert all(p.startswith("The following are summaries") for p in backend.prompts)


# --- navigation with a scripted model ----------------------------------------------------------

def small_tree() -> MemoryTree:
    """     6
          /   \\
         4     5
        / \\   / \\
       0   1 2   3      (leaves keep raw text)"""
    leaf = lambda i: TreeNode(i, 1, i, (), 4 if i < 2 else 5, i, i + 1, f"summary of leaf {i}", "model",
                              text=f"Raw text of segment {i}.", tokens=100, summary_tokens=10)
    return MemoryTree("doc", "Doc", 400, (
        leaf(0), leaf(1), leaf(2), leaf(3),
        TreeNode(4, 2, 0, (0, 1), 6, 0, 2, "summary of the first half", "model", tokens=200, summary_tokens=10),
        TreeNode(5, 2, 1, (2, 3), 6, 2, 4, "summary of the second half", "model", tokens=200, summary_tokens=10),
        TreeNode(6, 3, 0, (4, 5), None, 0, 4, "summary of everything", "model", tokens=400, summary_tokens=10),
    ))


QUESTION = Question("Why did Ro change his mind?", OPTIONS)


def walk(scripted, replies, **kw):
    engine, backend = scripted(replies)
    result, traces = navigate(small_tree(), QUESTION, engine, PRESETS["quality"], **kw)
    return result, traces, backend


def test_straight_walk(scripted):
    result, traces, backend = walk(scripted, [
        "Reasoning: the second half has the talk.\nAction: 1",
        "Reasoning: the first of these.\nAction: 0",
        "Reasoning: he says it here.\nAction: -2\nAnswer: (B) two",
    ])
    assert result.path == [6, 5, 2] and result.answered and result.reverts == 0 and not result.strayed
    assert result.answer.choice == "B" and result.leaves_read == [2]
    assert [t.step for t in traces] == ["triage", "triage", "leaf"]
    assert all(t.outcome == BY_MODEL for t in traces) and traces[2].page == 2
    assert [v.move for v in result.visits] == ["down", "down", "answer"]
    assert result.visits[0].reasoning == "the second half has the talk."
    root, middle, leaf = backend.prompts
    assert "Summary 0: summary of the first half\nSummary 1: summary of the second half" in root
    assert "action -1" not in root and "Action: 0 / 1\n" in root  # no revert offered at the root
    assert "reply with action -1 to go back" in middle and "Action: 0 / 1 / -1\n" in middle
    assert "Background information: summary of the second half" in middle  # working memory
    assert "Main text: Raw text of segment 2." in leaf and "Background information: summary of the second half" in leaf
    assert "(B) two" in leaf  # the options are shown
    # Share read: 4 summaries shown (10 tokens each) + one raw segment (100) of 400 tokens.
    assert result.tokens_read == 140


def test_revert_and_recover(scripted):
    result, traces, backend = walk(scripted, [
        "Reasoning: first half.\nAction: 0",
        "Reasoning: leaf 0.\nAction: 0",
        "Reasoning: not here.\nAction: -1",  # back to node 4
        "Reasoning: nothing else here.\nAction: -1",  # back to the root
        "Reasoning: the other half then.\nAction: 0",  # node 4 is no longer offered: Summary 0 is node 5
        "Reasoning: the last part.\nAction: 1",
        "Reasoning: found it.\nAction: -2\nAnswer: (D) four",
    ])
    assert result.path == [6, 4, 0, 4, 6, 5, 3]
    assert result.reverts == 2 and result.answered and result.answer.choice == "D"
    assert [v.move for v in result.visits] == ["down", "down", "revert", "revert", "down", "down", "answer"]
    at_node_4_again, at_root_again = backend.prompts[3], backend.prompts[4]
    assert "Summary 0: summary of leaf 1" in at_node_4_again and "summary of leaf 0" not in at_node_4_again
    assert "Summary 0: summary of the second half" in at_root_again and "first half" not in at_root_again
    assert result.visits[4].shown == [5] and result.leaves_read == [0, 3]


def test_three_invalid_replies_end_with_no_answer(scripted):
    result, traces, backend = walk(scripted, ["I am not sure.", "", "Reasoning: hmm\nAction: 7"])
    assert not result.answered and result.answer.text == NO_ANSWER and result.answer.choice is None
    assert len(traces) == 1 and traces[0].outcome == FALLBACK and len(traces[0].attempts) == 3
    assert "no Summary 7" in traces[0].attempts[2].problem and "3 invalid replies" in result.ended
    assert "That reply could not be used: the reply was empty" in backend.prompts[2]  # re-asked with the reason
    assert result.visits[-1].move == NO_ANSWER


def test_an_invalid_reply_is_re_asked_and_the_walk_goes_on(scripted):
    result, traces, _ = walk(scripted, [
        "Reasoning: none fit.\nAction: -1",  # revert at the root: invalid
        "Reasoning: then the first.\nAction: 0",
        "Reasoning: ok.\nAction: 1",
        "Reasoning: yes.\nAction: -2\nAnswer: (A) one",
    ])
    assert traces[0].outcome == REASKED and "root" in traces[0].attempts[0].problem
    assert result.answered and result.path == [6, 4, 1]


def test_going_back_from_everything_ends_with_no_answer_without_asking(scripted):
    result, traces, backend = walk(scripted, [
        "Action: 0", "Action: -1",  # root -> 4 -> back
        "Action: 0", "Action: -1",  # root (only 5 left) -> 5 -> back
    ])
    assert not result.answered and len(backend.prompts) == 4
    assert traces[-1].outcome == RULE and "every branch" in result.ended and result.path == [6, 4, 6, 5, 6]


def test_the_step_cap_stops_a_walk(scripted):
    result, traces, _ = walk(scripted, ["Action: 0", "Action: 0"], max_steps=2)
    assert not result.answered and "step cap" in result.ended and "step_cap" in traces[-1].detail


def test_working_memory_is_truncated_to_its_budget(scripted):
    tree = small_tree()
    long = " ".join(f"word{i}" for i in range(400))
    nodes = list(tree.nodes)
    nodes[5] = replace(nodes[5], summary=long)
    engine, backend = scripted(["Action: 1", "Action: 0", "Action: -2\nAnswer: (A)"])
    navigate(replace(tree, nodes=tuple(nodes)), QUESTION, engine, PRESETS["quality"], working_memory_tokens=100)
    background = backend.prompts[2].split("Background information: ", 1)[1].split("\nMain text:", 1)[0]
    assert count_tokens(background) <= 110 and background.startswith("... ") and background.endswith("word399")


# --- the method, offline and through the simulated server ----------------------------------------

OFF_COURSE = json.loads((CORE_DATA / "off_course_readagent_paper.json").read_text())
Q = next(q for q in OFF_COURSE["questions"] if q["question_unique_id"] == "30035_SLGX7NNR_3")  # a local question


def test_offline_memwalker_is_labelled_offline(store):
    document = load_path(book("off_course"))
    store.save_document(document)
    result = ask(store, OFFLINE_ENGINE, document.id, Question(Q["question"], tuple(Q["options"])),
                 method="memwalker", params={"segment_tokens": 300, "max_children": 4})
    assert result.details.kind == "walk" and result.details.summary().startswith("path ")
    extra = result.details.to_dict()
    for key in ("path", "reverts", "answered", "steps", "strayed_and_recovered", "share_read"):
        assert key in extra
    assert extra["path"][0] == extra["tree"]["nodes"] - 1  # starts at the root
    assert all(s.outcome in (OFFLINE, RULE) for s in result.steps) and "no LLM" in result.run.engine_label
    assert result.usage.llm_calls == 0 and 0 < extra["share_read"] < 1
    assert extra["steps"] == len(extra["trajectory"]) == len(result.steps)


def test_memwalker_through_the_simulated_server(store, sim):
    document = parse_text(OFF_COURSE["article"], title="Off Course")
    store.save_document(document)
    engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url, backoff=0.01, timeout=5.0)
    question = Question(Q["question"], tuple(Q["options"]))
    first = ask(store, engine, document.id, question, method="memwalker", params={"segment_tokens": 400})
    tree = first.details.tree
    assert tree.built_now and tree.build_llm_calls == tree.nodes and tree.levels[-1] == 1
    assert first.details.answered and first.answer.choice in "ABCD"
    assert all(s.outcome == BY_MODEL for s in first.steps) and first.usage.llm_calls == len(first.steps)
    assert {"memwalker_leaf_summary", "memwalker_node_summary", "memwalker_triage", "memwalker_leaf"} <= set(
        sim.stats.steps)
    # Asked again: the tree is reopened (no summaries) and the walk replayed from the cache.
    again = ask(store, engine, document.id, question, method="memwalker", params={"segment_tokens": 400})
    assert not again.details.tree.built_now and again.details.path == first.details.path
    assert again.usage.llm_calls == 0 and again.usage.cached_calls == first.usage.llm_calls
    # A malformed reply at the first triage is re-asked and the walk still answers.
    other = Question("Who is Dameri Tass?")
    sim.script = ["malformed"]
    free = ask(store, engine, document.id, other, method="memwalker", params={"segment_tokens": 400})
    assert free.steps[0].outcome == REASKED and free.answer.choice is None
    assert free.details.answered == (free.answer.text != NO_ANSWER)


# --- the command line ------------------------------------------------------------------------------

def test_cli_tree_and_ask(tmp_path, capsys):
    from core.llm.simulator import SimulatedLLM

    db = tmp_path / "cli.db"
    built = cli_json(capsys, "build", str(book("off_course")), "--preset", "quality", db=db)
    doc = built["doc_id"]
    tree = cli_json(capsys, "tree", doc, "--segment-tokens", "300", "--max-children", "4", db=db)
    assert [lv["nodes"] for lv in tree["levels"]] == [14, 4, 1] and tree["nodes"] == 19
    assert tree["llm_calls"] == 0 and tree["engine"] == "offline" and not tree["reused"]
    text = cli(capsys, "tree", doc, "--segment-tokens", "300", "--max-children", "4", db=db)
    assert "level 3 (root): 1 node" in text.stdout and "level 1 (leaves): 14 segments" in text.stdout
    assert "already built, reused" in text.stdout and "offline (no LLM)" in text.stderr
    on_pages = cli_json(capsys, "tree", doc, "--memory", str(built["memory_id"]), db=db)
    assert on_pages["origin"] == "pages" and on_pages["leaves"] == built["pages"]

    answer = cli_json(capsys, "ask", doc, "What was Dameri's purpose in landing on earth?", "--method", "memwalker",
                      "--segment-tokens", "300", "--max-children", "4", db=db)
    for key in ("path", "reverts", "answered", "steps", "strayed_and_recovered", "share_read"):
        assert key in answer
    assert answer["path"][0] == 18 and answer["details"]["tree"]["tree_id"] == tree["tree_id"]
    shown = cli(capsys, "show", str(answer["run_id"]), db=db)
    assert shown.returncode == 0 and "triage" in shown.stdout

    with SimulatedLLM() as sim:
        opts = ["--engine", "openai", "--model", MODEL, "--base-url", sim.base_url]
        first = cli_json(capsys, "tree", doc, "--segment-tokens", "500", *opts, db=db)
        assert first["llm_calls"] == first["nodes"] > 1 and first["engine_label"].startswith(MODEL)
        again = cli_json(capsys, "tree", doc, "--segment-tokens", "500", *opts, db=db)
        assert again["reused"] and again["llm_calls"] == 0 and again["tree_id"] == first["tree_id"]
        asked = cli_json(capsys, "ask", doc, "Who is Dameri Tass?", "--method", "memwalker", "--segment-tokens",
                         "500", *opts, db=db)
        assert asked["llm_calls"] == asked["steps"] and isinstance(asked["answered"], bool)


def test_cli_tree_errors_are_one_sentence(tmp_path, capsys):
    db = tmp_path / "e.db"
    store = open_db(db)
    document = load_path(book("off_course"))
    store.save_document(document)
    store.close()
    proc = cli(capsys, "tree", document.id, "--max-children", "1", db=db)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1].startswith("Error: --max-children must be at least 2 (got 1)")
    proc = cli(capsys, "tree", "ffffffff", db=db)
    assert proc.returncode == 1 and "no such document" in proc.stderr and "Traceback" not in proc.stderr
