"""What each step did, kept for the trace viewer and the database.

Every agent step is build -> call -> parse -> validate -> explicit fallback,
and its ``StepTrace`` says which happened: ``outcome`` is one of

* ``model``    - the first reply parsed and was valid
* ``re-asked`` - a later reply, after a re-ask, was valid
* ``fallback`` - no usable reply; ``fallback`` says what was done instead
* ``offline``  - decided by the offline engine (no LLM); ``detail`` holds its scores
* ``rule``     - nothing to decide (end of text, a single possible break)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MODEL, REASKED, FALLBACK, OFFLINE, RULE = "model", "re-asked", "fallback", "offline", "rule"


@dataclass
class Attempt:
    reply: str
    problem: str = ""  # why the reply could not be used ("" if it could)
    notes: list[str] = field(default_factory=list)  # repairs made while parsing
    call_id: int | None = None  # row in llm_calls holding the prompt
    cached: bool = False


@dataclass
class StepTrace:
    step: str
    outcome: str
    value: Any = None
    attempts: list[Attempt] = field(default_factory=list)
    fallback: str = ""
    detail: dict = field(default_factory=dict)
    seconds: float = 0.0
    page: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "StepTrace":
        data = dict(data)
        data["attempts"] = [Attempt(**a) for a in data.get("attempts", [])]
        return cls(**data)


@dataclass
class Decision(Generic[T]):
    value: T
    trace: StepTrace


def by_rule(step: str, value: T, reason: str, **detail) -> Decision[T]:
    """Nothing to decide (the end of a section, an empty note): the value, and why."""
    return Decision(value, StepTrace(step=step, outcome=RULE, value=value, detail={"reason": reason, **detail}))
