"""A report you can hand on: question runs as one self-contained HTML file.

The file needs nothing but itself: no script, font, stylesheet or image from anywhere
(styles are inline, the MemWalker walk is an inline SVG), so it opens offline from a disk
or an e-mail. Every text that came from a document or a model goes through ``esc``
(``html.escape``): a document's ``<script>`` shows as text. Offline output is labelled
"offline engine (no LLM)", never as a model's.

For each run: the question, the answer and its figures, the page strip with the pages
re-read (and, for the paper's demo, the pages the paper's runs re-read), the MemWalker walk
on its tree, Segment+'s notes, the context as sent, and the trace (prompts, replies, parse
results, fallbacks). ``python -m core report RUN_ID ... --out FILE.html`` writes it.
"""
from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path
from typing import Callable, Iterable

from core.errors import GistError
from core.methods.ask import AskResult, load_ask
from core.methods.memwalker.drawing import legend_html, node_label, walk_svg
from core.methods.memwalker.tree import load_tree
from core.prompts import LETTERS
from core.samples import find_question, paper_lookup
from core.store import Store

OFFLINE_WORDS = "offline engine (no LLM)"
_PAGE_TAG = re.compile(r"^<Page (\d+)>$", re.M)

GIST, GIST_BG, RAW, REREAD, REREAD_BG, PAPER, MUTED, REVERT = (
    "#b7791f", "#fdf3dc", "#3b5bdb", "#2b8a3e", "#d3f9d8", "#7048e8", "#868e96", "#e03131")

CSS = f"""
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5rem auto; max-width: 70rem;
  color: #212529; line-height: 1.45; padding: 0 1rem; }}
h1 {{ font-size: 1.5rem; }} h2 {{ font-size: 1.25rem; border-bottom: 1px solid #dee2e6; padding-bottom: .2rem; }}
h3 {{ font-size: 1.1rem; margin-top: 1.6rem; }}
.meta {{ color: {MUTED}; font-size: .85rem; }}
.answer {{ font-size: 1.05rem; padding: .6rem .8rem; border-radius: 6px; background: #f1f3f5; white-space: pre-wrap; }}
.offline {{ display: inline-block; background: {MUTED}; color: white; border-radius: 3px; padding: 0 .4em;
  font-size: .75rem; font-weight: 600; margin-right: .4em; }}
.ok {{ color: {REREAD}; font-weight: 600; }} .bad {{ color: {REVERT}; font-weight: 600; }}
table.figures {{ border-collapse: collapse; font-size: .88rem; margin: .5rem 0; }}
table.figures td {{ padding: .15rem .6rem; border-bottom: 1px solid #e9ecef; }}
table.figures td:last-child {{ text-align: right; font-weight: 600; }}
.strip {{ display: flex; flex-wrap: wrap; gap: 3px; margin: .3rem 0 .6rem 0; align-items: center; }}
.strip .label {{ font-size: .8rem; width: 11rem; color: #495057; }}
.cell {{ min-width: 2.1rem; height: 2.1rem; border-radius: 4px; background: {GIST_BG}; border: 1px solid {GIST};
  font-size: .72rem; display: flex; flex-direction: column; align-items: center; justify-content: center; }}
.cell.reread {{ background: {REREAD}; border-color: {REREAD}; color: white; font-weight: 700; }}
.cell.paper {{ background: {PAPER}; border-color: {PAPER}; color: white; font-weight: 700; }}
.ctx {{ margin: .15rem 0; padding: .35rem .6rem; border-radius: 4px; white-space: pre-wrap; font-size: .85rem; }}
.ctx.gist {{ background: {GIST_BG}; border-left: 4px solid {GIST}; }}
.ctx.raw {{ background: {REREAD_BG}; border-left: 4px solid {REREAD}; }}
pre {{ white-space: pre-wrap; word-break: break-word; background: #f8f9fa; padding: .4rem .6rem; border-radius: 4px;
  font-size: .8rem; max-height: 24rem; overflow-y: auto; }}
details {{ margin: .25rem 0; }} summary {{ cursor: pointer; }}
.fallback {{ color: {REVERT}; }} .problem {{ color: {REVERT}; }}
ol.walk li {{ margin: .15rem 0; }} .revert {{ color: {REVERT}; }}
"""


