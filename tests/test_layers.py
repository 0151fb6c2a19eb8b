"""Imports point down the layers of the design: load -> plan -> execute -> score -> aggregate -> store -> render.

Each kind of evaluation has its folder over the shared layers (``tool_skills``, ``fixture_checks``, ``paired``,
``routing``), and no module reaches a module that reaches it back: no import circle, lazy (function-level) and
type-only imports included.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "eval_skills"

RANK = {
    "errors": 0, "_version": 0, "_atomic": 0, "_gc": 0, "masking": 0,
    "results": 1, "scratch": 1, "formats": 1, "procs": 1, "sandbox": 1, "registry": 1, "llm": 1,
    "adapters": 2, "agents": 2, "judges": 2, "scoring": 2, "stats": 2, "store": 2, "reports": 2, "config": 2,
    "scaffold": 3, "catalog": 3, "cluster": 3,
    # the four kinds of evaluation
    "tool_skills": 5, "fixture_checks": 5, "paired": 5, "routing": 5,
    "viewer": 6,
    "cli": 7, "__main__": 8, "__init__": 8,
}

# Inside a kind's folder the story reads top-down: a module imports only modules of a lower step.
STEPS = {
    "tool_skills": {
        "plan": 0, "discovery": 0, "selection": 0, "judging": 0,
        "runner": 1, "preflight": 1, "aggregate": 1,
        "evaluation": 2, "ray_shards": 2, "__init__": 3,
    },
}


def top_level(module: Path) -> str:
    parts = module.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def dotted(module: Path) -> tuple[str, ...]:
    parts = module.relative_to(PACKAGE).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def is_package(module: Path) -> bool:
    return module.name == "__init__.py"


def exists(parts: tuple[str, ...]) -> bool:
    base = PACKAGE.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_modules(module: Path) -> set[tuple[str, ...]]:
    """Every module of the package this one imports, anywhere in it (top level, functions, TYPE_CHECKING)."""
    me = dotted(module)
    package = me if is_package(module) else me[:-1]
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if not (node.module or "").startswith("eval_skills"):
                    continue
                base = tuple(node.module.split(".")[1:])  # type: ignore[union-attr]
            else:
                up = node.level - 1
                if up > len(package):
                    continue
                base = package[: len(package) - up] + (tuple(node.module.split(".")) if node.module else ())
            for alias in node.names:
                sub = base + (alias.name,)
                found.add(sub if exists(sub) else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("eval_skills."):
                    found.add(tuple(alias.name.split(".")[1:]))
    found.discard(me)
    return {parts for parts in found if parts}


def modules() -> dict[tuple[str, ...], Path]:
    return {dotted(path): path for path in PACKAGE.rglob("*.py") if dotted(path)}


def test_every_module_has_a_layer():
    for module in PACKAGE.rglob("*.py"):
        assert top_level(module) in RANK, module


def test_imports_only_point_down():
    wrong = []
    for parts, module in modules().items():
        mine = parts[0]
        for other in imported_modules(module):
            if other[0] != mine and RANK.get(other[0], 99) >= RANK[mine]:
                wrong.append(f"{'.'.join(parts)} imports {'.'.join(other)}")
    assert wrong == []


def test_each_kind_reads_top_down():
    wrong = []
    for parts, module in modules().items():
        steps = STEPS.get(parts[0])
        if steps is None or len(parts) != 2:
            continue
        for other in imported_modules(module):
            if other[0] == parts[0] and len(other) == 2 and steps[other[1]] >= steps[parts[1]]:
                wrong.append(f"{'.'.join(parts)} imports {'.'.join(other)}")
    assert wrong == []


def test_no_import_circles():
    graph = {parts: imported_modules(path) for parts, path in modules().items()}
    # a package's __init__ that re-exports its modules, imported by one of them, is a circle too
    circles = []
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on_stack: set[tuple[str, ...]] = set()

    def visit(node: tuple[str, ...]) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(".".join(member))
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert circles == []


def test_only_the_cli_imports_click():
    for module in PACKAGE.rglob("*.py"):
        if top_level(module) != "cli":
            assert "import click" not in module.read_text(), module
