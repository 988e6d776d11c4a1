"""ReadAgent's decisions made by a model through the LLM seam.

Each step: build the prompt -> call -> parse -> validate -> re-ask a bounded
number of times (showing the model its reply and what was wrong) -> explicit
fallback. The trace records which of these happened.
"""
from __future__ import annotations

import re
import time
from typing import Callable, Sequence

from core import lexical, prompts
from core.documents import count_words
from core.llm import LLM
from core.parsers import (STOP, Parsed, parse_choice, parse_freeform, parse_gist, parse_next_page,
                          parse_page_list, parse_pause_point)
from core.presets import Preset
from core.readagent import Answer, GistMemory, Question, Window
from core.trace import FALLBACK, MODEL, REASKED, Attempt, Decision, StepTrace

DEFAULT_REASKS = 1


def ask_model(llm: LLM, step: str, prompt: str, parse: Callable[[str], Parsed], *,
              max_reasks: int = DEFAULT_REASKS, max_tokens: int | None = None) -> tuple[Parsed | None, list[Attempt]]:
    """Call, parse, and re-ask up to ``max_reasks`` times. Returns the first usable
    parse (or None) and every attempt. Used by every model-driven step."""
    attempts: list[Attempt] = []
    current = prompt
    for _ in range(max_reasks + 1):
        completion = llm.complete(current, step=step, max_tokens=max_tokens)
        parsed = parse(completion.text)
        attempts.append(Attempt(reply=completion.text, problem=parsed.problem, notes=list(parsed.notes),
                                call_id=completion.call_id, cached=completion.cached))
        if parsed.ok:
            return parsed, attempts
        current = prompts.REASK.format(prompt=prompt, reply=completion.text, problem=parsed.problem)
    return None, attempts


def model_step(llm: LLM, step: str, prompt: str, parse: Callable[[str], Parsed], *,
               fallback: Callable[[list[Attempt]], tuple[object, str]], max_reasks: int = DEFAULT_REASKS,
               max_tokens: int | None = None, detail: dict | None = None) -> Decision:
    """``ask_model`` plus the explicit fallback, packed as a Decision with its trace.
    ``fallback(attempts)`` returns (value, what was done and why)."""
    started = time.perf_counter()
    parsed, attempts = ask_model(llm, step, prompt, parse, max_reasks=max_reasks, max_tokens=max_tokens)
    trace = StepTrace(step=step, outcome=MODEL, attempts=attempts, detail=dict(detail or {}))
    if parsed is not None:
        value = parsed.value
        trace.outcome = MODEL if len(attempts) == 1 else REASKED
    else:
        value, trace.fallback = fallback(attempts)
        trace.outcome = FALLBACK
    trace.value = value
    trace.seconds = round(time.perf_counter() - started, 4)
    return Decision(value, trace)


def _because(reply: str) -> str:
    """The model's explanation after the label ('Because ...'), for the trace and the UI."""
    match = re.search(r"\bbecause\b(.*)", reply, re.I | re.S)
    text = (match.group(0) if match else re.sub(r"^.*?[>⟩]\s*", "", reply, count=1, flags=re.S)).strip()
    return " ".join(text.split())[:600]


