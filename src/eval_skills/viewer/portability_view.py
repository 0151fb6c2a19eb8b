"""The per-agent table of the review page: when the iteration reviewed is one agent's of a run on several agents
(``<skill>-workspace/agents/<agent>/iteration-<n>``), the latest ``portability-<k>.json`` beside the agents'
folders that holds it, shown as ``portability-<k>.md`` is: the verdict, each agent's delta and interval, and the
agent x arm interaction of every pair."""

from __future__ import annotations

import re
from pathlib import Path, PurePath
from typing import Any

from ..formats.portability import Portability
from .files import read_model

__all__ = ["portability_context"]

_REPORT = re.compile(r"portability-(\d{1,9})\.json")
AGENTS_DIR = "agents"


def _reports(folder: Path) -> list[Path]:
    """The ``portability-<k>.json`` files of ``folder``, latest first (symlinks left out)."""
    try:
        found = [(int(m.group(1)), p) for p in folder.iterdir()
                 if (m := _REPORT.fullmatch(p.name)) and p.is_file() and not p.is_symlink()]
    except OSError:
        return []
    return [p for _, p in sorted(found, reverse=True)]


def portability_context(root: Path, iteration: Path | None) -> dict[str, Any] | None:
    """What the page shows of the report that holds ``iteration`` of the agent workspace ``root`` (None when
    the workspace is not one agent's of several, or no report holds it); ``problems`` names a report that
    cannot be read."""
    if iteration is None or root.parent.name != AGENTS_DIR:
        return None
    problems = []
    for path in _reports(root.parent):
        report, problem = read_model(path, Portability, f"{AGENTS_DIR}/{path.name}")
        if report is None:
            problems += [problem] if problem else []
            continue
        if any(a.agent == root.name and PurePath(a.iteration).name == iteration.name for a in report.agents):
            return {"file": path.with_suffix(".md").name, "report": report, "current": root.name,
                    "problems": problems}
    return {"file": None, "report": None, "current": root.name, "problems": problems} if problems else None
