"""The offline engine: ReadAgent's steps with no LLM.

It is the embedded default so the tool is useful on a machine with no model,
and a real baseline, not a mock. Every decision it makes is labelled
``offline`` in the trace, with the scores behind it:

* pause points: structural cues (headings, scene separators, a change from
  dialogue to narration, time shifts) plus TextTiling-style lexical cohesion
  (the label where the vocabulary before and after differs most), inside the
  same min/max window as the model sees;
* gists: extractive shortening (``lexical.shorten``);
* look-ups: BM25 of the question and options against the gists;
* answers: the option whose words best co-occur with the question's in the
  context, or, free-form, the context sentences that best match the question.
"""
from __future__ import annotations

import math
import re
import time
from collections import Counter
from typing import Sequence

from core import lexical
from core.documents import count_words
from core.parsers import STOP
from core.presets import Preset
from core.prompts import option_letters
from core.readagent import Answer, GistMemory, Question, Window
from core.trace import OFFLINE, Decision, StepTrace

LABEL = "Offline engine (no LLM)"
BLOCK_WORDS = 120  # words on each side of a gap when measuring cohesion
_SCENE_BREAK = re.compile(r"^[\W_]+$")  # '* * *', '#', '---'
_TIME_SHIFT = re.compile(
    r"^(?:the next|next (?:day|morning|week)|later|meanwhile|that (?:night|evening|morning|afternoon)|"
    r"some (?:days|weeks|months|years|time)|(?:a|one|two|three|several) (?:days?|weeks?|months?|years?|hours?) later|"
    r"at last|when (?:he|she|they|we|i) (?:had|awoke|returned)|in the (?:morning|evening)|"
    r"on the (?:following|next)|early (?:the|next)|afterwards?)\b",
    re.I,
)
_DIALOGUE = re.compile(r"^[\"“‘']")


def _trace(step: str, value, detail: dict, started: float) -> StepTrace:
    return StepTrace(step=step, outcome=OFFLINE, value=value, detail=detail,
                     seconds=round(time.perf_counter() - started, 4))


def _tail_terms(texts: Sequence[str]) -> Counter:
    bag: Counter = Counter()
    words = 0
    for text in reversed(texts):
        bag.update(lexical.terms(text))
        words += count_words(text)
        if words >= BLOCK_WORDS:
            break
    return bag


def _head_terms(texts: Sequence[str]) -> Counter:
    bag: Counter = Counter()
    words = 0
    for text in texts:
        bag.update(lexical.terms(text))
        words += count_words(text)
        if words >= BLOCK_WORDS:
            break
    return bag


def score_pause_points(window: Window) -> list[dict]:
    """Score every label of a window; higher is a more natural break."""
    paragraphs = list(window.paragraphs)
    after = list(window.lookahead)
    after_window = after[0] if after else ""
    cohesion = {}
    for label in window.labels:
        k = label - window.start
        right = paragraphs[k:] + after
        cohesion[label] = lexical.cosine(_tail_terms(paragraphs[:k]), _head_terms(right)) if right else 0.0
    labels = list(window.labels)
    scored = []
    for n, label in enumerate(labels):
        k = label - window.start
        left_peak = max([cohesion[l] for l in labels[: n + 1]])
        right_peak = max([cohesion[l] for l in labels[n:]])
        depth = (left_peak - cohesion[label]) + (right_peak - cohesion[label])
        score = (1.0 - cohesion[label]) + depth
        cues = []
        nxt = paragraphs[k] if k < len(paragraphs) else after_window
        prev = paragraphs[k - 1]
        next_is_heading = window.headings[k] if k < len(paragraphs) else False
        if next_is_heading:
            score += 2.0
            cues.append("a heading follows")
        if _SCENE_BREAK.match(prev):
            score += 1.5
            cues.append("after a scene separator")
        elif nxt and _SCENE_BREAK.match(nxt):
            score += 1.2
            cues.append("before a scene separator")
        if nxt and _TIME_SHIFT.match(nxt):
            score += 0.4
            cues.append("time shift")
        if _DIALOGUE.match(prev) and nxt and not _DIALOGUE.match(nxt):
            score += 0.2
            cues.append("dialogue ends")
        if k == len(paragraphs) and not after_window:
            score += 1.0
            cues.append("end of section")
        scored.append({"label": label, "score": round(score, 4), "cohesion": round(cohesion[label], 4),
                       "depth": round(depth, 4), "cues": cues})
    return scored


