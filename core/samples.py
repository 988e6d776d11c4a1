"""Bundled samples: public-domain texts, their questions, and one real model's gist memory.

"Off Course" (Mack Reynolds) is the ReadAgent paper's case study: the paper prints
the gists PaLM 2-L wrote for its 8 pages (Appendix D) and where each page starts
(Table 9). Opening it imports that memory as it is, labelled as the paper's, so the
app can show a real model's gist memory on a machine with no model.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from core.errors import GistError, NotFound
from core.methods.base import compression_rate
from core.prompts import LETTERS
from core.status import BUILDING, COMPLETE
from core.store import Store
from core.store.migrations import now
from core.store.records import Page
from core.text.documents import Document, count_words, load_path, parse_text

DATA = Path(__file__).parent / "data"
PAPER_ENGINE = "paper:palm-2-l"
PAPER_LABEL = "PaLM 2-L, gists quoted from the ReadAgent paper"



@dataclass(frozen=True)
class Sample:
    key: str
    title: str
    description: str
    file: str


SAMPLES = {s.key: s for s in (
    Sample("off-course", "Off Course — the ReadAgent paper's case study",
           "A 2,700-word story from QuALITY, with the 8-page gist memory PaLM 2-L wrote in the paper "
           "and the paper's 8 questions.", "off_course_readagent_paper.json"),
    Sample("alice", "Alice's Adventures in Wonderland",
           "Lewis Carroll, 26,000 words, 12 chapters (Project Gutenberg).", "pg11_alice_in_wonderland.txt"),
    Sample("ideal-husband", "An Ideal Husband",
           "Oscar Wilde's play, 31,000 words, with 8 NarrativeQA questions and reference answers.",
           "an_ideal_husband_narrativeqa.json"),
)}


def get_sample(key: str) -> Sample:
    try:
        return SAMPLES[key]
    except KeyError:
        raise NotFound(f"No sample {key!r}. Choose one of: {', '.join(SAMPLES)}.") from None


def sample_document(key: str) -> Document:
    """The sample's document; questions (and the paper's look-ups) are kept in ``meta``."""
    sample = get_sample(key)
    path = DATA / sample.file
    if path.suffix == ".txt":
        return replace(load_path(path), meta={"sample": key})
    raw = json.loads(path.read_text(encoding="utf-8"))
    if key == "off-course":
        doc = parse_text(raw["article"], title=raw["title"], author="Mack Reynolds", source=sample.file)
        questions = [
            {"id": q["question_unique_id"], "question": q["question"], "options": q["options"],
             "gold": LETTERS[q["gold_label"] - 1]}
            for q in raw["questions"]
        ]
        meta = {"sample": key, "questions": questions, "paper_lookups": raw["paper_lookups"],
                "question_source": "QuALITY dev, the question set the ReadAgent paper used"}
        return replace(doc, meta=meta)
    doc = parse_text(raw["text"], title=raw["title"], source=sample.file)
    questions = [{"id": f"{raw['document_id'][:8]}_{i}", "question": q["question"], "options": [],
                  "answers": q["answers"]} for i, q in enumerate(raw["questions"])]
    return replace(doc, meta={"sample": key, "questions": questions, "question_source": raw["source"]})


def open_sample(store: Store, key: str) -> tuple[Document, int | None]:
    """Store the sample (once) and, for Off Course, the paper's gist memory; returns its memory id."""
    document = sample_document(key)
    store.save_document(document)
    if key != "off-course":
        return document, None
    return document, import_paper_memory(store, document)


def _norm(text: str) -> str:
    """Letters, digits and single spaces: the paper's quotes are curly, the text's straight."""
    return " ".join(re.sub(r"[^a-z0-9 ]", "", text.lower().replace("…", " ")).split())


def page_starts(document: Document, starts_with: list[str]) -> list[int]:
    """The paragraph where each page begins, from the paper's opening words of each page."""
    starts, after = [], 0
    for n, prefix in enumerate(starts_with):
        if n == 0:
            starts.append(0)
            continue
        want = _norm(prefix)
        found = next((i for i in range(after + 1, len(document.paragraphs))
                      if _norm(document.paragraphs[i].text).startswith(want)), None)
        if found is None:
            raise GistError(f"Page {n} of the paper's memory starts with {prefix!r}, which is not in the text.")
        starts.append(found)
        after = found
    return starts


def import_paper_memory(store: Store, document: Document) -> int:
    """The paper's PaLM 2-L gist memory of Off Course as a stored memory (idempotent)."""
    existing = store.find_memory(document.id, PAPER_ENGINE)
    if existing is not None:
        return existing.id
    raw = json.loads((DATA / get_sample("off-course").file).read_text(encoding="utf-8"))
    pages = sorted(raw["pages"], key=lambda p: p["page"])
    starts = page_starts(document, [p["starts_with"] for p in pages]) + [len(document.paragraphs)]
    gist_words = sum(count_words(p["gist"]) for p in pages)
    memory_id = store.create_memory(
        doc_id=document.id, engine=PAPER_ENGINE, engine_label=PAPER_LABEL, model="PaLM 2-L", preset="quality",
        min_words=280, max_words=600, hard_breaks=0, settings=json.dumps({"source": raw["source"]}),
        settings_key=PAPER_ENGINE, status=BUILDING, origin="paper",
    )
    for page, start, end in zip(pages, starts, starts[1:]):
        store.save_page(memory_id, Page(start=start, end=end, text=document.span_text(start, end),
                                        words=sum(p.words for p in document.paragraphs[start:end]),
                                        break_by="paper", break_reason="page start from Table 9 of the ReadAgent paper",
                                        gist=page["gist"], gist_words=count_words(page["gist"]), gist_by="paper"))
    store.update_memory(memory_id, status=COMPLETE, pages=len(pages), words=document.words,
                        gist_words=gist_words, compression_rate=compression_rate(gist_words, document.words),
                        finished_at=now())
    return memory_id


# --- a question asked again: the data's own question, and what the paper read for it -------------

_QUOTES = str.maketrans({c: "'" for c in "’‘‛′`´"} | {c: '"' for c in "“”„‟″"})


def question_key(text: str) -> str:
    """A question as it is matched: curly and straight quotes alike, case and spacing ignored
    ("What was Dameri's purpose…" typed with a straight apostrophe is the data's curly one)."""
    return " ".join(str(text or "").translate(_QUOTES).casefold().split()).rstrip(" ?")


def find_question(questions: list[dict], text: str) -> dict | None:
    """The data's question (``document.meta["questions"]``) that ``text`` asks, if any."""
    key = question_key(text)
    return next((q for q in questions or [] if question_key(q.get("question", "")) == key), None) if key else None


def paper_lookup(document: Document, text: str) -> dict | None:
    """What the ReadAgent paper's runs read and chose for this question (Off Course only), if known."""
    gold = find_question(document.meta.get("questions") or [], text)
    if gold is None:
        return None
    return next((p for p in document.meta.get("paper_lookups") or []
                 if p.get("question_unique_id") == gold.get("id")), None)
