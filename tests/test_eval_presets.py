"""Each dataset is read with its own preset and prompts, as in the paper (Table 8), not by length."""
import json

from core import prompts
from core.engine import OFFLINE, make_engine
from core.eval.datasets import load_dataset
from core.eval.runner import doc_preset, evaluate
from core.llm.simulator import MODEL, SimulatedLLM
from core.llm.simulator import template_of


def test_every_bundled_dataset_names_its_own_preset(tmp_path):
    assert {doc_preset(d, None).name for d in load_dataset("quality")} == {"quality"}
    assert {doc_preset(d, None).name for d in load_dataset("qmsum")} == {"qmsum"}  # even meetings over 20k words
    assert {doc_preset(d, None).name for d in load_dataset("narrativeqa")} == {"narrativeqa"}
    movie = tmp_path / "movie.jsonl"
    movie.write_text(json.dumps({"document_id": "m1", "title": "A Film", "kind": "movie",
                                 "text": "INT. ROOM - DAY\n\n" + "A line of the script. " * 300,
                                 "questions": [{"question": "Where?", "answers": ["A room"]}]}) + "\n")
    [doc] = load_dataset("narrativeqa", movie)
    assert doc_preset(doc, None).name == "narrativeqa-movie"
    assert doc_preset(doc, "quality").name == "quality"  # --preset still overrides


def test_an_evaluation_on_qmsum_sends_the_qmsum_pagination_prompt(store):
    docs = [d for d in load_dataset("qmsum", limit_docs=1)]
    docs = [type(d)(d.document, d.questions[:1]) for d in docs]
    with SimulatedLLM() as sim:
        engine = make_engine("openai", store, model=MODEL, base_url=sim.base_url)
        evaluate(store, engine, docs, ["gistmem"], dataset="qmsum", concurrency=4)
        used = {template_of(p).name for p in sim.prompts if template_of(p) is not None}
    assert prompts.PAGINATION_QMSUM.name in used and prompts.PAGINATION.name not in used
    assert prompts.PAGINATION_BOOK.name not in used
    memory = store.memories_for(docs[0].document.id)[0]
    assert memory.preset == "qmsum"
    evaluate(store, OFFLINE, docs, ["gistmem"], dataset="qmsum")
    assert {m.preset for m in store.memories_for(docs[0].document.id)} == {"qmsum"}
