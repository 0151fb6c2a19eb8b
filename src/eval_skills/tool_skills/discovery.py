"""What is known about skills: the ``skill.json`` files of a folder, search over them, and their past
evaluations in the results store (``find``, ``history``, and the reports ``select`` falls back to).

The store is only read here, and only when its file exists: looking never creates a store.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats.skill import Skill, SkillManifest, find_skill_files, load_skill

__all__ = ["Found", "ScanResult", "find_skills", "history", "latest_reports", "relevance", "scan_skills"]

# weights of a query word found in each field (whole word / part of a word)
WEIGHTS = {"name": (3.0, 1.5), "tags": (2.0, 1.0), "description": (1.0, 0.5)}
PHRASE_BONUS = {"name": 3.0, "description": 1.0}


@dataclass
class ScanResult:
    skills: list[Skill]
    problems: list[str] = field(default_factory=list)  # skill.json files that could not be read, one line each


def scan_skills(root: Path) -> ScanResult:
    """Every loadable ``skill.json`` below ``root``. A missing folder is an InputError; a broken file is
    listed in ``problems`` and skipped, so one bad skill does not hide the others."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("skills folder not found" if not root.exists() else "is not a folder", file=str(root),
                         hint="pass --skills-dir with the folder holding your skills")
    result = ScanResult([])
    seen: set[str] = set()
    for path in find_skill_files(root):
        try:
            skill = load_skill(path)
        except InputError as exc:
            result.problems.append(exc.line())
            continue
        if skill.id in seen:
            result.problems.append(f"{path}: skill id {skill.id!r} is used twice; this one is skipped")
            continue
        seen.add(skill.id)
        result.skills.append(skill)
    return result


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())  # snake_case and kebab-case names split into words


def relevance(manifest: SkillManifest, query: str) -> float:
    """How well a skill matches a query: per query word, the weight of each field it is found in (a whole
    word counts fully, part of a word half), plus a bonus when the whole query appears in the name or the
    description. 0 means no match."""
    fields = {"name": f"{manifest.id} {manifest.name}", "tags": " ".join(manifest.tags),
              "description": manifest.description}
    words = {name: set(_words(text)) for name, text in fields.items()}
    score = 0.0
    for term in dict.fromkeys(_words(query)):
        for name, (whole, part) in WEIGHTS.items():
            if term in words[name]:
                score += whole
            elif any(term in word for word in words[name]):
                score += part
    phrase = " ".join(_words(query))
    if phrase and " " in phrase:
        for name, bonus in PHRASE_BONUS.items():
            if phrase in " ".join(_words(fields[name])):
                score += bonus
    return score


def _open_store(store_path: Path | None) -> Any:
    if store_path is None or not Path(store_path).is_file():
        return None
    from ..store import Store

    return Store.open(store_path)


