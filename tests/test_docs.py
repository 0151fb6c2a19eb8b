"""Every command the documentation shows is run here, read from the page itself.

The convention of the pages (README.md and docs/):

- a ```console block holds ``$ `` lines: each is run with bash, offline, from a temporary copy of the
  repository's examples (so what it writes lands there), and must exit 0, or N when the line ends with the
  comment ``# exit N``; the lines after a command are its expected output: each must appear, in order, with
  ``...`` standing for any text within a line;
- a command that needs what the tests lack (a model, a key, an agent CLI) goes in a ```text block, never run;
- an ``eval-skills`` command in any other kind of block fails the test (it would be shown, never checked);
- ``<!-- docs-test: slow -->`` on the line before a block marks it slow (``pytest -m slow``; .ci/run runs it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
EVAL_SKILLS_COMMAND = re.compile(r"^\s*(\$\s+)?eval-skills(\s|$)")
EXIT_COMMENT = re.compile(r"#\s*exit\s+(\d+)\s*$")


@dataclass
class Command:
    line: str
    expected: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        found = EXIT_COMMENT.search(self.line)
        return int(found.group(1)) if found else 0


@dataclass
class Block:
    page: Path
    lineno: int
    lang: str
    lines: list[str]
    slow: bool

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.lineno}"

    def commands(self) -> list[Command]:
        commands: list[Command] = []
        continuing = False
        for line in self.lines:
            if continuing:
                commands[-1].line += "\n" + line
                continuing = line.endswith("\\")
            elif line.startswith("$ "):
                commands.append(Command(line[2:]))
                continuing = line.endswith("\\")
            elif commands and line.strip():
                commands[-1].expected.append(line)
        return commands


def blocks(page: Path) -> list[Block]:
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i].lstrip())
        if not match:
            i += 1
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        fence, lang = match.group(1), match.group(2)
        slow = i > 0 and "docs-test: slow" in lines[i - 1]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:])
            j += 1
        found.append(Block(page, i + 1, lang, body, slow))
        i = j + 1
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]
CONSOLE = [block for block in ALL_BLOCKS if block.lang == "console"]


def test_the_pages_show_commands_to_run() -> None:
    assert len(CONSOLE) >= 10, [b.where for b in CONSOLE]
    assert all(block.commands() for block in CONSOLE), [b.where for b in CONSOLE if not b.commands()]


def test_every_eval_skills_command_is_in_a_console_or_text_block() -> None:
    unchecked = [f"{block.where}: {line.strip()}" for block in ALL_BLOCKS if block.lang not in ("console", "text")
                 for line in block.lines if EVAL_SKILLS_COMMAND.match(line)]
    assert unchecked == []


def test_the_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    quick = [line for line in readme.splitlines()
             if line.startswith("python3 -m venv .venv") and ("eval-skills" in line or "pytest" in line)]
    assert len(quick) == 2, quick
    test_command = quick[1].split(" && ", 2)[2]  # after creating and activating the venv
    assert test_command == "pip install '.[test]' && pytest"
    assert test_command in ci.splitlines()
    assert "mkdocs build --strict" in ci


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    named = set(re.findall(r":\s*([\w./-]+\.md)\s*$", nav, re.M))
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert named == pages


def output_matches(expected: list[str], output: str) -> str | None:
    """None when every expected line appears in order; else the first one that does not."""
    position = 0
    for line in expected:
        pattern = ".*".join(re.escape(part) for part in line.strip().split("..."))
        found = re.compile(pattern).search(output, position)
        if found is None:
            return line
        position = found.end()
    return None


def workdir(tmp_path: Path) -> Path:
    """A copy of the repository's examples, where the commands run and write."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", "*-workspace", "walkthrough-output"))
    return tmp_path


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "EVAL_SKILLS_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", COLUMNS="200",
               NO_COLOR="1", HOME=str(home), EVAL_SKILLS_HOME=str(home / ".eval-skills"), PYTHON=sys.executable)
    return env


def params() -> list:
    return [pytest.param(block, id=block.where, marks=[pytest.mark.slow] if block.slow else [])
            for block in CONSOLE]


@pytest.mark.parametrize("block", params())
def test_console_block_runs_as_shown(block: Block, tmp_path: Path) -> None:
    cwd = workdir(tmp_path / "repo")
    env = environment(tmp_path / "home")
    for command in block.commands():
        done = subprocess.run(["bash", "-c", command.line], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300)
        output = done.stdout + done.stderr
        assert done.returncode == command.exit_code, f"{block.where}: $ {command.line}\n{output[-3000:]}"
        missing = output_matches(command.expected, output)
        assert missing is None, f"{block.where}: $ {command.line}\nnot shown: {missing}\n{output[-3000:]}"


def test_output_matching_follows_the_convention() -> None:
    output = "first line\nscore 0.75 of 3\nlast\n"
    assert output_matches(["score ... of 3", "last"], output) is None
    assert output_matches(["last", "first line"], output) == "first line"  # in order
    assert output_matches(["score 0.80..."], output) == "score 0.80..."


@pytest.mark.slow
def test_the_readme_quick_start_installs_and_evaluates(tmp_path: Path) -> None:
    """The README's first Quick start line, as written, in a copy of the repository (needs PyPI)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = next(line for line in readme.splitlines()
                 if line.startswith("python3 -m venv .venv") and "eval-skills eval" in line)
    repo = tmp_path / "repo"
    patterns = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", "*.db*",
                                      "*-workspace", "walkthrough-output", ".mypy_cache", ".ruff_cache",
                                      ".pytest_cache", "node_modules")

    def ignore(folder: str, names: list[str]) -> set[str]:  # top-level outputs only: src/eval_skills/reports stays
        top = {"site", "reports", "tests", "bench"} & set(names) if Path(folder) == ROOT else set()
        return set(patterns(folder, names)) | top

    shutil.copytree(ROOT, repo, ignore=ignore)
    env = {k: v for k, v in environment(tmp_path / "home").items() if k != "PYTHON"}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != Path(sys.executable).parent)
    done = subprocess.run(["bash", "-c", first], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "calculator" in done.stdout
    assert list((repo / "reports").glob("eval-result-*.json"))
