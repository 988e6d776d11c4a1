"""The answer step every method ends with: the ReadAgent paper's response prompts (App. F),
the parsers for their replies, and the offline engine's lexical answers.

Multiple choice: "Answer: (C) ..." is read tolerantly; a reply naming no option is kept
as unparseable. Free form: the reply, without an "Answer:" prefix. Offline: the option
whose own words occur together most distinctively in the context (MCTest's sliding
window), or the two context sentences that best cover the question's words.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from core import prompts
from core.decisions import Step
from core.methods.base import Answer, Question
from core.parsing import Parsed, bad, clean, drop_thinking, other_answer, refusal, repeats_example
from core.prompts import option_letters
from core.llm.window import cut_to_tokens, describe, input_budget
from core.text import lexical
from core.text.documents import count_words
from core.text.tokens import count_tokens


@dataclass(frozen=True)
class AnswerInput:
    context: str
    question: Question


# --- parsing replies ---------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


_CHOICE_ECHO = ("if (c) is correct", "read the following article and answer")
_FREEFORM_ECHO = ("answer the question based on the above passage", "your answer should be short and concise")


def parse_choice(reply: str, options: Sequence[str]) -> Parsed[str]:
    """'Answer: (C) ...', 'Answer: C', 'The answer is (C)', '(C)', 'C.', or an option's exact text."""
    letters = option_letters(len(options))
    text = clean(reply)
    if not text:
        return bad("the reply was empty")
    if any(echo in text.lower() for echo in _CHOICE_ECHO) or repeats_example(text, prompts.ANSWER_CHOICE):
        return bad(f"the reply repeats the prompt's example (\"Answer: (C) ...\") instead of choosing; answer like "
                   f"\"Answer: ({letters[0]}) ...\" with the option you choose and its text")
    # Keywords match in any case; the letter itself only in capitals ("answer is a man" is no choice).
    patterns = [
        r"(?i:\banswer\s*(?:is|:|-|would be|should be)?\s*:?\s*(?:option\s*)?)\(?([A-J])\)?(?![A-Za-z])",
        r"^\(?([A-J])\)(?=\s|$|[.:,])",
        r"^([A-J])(?:[.:,]|\s*$)",
        r"(?i:\boption\s*)\(?([A-J])\)?(?![A-Za-z])",
        r"\(([A-J])\)",
        r"(?i:\banswer\s*:\s*)\(?([a-j])(?:\)|\.|\s*$)",
    ]
    for pattern in patterns:
        match = re.search(pattern, text)
        if match:
            letter = match.group(1).upper()
            if letter not in letters:
                return bad(f"({letter}) is not one of the options ({', '.join(letters)})")
            return Parsed(letter)
    said = f" {_norm(text)} "
    matches = [l for l, o in zip(letters, options) if len(_norm(o)) > 2 and f" {_norm(o)} " in said]
    if len(matches) == 1:
        return Parsed(matches[0], notes=("matched the option's text",))
    return bad(f'it does not name an option; answer like "Answer: ({letters[0]}) ..."')


def parse_freeform(reply: str) -> Parsed[str]:
    """The answer, without an "Answer:" prefix or the model's thinking. Refused: an empty reply,
    the instructions, a refusal of the request ("I can't help with that"; "I cannot tell from
    the text" is an answer), the start of the model's thinking alone, and another step's answer
    ("Break point: <n>", "I want to look up Page [..]")."""
    text, dropped = drop_thinking(clean(reply))
    text = re.sub(r"^answer\s*:\s*", "", text, flags=re.I).strip()
    if not text:
        return bad("it only starts thinking aloud and gives no answer" if dropped else "the reply was empty")
    if any(echo in text.lower() for echo in _FREEFORM_ECHO):
        return bad("the reply repeats the instructions instead of answering the question")
    if refusal(text, task_only=True):
        return bad('it refuses instead of answering; if the text does not say, answer "The text does not say"')
    kind = other_answer(text)
    if kind.startswith("a pause-point") or re.search(r"\blook\s*-?\s*up\s+pages?\s*\[", text, re.I):
        return bad(f"it is {kind}, not an answer to the question")
    return Parsed(text, notes=("dropped the model's thinking before the answer",) if dropped else ())


