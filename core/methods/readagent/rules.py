"""The offline engine's rules for ReadAgent's decisions (no LLM).

It is the embedded default so the tool is useful on a machine with no model,
and a real baseline, not a mock. Every decision it makes is labelled
``offline`` in the trace, with the scores behind it:

* pause points: structural cues (headings, scene separators, a change from
  dialogue to narration, time shifts) plus TextTiling-style lexical cohesion
  (the label where the vocabulary before and after differs most), inside the
  same min/max window as the model sees;
* gists: extractive shortening (``lexical.shorten``);
* look-ups: BM25 of the question and options against the gists.

(Answers are the answer step's, in ``core/methods/answer.py``.) Each rule returns
the decision and the details the trace keeps.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from core.methods.base import Question
from core.methods.readagent.memory import GistMemory
from core.methods.readagent.pagination import Window
from core.methods.readagent.parsers import STOP
from core.text import lexical
from core.text.documents import count_words

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


def pause_point(window: Window) -> tuple[int, dict]:
    """The label with the best score (ties: the later label, the larger page)."""
    scored = score_pause_points(window)
    best = max(scored, key=lambda s: (s["score"], s["label"]))
    cues = f"; {', '.join(best['cues'])}" if best["cues"] else ""
    reason = (f"vocabulary changes most here (cohesion {best['cohesion']:.2f}, depth {best['depth']:.2f})"
              f"{cues}")
    return best["label"], {"reason": reason, "scores": scored}


def gist(page_text: str) -> tuple[str, dict]:
    text = lexical.shorten(page_text)
    return text, {"method": "extractive: the most informative sentences, in order", "gist_words": count_words(text)}


def shorter_gist(gist_text: str) -> tuple[str, dict]:
    """Iterative gisting offline (App. G.3): the gist shortened again, extractively (about half of
    it); a gist of one or two long sentences that cannot lose a whole one keeps its first 60% of
    words, cut between words and marked with an ellipsis."""
    words = count_words(gist_text)
    text = lexical.shorten(gist_text, ratio=0.5, min_words=12)
    method = "extractive: the most informative sentences of the gist"
    if count_words(text) >= words and words > 12:
        text = " ".join(gist_text.split()[: max(12, int(words * 0.6))]) + " …"
        method = "the gist's first 60% of words (no whole sentence could go)"
    return text, {"method": method, "gist_words": count_words(text)}


def conditional_gist(page_text: str, question: str) -> tuple[str, dict]:
    """Conditional ReadAgent offline (App. G.1): the extractive gist, with the sentences that
    match the question best (BM25) put back in, in text order."""
    base = lexical.shorten(page_text)
    sents = lexical.sentences(page_text)
    ranked = [i for i, s in lexical.rank(question, sents) if s > 0][:2]
    chosen = set(ranked) | {i for i, s in enumerate(sents) if s in base}
    text = " ".join(s for i, s in enumerate(sents) if i in chosen)
    return text, {"method": "extractive, with the sentences matching the question best (BM25)",
                  "question_sentences": ranked, "gist_words": count_words(text)}


def _page_scores(memory: GistMemory, question: Question) -> list[tuple[int, float]]:
    return lexical.rank(question.with_options(), [p.gist for p in memory.pages])


def lookup_parallel(memory: GistMemory, question: Question, max_pages: int) -> tuple[list[int], dict]:
    """The pages whose gists score at least half the best BM25 score, best first."""
    ranked = _page_scores(memory, question)
    top = ranked[0][1] if ranked else 0.0
    pages = [i for i, s in ranked if top > 0 and s >= 0.5 * top][:max_pages]
    return pages, {"method": "BM25 of the question and options against the gists; pages scoring at least half "
                             "the best score", "scores": {str(i): round(s, 3) for i, s in ranked}}


def lookup_next(memory: GistMemory, question: Question, read: Sequence[int]) -> tuple[int | str, dict]:
    """The best unread page if it scores at least half the best, else STOP."""
    ranked = _page_scores(memory, question)
    top = ranked[0][1] if ranked else 0.0
    unread = [(i, s) for i, s in ranked if i not in read]
    if unread and top > 0 and unread[0][1] >= 0.5 * top:
        value: int | str = unread[0][0]
        why = f"Page {value} is the best unread match (BM25 {unread[0][1]:.2f}, best {top:.2f})"
    else:
        value = STOP
        why = "no unread page scores at least half the best match"
    return value, {"method": "BM25 against the gists, one page at a time", "reason": why,
                   "scores": {str(i): round(s, 3) for i, s in ranked}}
