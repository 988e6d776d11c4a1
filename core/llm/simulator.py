"""A simulated OpenAI-compatible server, for tests and benchmarks.

Real HTTP speaking the chat-completions protocol, so the real ``openai``
client, our retries and our concurrency are exercised end to end. It answers
each step's prompt in the format the prompt asks for, using the offline
engine's lexical rules to decide, with settable latency and injected faults:

* ``429``       rate limited (with ``Retry-After: 0``)
* ``500``       server error
* ``timeout``   the reply takes ``hang_s`` seconds (by default longer than a client's 120 s timeout)
* ``badbody``   an HTTP 200 whose body is not JSON (a proxy's error page); not in the default mix
* ``malformed`` a reply in the wrong format (empty, a refusal, an echo, a bad label)

Its replies are not a model's: the model it reports is ``gme-simulator``.
Each prompt is routed by the template it was made from (``template_of``: the template's
fixed text, in order, with anything in its placeholders), so rewording a prompt in
``core/prompts.py`` can never misroute it silently; ``@responder(template)`` answers one. ``POST /v1/embeddings`` returns
deterministic hashed bag-of-words vectors (``hashed_embedding``), for the embedding baseline.
``GET /props`` says its context window as llama.cpp's server does (``context_tokens``, large by
default), so an engine pointed at it resolves that window.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
import string
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from core import prompts
from core.methods.answer import choose_option, extract_answer
from core.methods.base import Question
from core.methods.memwalker.parsers import COMMIT
from core.methods.memwalker.steps import lexical_leaf, lexical_triage
from core.methods.readagent import rules
from core.methods.readagent.memory import GistMemory, Page
from core.methods.readagent.pagination import Window
from core.methods.readagent.parsers import STOP
from core.methods.segment_plus.parsers import parse_note
from core.methods.segment_plus.steps import concatenated_note, extractive_note, lexical_label
from core.prompts import Prompt
from core.text import lexical
from core.text.documents import count_words, is_heading
from core.text.tokens import count_tokens

MODEL = "gme-simulator"
FAULT_KINDS = ("429", "500", "timeout", "malformed")  # the default mix
ALL_FAULTS = (*FAULT_KINDS, "badbody")
# The simulator has no window; it says it has a large one (GET /props), so prompts are never made
# smaller for it unless a test asks for a small one.
DEFAULT_CONTEXT_TOKENS = 131_072
DEFAULT_HANG_S = 125.0  # longer than the client's default timeout (120 s), so a timeout fault trips it

# --- answering prompts -------------------------------------------------------------------------

RESPONDERS: dict[str, Callable[[str], str]] = {}  # prompt template name -> the function answering it


def responder(*templates: Prompt):
    """Register a function answering prompts made from ``templates`` (``core/prompts.py``)."""
    def register(fn):
        for template in templates:
            RESPONDERS[template.name] = fn
        return fn
    return register


def _fixed(template: Prompt) -> list[str]:
    """The template's fixed text: the pieces between its placeholders, in order."""
    return [literal for literal, _, _, _ in string.Formatter().parse(template.text)]


def made_from(prompt: str, template: Prompt) -> bool:
    """Whether ``template`` formats to ``prompt``: it starts with the first fixed piece, ends
    with the last, and holds the others in order between them (whatever the placeholders hold)."""
    pieces = _fixed(template)
    if len(pieces) == 1:
        return prompt == pieces[0]
    first, *middle, last = pieces
    if not prompt.startswith(first) or not prompt.endswith(last) or len(prompt) < len(first) + len(last):
        return False
    at, end = len(first), len(prompt) - len(last)
    for piece in middle:
        at = prompt.find(piece, at, end)
        if at < 0:
            return False
        at += len(piece)
    return True


def template_of(prompt: str) -> Prompt | None:
    """The template ``prompt`` was made from: a re-ask if it is one, else the template whose
    fixed text it holds in full (the most fixed text wins), so a document quoting another
    prompt's instructions cannot misroute it."""
    if made_from(prompt, prompts.REASK):
        return prompts.REASK
    matches = [t for t in prompts.ALL if t is not prompts.REASK and made_from(prompt, t)]
    return max(matches, key=lambda t: sum(map(len, _fixed(t))), default=None)


def step_of(prompt: str) -> tuple[str, Callable[[str], str]] | None:
    """The responder for ``prompt`` and its name (the simulator's stats count replies by it)."""
    template = template_of(prompt)
    if template is None or template.name not in RESPONDERS:
        return None
    fn = RESPONDERS[template.name]
    return fn.__name__.strip("_"), fn


