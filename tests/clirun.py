"""Running the command line in tests: in this process (fast) or as a real process (signals, start-up)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from eval_skills.cli import cli

ROOT = Path(__file__).resolve().parents[1]
CALCULATOR = ROOT / "examples" / "skills" / "calculator"


@contextmanager
def _cwd(path: Path | None) -> Any:
    before = Path.cwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run(*args: Any, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """``eval-skills ARGS`` in this process; ``result.stdout``, ``.stderr``, ``.exit_code``."""
    with _cwd(cwd):
        return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False,
                                   prog_name="eval-skills")


def process(*args: Any, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``eval-skills ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})
