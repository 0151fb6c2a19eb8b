"""Selecting skills: filter candidates by their evaluation reports, rank them, keep the top K.

Pure functions over loaded skills and report dicts; the CLI finds the skills and the reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..formats.skill import Skill
from ..formats.strategy import Strategy
from ..reports._format import num as _num

__all__ = ["Selection", "metrics_of", "newest_by_skill", "select_skills"]


def metrics_of(report: Mapping[str, Any]) -> dict[str, float | None]:
    """The numbers a strategy looks at, from a SkillCompletionReport (None when missing)."""
    def part(key: str) -> Mapping[str, Any]:
        value = report.get(key)
        return value if isinstance(value, dict) else {}

    summary, latency, tokens = part("summary"), part("latency"), part("tokenCost")
    return {"completionRate": _num(summary.get("completionRate")), "errorRate": _num(summary.get("errorRate")),
            "compositeScore": _num(summary.get("compositeScore")), "latency": _num(latency.get("p95Ms")),
            "tokenCost": _num(tokens.get("totalTokens"))}


def newest_by_skill(reports: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """One report per skill id: the one with the latest ``timestamp`` (ISO text), the later one on a tie."""
    out: dict[str, dict[str, Any]] = {}
    for report in reports:
        skill_id = str(report.get("skillId"))
        stamp = str(report.get("timestamp") or "")
        if skill_id not in out or stamp >= str(out[skill_id].get("timestamp") or ""):
            out[skill_id] = dict(report)
    return out


@dataclass
class Selection:
    selected: list[dict[str, Any]]
    excluded: list[dict[str, Any]]
    strategy: Strategy

    def to_json(self) -> dict[str, Any]:
        return {"strategy": self.strategy.model_dump(), "selected": self.selected, "excluded": self.excluded}


def _why_not(skill: Skill, metrics: dict[str, float | None], strategy: Strategy) -> str | None:
    f = strategy.filters
    m = skill.manifest
    checks = [
        (f.minCompletionRate, "completionRate", lambda v, lim: v >= lim, "completion rate {v} below {lim}"),
        (f.maxErrorRate, "errorRate", lambda v, lim: v <= lim, "error rate {v} above {lim}"),
        (f.maxLatencyP95Ms, "latency", lambda v, lim: v <= lim, "P95 latency {v} ms above {lim} ms"),
    ]
    for limit, key, ok, message in checks:
        if limit is None:
            continue
        value = metrics[key]
        if value is None:
            return f"no {key} in its report"
        if not ok(value, limit):
            return message.format(v=f"{value:g}", lim=f"{limit:g}")
    if f.adapterTypes and m.adapterType not in f.adapterTypes:  # an empty list is no filter, as in the original
        return f"adapter type {m.adapterType} not in {', '.join(f.adapterTypes)}"
    missing = [t for t in f.requiredTags or [] if t not in m.tags]
    if missing:
        return "missing tag(s) " + ", ".join(missing)
    return None


def select_skills(skills: Sequence[Skill], reports: Mapping[str, Mapping[str, Any]], strategy: Strategy) -> Selection:
    """Filter -> rank by ``strategy.sortBy`` (missing values last, then by id) -> top K."""
    kept: list[tuple[Skill, dict[str, Any], dict[str, float | None]]] = []
    excluded: list[dict[str, Any]] = []
    for skill in skills:
        report = reports.get(skill.id)
        if report is None:
            excluded.append({"skillId": skill.id, "path": str(skill.path), "reason": "no evaluation report"})
            continue
        if report.get("interrupted") is True:
            excluded.append({"skillId": skill.id, "path": str(skill.path),
                             "reason": "its evaluation was interrupted (partial results are not ranked)"})
            continue
        metrics = metrics_of(report)
        reason = _why_not(skill, metrics, strategy)
        if reason is not None:
            excluded.append({"skillId": skill.id, "path": str(skill.path), "reason": reason})
        else:
            kept.append((skill, dict(report), metrics))
    sign = -1.0 if strategy.descending else 1.0
    kept.sort(key=lambda item: (item[2][strategy.sortBy] is None, sign * (item[2][strategy.sortBy] or 0.0),
                                item[0].id))
    if strategy.topK is not None:
        for skill, _, _ in kept[strategy.topK:]:
            excluded.append({"skillId": skill.id, "path": str(skill.path), "reason": f"below the top {strategy.topK}"})
        kept = kept[: strategy.topK]
    selected = []
    for rank, (skill, report, metrics) in enumerate(kept, start=1):
        m = skill.manifest
        selected.append({"rank": rank, "skillId": m.id, "name": m.name, "version": m.version,
                         "adapterType": m.adapterType, "tags": m.tags, "path": str(skill.path),
                         "benchmarkId": report.get("benchmarkId"), "reportTimestamp": report.get("timestamp"),
                         "completionRate": metrics["completionRate"], "errorRate": metrics["errorRate"],
                         "latencyP95Ms": metrics["latency"], "compositeScore": metrics["compositeScore"],
                         "totalTokens": metrics["tokenCost"]})
    return Selection(selected, excluded, strategy)