def respond(prompt: str) -> str:
    found = step_of(prompt)
    return found[1](prompt) if found else "I am a simulated model and do not recognise this prompt."


def _between(text: str, start: str, end: str | None = None) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i) if end else -1
    return text[i:j] if j >= 0 else text[i:]


@responder(prompts.REASK)
def _reask(prompt: str) -> str:
    original = prompt[: prompt.rfind("\n\nYour previous reply was:\n")]
    return respond(original)


def window_from_prompt(prompt: str) -> Window:
    """Rebuild the pagination window from the lines of a pagination prompt. Lines before
    the first label may include the previous page's tail; for scoring cohesion they are
    simply the text before the first gap."""
    lines = [l for l in _between(prompt, "Passage:\n").split("\n") if l.strip() and l != "..."]
    label_at = [(n, int(m.group(1))) for n, line in enumerate(lines) if (m := re.fullmatch(r"<(\d+)>", line))]
    (first_line, first_label), (last_line, end) = label_at[0], label_at[-1]
    before = lines[:first_line]
    between = [l for l in lines[first_line + 1:last_line] if not re.fullmatch(r"<\d+>", l)]
    paragraphs = tuple(before + between)
    return Window(start=first_label - len(before), end=end, labels=tuple(j for _, j in label_at),
                  paragraphs=paragraphs, headings=tuple(is_heading(p) for p in paragraphs), preceding="",
                  following="", words=sum(count_words(p) for p in paragraphs),
                  lookahead=tuple(lines[last_line + 1:]))


@responder(prompts.PAGINATION, prompts.PAGINATION_QMSUM, prompts.PAGINATION_BOOK, prompts.PAGINATION_MOVIE)
def _paginate(prompt: str) -> str:
    window = window_from_prompt(prompt)
    scored = rules.score_pause_points(window)
    best = max(scored, key=lambda s: (s["score"], s["label"]))
    keyword = "Label" if '"Label: <57>' in prompt else "Break point"
    return f"{keyword}: <{best['label']}>\nBecause the vocabulary changes most there (cohesion {best['cohesion']:.2f})."


@responder(prompts.GIST, prompts.GIST_MOVIE)
def _gist(prompt: str) -> str:
    passage = _between(prompt, "Passage:\n").strip()
    gist = lexical.shorten(passage)
    # Asked to shorten a passage that is already a gist (iterative gisting), it still shortens it.
    return rules.shorter_gist(passage)[0] if count_words(gist) >= count_words(passage) > 12 else gist


@responder(prompts.GIST_CONDITIONAL)
def _gist_conditional(prompt: str) -> str:
    question = _between(prompt, "Question:\n", "\n\nPassage:\n").strip()
    return rules.conditional_gist(_between(prompt, "\n\nPassage:\n").strip(), question)[0]


@responder(prompts.PAGE_MERGE)
def _page_merge(prompt: str) -> str:
    current = _between(prompt, "\n\nPage 2:\n").strip()
    first = next((line for line in current.split("\n") if line.strip()), "")
    if is_heading(first):
        return f"Yes. Page 2 starts a new part: {first.strip()[:60]}"
    return "No, Page 2 continues what is in Page 1."


def _memory_from(text: str) -> GistMemory:
    blocks = re.split(r"(?m)^<Page (\d+)>\n", text)
    pages = tuple(Page(index=int(blocks[k]), start=0, end=0, text=blocks[k + 1].strip(),
                       words=count_words(blocks[k + 1]), gist=blocks[k + 1].strip(),
                       gist_words=count_words(blocks[k + 1])) for k in range(1, len(blocks) - 1, 2))
    return GistMemory(doc_id="", title="", words=sum(p.words for p in pages), pages=pages)


def _question_from(text: str) -> Question:
    lines = text.strip().split("\n")
    options = tuple(m.group(1) for l in lines[1:] if (m := re.match(r"^\([A-J]\) (.*)$", l)))
    return Question(lines[0], options)


@responder(prompts.LOOKUP_PARALLEL, prompts.LOOKUP_PARALLEL_RANKED)
def _lookup(prompt: str) -> str:
    memory = _memory_from(_between(prompt, "Text:\n", "\n\nQuestion:\n"))
    question = _question_from(_between(prompt, "\n\nQuestion:\n", "\n\nTake a deep breath"))
    max_pages = int(re.search(r"read 1 to (\d+) page", prompt).group(1))
    pages, _ = rules.lookup_parallel(memory, question, max_pages)
    if not pages:
        return "I don't need to look up any pages; the gists are enough."
    return f"I want to look up Page [{', '.join(map(str, pages))}] to answer the question."


