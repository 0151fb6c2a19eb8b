"""Imports point down the layers of the design: load -> plan -> execute -> score -> aggregate -> store -> render."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "eval_skills"

RANK = {
    "errors": 0, "_version": 0, "_atomic": 0, "masking": 0,
    "results": 1, "formats": 1, "procs": 1, "sandbox": 1, "registry": 1, "llm": 1,
    "adapters": 2, "agents": 2, "judges": 2, "scoring": 2, "stats": 2, "store": 2, "reports": 2, "config": 2,
    "plan": 3, "fixtures_check": 3, "judging": 3, "scaffold": 3, "discovery": 3, "selection": 3, "catalog": 3,
    "cluster": 3,
    "runner": 4, "aggregate": 4, "preflight": 4,
    "evaluation": 5, "paired": 5, "routing": 5, "viewer": 5, "ray_shards": 5,
    "cli": 6, "__main__": 7, "__init__": 7,
}


def top_level(module: Path) -> str:
    parts = module.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def imported_top_levels(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    depth = len(module.relative_to(PACKAGE).parts) - 1  # 0 for eval_skills/x.py, 1 for eval_skills/pkg/x.py
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.startswith("eval_skills."):
                found.add(node.module.split(".")[1])
            elif node.level == depth + 1 and node.module:  # relative to the package root
                found.add(node.module.split(".")[0])
            elif node.level == depth + 1 and not node.module:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("eval_skills."))
    return found


def test_every_module_has_a_layer():
    for module in PACKAGE.rglob("*.py"):
        assert top_level(module) in RANK, module


def test_imports_only_point_down():
    wrong = []
    for module in PACKAGE.rglob("*.py"):
        mine = top_level(module)
        for other in imported_top_levels(module):
            if other != mine and RANK.get(other, 99) >= RANK[mine]:
                wrong.append(f"{module.relative_to(PACKAGE)} imports {other}")
    assert wrong == []


def test_only_the_cli_imports_click():
    for module in PACKAGE.rglob("*.py"):
        if top_level(module) != "cli":
            assert "import click" not in module.read_text(), module
