"""A skill, its eval cases and the scripted model behind them, for the end-to-end tests of the real agent CLIs,
with the figures they must produce worked out by hand.

The skill ``invoice-check`` (its body holds ``INVOICE-RULES-V2``; the old copy ``INVOICE-RULES-V1``) and two cases,
each checked by ``contains "42 EUR"`` and ``contains "VAT amount"``:

    case 1  "Check the invoice in invoice.txt"   the model invokes the skill when it is listed (1 request), then
            with the new body writes notes.txt (1 request) and answers NEW (1 request), with the old body answers
            OLD (1 request); without the skill it answers PLAIN (1 request)
    case 2  "What day is it?"                    the model never invokes anything: PLAIN

    pass rates (case 1, case 2):   with_skill 1.0, 0.0 -> 0.5    old_skill 0.5, 0.0 -> 0.25    without_skill 0.0
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_clis import cli_env, cli_path
from fakes import FAKE_JUDGE
from fakes.model_server import (
    Answer,
    Call,
    ModelServer,
    Usage,
    When,
    made,
    prompt_has,
    skill_call,
    skill_listed,
    skill_loaded,
    tooled,
    write_call,
)

SKILL = "invoice-check"
NEW_MARK, OLD_MARK = "INVOICE-RULES-V2", "INVOICE-RULES-V1"
NEW = "The total is 42 EUR; VAT amount 7 EUR."
OLD = "The total is 42 EUR."
PLAIN = "I cannot tell."
NOTES = "VAT checked: 7 EUR"
SKILLS_SUBDIR = {"claude": ".claude/skills", "codex": ".agents/skills", "opencode": ".opencode/skills"}

# usage of each scripted reply: (uncached input, output, cache read, cache write)
INVOKE_USAGE = Usage(100, 10, 0, 0)
WRITE_USAGE = Usage(200, 20, 50, 30)
ANSWER_USAGE = Usage(300, 30, 0, 0)
PLAIN_USAGE = Usage(40, 4, 0, 0)

SKILL_MD = """---
name: invoice-check
description: Checks an invoice and states its total and VAT amount. Use it for invoices and receipts.
---
# Invoice check

{marker}: read the invoice, then state the total in EUR and the VAT amount.
"""


def write_skill(folder: Path, marker: str) -> Path:
    (folder / "evals" / "files").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(marker=marker))
    return folder


def invoice_skill(root: Path) -> tuple[Path, Path]:
    """The skill (with its two cases) and an old copy of it in a folder of another name."""
    skill = write_skill(root / SKILL, NEW_MARK)
    old = write_skill(root / "invoice-check-v1", OLD_MARK)
    (skill / "evals" / "files" / "invoice.txt").write_text("Invoice 7: 35 EUR + 7 EUR VAT\n")
    checks = [{"type": "contains", "value": "42 EUR"}, {"type": "contains", "value": "VAT amount"}]
    cases = [{"id": 1, "prompt": "Check the invoice in invoice.txt", "files": ["evals/files/invoice.txt"],
              "assertions": [], "selftune_assertions": checks},
             {"id": 2, "prompt": "What day is it?", "assertions": [], "selftune_assertions": checks}]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": SKILL, "evals": cases}))
    return skill, old


def script_invoice(server: ModelServer, cli: str) -> None:
    """The model of the module docstring, for ``cli``."""
    invoke = skill_call(cli, SKILL)

    def wrote(call: Call) -> bool:
        return call.made(write_call(cli, "notes.txt", NOTES, call.workdir))

    def write(call: Call) -> Answer:
        return Answer(tools=(write_call(cli, "notes.txt", NOTES, call.workdir),), usage=WRITE_USAGE)

    server.rule(tooled() & skill_listed(SKILL) & prompt_has("invoice.txt") & ~made(invoke),
                Answer(tools=(invoke,), usage=INVOKE_USAGE), name="invoke")
    server.rule(tooled() & skill_loaded(NEW_MARK) & ~When(wrote, "wrote notes.txt"), write, name="write")
    server.rule(tooled() & skill_loaded(NEW_MARK), Answer(NEW, usage=ANSWER_USAGE), name="new answer")
    server.rule(tooled() & skill_loaded(OLD_MARK), Answer(OLD, usage=ANSWER_USAGE), name="old answer")
    server.rule(tooled(), Answer(PLAIN, usage=PLAIN_USAGE), name="plain")


def first_requests(server: ModelServer) -> list[Call]:
    """The first agent request of every run (the prompt, nothing answered yet)."""
    return [call for call in server.agent_calls() if not call.tool_calls and call.last_role == "user"]


def eval_skills(command: str, *args: Any, cli: str, server: ModelServer, cwd: Path, home: Path,
                timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``eval-skills COMMAND --agent CLI ...`` as a real process, the CLI pointed at ``server`` with its own
    ``home``; the fake judge judges (deterministic checks only need none)."""
    full_env = {**os.environ, **cli_env(cli, server, home), "EVAL_SKILLS_DEBUG": "", **(env or {})}
    argv = [sys.executable, "-m", "eval_skills", command, "--agent", cli, "--agent-bin", str(cli_path(cli)),
            *map(str, args)]
    if command == "paired":
        argv += ["--judge-cmd", f"{sys.executable} {FAKE_JUDGE}"]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full_env)


def runs(iteration: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """``timing.json`` of every run of an iteration by (case id, arm), with the run's folder as ``_folder``."""
    found = {}
    for timing in iteration.glob("eval-*/*/run-1/timing.json"):
        run = timing.parent
        found[(run.parent.parent.name.removeprefix("eval-"), run.parent.name)] = {
            **json.loads(timing.read_text()), "_folder": run}
    return found


def cost(usage: Usage | tuple[int, int, int, int], prices: dict[str, float]) -> float:
    """USD of ``usage`` at ``prices`` per million tokens (input, output, cache_read, cache_write)."""
    if isinstance(usage, Usage):
        usage = (usage.input, usage.output, usage.cache_read, usage.cache_write)
    kinds = ("input", "output", "cache_read", "cache_write")
    return sum(n * prices[k] for n, k in zip(usage, kinds, strict=True)) / 1e6