class LLMEngine:
    is_llm = True

    def __init__(self, llm: LLM, *, max_reasks: int = DEFAULT_REASKS):
        self.llm = llm
        self.max_reasks = max_reasks
        identity = llm.backend.identity()
        self.key = f"openai:{identity.get('model')}@{identity.get('base_url', '')}"
        self.label = f"{identity.get('model')} at {identity.get('base_url', '')}"

    def bind(self, *, run_id: int | None, doc_id: str | None) -> "LLMEngine":
        return LLMEngine(self.llm.bind(run_id=run_id, doc_id=doc_id), max_reasks=self.max_reasks)

    def usage(self) -> dict:
        return self.llm.usage.as_dict()

    def _step(self, step, prompt, parse, fallback, **kw) -> Decision:
        return model_step(self.llm, step, prompt, parse, fallback=fallback, max_reasks=self.max_reasks, **kw)

    # -- gist memory -------------------------------------------------------------------------
    def pause_point(self, window: Window, preset: Preset) -> Decision[int]:
        prompt = preset.pagination_prompt.format(
            preceding=window.preceding, passage=window.passage(), following=window.following)

        def fallback(attempts):
            return window.end, (f"no usable label in {len(attempts)} replies; broke at the largest page "
                                f"<{window.end}> as the notebook does")

        decision = self._step("pagination", prompt, lambda r: parse_pause_point(r, window.labels), fallback,
                              detail={"labels": list(window.labels), "window": [window.start, window.end]})
        if decision.trace.outcome != FALLBACK:
            decision.trace.detail["reason"] = _because(decision.trace.attempts[-1].reply)
        return decision

    def gist(self, page_text: str, page_words: int, preset: Preset) -> Decision[str]:
        def fallback(attempts):
            return (lexical.shorten(page_text),
                    f"no usable gist in {len(attempts)} replies; used an extractive gist (offline, no LLM)")

        return self._step("gist", preset.gist_prompt.format(page=page_text),
                          lambda r: parse_gist(r, page_words), fallback,
                          max_tokens=preset.gist_prompt.params.get("max_tokens"))

    # -- look-up ---------------------------------------------------------------------------------
    def lookup_parallel(self, memory: GistMemory, question: Question, max_pages: int,
                        preset: Preset) -> Decision[list[int]]:
        template = prompts.LOOKUP_PARALLEL_RANKED if preset.ranked_lookup else prompts.LOOKUP_PARALLEL
        prompt = template.format(
            a_doc_kind=preset.a_doc_kind, doc_kind=preset.doc_kind,
            question_kind="a multiple choice question" if question.is_choice else "a question",
            max_pages=max_pages, gist_memory=memory.context(), question=question.with_options())

        def fallback(attempts):
            return [], f"no usable page list in {len(attempts)} replies; answered from the gists alone"

        return self._step("lookup", prompt, lambda r: parse_page_list(r, len(memory.pages), max_pages), fallback,
                          detail={"max_pages": max_pages})

    def lookup_next(self, memory: GistMemory, question: Question, read: Sequence[int],
                    preset: Preset) -> Decision[int | str]:
        prompt = prompts.LOOKUP_SEQUENTIAL.format(
            a_doc_kind=preset.a_doc_kind, doc_kind=preset.doc_kind, context=memory.context(read),
            already_read=", ".join(str(p) for p in read) or "None", question=question.with_options())

        def fallback(attempts):
            return STOP, f"no usable 'Page N' or 'STOP' in {len(attempts)} replies; stopped looking up"

        return self._step("lookup-sequential", prompt, lambda r: parse_next_page(r, len(memory.pages), read),
                          fallback, detail={"already_read": list(read)})

    # -- answer ------------------------------------------------------------------------------------
    def answer(self, context: str, question: Question, preset: Preset) -> Decision[Answer]:
        if question.is_choice:
            prompt = prompts.ANSWER_CHOICE.format(context=context, question=question.text,
                                                  options=prompts.format_options(question.options))

            def parse(reply: str) -> Parsed:
                parsed = parse_choice(reply, question.options)
                return Parsed(Answer(reply.strip(), parsed.value), parsed.problem, parsed.notes)

            def fallback(attempts):
                return (Answer(attempts[-1].reply.strip(), None),
                        f"no option could be read from {len(attempts)} replies; recorded as unparseable")
        else:
            prompt = prompts.ANSWER_FREEFORM.format(context=context, question=question.text)

            def parse(reply: str) -> Parsed:
                parsed = parse_freeform(reply)
                return Parsed(Answer(parsed.value or "", None), parsed.problem, parsed.notes)

            def fallback(attempts):
                return Answer("", None), f"{len(attempts)} empty replies; no answer"

        decision = self._step("answer", prompt, parse, fallback)
        decision.trace.detail["context_words"] = count_words(context)
        return decision
