"""What Anthropic's skill-creator reads from a workspace, as facts the tests apply to our files.

Read from its ``scripts/aggregate_benchmark.py`` and ``eval-viewer/generate_review.py`` at the commit below
(CI cannot reach its repository, and its code is not ours to copy: these functions state the rules, they do not
reproduce the scripts).

The aggregator, given ``iteration-<n>/``:
- a case is a folder ``eval-*``; a configuration is a folder of a case holding ``run-*`` folders; a run counts
  only when its folder holds ``grading.json``;
- pass rate: ``summary.pass_rate`` (0.0 when the key is absent; a null would stop it);
- time: ``timing.total_duration_seconds`` of grading.json, else (when that is 0) ``total_duration_seconds`` of
  the run's ``timing.json``, and then tokens from that ``timing.json``'s ``total_tokens``; when tokens are 0 or
  missing, ``execution_metrics.output_chars`` of grading.json, else 0;
- tool calls: ``execution_metrics.total_tool_calls``; statistics: mean, sample stddev, min, max, rounded to 4.

The viewer, given the same folder:
- a run is every folder holding ``outputs/`` (it does not look inside a run; it skips ``node_modules``,
  ``.git``, ``__pycache__``, ``skill`` and ``inputs``); its id is its path relative to the folder, ``/`` as ``-``;
- the prompt and eval id: ``eval_metadata.json`` in the run folder, else in its parent;
- the files shown: the regular files directly in ``outputs/`` except ``transcript.md``, ``user_notes.md`` and
  ``metrics.json``;
- the grades: ``grading.json`` in the run folder, else in its parent.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

SKILL_CREATOR_COMMIT = "9d2f1ae187231d8199c64b5b762e1bdf2244733d"  # anthropics/skills
VIEWER_SKIPS = {"node_modules", ".git", "__pycache__", "skill", "inputs"}
VIEWER_METADATA_FILES = {"transcript.md", "user_notes.md", "metrics.json"}


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {"mean": round(mean, 4), "stddev": round(sd, 4), "min": round(min(values), 4),
            "max": round(max(values), 4)}


def aggregator_runs(iteration: Path) -> dict[str, list[dict[str, Any]]]:
    """Per configuration, the runs the aggregator counts, with the figures it takes from each."""
    found: dict[str, list[dict[str, Any]]] = {}
    for case in sorted(iteration.glob("eval-*")):
        for config in sorted(p for p in case.iterdir() if p.is_dir()):
            runs = sorted(config.glob("run-*"))
            if not runs:
                continue
            for run in runs:
                if not (run / "grading.json").exists():
                    continue
                grading = json.loads((run / "grading.json").read_text())
                summary = grading.get("summary", {})
                rate = summary.get("pass_rate", 0.0)
                assert rate is not None, f"{run}: a null pass_rate stops skill-creator's aggregator"
                time = grading.get("timing", {}).get("total_duration_seconds", 0.0)
                tokens = 0
                if time == 0.0 and (run / "timing.json").exists():
                    timing = json.loads((run / "timing.json").read_text())
                    time = timing.get("total_duration_seconds", 0.0)
                    tokens = timing.get("total_tokens", 0)
                metrics = grading.get("execution_metrics", {})
                if not tokens:
                    tokens = metrics.get("output_chars", 0)
                found.setdefault(config.name, []).append({
                    "run": run, "pass_rate": rate, "time_seconds": time, "tokens": tokens,
                    "tool_calls": metrics.get("total_tool_calls", 0)})
    return found


def aggregator_summary(iteration: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Per configuration, ``{pass_rate, time_seconds, tokens}`` as ``{mean, stddev, min, max}``."""
    return {config: {key: _stats([float(r[key]) for r in runs]) for key in ("pass_rate", "time_seconds", "tokens")}
            for config, runs in aggregator_runs(iteration).items()}


def viewer_runs(iteration: Path) -> list[dict[str, Any]]:
    """Each run the viewer finds: id, prompt, eval id, the file names it shows, its grading (or None)."""
    runs: list[dict[str, Any]] = []

    def walk(folder: Path) -> None:
        if (folder / "outputs").is_dir():
            prompt, eval_id = "", None
            for candidate in (folder / "eval_metadata.json", folder.parent / "eval_metadata.json"):
                if candidate.exists():
                    meta = json.loads(candidate.read_text())
                    prompt, eval_id = meta.get("prompt", ""), meta.get("eval_id")
                    if prompt:
                        break
            grading = None
            for candidate in (folder / "grading.json", folder.parent / "grading.json"):
                if candidate.exists():
                    grading = json.loads(candidate.read_text())
                    break
            shown = sorted(p.name for p in (folder / "outputs").iterdir()
                           if p.is_file() and p.name not in VIEWER_METADATA_FILES)
            runs.append({"id": folder.relative_to(iteration).as_posix().replace("/", "-"), "prompt": prompt,
                         "eval_id": eval_id, "files": shown, "grading": grading})
            return
        for child in sorted(folder.iterdir()):
            if child.is_dir() and child.name not in VIEWER_SKIPS:
                walk(child)

    walk(iteration)
    return runs