def _parse(reply: str, i: AnswerInput) -> Parsed[Answer]:
    if i.question.is_choice:
        parsed = parse_choice(reply, i.question.options)
        return Parsed(Answer(reply.strip(), parsed.value), parsed.problem, parsed.notes)
    parsed = parse_freeform(reply)
    return Parsed(Answer(parsed.value or "", None), parsed.problem, parsed.notes)


def _prompt(i: AnswerInput) -> str:
    if i.question.is_choice:
        return prompts.ANSWER_CHOICE.format(context=i.context, question=i.question.text,
                                            options=prompts.format_options(i.question.options))
    return prompts.ANSWER_FREEFORM.format(context=i.context, question=i.question.text)


def _fallback(i: AnswerInput, attempts) -> tuple[Answer, str]:
    if i.question.is_choice:
        return (Answer(attempts[-1].reply.strip(), None),
                f"no option could be read from {len(attempts)} replies; recorded as unparseable")
    return Answer("", None), f"{len(attempts)} empty replies; no answer"


# --- the offline engine's answers -----------------------------------------------------------------
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
    """The two consecutive context sentences that best cover the question's words, whole (just
    the first when both do not fit in ``max_words``); front matter and boilerplate are never quoted."""
    sents = [s for s in lexical.sentences(re.sub(r"<Page \d+>", "", context)) if not lexical.is_boilerplate(s)]
    if not sents:
        return Answer("", None), {"method": "lexical", "reason": "empty context"}
    idf = lexical.idf_table(sents)
    default = max(idf.values(), default=1.0)
    q_terms = set(lexical.terms(question.text))
    windows = _windows(sents, 2)
    scores = [sum(idf.get(t, default) for t in q_terms & w) for w in windows]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    text = lexical.whole_sentences(sents[best:best + 2], max_words)
    detail = {"method": "lexical: the two sentences that best cover the question's words",
              "sentence": best, "score": round(scores[best], 3)}
    return Answer(text, None), detail


def _rule(i: AnswerInput) -> tuple[Answer, dict]:
    return choose_option(i.context, i.question) if i.question.is_choice else extract_answer(i.context, i.question)


ANSWER_TOKENS = 256  # "Answer: (C) ..." or a short free-form answer


ANSWER = Step(name="answer", prompt=_prompt, parse=_parse, fallback=_fallback, rule=_rule,
              detail=lambda i: {"context_words": count_words(i.context)},
              max_tokens=lambda i: ANSWER_TOKENS, min_tokens=32,
              too_long=lambda i: f"This method's context ({count_words(i.context):,} words) cannot be shortened "
                                 "to fit.")


def answer_question(engine, context: str, question: Question):
    """The answer to ``question`` from ``context`` (a Decision with its trace)."""
    return engine.decide(ANSWER, AnswerInput(context, question))


# --- fitting the context in the model's window ---------------------------------------------------

def answer_room(engine, question: Question) -> int | None:
    """Tokens the context may have in the answer prompt for the engine's window (None: no
    window, the offline engine), leaving room for the reply and one re-ask."""
    window = getattr(engine, "context_tokens", None)
    if not window:
        return None
    empty = count_tokens(_prompt(AnswerInput("", question)), getattr(engine, "model", None))
    return input_budget(window, ANSWER_TOKENS) - empty


def fit_context(engine, context: str, question: Question, *, from_end: bool = False,
                what: str = "the text") -> tuple[str, dict]:
    """``context`` as it is when it fits the answer prompt, else its start (or end) that fits,
    with one sentence saying where and why it was cut; and what the trace should say."""
    room = answer_room(engine, question)
    model = getattr(engine, "model", None)
    if room is None or count_tokens(context, model) <= room:
        return context, {}
    total = count_words(context)
    kept = cut_to_tokens(context, room - 48, from_end=from_end, model=model)
    left_out = total - count_words(kept)
    where = "before" if from_end else "after"
    note = (f"[{what[0].upper()}{what[1:]} is cut here: the {left_out:,} words {where} this point do not fit in the "
            "model's context window.]")
    fitted = f"{note}\n{kept}" if from_end else f"{kept}\n{note}"
    return fitted, {"fitted": f"cut to {count_words(kept):,} of {total:,} words to fit the "
                              f"{describe(getattr(engine, 'context_tokens', None))}"}
