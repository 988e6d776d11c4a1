"""A gist memory as a file: JSON for programs, Markdown for people."""
from __future__ import annotations

import json

from core.text.documents import Document
from core.methods.base import compression_rate
from core.methods.readagent.memory import GistMemory


def memory_json(memory: GistMemory, document: Document) -> str:
    return json.dumps({
        "doc_id": document.id, "title": document.title, "author": document.author, "words": document.words,
        "engine": memory.engine, "engine_label": memory.engine_label, "preset": memory.preset,
        "settings": memory.settings, "gist_words": memory.gist_words,
        "compression_rate": memory.compression_rate,
        "pages": [{"page": p.index, "first_paragraph": p.start, "end_paragraph": p.end, "words": p.words,
                   "pause_point_by": p.break_by, "pause_point_reason": p.break_reason, "gist": p.gist,
                   "gist_words": p.gist_words, "gist_by": p.gist_by, "text": p.text} for p in memory.pages],
    }, ensure_ascii=False, indent=2)


def memory_markdown(memory: GistMemory, document: Document) -> str:
    lines = [f"# {document.title} — gist memory", "",
             f"- Gists by: {memory.engine_label}",
             f"- {len(memory.pages)} pages, {document.words:,} words → {memory.gist_words:,} gist words "
             f"(compression rate {memory.compression_rate:.1f}%)", ""]
    for p in memory.pages:
        lines += [f"## Page {p.index} ({p.words} words → {p.gist_words}, "
                  f"{compression_rate(p.gist_words, p.words):.0f}% compression)", "",
                  f"Paragraphs {p.start}–{p.end - 1} · pause point by {p.break_by}"
                  + (f" ({p.break_reason})" if p.break_reason else "") + f" · gist by {p.gist_by}", "",
                  p.gist or "_(no gist)_", "",
                  f"<details><summary>Raw text</summary>\n\n{p.text}\n\n</details>", ""]
    return "\n".join(lines)
