"""The shape of the code: no import cycles in core, no module over 600 lines (none of the
store's over 400), no private name imported from another module, and core never imports Streamlit."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
APP = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "components").glob("*.py"))]
MAX_LINES = 600
STORE_MAX_LINES = 400  # the store is split by topic: one part per kind of row


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(CORE.rglob("*.py"))}


def imports(path: Path) -> list[tuple[str, list[str], int]]:
    """(module, names, line) of every import outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.append((base, [a.name for a in node.names], node.lineno))
    return found


def resolve(target: str, names: list[str], modules: dict[str, Path]) -> set[str]:
    """The core modules an import reaches (``from core.x import y`` reaches core.x.y if y is a module)."""
    reached = {f"{target}.{n}" for n in names if f"{target}.{n}" in modules}
    if target in modules and (len(reached) < len(names) or not names):
        reached.add(target)
    return reached


def test_no_import_cycles_in_core():
    modules = core_modules()
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for target, names, _ in imports(path):
            graph[name] |= resolve(target, names, modules) - {name}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")) + APP, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_600_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", sorted((CORE / "store").glob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_part_of_the_store_is_over_400_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= STORE_MAX_LINES


def test_no_private_name_is_imported_from_another_module():
    offenders = []
    for path in [*CORE.rglob("*.py"), *APP]:
        for target, names, line in imports(path):
            offenders += [f"{path.relative_to(ROOT)}:{line} imports {n} from {target}"
                          for n in names if n.startswith("_") and not n.startswith("__")]
    assert not offenders, "\n".join(offenders)


def test_core_never_imports_streamlit():
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in CORE.rglob("*.py")
                 for target, _, line in imports(path) if target.split(".")[0] in ("streamlit", "components", "pages")]
    assert not offenders, offenders