def esc(text: object) -> str:
    """Text as HTML that displays it literally."""
    return html.escape(str(text), quote=True)


def _by(outcome: str, engine_label: str) -> str:
    """Who made a decision, in words; the offline engine is never called a model."""
    model = (engine_label or "").split(" at ")[0]
    return {"offline": OFFLINE_WORDS, "fallback": "fallback (no usable reply)", "rule": "a rule (no choice to make)",
            "model": f"chosen by {model}", "re-asked": f"chosen by {model} after a re-ask",
            "paper": "from the ReadAgent paper (PaLM 2-L)"}.get(outcome or "", outcome or "")


def is_offline(result: AskResult) -> bool:
    return result.run.engine == "offline"


def answer_line(result: AskResult) -> str:
    options, answer = result.question.options, result.answer
    if options and answer.choice:
        idx = LETTERS.index(answer.choice)
        return f"({answer.choice}) {options[idx] if idx < len(options) else ''}"
    if options:
        return f"No option chosen. The reply was: {answer.text}"
    return answer.text or "(no answer)"


# --- pieces ---------------------------------------------------------------------------------------

def page_strip(n_pages: int, looked_up: list[int], *, label: str = "re-read", css: str = "reread") -> str:
    """Every page of the memory; the pages re-read coloured and numbered in look-up order."""
    order = {p: i for i, p in enumerate(looked_up, 1)}
    cells = "".join(
        f'<div class="cell {css}" title="Page {i}: {esc(label)} #{order[i]}"><span>{i}</span><span>#{order[i]}</span></div>'
        if i in order else f'<div class="cell" title="Page {i}: gist only"><span>{i}</span></div>'
        for i in range(n_pages))
    return f'<div class="strip"><span class="label">{esc(label)}</span>{cells}</div>'


def context_block(context: str, expanded: Iterable[int]) -> str:
    """The context as sent, each ``<Page i>`` block marked gist or re-read raw page."""
    parts = _PAGE_TAG.split(context or "")
    if len(parts) == 1:
        return f'<div class="ctx raw">{esc(context)}</div>'
    out = [f'<div class="ctx">{esc(parts[0])}</div>'] if parts[0].strip() else []
    expanded = set(expanded)
    for number, body in zip(parts[1::2], parts[2::2]):
        kind = "raw" if int(number) in expanded else "gist"
        tag = "re-read: raw page" if kind == "raw" else "gist"
        out.append(f'<div class="ctx {kind}"><b>&lt;Page {int(number)}&gt;</b> <i>{tag}</i>\n{esc(body.strip())}</div>')
    return "".join(out)


def _walk(store: Store, result: AskResult) -> str:
    walk = result.details
    try:
        tree = load_tree(store, walk.tree.tree_id)
    except (GistError, TypeError):  # the tree was rebuilt or removed: the walk is still told, step by step
        tree = None
    label = (lambda n: node_label(tree, n)) if tree is not None else (lambda n: f"node {n}")
    items = "".join(
        f'<li class="{"revert" if v.move == "revert" else ""}"><b>{esc(label(v.node))}</b>'
        f' ({esc(v.kind)}) → {esc(v.move)}'
        + (f' to {esc(label(v.to))}' if v.to is not None else "")
        + f' · {esc(_by(v.outcome, result.run.engine_label))}'
        + (f'<br><span class="meta">{esc(v.reasoning)}</span>' if v.reasoning else "") + "</li>"
        for v in walk.trajectory)
    outcome = "answered" if walk.answered else "no answer"
    drawing = (f'{walk_svg(tree, walk.trajectory)}{legend_html()}' if tree is not None else
               "<p>The tree this walk was made on is no longer stored; its steps are below.</p>")
    return (f'<h4>MemWalker: the path walked</h4><p>{len(walk.trajectory)} steps · {walk.reverts} reverts · '
            f'{outcome} · {100 * walk.share_read:.0f}% of the text read</p>'
            f'{drawing}<ol class="walk">{items}</ol>')


