"""``none``: no confinement. The program runs as you, with your environment and your home folder.

Each run still has its own private folder (see :mod:`eval_skills.agents.workdir`), so nothing a run leaves in it
reaches another run, and its skills are written from the bytes read at the start, so a run that changes its
installed copy changes nothing else; but a run that searches the disk finds what you can read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .base import RunPaths, Sandbox

__all__ = ["NoSandbox"]


class NoSandbox(Sandbox):
    kind = "none"
    private_home = False

    def check(self) -> None:
        return None

    def command(self, argv: Sequence[str], run: RunPaths, env: Mapping[str, str]) -> list[str]:
        return list(argv)

    def environment(self, env: Mapping[str, str], names: Iterable[str], run: RunPaths) -> dict[str, str]:
        return dict(env)

    def home_inside(self, run: RunPaths) -> Path:
        return Path.home()

    def exposes(self, path: Path) -> bool:
        return True

    def describe(self, variables: Iterable[str], home_files: Iterable[str]) -> dict[str, Any]:
        return {"sandbox": "none", "home": "user", "home_files": [], "environment": "inherited",
                "variables": None, "network": "host", "binds": []}
