"""What every question-answering method shares: the question and the answer, what a method
returns, and how a method is described to the registry, the command line and the app.

Each method's own figures (a MemWalker walk, Segment+'s notes, a retrieval's ranking)
are a typed ``Details`` value: it says how it reads on one line (``summary``), and the
app draws it by its ``kind``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from core.errors import SettingError
from core.prompts import format_options
from core.trace import StepTrace

if TYPE_CHECKING:
    from core.engine import Engine
    from core.methods.readagent.memory import GistMemory
    from core.methods.readagent.presets import Preset
    from core.store import Store
    from core.text.documents import Document


@dataclass(frozen=True)
class Question:
    text: str
    options: tuple[str, ...] = ()

    @property
    def is_choice(self) -> bool:
        return bool(self.options)

    def with_options(self) -> str:
        """The question as look-up prompts show it: with its options when multiple choice."""
        return f"{self.text}\n{format_options(self.options)}" if self.options else self.text


@dataclass(frozen=True)
class Answer:
    text: str  # the model's reply (or the offline engine's answer)
    choice: str | None = None  # option letter, None if free-form or unparseable


def compression_rate(in_context_words: int, document_words: int) -> float:
    """CR = 100 x (1 - in-context words / full-text words), the ReadAgent paper's Sec. 4 definition."""
    if document_words <= 0:
        return 0.0
    return round(100.0 * (1.0 - in_context_words / document_words), 2)


@dataclass
class Details:
    """A method's own figures. The base class is for methods with nothing more to say."""
    kind: ClassVar[str] = "plain"

    def summary(self) -> str:
        """One line for the command line ("path 7 > 5 > 0 | 1 revert | answered")."""
        return ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> "Details":
        """Read back from stored JSON: values of a ``holding`` field become its type again; names
        this version does not know are left out."""
        known = {f.name: f for f in fields(cls)}
        values = {}
        for name, value in (data or {}).items():
            if name not in known:
                continue
            kind = known[name].metadata.get("of")
            if kind is not None and value is not None:
                value = [_typed(kind, v) for v in value] if isinstance(value, list) else _typed(kind, value)
            values[name] = value
        return cls(**values)


def holding(kind: type, **kw):
    """A field of a ``Details`` that holds ``kind`` values (a list of them, or one)."""
    return field(metadata={"of": kind}, **kw)


def _typed(kind: type, value):
    if not isinstance(value, dict):
        return value
    names = {f.name for f in fields(kind)}
    return kind(**{k: v for k, v in value.items() if k in names})


@dataclass
class MethodOutput:
    """What every method returns (before it is stored as a run)."""
    answer: Answer
    context: str  # the context of the final answer step, exactly as sent
    words_in_context: int  # the longest in-context text over all steps
    document_words: int
    pages_looked_up: list[int] = field(default_factory=list)  # in look-up (or rank) order
    expanded: list[int] = field(default_factory=list)  # pages shown raw in the final context
    steps: list[StepTrace] = field(default_factory=list)
    details: Details = field(default_factory=Details)

    @property
    def compression_rate(self) -> float:
        return compression_rate(self.words_in_context, self.document_words)

    @property
    def lookups(self) -> int:
        return len(self.pages_looked_up)


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: Any
    help: str
    minimum: int | None = None  # for numbers: the smallest value that works
    why: str = ""  # said when the value is below the minimum ("the paper uses 1000")

    def check(self, value: Any) -> Any:
        try:
            value = self.type(value)
        except (TypeError, ValueError):
            raise SettingError(self.name, value, f"a {'whole number' if self.type is int else self.type.__name__}") \
                from None
        if self.minimum is not None and value < self.minimum:
            raise SettingError(self.name, value, f"at least {self.minimum}", self.why)
        return value


@dataclass
class MethodInput:
    engine: "Engine"
    document: "Document"
    memory: "GistMemory | None"
    question: Question
    preset: "Preset"
    store: "Store"


@dataclass(frozen=True)
class Method:
    name: str
    label: str
    description: str
    needs_memory: bool
    run: Callable[[MethodInput, dict], MethodOutput]
    params: tuple[Param, ...] = ()
    details: type[Details] = Details

    def resolve(self, given: dict | None) -> dict:
        """Defaults filled in, unknown names ignored, values checked and converted to their types."""
        given = {k: v for k, v in (given or {}).items() if v is not None}
        return {p.name: p.check(given.get(p.name, p.default)) for p in self.params}