def latest_reports(store_path: Path | None, skill_ids: Sequence[str], benchmark_id: str | None = None,
                   unfinished: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The newest finished report of each skill in the store (without task results), by skill id. A skill
    evaluated only in runs that did not finish gets the status of the newest of them in ``unfinished``."""
    store = _open_store(store_path)
    if store is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    with store:
        for skill_id in skill_ids:
            for row in store.skill_history(skill_id, benchmark_id=benchmark_id):
                if row["status"] != "finished":
                    if unfinished is not None:
                        unfinished.setdefault(skill_id, str(row["status"]))
                    continue
                reports = store.get_reports(row["evaluation_id"], with_results=False)
                match = next((r for r in reports if r.get("skillId") == skill_id), None)
                if match is not None:
                    found[skill_id] = {**match, "evaluationId": row["evaluation_id"]}
                    if unfinished is not None:
                        unfinished.pop(skill_id, None)
                    break
    return found


@dataclass
class Found:
    skill: Skill
    relevance: float | None  # None without a query
    report: dict[str, Any] | None  # the newest finished report in the store, if any
    unfinished: str | None = None  # without one: the status of its newest evaluation that did not finish

    @property
    def completion(self) -> float | None:
        value = ((self.report or {}).get("summary") or {}).get("completionRate")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def to_json(self) -> dict[str, Any]:
        m = self.skill.manifest
        report = self.report or {}
        return {"id": m.id, "name": m.name, "version": m.version, "description": m.description, "tags": m.tags,
                "adapterType": m.adapterType, "path": str(self.skill.path), "relevance": self.relevance,
                "completionRate": self.completion, "evaluated": self.report is not None,
                "unfinishedEvaluation": self.unfinished,
                "benchmarkId": report.get("benchmarkId"), "evaluatedAt": report.get("timestamp")}


def find_skills(skills: Sequence[Skill], *, query: str | None = None, tags: Sequence[str] = (),
                adapter: str | None = None, min_completion: float | None = None, limit: int | None = None,
                store_path: Path | None = None) -> list[Found]:
    """Filter (all ``tags``, the adapter type, a minimum past completion rate) and rank: by relevance when a
    query is given (skills that do not match it are left out), else by past completion rate, highest first;
    skills never evaluated come last. Ties go by id."""
    wanted = {t.casefold() for t in tags}
    picked = [s for s in skills if wanted <= {t.casefold() for t in s.manifest.tags}
              and (adapter is None or s.manifest.adapterType == adapter)]
    unfinished: dict[str, str] = {}
    reports = latest_reports(store_path, [s.id for s in picked], unfinished=unfinished)
    found = [Found(s, relevance(s.manifest, query) if query else None, reports.get(s.id), unfinished.get(s.id))
             for s in picked]
    if query:
        found = [f for f in found if f.relevance]
    if min_completion is not None:
        found = [f for f in found if f.completion is not None and f.completion >= min_completion]
    found.sort(key=lambda f: (-(f.relevance or 0.0), f.completion is None, -(f.completion or 0.0), f.skill.id))
    return found[:limit] if limit is not None else found


def history(store_path: Path, skill_id: str, benchmark_id: str | None = None,
            limit: int | None = None) -> list[dict[str, Any]]:
    """The skill's evaluations, newest first: date, benchmark, version, status, completion rate, P95, composite,
    and the change of completion rate and composite from the evaluation before on the same benchmark."""
    if not Path(store_path).is_file():
        raise InputError("results store not found", file=str(store_path), hint="check --store, or run eval first")
    store = _open_store(store_path)
    with store:
        rows = store.skill_history(skill_id, benchmark_id=benchmark_id)
        if not rows and benchmark_id is None:  # a skill this store never saw: a name given wrong
            known = store.skill_ids()
            close = difflib.get_close_matches(skill_id, known, n=1, cutoff=0.6)
            listing = ", ".join(known[:12]) + (f" (+{len(known) - 12} more)" if len(known) > 12 else "")
            hint = (f"did you mean {close[0]!r}? " if close else "") + (
                f"skills it holds: {listing}" if known else "it holds no evaluation yet: run eval first")
            raise InputError(f"no evaluation of a skill {skill_id!r} in this store", file=str(store_path),
                             field="--skill", hint=hint)
        out = []
        for row in rows:
            report: dict[str, Any] = next((r for r in store.get_reports(row["evaluation_id"], with_results=False)
                           if r.get("skillId") == skill_id), {})
            latency = report.get("latency") or {}
            out.append({"evaluationId": row["evaluation_id"], "startedAt": row["started_at"],
                        "status": row["status"], "benchmarkId": row["benchmark_id"],
                        "skillVersion": row["skill_version"], "completionRate": row["completion_rate"],
                        "p95Ms": latency.get("p95Ms"), "compositeScore": row["composite_score"],
                        "completionChange": None, "compositeChange": None})
    for index, entry in enumerate(out):
        before = next((o for o in out[index + 1:] if o["benchmarkId"] == entry["benchmarkId"]), None)
        if before is None:
            continue
        for key, change in (("completionRate", "completionChange"), ("compositeScore", "compositeChange")):
            if entry[key] is not None and before[key] is not None:
                entry[change] = round(entry[key] - before[key], 4)
    return out[:limit] if limit is not None else out
