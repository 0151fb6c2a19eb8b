"""Comparing two report files: per skill the change of each headline metric, and per task the status changes.

Metrics are compared with four decimals for rates and scores (a change of 0.001 shows as ``+0.0010``) and one
decimal of a millisecond for P95 (two more when a change would round to zero). A higher completion rate or
composite score is better; a higher error rate or P95 latency is worse. Skills found in one report only are
listed, never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._format import mapping, num, tasks, text
from .markdown import md_cell, md_table

__all__ = ["METRICS", "diff_reports", "regressions", "render_diff_markdown"]

# key, label, where in a report, places, higher is better
METRICS = (("completionRate", "Completion rate", ("summary", "completionRate"), 4, True),
           ("errorRate", "Error rate", ("summary", "errorRate"), 4, False),
           ("p95Ms", "P95 latency (ms)", ("latency", "p95Ms"), 1, False),
           ("compositeScore", "Composite", ("summary", "compositeScore"), 4, True))
EPSILON = 1e-9


def _metric(report: dict[str, Any], where: tuple[str, str]) -> float | None:
    return num(mapping(report.get(where[0])).get(where[1]))


def _by_skill(reports: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for report in reports:  # a skill listed twice: the later entry wins
        out[text(report.get("skillId"))] = report
    return out


def _verdict(delta: float | None, higher_is_better: bool) -> str:
    if delta is None:
        return "n/a"
    if abs(delta) < EPSILON:
        return "same"
    return "better" if (delta > 0) == higher_is_better else "worse"


def _task_changes(skill: str, a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    before = {(text(t.get("taskId")), text(t.get("runId"))): t for t in tasks(a)}
    after = {(text(t.get("taskId")), text(t.get("runId"))): t for t in tasks(b)}
    changes: list[dict[str, Any]] = []
    for key in [k for k in after if k in before]:
        was, now = text(before[key].get("status")), text(after[key].get("status"))
        if was == now:
            continue
        change = ("newly passing" if now == "pass" else "newly failing" if was == "pass" else "status changed")
        changes.append({"skillId": skill, "taskId": key[0], "runId": key[1], "before": was, "after": now,
                        "change": change, "reason": text(after[key].get("error") or after[key].get("reason"))})
    for key in [k for k in after if k not in before]:
        changes.append({"skillId": skill, "taskId": key[0], "runId": key[1], "before": None,
                        "after": text(after[key].get("status")), "change": "new task", "reason": ""})
    for key in [k for k in before if k not in after]:
        changes.append({"skillId": skill, "taskId": key[0], "runId": key[1], "before": text(before[key].get("status")),
                        "after": None, "change": "removed task", "reason": ""})
    return changes


def diff_reports(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"skills": [{skillId, metrics: {key: {a, b, delta, verdict}}}], "onlyInA", "onlyInB",
    "taskChanges": [{skillId, taskId, runId, before, after, change, reason}]}``."""
    left, right = _by_skill(a), _by_skill(b)
    skills = []
    changes: list[dict[str, Any]] = []
    for skill in [s for s in left if s in right]:
        metrics = {}
        for key, _, where, places, higher_is_better in METRICS:
            va, vb = _metric(left[skill], where), _metric(right[skill], where)
            delta = None if va is None or vb is None else round(vb - va, places + 2)
            metrics[key] = {"a": va, "b": vb, "delta": delta, "verdict": _verdict(delta, higher_is_better)}
        skills.append({"skillId": skill, "versionA": left[skill].get("skillVersion"),
                       "versionB": right[skill].get("skillVersion"), "benchmarkA": left[skill].get("benchmarkId"),
                       "benchmarkB": right[skill].get("benchmarkId"),
                       "benchmarkVersionA": left[skill].get("benchmarkVersion"),
                       "benchmarkVersionB": right[skill].get("benchmarkVersion"), "metrics": metrics})
        changes += _task_changes(skill, left[skill], right[skill])
    return {"skills": skills, "onlyInA": [s for s in left if s not in right],
            "onlyInB": [s for s in right if s not in left], "taskChanges": changes}