@responder(prompts.LOOKUP_SEQUENTIAL)
def _lookup_next(prompt: str) -> str:
    memory = _memory_from(_between(prompt, "Text:\n", "\n\nPages re-read already"))
    read_text = _between(prompt, "(DO NOT ask to read them again):\n", "\n\nQuestion:\n").strip()
    read = [int(n) for n in re.findall(r"\d+", read_text)]
    question = _question_from(_between(prompt, "\n\nQuestion:\n", "\n\nSpecify a SINGLE page"))
    value, _ = rules.lookup_next(memory, question, read)
    return "STOP" if value == STOP else f"Page {value}"


@responder(prompts.ANSWER_CHOICE)
def _answer_choice(prompt: str) -> str:
    context = _between(prompt, "Article:\n", "\n\nQuestion:\n")
    question = _question_from(prompt[prompt.rfind("\n\nQuestion:\n") + len("\n\nQuestion:\n"):])
    answer, _ = choose_option(context, question)
    return answer.text


@responder(prompts.ANSWER_FREEFORM)
def _answer_free(prompt: str) -> str:
    context = prompt[: prompt.rfind("\n\nQuestion: ")]
    question = _between(prompt, "\n\nQuestion: ", "\n\nAnswer the question")
    answer, _ = extract_answer(context, Question(question))
    return answer.text or "The text does not say."


# MemWalker: summaries by extraction, triage by BM25, leaf decisions by word coverage
# (the offline engine's rules, in the formats the paper's prompts ask for).

@responder(prompts.RATER_STRICT, prompts.RATER_PERMISSIVE)
def _rate(prompt: str) -> str:
    """The paper's raters: overlap of the answer with the reference decides."""
    response = set(lexical.terms(_between(prompt, "John’s answer to the question was:\n", "\n\nThe ground truth")))
    reference = set(lexical.terms(_between(prompt, "The ground truth answer was:\n", "\n\nDoes John")))
    recall = len(response & reference) / len(reference) if reference else 0.0
    if "Yes, partially" in prompt:
        return "Yes" if recall >= 0.6 else "Yes, partially" if recall >= 0.2 else "No"
    return "YES" if recall >= 0.6 else "NO"


@responder(prompts.MEMWALKER_SUMMARY_LEAF)
def _memwalker_leaf_summary(prompt: str) -> str:
    return lexical.shorten(_between(prompt, "\nText:\n").strip())


@responder(prompts.MEMWALKER_SUMMARY_PARENT)
def _memwalker_node_summary(prompt: str) -> str:
    summaries = re.findall(r"(?m)^Summary \d+: (.*)$", _between(prompt, "\nSummaries:\n"))
    return lexical.shorten("\n".join(summaries))


@responder(prompts.MEMWALKER_TRIAGE)
def _memwalker_triage(prompt: str) -> str:
    question = _between(prompt, "To answer the question: ", "\nWhich of the following summary is MOST LIKELY")
    listed = _between(prompt, "before you make the decision.\n", "Reply with the passage number as your action.")
    summaries = re.findall(r"(?m)^Summary \d+: (.*)$", listed)
    action, detail = lexical_triage(question, summaries, "reply with action -1 to go back" in prompt)
    return f"Reasoning: {detail['reason']}.\nAction: {action}"


@responder(prompts.MEMWALKER_LEAF)
def _memwalker_leaf(prompt: str) -> str:
    close = prompt.rfind('\n"""\n\n')
    inner = prompt[prompt.find('"""\n') + 4:close]
    memory = _between(inner, "Background information: ", "\nMain text: ") if inner.startswith("Background") else ""
    text = _between(inner, "Main text: ")
    question = _question_from(prompt[close + 6:prompt.rfind("\nIf the answer CANNOT be inferred")])
    action, answer, detail = lexical_leaf(question, memory, text)
    if action != COMMIT:
        return f"Reasoning: {detail['reason']}.\nAction: -1"
    said = re.sub(r"^Answer:\s*", "", answer.text) or "The text does not say."
    return f"Reasoning: {detail['reason']}.\nAction: -2\nAnswer: {said}"



# Segment+: extractive notes, the lexical Keep/Remove rule, and a merge that concatenates and
# drops the least relevant sentences (the offline variant's rules, as JSON notes).

