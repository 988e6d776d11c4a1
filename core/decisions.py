"""Every decision a method makes, made in one place.

A method states each of its decisions once, as a ``Step``: how to build the prompt,
how to parse a reply (a pure ``str -> Parsed`` function), what to do when no reply
can be used, and the offline engine's rule for the same decision. ``decide`` then
either asks the model (build -> call -> parse -> validate -> bounded re-ask ->
explicit fallback) or applies the offline rule, and both give a ``Decision`` whose
trace has the same shape: the outcome (model, re-asked, fallback, offline), the
value, every attempt with the logged call behind it, and the details.

No method asks "is there a model?" itself: it calls ``engine.decide(step, inputs)``.

A model has a context window (``LLM.context_tokens``): a prompt and its reply budget always fit
in it. Methods size what they put in a prompt to fit (``core/llm/window.py``); here the reply
budget shrinks to the room left when a step allows it (``min_tokens``), a re-ask that would not
fit is skipped (the trace says so), and a prompt that cannot fit is never sent: it raises
``ContextWindowError``, which names the window setting.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Generic, TypeVar

from core import prompts
from core.errors import ContextWindowError, GistError
from core.llm.window import describe, fits, headroom, prompt_budget
from core.parsing import Parsed, bad, prompt_echo
from core.trace import FALLBACK, MODEL, OFFLINE, REASKED, Attempt, Decision, StepTrace

if TYPE_CHECKING:
    from core.engine import Engine
    from core.llm.seam import LLM

I = TypeVar("I")
T = TypeVar("T")

DEFAULT_REASKS = 1


def _no_detail(inputs) -> dict:
    return {}


@dataclass(frozen=True)
class Step(Generic[I, T]):
    """One kind of decision. ``inputs`` is a small value holding everything the prompt and
    the offline rule need."""
    name: str  # the step's name in the trace and the call log ("pagination", "gist", ...)
    prompt: Callable[[I], str]
    parse: Callable[[str, I], Parsed[T]]
    fallback: Callable[[I, list[Attempt]], tuple[T, str]]  # (value, what was done and why)
    rule: Callable[[I], tuple[T, dict]] | None  # the offline engine's rule: (value, its scores and reason)
    detail: Callable[[I], dict] = _no_detail  # what the trace records in both cases
    max_reasks: int | None = None  # None: the engine's setting
    max_tokens: Callable[[I], int | None] | None = None  # the reply budget; None: the seam's default
    finish: Callable[[Decision, I], None] | None = None  # e.g. keep the model's stated reason
    # The model's context window: when the prompt leaves less room than ``max_tokens``, the reply
    # budget shrinks to what is left, down to ``min_tokens`` (None: it never shrinks). A prompt
    # that still does not fit is never sent: ``too_long`` says why this step cannot shrink it.
    min_tokens: int | None = None
    too_long: Callable[[I], str] | None = None


class NoRule(GistError):
    """A step the offline engine cannot take (an LLM rater, say)."""


def decide(engine: "Engine", step: Step[I, T], inputs: I) -> Decision[T]:
    """The step's decision: asked of the engine's model, or by the offline rule."""
    if engine.llm is not None:
        max_reasks = engine.max_reasks if step.max_reasks is None else step.max_reasks
        decision = ask_model(engine.llm, step, inputs, max_reasks)
    else:
        decision = apply_rule(step, inputs)
    if step.finish is not None:
        step.finish(decision, inputs)
    return decision


def ask_model(llm: "LLM", step: Step[I, T], inputs: I, max_reasks: int = DEFAULT_REASKS) -> Decision[T]:
    """Call, parse, re-ask up to ``max_reasks`` times showing the model its reply and what was
    wrong, then fall back explicitly. The trace says which of these happened."""
    started = time.perf_counter()
    prompt = step.prompt(inputs)
    max_tokens = step.max_tokens(inputs) if step.max_tokens else None
    window = getattr(llm, "context_tokens", None)
    fitted: dict = {}
    if window:
        max_tokens, fitted = fit_reply(llm, step, inputs, prompt, max_tokens or llm.max_tokens, window)
    attempts: list[Attempt] = []
    parsed: Parsed | None = None
    current = prompt
    for n in range(max_reasks + 1):
        if n and window and not fits(current, max_tokens, window, llm.model):
            fitted["reask_skipped"] = (f"not re-asked: the prompt with the unusable reply would not fit in the "
                                       f"{describe(window)}")
            break
        completion = llm.complete(current, step=step.name, max_tokens=max_tokens)
        echo = prompt_echo(completion.text, prompt)  # a reply repeating the prompt is no decision
        parsed = bad(echo) if echo else step.parse(completion.text, inputs)
        attempts.append(Attempt(reply=completion.text, problem=parsed.problem, notes=list(parsed.notes),
                                call_id=completion.call_id, cached=completion.cached))
        if parsed.ok:
            break
        llm.reject(completion)  # never replayed as if it were usable
        current = prompts.REASK.format(prompt=prompt, reply=completion.text, problem=parsed.problem)
    trace = StepTrace(step=step.name, outcome=MODEL, attempts=attempts, detail={**step.detail(inputs), **fitted})
    if parsed is not None and parsed.ok:
        value = parsed.value
        trace.outcome = MODEL if len(attempts) == 1 else REASKED
    else:
        value, trace.fallback = step.fallback(inputs, attempts)
        trace.outcome = FALLBACK
    trace.value = value
    trace.seconds = round(time.perf_counter() - started, 4)
    return Decision(value, trace)


def fit_reply(llm: "LLM", step: Step[I, T], inputs: I, prompt: str, reply_tokens: int,
              window: int) -> tuple[int, dict]:
    """The reply budget that fits ``prompt`` in the model's window, and what the trace should
    say about it. The budget shrinks to the room left (never below ``step.min_tokens``); a
    prompt that cannot fit raises ``ContextWindowError`` naming the window setting: it is
    never sent, and never cut silently."""
    from core.text.tokens import count_tokens

    tokens = count_tokens(prompt, llm.model)
    left = prompt_budget(window, 0) - tokens
    if left >= reply_tokens:
        return reply_tokens, {}
    if step.min_tokens is not None and left >= step.min_tokens:
        return left, {"reply_tokens": f"reply budget cut from {reply_tokens} to {left} tokens to fit the "
                                      f"{describe(window)}"}
    need = reply_tokens if step.min_tokens is None else min(reply_tokens, step.min_tokens)
    why = f" {step.too_long(inputs)}" if step.too_long is not None else ""
    raise ContextWindowError(
        f"The {step.name} prompt has {tokens:,} tokens: with a reply of {need:,} tokens and {headroom(window):,} "
        f"kept free for the chat template, it does not fit in the model's {describe(window)}, so it was not "
        f"sent.{why}")


def apply_rule(step: Step[I, T], inputs: I) -> Decision[T]:
    """The offline engine's decision, traced like a model's (outcome ``offline``, no attempts)."""
    if step.rule is None:
        raise NoRule(f"The {step.name} step needs a model; the offline engine has no rule for it.",
                     cli="Use --engine openai --model M [--base-url URL].",
                     app="Choose a model server in the sidebar's model settings.")
    started = time.perf_counter()
    value, rule_detail = step.rule(inputs)
    detail = {**step.detail(inputs), **rule_detail}
    trace = StepTrace(step=step.name, outcome=OFFLINE, value=value, detail=detail,
                      seconds=round(time.perf_counter() - started, 4))
    return Decision(value, trace)

