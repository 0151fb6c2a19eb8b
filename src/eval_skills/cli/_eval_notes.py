"""What ``eval`` and ``run`` say beside the summary table: the tasks that failed and why, and which timeout
each task really gets (a task's own ``timeoutMs`` wins over ``--timeout``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from ..formats.untrusted import shown_text

SHOWN_FAILURES = 10


def _first_line(text: str | None, limit: int = 160) -> str:
    line = next((part.strip() for part in (text or "").splitlines() if part.strip()), "")
    line = shown_text(line)
    return line if len(line) <= limit else line[:limit - 1] + "…"


def failure_lines(results: list[Any], report_files: list[Path], *, shown: int = SHOWN_FAILURES) -> list[str]:
    """The tasks that did not pass (skill, task, run, status, the reason's first line), at most ``shown``,
    and where the full list is. [] when every task passed."""
    failed = [r for r in results if r.status != "pass"]
    if not failed:
        return []
    failed.sort(key=lambda r: (r.skill_id, r.task_id, r.run_id))
    runs = len({r.run_id for r in results}) > 1
    lines = [f"{len(failed)} of {len(results)} tasks did not pass:"]
    for r in failed[:shown]:
        where = f"{r.skill_id} / {r.task_id}" + (f" run {r.run_id}" if runs else "")
        reason = _first_line(r.error) or _first_line(r.reason) or "no reason given"
        lines.append(f"  {where}: {r.status}: {reason}")
    json_files = [p for p in report_files if p.suffix == ".json"]
    if len(failed) > shown:
        where = (f"in {json_files[0]} (each task's status and error)" if json_files
                 else "with --json, or with --format json in the report")
        lines.append(f"  ... and {len(failed) - shown} more: all of them {where}")
    elif json_files:
        lines.append(f"  (each task's output and error: {json_files[0]})")
    return lines


def timeout_lines(plan: Any, settings: Any) -> list[str]:
    """The per-task timeout every skill's tasks really get, one line per skill: ``timeout 10000 ms (20 tasks,
    their own timeoutMs)``. A task's own ``timeoutMs`` wins over ``--timeout`` and the config file, which win over
    the skill's ``adapter.config.json``, which wins over the default."""
    lines = []
    for skill in plan.skills:
        counts: Counter[tuple[int, str]] = Counter()
        for planned in plan.tasks:
            effective = settings.timeout_for(planned.timeout_ms, skill.adapter.timeoutMs)
            if planned.timeout_ms:
                source = "their own timeoutMs"
            elif settings.timeout_override_ms:
                source = "--timeout or the config file"
            elif skill.adapter.timeoutMs:
                source = "the skill's adapter.config.json timeoutMs"
            else:
                source = "the default"
            counts[(effective, source)] += 1
        parts = [f"{ms} ms ({n} task{'s' if n != 1 else ''}, {source})" for (ms, source), n in sorted(counts.items())]
        lines.append(f"timeout per task for {skill.id}: " + "; ".join(parts))
    return lines


def overridden_timeout_note(plan: Any, settings: Any) -> str | None:
    """One line when tasks' own ``timeoutMs`` replace the ``--timeout`` (or config file timeout) the user chose,
    else None."""
    chosen = settings.timeout_override_ms
    if not chosen:
        return None
    own = [p.timeout_ms for p in plan.tasks if p.timeout_ms and p.timeout_ms != chosen]
    if not own:
        return None
    values = sorted(set(own))
    shown = ", ".join(f"{v} ms" for v in values[:3]) + (", ..." if len(values) > 3 else "")
    return (f"note: {len(own)} of {len(plan.tasks)} tasks set their own timeoutMs ({shown}), which wins over "
            f"--timeout {chosen} for them (edit the benchmark's timeoutMs to change it; -v --dry-run lists every "
            "task's timeout)")