@responder(prompts.SEGMENT_NOTE)
def _segmentplus_note(prompt: str) -> str:
    at = prompt.rfind("\n—\nQuestion: ")
    segment = _between(prompt[:at], "Segment Content: ")
    question = _question_from(_between(prompt[at:], "\n—\nQuestion: ", "\n—\nYour task:"))
    note, _ = extractive_note(segment, question)
    return note.as_json()


@responder(prompts.SEGMENT_FILTER)
def _segmentplus_filter(prompt: str) -> str:
    question = _question_from(_between(prompt, "\n\nQuestion: ", "\n—\nNote: "))
    note = parse_note(prompt[prompt.find("\n—\nNote: ") + 9:prompt.rfind("\n—\nYour task:")]).value
    if note is None:
        return "Label: Remove\nReason: the note could not be read."
    label, _ = lexical_label(note, question)
    return f"Label: {'Keep' if label.keep else 'Remove'}\nReason: {label.reason}."


@responder(prompts.SEGMENT_MERGE)
def _segmentplus_merge(prompt: str) -> str:
    at = prompt.rfind("\n—\nQuestion: ")
    listed = _between(prompt[:at], "Collected information: ")
    question = _question_from(_between(prompt[at:], "\n—\nQuestion: ", "\n—\nDetailed Instructions"))
    notes = [n for line in listed.split("\n") if (n := parse_note(line).value) is not None]
    note, _ = concatenated_note(notes, question, max(100, int(0.6 * count_tokens(listed))))
    return note.as_json()

_MALFORMED = [
    "",
    "I'm sorry, but I can't help with that request.",
    "Break point: <99999>\nBecause it is late.",
    "Hmm, let me think about this carefully before I decide.",
]



# --- embeddings ------------------------------------------------------------------------------------

EMBEDDING_MODEL = "gme-simulator-embedding"
EMBEDDING_DIMS = 256


def hashed_embedding(text: str, dims: int = EMBEDDING_DIMS) -> list[float]:
    """A deterministic bag-of-words vector (feature hashing of the stemmed content words,
    1 + log tf, a hashed sign), scaled to unit length. Not a model's embedding: texts that
    share words point the same way, and nothing more."""
    vector = [0.0] * dims
    for term, tf in Counter(lexical.terms(text)).items():
        digest = hashlib.md5(term.encode()).digest()
        vector[int.from_bytes(digest[:4], "little") % dims] += (1 + math.log(tf)) * (1 if digest[4] & 1 else -1)
    norm = math.sqrt(sum(v * v for v in vector))
    return [round(v / norm, 6) for v in vector] if norm else vector

# --- the server ---------------------------------------------------------------------------------

@dataclass
class SimStats:
    requests: int = 0
    completed: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    faults: Counter = field(default_factory=Counter)
    steps: Counter = field(default_factory=Counter)


