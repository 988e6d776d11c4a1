"""Every question-answering method, in the order the screens and the command line list them.

Adding a method is one entry here: its ``Method`` (name, label, parameters, how it runs,
and its ``Details`` type, which the app draws by ``kind``).
"""
from __future__ import annotations

from core.errors import GistError
from core.methods import baselines
from core.methods.base import Method
from core.methods.memwalker import walk
from core.methods.readagent import lookup
from core.methods.segment_plus import gather

METHODS: dict[str, Method] = {m.name: m for m in [*lookup.METHODS, walk.METHOD, gather.METHOD, *baselines.METHODS]}


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise GistError(f"Unknown method {name!r}. Choose one of: {', '.join(METHODS)}.") from None