def _notes(store: Store, result: AskResult) -> str:
    notes = result.details.notes
    cells = "".join(f'<div class="cell{" reread" if n.kept else ""}" title="Segment {n.segment}">'
                    f'<span>{n.segment}</span><span>{"keep" if n.kept else "drop"}</span></div>' for n in notes)
    return (f'<h4>Segment+ notes</h4><p>{sum(n.kept for n in notes)} of {len(notes)} kept</p>'
            f'<div class="strip"><span class="label">segments</span>{cells}</div>')


DETAILS: dict[str, Callable[[Store, AskResult], str]] = {"walk": _walk, "notes": _notes}


def trace_block(store: Store, result: AskResult) -> str:
    """Every step: who decided, each attempt's prompt and reply, the parse result, fallbacks."""
    ids = [a.call_id for s in result.steps for a in s.attempts if a.call_id]
    calls = {c.id: c for c in store.calls(ids=ids)} if ids else {}
    out = []
    for n, step in enumerate(result.steps, 1):
        page = f" · page {step.page}" if step.page is not None else ""
        body = [f'<p class="fallback">Fallback: {esc(step.fallback)}</p>'] if step.fallback else []
        if not step.attempts:
            body.append("<p>No model call: " + ("decided by the offline engine (no LLM); its scores are below."
                                                if step.outcome == "offline" else "nothing to decide.") + "</p>")
        for k, attempt in enumerate(step.attempts, 1):
            call = calls.get(attempt.call_id)
            cached = " · replayed from the cache" if attempt.cached else ""
            prompt = call.prompt if call else "(prompt not logged)"
            body.append(f"<p><b>Attempt {k}</b>{cached}</p><p>Prompt</p><pre>{esc(prompt)}"
                        f"</pre><p>Reply</p><pre>{esc(attempt.reply)}</pre>")
            body.append(f'<p class="problem">Could not use this reply: {esc(attempt.problem)}</p>'
                        if attempt.problem else '<p class="ok">Parsed.</p>')
            body.extend(f'<p class="meta">Parser: {esc(note)}</p>' for note in attempt.notes)
        body.append(f"<p>Result</p><pre>{esc(json.dumps(step.value, ensure_ascii=False, default=str))}</pre>")
        if step.detail:
            body.append(f"<p>Details</p><pre>{esc(json.dumps(step.detail, ensure_ascii=False, indent=1, default=str))}"
                        "</pre>")
        out.append(f"<details><summary>{n}. {esc(step.step)}{page} · "
                   f"{esc(_by(step.outcome, result.run.engine_label))}</summary>{''.join(body)}</details>")
    return "".join(out)


def _pages_in_memory(store: Store, result: AskResult) -> int | None:
    return (store.get_memory(result.memory.id).pages or None) if result.memory else None


