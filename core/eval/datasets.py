"""Evaluation datasets: QuALITY, QMSum, NarrativeQA, and a generic JSONL for your own questions.

Every loader returns ``EvalDoc`` values: a document and its questions, each with either a
gold option letter (multiple choice) or reference answers (free form).

Generic JSONL, one document per line::

    {"id": "doc-1", "title": "My report", "text": "the whole text ...",
     "questions": [{"id": "q1", "question": "...", "options": ["...", "..."], "gold": "B"},
                   {"id": "q2", "question": "...", "answers": ["a reference", "another"]}]}

``gold`` is a letter (or a 1-based number); ``answers`` are references for free-form questions.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.errors import DocumentError
from core.prompts import LETTERS
from core.text.documents import Document, parse_text

DATA = Path(__file__).resolve().parents[1] / "data" / "eval"
KINDS = ("quality", "qmsum", "narrativeqa", "jsonl")
BUNDLED = {
    "quality": ("quality_dev_16.jsonl", "QuALITY dev: 16 articles, 279 multiple-choice questions"),
    "qmsum": ("qmsum_val_3.jsonl", "QMSum validation: 3 meetings, free-form queries"),
    "narrativeqa": ("narrativeqa_valid_mini_2.jsonl", "NarrativeQA validation: An Ideal Husband, 8 questions"),
}


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    text: str
    options: tuple[str, ...] = ()
    gold: str | None = None  # the correct option's letter
    references: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def is_choice(self) -> bool:
        return bool(self.options)


@dataclass(frozen=True)
class EvalDoc:
    document: Document
    questions: tuple[EvalQuestion, ...]


def _lines(path: Path):
    if not path.exists():
        raise DocumentError(f"No dataset file at {path}.", cli="Check --path.",
                            app="Choose the dataset file again.")
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DocumentError(f"{path.name} line {n} is not JSON ({exc.msg}). Each line must be one "
                                        "JSON object.") from None


def _gold_letter(value, n_options: int, where: str) -> str:
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        index = int(value) - 1
    elif isinstance(value, str) and len(value.strip()) == 1 and value.strip().upper() in LETTERS:
        index = LETTERS.index(value.strip().upper())
    else:
        raise DocumentError(f"{where}: gold must be an option letter or a 1-based number, not {value!r}.")
    if not 0 <= index < n_options:
        raise DocumentError(f"{where}: gold {value!r} is not one of the {n_options} options.")
    return LETTERS[index]


def load_quality(path: Path) -> list[EvalDoc]:
    docs = []
    for line, row in enumerate(_lines(path)):
        article = row.get("article_id") or f"line{line}"  # some rebuilt articles have no id
        doc = parse_text(row["article"], title=row["title"], author=row.get("author") or "",
                         source=f"quality:{article}")
        questions = tuple(
            EvalQuestion(q.get("question_unique_id") or f"{article}_{line}_{i}", q["question"],
                         tuple(q["options"]), _gold_letter(q["gold_label"], len(q["options"]), row["title"]),
                         meta={"difficult": bool(q.get("difficult"))})
            for i, q in enumerate(row["questions"])
        )
        docs.append(EvalDoc(replace(doc, meta={"dataset": "quality", "preset": "quality"}), questions))
    return docs


def load_qmsum(path: Path) -> list[EvalDoc]:
    docs = []
    for n, row in enumerate(_lines(path)):
        text = "\n\n".join(f"{t['speaker']}: {t['content']}" for t in row["meeting_transcripts"])
        doc = parse_text(text, title=f"QMSum meeting {n}", source=f"qmsum:{path.stem}:{n}")
        queries = [("general", q) for q in row.get("general_query_list", [])] + \
                  [("specific", q) for q in row.get("specific_query_list", [])]
        questions = tuple(EvalQuestion(f"qmsum{n}_{i}", q["query"], references=(q["answer"],),
                                       meta={"query_type": kind}) for i, (kind, q) in enumerate(queries))
        docs.append(EvalDoc(replace(doc, meta={"dataset": "qmsum", "preset": "qmsum"}), questions))
    return docs


def load_narrativeqa(path: Path) -> list[EvalDoc]:
    docs = []
    for row in _lines(path):
        if not row.get("text"):
            continue  # the sample file has a book without its text
        doc = parse_text(row["text"], title=row["title"], source=f"narrativeqa:{row['document_id'][:12]}")
        questions = tuple(EvalQuestion(f"{row['document_id'][:8]}_{i}", q["question"], references=tuple(q["answers"]))
                          for i, q in enumerate(row["questions"]))
        # The paper's NarrativeQA setting differs for Gutenberg books and movie scripts (Table 8).
        preset = "narrativeqa-movie" if str(row.get("kind", "")).lower() == "movie" else "narrativeqa"
        docs.append(EvalDoc(replace(doc, meta={"dataset": "narrativeqa", "preset": preset, "kind": row.get("kind")}),
                            questions))
    return docs


def load_jsonl(path: Path) -> list[EvalDoc]:
    docs = []
    for n, row in enumerate(_lines(path), 1):
        where = f"{path.name} line {n}"
        if not isinstance(row, dict) or not row.get("text") or not row.get("questions"):
            raise DocumentError(f"{where} needs \"text\" and \"questions\".",
                                cli="See `python -m core eval --help` for the format.",
                                app='Each line is one document: {"text": "...", "questions": [{"question": "...", '
                                    '"options": [...], "gold": "A"}]}.')
        doc = parse_text(row["text"], title=row.get("title") or f"Document {n}", source=f"jsonl:{row.get('id', n)}")
        questions = []
        for i, q in enumerate(row["questions"]):
            if not q.get("question"):
                raise DocumentError(f"{where}, question {i + 1} has no \"question\".")
            options = tuple(q.get("options") or ())
            if options and q.get("gold") is None:
                raise DocumentError(f"{where}, question {i + 1} has options but no \"gold\".")
            gold = _gold_letter(q["gold"], len(options), f"{where}, question {i + 1}") if options else None
            refs = tuple(q.get("answers") or ())
            if not options and not refs:
                raise DocumentError(f"{where}, question {i + 1} needs \"options\" + \"gold\" or \"answers\".")
            questions.append(EvalQuestion(str(q.get("id") or f"{row.get('id', n)}_{i}"), q["question"], options,
                                          gold, refs))
        meta = {"dataset": "jsonl", **({"preset": row["preset"]} if row.get("preset") else {})}
        docs.append(EvalDoc(replace(doc, meta=meta), tuple(questions)))
    return docs


LOADERS = {"quality": load_quality, "qmsum": load_qmsum, "narrativeqa": load_narrativeqa, "jsonl": load_jsonl}


def load_dataset(kind: str, path: str | Path | None = None, *, limit_docs: int | None = None) -> list[EvalDoc]:
    """A dataset from ``path`` (or the bundled sample of ``kind``), at most ``limit_docs`` documents."""
    if kind not in LOADERS:
        raise DocumentError(f"Unknown dataset {kind!r}; choose one of {', '.join(KINDS)}.")
    if path is None:
        if kind not in BUNDLED:
            raise DocumentError("A jsonl dataset needs the path to your file.", cli="Pass --path FILE.",
                                app="Upload your file.")
        path = DATA / BUNDLED[kind][0]
    docs = LOADERS[kind](Path(path))
    if not docs:
        raise DocumentError(f"{Path(path).name} has no documents with questions.")
    return docs[:limit_docs] if limit_docs else docs