def regressions(diff: dict[str, Any], threshold: float) -> list[tuple[str, float | None]]:
    """Skills whose completion rate dropped by more than ``threshold``: ``[(skillId, drop)]``; the drop is None
    for a skill that had a completion rate in A and has none in B (no task of it finished), which a gate
    must not let pass."""
    found: list[tuple[str, float | None]] = []
    for skill in diff["skills"]:
        rate = skill["metrics"]["completionRate"]
        if rate["delta"] is not None and -rate["delta"] > threshold + EPSILON:
            found.append((skill["skillId"], -rate["delta"]))
        elif rate["a"] is not None and rate["b"] is None:
            found.append((skill["skillId"], None))
    return found


def _value(value: float | None, places: int) -> str:
    return "n/a" if value is None else f"{value:.{places}f}"


def _delta(delta: float | None, places: int, verdict: str) -> str:
    if delta is None:
        return "n/a"
    arrow = "→" if verdict == "same" else ("▲" if delta > 0 else "▼")
    note = "" if verdict == "same" else f" ({verdict})"
    if verdict != "same" and round(delta, places) == 0:
        places += 2  # a change too small for the column's places still shows (never "+0.0 (worse)")
    return f"{arrow} {delta:+.{places}f}{note}"


def _benchmark(skill: dict[str, Any], side: str) -> str:
    return " ".join(p for p in (text(skill.get(f"benchmark{side}")), text(skill.get(f"benchmarkVersion{side}"))) if p)


def _benchmarks_differ(skill: dict[str, Any]) -> bool:
    """Another benchmark id, or another version of it (when both reports say which)."""
    versions = [text(skill.get("benchmarkVersionA")), text(skill.get("benchmarkVersionB"))]
    return (text(skill.get("benchmarkA")) != text(skill.get("benchmarkB"))
            or (all(versions) and versions[0] != versions[1]))


def _version_unknown(skill: dict[str, Any]) -> bool:
    """The same benchmark id, with its version given by one report only."""
    given = [bool(text(skill.get("benchmarkVersionA"))), bool(text(skill.get("benchmarkVersionB")))]
    return not _benchmarks_differ(skill) and given[0] != given[1]


def render_diff_markdown(diff: dict[str, Any], label_a: str = "A", label_b: str = "B") -> str:
    la, lb = md_cell(label_a), md_cell(label_b)
    lines = [f"# eval-skills report diff: {la} → {lb}", ""]
    if diff["skills"]:
        rows = []
        for skill in diff["skills"]:
            for key, label, _, places, _ in METRICS:
                m = skill["metrics"][key]
                rows.append([md_cell(skill["skillId"]), label, _value(m["a"], places), _value(m["b"], places),
                             _delta(m["delta"], places, m["verdict"])])
        lines += md_table(["Skill", "Metric", la, lb, "Change"], "llrrl", rows)
    else:
        lines.append("No skill is in both reports.")
    moved = [f"{md_cell(x['skillId'])} ({md_cell(_benchmark(x, 'A'))} → {md_cell(_benchmark(x, 'B'))})"
             for x in diff["skills"] if _benchmarks_differ(x)]
    if moved:
        lines += ["", "Note: different benchmarks, so the numbers are not comparable: " + ", ".join(moved)]
    unsure = [md_cell(x["skillId"]) for x in diff["skills"] if _version_unknown(x)]
    if unsure:
        lines += ["", "Note: one report does not say which version of its benchmark ran (the original eval-skills "
                  "writes no benchmarkVersion, and its benchmarks of the same ids hold other tasks), so the numbers "
                  "may not be comparable: " + ", ".join(unsure)]
    for key, label in (("onlyInA", la), ("onlyInB", lb)):
        if diff[key]:
            lines += ["", f"Only in {label}: " + ", ".join(md_cell(s) for s in diff[key])]
    changes = diff["taskChanges"]
    lines += ["", "## Task status changes", ""]
    if not changes:
        lines.append("No task changed status.")
    for kind in ("newly failing", "newly passing", "status changed", "new task", "removed task"):
        picked = [c for c in changes if c["change"] == kind]
        if not picked:
            continue
        lines += [f"### {kind.capitalize()} ({len(picked)})", ""]
        lines += md_table(["Skill", "Task", "Run", la, lb, "Reason or error"], "llrlll",
                          [[md_cell(c["skillId"]), md_cell(c["taskId"]), md_cell(c["runId"]), md_cell(c["before"]),
                            md_cell(c["after"]), md_cell(c["reason"], 200)] for c in picked])
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
