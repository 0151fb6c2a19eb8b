"""A paired iteration made by the real `eval-skills paired` (the fake agent and the fake judge programs), and
`eval-skills regrade` in a subprocess: what the regrade and judge-trust tests start from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from paired_data import agent_args, invoice_skill, judge_args, paired


def count(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def make_iteration(tmp_path: Path, cases: tuple[int, ...] = (1, 5)) -> tuple[Path, Path, Path]:
    """A paired iteration of the invoice skill's ``cases`` (one run per arm), graded by the fake judge. Returns
    the skill, the workspace and its iteration-1 folder."""
    skill, _, script = invoice_skill(tmp_path)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"] = [c for c in evals["evals"] if c["id"] in cases]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    out = paired("--skill-path", skill, *agent_args(script), *judge_args(), "--store", tmp_path / "s.db",
                 cwd=tmp_path, script_file=script, judge_log=tmp_path / "judge-1.jsonl")
    assert out.returncode == 0, out.stderr
    workspace = tmp_path / "invoice-check-workspace"
    return skill, workspace, workspace / "iteration-1"


def regrade(*args: object, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "EVAL_SKILLS_DEBUG": "", "FAKE_JUDGE_MODE": "", **(env or {})}
    return subprocess.run([sys.executable, "-m", "eval_skills", "regrade", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=full)
