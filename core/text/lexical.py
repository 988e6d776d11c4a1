"""Lexical building blocks for the offline engine and the retrieval baselines.

Terms, sentences, BM25 ranking (the ``bm25s`` library), TextTiling-style
lexical cohesion, and extractive shortening. No model anywhere in here.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Sequence

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't
my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd
she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves said says say one also
upon would could shall may might must will just now then well much many even still yet ever never
""".split())

_TERM = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'horses'/'horse', 'landed'/'landing'/'land'."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if word.endswith("ed") and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Lower-cased, stemmed content words."""
    return [stem(w) for w in _TERM.findall(text.lower().replace("’", "'")) if w not in STOPWORDS and len(w) > 1]


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_ABBREVIATION = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Col|Gen|Capt|Lt|Sgt|Prof|Rev|Hon|vs|etc|No|Mt)|\b[A-Z])\.$")


def sentences(text: str) -> list[str]:
    """Sentences of a passage (paragraph breaks always end a sentence)."""
    out: list[str] = []
    for paragraph in re.split(r"\n+", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        pieces, start = [], 0
        for match in _SENTENCE_END.finditer(paragraph):
            pieces.append(paragraph[start:match.end()].strip())
            start = match.end()
        pieces.append(paragraph[start:].strip())
        merged: list[str] = []
        for piece in pieces:
            if merged and _ABBREVIATION.search(merged[-1]):
                merged[-1] = f"{merged[-1]} {piece}"
            elif piece:
                merged.append(piece)
        out.extend(merged)
    return out


# Front matter and boilerplate no gist or answer should quote: Project Gutenberg's header and
# licence, production credits, title-page fields, and tables of contents (one entry a line).
_BOILERPLATE = re.compile(
    r"project gutenberg|gutenberg\.org|\be-?(?:book|text)\s*#\s*\d|^\s*\*{3}|\*{3}\s*$|"
    r"^(?:posting|release|original publication|first posted|last updated?|date)(?: date)?\s*:|"
    r"^(?:title|author|editor|translator|illustrator|language|character set encoding|credits)\s*:|"
    r"^(?:produced by|e-?text prepared by|transcribed (?:from|by)|transcriber['’]?s? notes?|"
    r"this e-?(?:book|text) is for the use of|updated editions will replace)|"
    r"^(?:table of )?contents\W*$|^(?:by|illustrated by|translated by)\s+(?-i:[A-Z])",
    re.I)
_TOC_ENTRY = re.compile(r"^(?:chapter|book|part|volume|act|scene|canto|section|letter|stave)\s+(?:[ivxlcdm]+|\d+|"
                        r"the\s+\w+|one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I)
_SMALL_WORDS = frozenset("a an and as at but by for from in of on or the to with".split())


def is_boilerplate(sentence: str) -> bool:
    """A sentence no gist or answer should quote: a Gutenberg header or licence line, a credit,
    a title-page field, or a heading or table-of-contents entry ("Chapter 1", "CONTENTS",
    "PRIDE AND PREJUDICE"), which have no sentence to them."""
    text = sentence.strip()
    if not re.search(r"[A-Za-z]", text) or _BOILERPLATE.search(text):
        return True
    words = text.split()
    if _TOC_ENTRY.match(text) and (len(words) <= 12 and not re.search(r"[.!?][\"'”’)]*$", text)
                                   or len(words) <= 3):
        return True
    if len(words) <= 8 and not re.search(r"[.!?,;:][\"'”’)]*$", text):  # a title: capitals, no sentence end
        letters = [w for w in words if w[:1].isalpha()]
        return bool(letters) and all(w[:1].isupper() or w.lower() in _SMALL_WORDS for w in letters)
    return False


def whole_sentences(sents: Sequence[str], max_words: int) -> str:
    """As many of ``sents`` as fit in ``max_words``, whole (the first always, up to twice that);
    a first sentence longer still is cut after its last clause (a comma, semicolon, colon or
    dash) that fits, and closed with "…"."""
    out: list[str] = []
    used = 0
    for sentence in sents:
        n = len(sentence.split())
        if out and used + n > max_words:
            break
        if not out and n > 2 * max_words:  # a sentence up to twice the limit is kept whole
            words = sentence.split()[:max_words]
            cut = max((i for i, w in enumerate(words) if re.search(r"[,;:—–]$", w)), default=None)
            kept = words[:cut + 1] if cut is not None and cut >= max_words // 3 else words
            return " ".join(kept).rstrip(",;:—– ") + "…"
        out.append(sentence)
        used += n
    return " ".join(out)


def cosine(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def idf_table(texts: Sequence[str]) -> dict[str, float]:
    """Smoothed inverse document frequency over ``texts``."""
    df: Counter = Counter()
    for text in texts:
        df.update(set(terms(text)))
    n = len(texts)
    return {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}


def bm25_scores(query: str, texts: Sequence[str]) -> list[float]:
    """Okapi BM25 score of every text for the query (``bm25s``, Lucene variant)."""
    import bm25s

    corpus = [terms(t) or ["\u2205"] for t in texts]
    query_terms = [t for t in terms(query) if any(t in doc for doc in corpus)]
    if not texts or not query_terms:
        return [0.0] * len(texts)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    return [float(s) for s in retriever.get_scores(query_terms)]


def rank(query: str, texts: Sequence[str]) -> list[tuple[int, float]]:
    """Indices of ``texts`` best first, with their BM25 scores (ties keep text order)."""
    scores = bm25_scores(query, texts)
    return sorted(enumerate(scores), key=lambda pair: (-pair[1], pair[0]))


FRONT_MATTER = "Front matter: a title page, licence or table of contents, with no story text."


def shorten(text: str, idf: dict[str, float] | None = None, *, ratio: float = 0.15,
            min_words: int = 25, max_words: int = 150) -> str:
    """Extractive shortening: the most informative sentences, in their original order.

    A sentence's weight is the idf mass of its distinct content words (names count
    double), divided by the square root of its length; the first sentence gets a
    bonus since pages often open by setting the scene. Sentences that mostly repeat
    what is already chosen are skipped, and so are front matter and boilerplate
    (``is_boilerplate``). Aims at ``ratio`` of the words, within bounds."""
    sents = [s for s in sentences(text) if not is_boilerplate(s)]
    if not sents:  # front matter alone: said in fewer words than the page has, else the page as it is
        words = len(text.split())
        return next((note for note in (FRONT_MATTER, "Front matter.") if len(note.split()) < words),
                    " ".join(text.split()))
    total = sum(len(s.split()) for s in sents)
    target = max(min_words, min(max_words, int(total * ratio)))
    if total <= target:
        return " ".join(sents)
    idf = idf or idf_table(sents)
    default_idf = max(idf.values(), default=1.0)
    scored = []
    for i, sentence in enumerate(sents):
        words = sentence.split()
        names = {stem(w.strip(".,;:!?\"'“”‘’()").lower()) for w in words[1:] if w[:1].isupper()}
        content = set(terms(sentence))
        weight = sum(idf.get(t, default_idf) * (2.0 if t in names else 1.0) for t in content)
        score = weight / math.sqrt(max(len(words), 1))
        if i == 0:
            score *= 1.3
        scored.append((score, i, content))
    chosen: list[int] = []
    covered: set[str] = set()
    used = 0
    for score, i, content in sorted(scored, key=lambda x: (-x[0], x[1])):
        length = len(sents[i].split())
        if chosen and used + length > target:
            continue
        if chosen and content and len(content & covered) / len(content) > 0.7:
            continue
        chosen.append(i)
        covered |= content
        used += length
        if used >= target:
            break
    return " ".join(sents[i] for i in sorted(chosen))