class OfflineEngine:
    key = "offline"
    label = LABEL
    is_llm = False

    def bind(self, *, run_id: int | None, doc_id: str | None) -> "OfflineEngine":
        return self

    def usage(self) -> dict:
        return {"llm_calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0, "prompt_words": 0}

    def pause_point(self, window: Window, preset: Preset) -> Decision[int]:
        started = time.perf_counter()
        scored = score_pause_points(window)
        best = max(scored, key=lambda s: (s["score"], s["label"]))
        cues = f"; {', '.join(best['cues'])}" if best["cues"] else ""
        reason = (f"vocabulary changes most here (cohesion {best['cohesion']:.2f}, depth {best['depth']:.2f})"
                  f"{cues}")
        detail = {"labels": list(window.labels), "window": [window.start, window.end], "reason": reason,
                  "scores": scored}
        return Decision(best["label"], _trace("pagination", best["label"], detail, started))

    def gist(self, page_text: str, page_words: int, preset: Preset) -> Decision[str]:
        started = time.perf_counter()
        gist = lexical.shorten(page_text)
        detail = {"method": "extractive: the most informative sentences, in order", "gist_words": count_words(gist)}
        return Decision(gist, _trace("gist", gist, detail, started))

    def _page_scores(self, memory: GistMemory, question: Question) -> list[tuple[int, float]]:
        return lexical.rank(question.with_options(), [p.gist for p in memory.pages])

    def lookup_parallel(self, memory: GistMemory, question: Question, max_pages: int,
                        preset: Preset) -> Decision[list[int]]:
        started = time.perf_counter()
        ranked = self._page_scores(memory, question)
        top = ranked[0][1] if ranked else 0.0
        pages = [i for i, s in ranked if top > 0 and s >= 0.5 * top][:max_pages]
        detail = {"method": "BM25 of the question and options against the gists; pages scoring at least half "
                            "the best score", "scores": {str(i): round(s, 3) for i, s in ranked},
                  "max_pages": max_pages}
        return Decision(pages, _trace("lookup", pages, detail, started))

    def lookup_next(self, memory: GistMemory, question: Question, read: Sequence[int],
                    preset: Preset) -> Decision[int | str]:
        started = time.perf_counter()
        ranked = self._page_scores(memory, question)
        top = ranked[0][1] if ranked else 0.0
        unread = [(i, s) for i, s in ranked if i not in read]
        if unread and top > 0 and unread[0][1] >= 0.5 * top:
            value: int | str = unread[0][0]
            why = f"Page {value} is the best unread match (BM25 {unread[0][1]:.2f}, best {top:.2f})"
        else:
            value = STOP
            why = "no unread page scores at least half the best match"
        detail = {"method": "BM25 against the gists, one page at a time", "reason": why,
                  "scores": {str(i): round(s, 3) for i, s in ranked}, "already_read": list(read)}
        return Decision(value, _trace("lookup-sequential", value, detail, started))

    def answer(self, context: str, question: Question, preset: Preset) -> Decision[Answer]:
        started = time.perf_counter()
        if question.is_choice:
            answer, detail = choose_option(context, question)
        else:
            answer, detail = extract_answer(context, question)
        detail["context_words"] = count_words(context)
        return Decision(answer, _trace("answer", {"text": answer.text, "choice": answer.choice}, detail, started))


def _windows(sents: list[str], size: int = 3) -> list[set[str]]:
    bags = [set(lexical.terms(s)) for s in sents]
    return [set().union(*bags[i:i + size]) for i in range(max(len(bags) - size + 1, 1))]


def _best_window(tokens: list[str], weight: dict[str, float], target: set[str], size: int) -> float:
    """The largest total weight of target words inside any ``size``-token stretch."""
    best = current = 0.0
    for i, token in enumerate(tokens):
        if token in target:
            current += weight[token]
        if i >= size and tokens[i - size] in target:
            current -= weight[tokens[i - size]]
        best = max(best, current)
    return best


def choose_option(context: str, question: Question) -> tuple[Answer, dict]:
    """MCTest's sliding-window baseline (Richardson et al., 2013), on the option's own words:
    each option scores the largest inverse-count weight of its words (those not already in
    the question) found together in a stretch of the context three times their number."""
    tokens = lexical.terms(re.sub(r"<Page \d+>", "", context))
    counts = Counter(tokens)
    weight = {t: math.log(1 + 1 / c) for t, c in counts.items()}
    q_terms = set(lexical.terms(question.text))
    scores = {}
    for letter, option in zip(option_letters(len(question.options)), question.options):
        o_terms = set(lexical.terms(option))
        target = (o_terms - q_terms) or o_terms
        scores[letter] = round(_best_window(tokens, weight, target, 3 * max(len(target), 1)), 4)
    choice = max(scores, key=lambda l: (scores[l], -ord(l)))
    text = f"Answer: ({choice}) {question.options[ord(choice) - 65]}"
    detail = {"method": "lexical sliding window (MCTest): the option whose own words occur together most "
                        "distinctively in the context", "scores": scores}
    return Answer(text, choice), detail


def extract_answer(context: str, question: Question, max_words: int = 60) -> tuple[Answer, dict]:
    """The two consecutive context sentences that best cover the question's words."""
    sents = lexical.sentences(re.sub(r"<Page \d+>", "", context))
    if not sents:
        return Answer("", None), {"method": "lexical", "reason": "empty context"}
    idf = lexical.idf_table(sents)
    default = max(idf.values(), default=1.0)
    q_terms = set(lexical.terms(question.text))
    windows = _windows(sents, 2)
    scores = [sum(idf.get(t, default) for t in q_terms & w) for w in windows]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    text = " ".join(" ".join(sents[best:best + 2]).split()[:max_words])
    detail = {"method": "lexical: the two sentences that best cover the question's words",
              "sentence": best, "score": round(scores[best], 3)}
    return Answer(text, None), detail