def result_block(store: Store, result: AskResult, gold: dict | None, paper: dict | None) -> str:
    offline = is_offline(result)
    tag = f'<span class="offline">{OFFLINE_WORDS}</span>' if offline else ""
    engine = OFFLINE_WORDS if offline else result.run.engine_label
    read, used = result.reading, result.usage
    out = [f"<h3>{esc(result.run.method_label)}</h3>",
           f'<p class="meta">Run #{result.run.id} · look-ups and answer: {esc(engine)}'
           + (f" · gists: {esc(result.memory.label)}" if result.memory and result.memory.label else "") + "</p>",
           f'<div class="answer">{tag}{esc(answer_line(result))}</div>']
    if gold and gold.get("gold") and result.question.options:
        right = result.answer.choice == gold["gold"]
        out.append(f'<p class="{"ok" if right else "bad"}">{"Correct" if right else "Not correct"}: '
                   f'the answer is ({esc(gold["gold"])}).</p>')
    elif gold and gold.get("answers"):
        out.append(f'<p class="meta">Reference answer: {esc(" / ".join(gold["answers"]))}</p>')
    figures = [("Words in context", f"{read.words_in_context:,}"),
               ("Compression rate", f"{read.compression_rate:.1f}%"),
               ("Pages re-read", read.lookups), ("Model calls", used.llm_calls),
               ("Replayed from the cache", used.cached_calls), ("Input tokens", f"{used.input_tokens:,}"),
               ("Output tokens", f"{used.output_tokens:,}"), ("Seconds", f"{result.run.seconds:.2f}")]
    out.append('<table class="figures">' + "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in figures)
               + "</table>")
    n_pages = _pages_in_memory(store, result)
    if n_pages and result.details.kind in ("lookup", "retrieval"):
        out.append("<h4>Pages re-read</h4>" + page_strip(n_pages, read.pages_looked_up, label="re-read (this run)"))
        if paper:
            key = "readagent_pages" if result.details.kind == "lookup" else "neural_retrieval_pages"
            who = "ReadAgent" if key == "readagent_pages" else "neural retrieval"
            out.append(page_strip(n_pages, paper[key], label=f"re-read in the paper ({who})", css="paper"))
    view = DETAILS.get(result.details.kind)
    if view is not None:
        out.append(view(store, result))
    out.append(f"<details><summary>Context sent for the answer ({read.words_in_context:,} words)</summary>"
               f"{context_block(read.context, read.expanded)}</details>")
    out.append(f"<h4>Trace</h4>{trace_block(store, result)}")
    return "".join(out)


def report_html(store: Store, run_ids: Iterable[int], *, title: str = "Gist Memory Explorer report") -> str:
    """One self-contained HTML page for the question runs ``run_ids`` (grouped by question)."""
    results = [load_ask(store, int(r)) for r in run_ids]
    if not results:
        raise GistError("No runs to report.", cli="Name one or more question runs (see `python -m core runs --kind ask`).",
                        app="Ask a question first.")
    groups: dict[tuple[str, str], list[AskResult]] = {}
    for r in results:
        groups.setdefault((r.run.doc_id, r.question.text), []).append(r)
    body = []
    for (doc_id, question), members in groups.items():
        document = store.get_document(doc_id)
        gold = find_question(document.meta.get("questions") or [], question)
        paper = paper_lookup(document, question)
        options = members[0].question.options
        body.append(f"<h2>{esc(question)}</h2><p class=\"meta\">{esc(document.title)} · {document.words:,} words</p>")
        if options:
            body.append("<ol type=\"A\">" + "".join(f"<li>{esc(o)}</li>" for o in options) + "</ol>")
        if paper:
            body.append(f"<p>In the paper, ReadAgent with PaLM 2-L re-read pages "
                        f"{esc(', '.join(map(str, paper['readagent_pages'])))} and chose "
                        f"({esc(paper['readagent_choice'])}); neural retrieval read pages "
                        f"{esc(', '.join(map(str, paper['neural_retrieval_pages'])))} and chose "
                        f"({esc(paper['neural_retrieval_choice'])}).</p>")
        body.extend(result_block(store, r, gold, paper) for r in members)
    made = time.strftime("%Y-%m-%d %H:%M")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{esc(title)}</h1>"
            f'<p class="meta">Written {made} from runs {esc(", ".join(str(r.run.id) for r in results))}. '
            f'This file is self-contained: it loads nothing from anywhere.</p>{"".join(body)}</body></html>\n')


def write_report(store: Store, run_ids: Iterable[int], out: str | Path) -> Path:
    path = Path(out)
    path.write_text(report_html(store, run_ids), encoding="utf-8")
    return path
