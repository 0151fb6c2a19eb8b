"""A skill, its eval cases and an agent script for the paired-run tests, with the numbers they must produce
worked out by hand in the docstring of :func:`invoice_skill`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fakes import FAKE_AGENT, FAKE_JUDGE

SKILL_MD = """---
name: invoice-check
description: Checks an invoice and states its total and VAT amount. Use it for invoices and receipts.
---
# Invoice check ({version})

Read the invoice, then state the total in EUR and the VAT amount.
"""

V2_ANSWER = "The total is 42 EUR; VAT amount 7 EUR."  # passes every assertion
V1_ANSWER = "The total is 42 EUR."  # misses the VAT amount
PLAIN = "plain answer"  # without the skill: misses everything

ASSERTIONS = ['It states "42 EUR"', 'It gives the "VAT amount"']
SELFTUNE = [{"type": "contains", "value": "EUR"}, {"type": "tool_called", "value": "Read"}]
CHECK_TEXTS = ['contains "EUR"', 'tool_called "Read"']
EXPECTED = "The total and the VAT amount"  # the fake judge's compare counts the words "total" and "amount"


def write_skill(folder: Path, version: str) -> Path:
    (folder / "evals" / "files").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(version=version))
    return folder


def invoice_skill(root: Path) -> tuple[Path, Path, Path]:
    """The skill (version 2), an old copy (version 1) in a folder of another name, and the agent script.

    Eight cases, each run twice per arm, with_skill (v2) against old_skill (v1). The assertions are
    ASSERTIONS (judged) then the two SELFTUNE checks; the fake agent reads SKILL.md (a ``Read`` call) whenever
    a skill is installed. Per case (pass rates with_skill / old_skill, per-case delta):

    1-4 invoice   v2 answer 1.0 / v1 answer 0.75 (VAT missed)                +0.25
    5   receipt   versions swapped: 0.75 / 1.0                               -0.25
    6   summary   both give the v2 answer; an extra assertion nobody passes: 0.8 / 0.8     0
    7   broken    the old version exits with an error: 1.0 / error runs      left out
    8   flaky     v2 answers the v1 answer every second run: (1.0 + 0.75) / 2 = 0.875 / 0.75   +0.125
    """
    skill = write_skill(root / "invoice-check", "version 2")
    old = write_skill(root / "invoice-check-v1", "version 1")
    (skill / "evals" / "files" / "invoice.txt").write_text("Invoice 7: 35 EUR + 7 EUR VAT\n")
    (skill / "evals" / "files" / "notes").mkdir()
    (skill / "evals" / "files" / "notes" / "terms.txt").write_text("Payment in 30 days\n")

    def case(key: int, word: str, extra: list[str] | None = None) -> dict[str, Any]:
        return {"id": key, "prompt": f"Check the {word} {key} in invoice.txt", "expected_output": EXPECTED,
                "files": ["evals/files/invoice.txt", "evals/files/notes/terms.txt"],
                "assertions": ASSERTIONS + (extra or []), "selftune_assertions": SELFTUNE}

    cases = [case(i, "invoice") for i in range(1, 5)]
    cases += [case(5, "receipt"), case(6, "summary", ['It cites "section 14"']), case(7, "broken"),
              case(8, "flaky")]
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "invoice-check", "evals": cases}))
    script = {
        "skill": "invoice-check", "answer": PLAIN, "usage": {"input_tokens": 10, "output_tokens": 5},
        "log": str(root / "agent-log.jsonl"),
        "skill_answers": [{"when": "version 2", "skilled_answer": V2_ANSWER},
                          {"when": "version 1", "skilled_answer": V1_ANSWER}],
        "cases": [
            {"match": "receipt", "skill_answers": [{"when": "version 2", "skilled_answer": V1_ANSWER},
                                                   {"when": "version 1", "skilled_answer": V2_ANSWER}]},
            {"match": "summary", "skill_answers": [{"when": "version", "skilled_answer": V2_ANSWER}]},
            {"match": "broken", "skill_answers": [{"when": "version 2", "skilled_answer": V2_ANSWER},
                                                  {"when": "version 1", "mode": "exit"}]},
            {"match": "flaky", "skill_answers": [
                {"when": "version 2", "skilled_answer": V2_ANSWER, "alternate_answer": V1_ANSWER,
                 "counter_file": str(root / "flaky-counter.json")},
                {"when": "version 1", "skilled_answer": V1_ANSWER}]},
        ],
    }
    script_file = root / "agent.json"
    script_file.write_text(json.dumps(script))
    return skill, old, script_file


def agent_args(script_file: Path) -> list[str]:
    return ["--agent-cmd", f"{sys.executable} {FAKE_AGENT} --prompt-file {{prompt_file}}", "--agent-output",
            "events"]


def judge_args(mode: str = "") -> list[str]:
    return ["--judge-cmd", f"{sys.executable} {FAKE_JUDGE}"]


def paired(*args: Any, cwd: Path, script_file: Path | None = None, judge_mode: str = "",
           judge_log: Path | None = None, timeout: float = 120,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``eval-skills paired ...`` in a subprocess, with the fake agent's script and the fake judge's mode."""
    env = {**os.environ, "FAKE_JUDGE_MODE": judge_mode, "EVAL_SKILLS_DEBUG": "", **(env or {})}
    if script_file is not None:
        env["FAKE_AGENT_CONFIG"] = str(script_file)
    if judge_log is not None:
        env["FAKE_JUDGE_LOG"] = str(judge_log)
    return subprocess.run([sys.executable, "-m", "eval_skills", "paired", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=env)


def popen_paired(*args: Any, cwd: Path, script_file: Path, judge_log: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "FAKE_AGENT_CONFIG": str(script_file), "FAKE_JUDGE_MODE": ""}
    if judge_log is not None:
        env["FAKE_JUDGE_LOG"] = str(judge_log)
    return subprocess.Popen([sys.executable, "-m", "eval_skills", "paired", *map(str, args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