class SimulatedLLM:
    """``with SimulatedLLM(latency_ms=50) as sim: OpenAIBackend(MODEL, sim.base_url)``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, latency_ms: float = 0.0,
                 fault_rate: float = 0.0, faults: tuple[str, ...] = FAULT_KINDS, seed: int = 0,
                 api_key: str | None = None, hang_s: float = DEFAULT_HANG_S,
                 context_tokens: int = DEFAULT_CONTEXT_TOKENS):
        unknown = set(faults) - set(ALL_FAULTS)
        if unknown:
            raise ValueError(f"Unknown fault kinds {sorted(unknown)}; choose from {', '.join(ALL_FAULTS)}.")
        self.latency_ms = latency_ms
        self.context_tokens = context_tokens  # what GET /props says, as llama.cpp's server does
        self.fault_rate = fault_rate
        self.faults = tuple(faults)
        self.api_key = api_key
        self.hang_s = hang_s
        self.script: list[str] = []  # faults to inject next, in order ("ok" for none)
        self.stats = SimStats()
        self.prompts: list[str] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "SimulatedLLM":
        self._thread = threading.Thread(target=self._server.serve_forever, name="simulated-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "SimulatedLLM":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next_fault(self) -> str | None:
        with self._lock:
            if self.script:
                fault = self.script.pop(0)
                return None if fault == "ok" else fault
            if self.fault_rate and self._rng.random() < self.fault_rate:
                return self._rng.choice(self.faults)
            return None

    def _handler(self):
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart

            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _raw(self, status: int, data: bytes, content_type: str) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _error(self, status: int, message: str, kind: str, headers=None) -> None:
                self._send(status, {"error": {"message": message, "type": kind, "code": kind}}, headers)

            def _authorised(self) -> bool:
                if sim.api_key is None or self.headers.get("Authorization") == f"Bearer {sim.api_key}":
                    return True
                self._error(401, "Incorrect API key provided.", "invalid_api_key")
                return False

            def do_GET(self):
                if not self._authorised():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "sim"}]})
                elif self.path.rstrip("/") == "/props":  # llama.cpp's: the window of one call
                    self._send(200, {"default_generation_settings": {"n_ctx": sim.context_tokens}, "total_slots": 1})
                elif self.path.rstrip("/") == "/sim/stats":
                    with sim._lock:
                        stats = {k: (dict(v) if isinstance(v, Counter) else v) for k, v in vars(sim.stats).items()}
                    self._send(200, stats)
                else:
                    self._error(404, f"No route {self.path}", "not_found")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self._authorised():
                    return
                embeddings = self.path.rstrip("/").endswith("/embeddings")
                if not embeddings and not self.path.rstrip("/").endswith("/chat/completions"):
                    self._error(404, f"No route {self.path}", "not_found")
                    return
                with sim._lock:
                    sim.stats.requests += 1
                    sim.stats.in_flight += 1
                    sim.stats.max_in_flight = max(sim.stats.max_in_flight, sim.stats.in_flight)
                try:
                    self._embed(body) if embeddings else self._complete(body)
                finally:
                    with sim._lock:
                        sim.stats.in_flight -= 1

            def _embed(self, body: dict) -> None:
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                    self._error(400, "'input' must be a string or a non-empty list of strings.", "invalid_request_error")
                    return
                fault = sim._next_fault()
                if fault:
                    with sim._lock:
                        sim.stats.faults[fault] += 1
                if fault in ("429", "500"):
                    status, kind = (429, "rate_limit_exceeded") if fault == "429" else (500, "server_error")
                    self._error(status, f"Simulated {fault}.", kind, {"Retry-After": "0"} if fault == "429" else None)
                    return
                time.sleep((sim.hang_s if fault == "timeout" else 0) + sim.latency_ms / 1000.0)
                vectors = [hashed_embedding(t) for t in texts]
                if fault == "malformed":
                    vectors = vectors[:-1]  # one vector short
                b64 = body.get("encoding_format") == "base64"
                with sim._lock:
                    sim.prompts.extend(texts)
                    sim.stats.completed += 1
                    sim.stats.steps["embeddings"] += 1
                words = sum(count_words(t) for t in texts)
                self._send(200, {
                    "object": "list", "model": body.get("model") or EMBEDDING_MODEL,
                    "data": [{"object": "embedding", "index": i,
                              "embedding": (base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if b64 else v)}
                             for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": words, "total_tokens": words},
                })

            def _complete(self, body: dict) -> None:
                messages = body.get("messages") or []
                prompt = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
                fault = sim._next_fault()
                if fault:
                    with sim._lock:
                        sim.stats.faults[fault] += 1
                if fault == "429":
                    self._error(429, "Rate limit reached (simulated).", "rate_limit_exceeded", {"Retry-After": "0"})
                    return
                if fault == "500":
                    self._error(500, "The server had an error (simulated).", "server_error")
                    return
                if fault == "badbody":
                    self._raw(200, b"<html><body>502 Bad Gateway (simulated)</body></html>", "text/html")
                    return
                time.sleep((sim.hang_s if fault == "timeout" else 0) + sim.latency_ms / 1000.0)
                if fault == "malformed":
                    text = sim._rng.choice(_MALFORMED + [prompt[:200]])
                else:
                    text = respond(prompt)
                with sim._lock:
                    sim.prompts.append(prompt)
                    sim.stats.completed += 1
                    found = step_of(prompt)
                    sim.stats.steps[found[0] if found else "unknown"] += 1
                cap = body.get("max_tokens") or body.get("max_completion_tokens")
                if cap:
                    text = " ".join(text.split(" ")[: max(1, int(cap * 0.75))]) if count_words(text) > cap * 0.75 else text
                self._send(200, {
                    "id": f"chatcmpl-sim-{sim.stats.requests}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model") or MODEL,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": count_words(prompt), "completion_tokens": count_words(text),
                              "total_tokens": count_words(prompt) + count_words(text)},
                })

        return Handler


def serve(port: int, host: str = "127.0.0.1", **settings) -> None:
    """Run in the foreground until interrupted (``python -m core simulate-llm``)."""
    sim = SimulatedLLM(host, port, **settings)
    print(f"Simulated OpenAI-compatible server (not a real model) at {sim.base_url} "
          f"model={MODEL} latency={sim.latency_ms:g} ms fault rate={sim.fault_rate:g}", flush=True)
    try:
        sim._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        sim._server.server_close()
