"""How much an iteration can tell, and what a bigger design would take: the ``statistics.design`` section of
benchmark.json, read off the graded runs (so a finished iteration is the pilot of the next one).

The variance of the per-case deltas is split into its between-case and within-case parts
(:mod:`eval_skills.stats.design`); from them the minimum detectable effect of this design (cases x runs,
alpha 0.05, power 0.8) and, for a target lift, the cases needed at these runs, the runs needed at these cases
(or that no number of runs is enough), and which of the two costs fewer agent runs. The design is
*underpowered* when its minimum detectable effect is above the target.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..formats.workspace import BenchmarkRun
from ..stats.design import MIN_CASES, minimum_detectable_effect, plan_design, variance_parts
from ..stats.intervals import clustered_standard_error

__all__ = ["ALPHA", "DEFAULT_TARGET", "POWER", "arm_rates", "clustered_se", "design_section", "design_sentence"]

ALPHA, POWER = 0.05, 0.8
DEFAULT_TARGET = 0.2  # the lift a design is judged against when no --target-delta is given


def _rate(run: BenchmarkRun) -> float | None:
    result = run.result
    if result.errors or result.pass_rate is None:
        return None
    graded = result.passed + result.failed
    return result.passed / graded if graded else None


def arm_rates(runs: Iterable[BenchmarkRun], arms: tuple[str, str]) -> list[tuple[list[float], list[float]]]:
    """Per case (in the order first seen), the graded runs' pass rates in each of ``arms``."""
    by_case: dict[str, dict[str, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        rate = _rate(run)
        if rate is not None and run.configuration in arms:
            by_case[str(run.eval_id)][run.configuration].append((run.run_number, rate))
    return [tuple([r for _, r in sorted(per_arm.get(arm, []))] for arm in arms)  # type: ignore[misc]
            for per_arm in by_case.values()]


def clustered_se(runs: Iterable[BenchmarkRun], arm: str) -> float | None:
    """The standard error of ``arm``'s pass rate over its graded runs, clustered by case."""
    by_case: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        rate = _rate(run)
        if rate is not None and run.configuration == arm:
            by_case[str(run.eval_id)].append(rate)
    se = clustered_standard_error(list(by_case.values()))
    return None if se is None else round(se, 4)


def design_section(runs: list[BenchmarkRun], arms: tuple[str, str], *, target: float | None = None,
                   planned_runs: int | None = None) -> dict[str, Any]:
    """``statistics.design``; ``target`` None judges the design against :data:`DEFAULT_TARGET`."""
    chosen = target if target is not None else DEFAULT_TARGET
    section: dict[str, Any] = {"alpha": ALPHA, "power": POWER, "target_delta": chosen,
                               "target_from": "--target-delta" if target is not None else "default"}
    parts = variance_parts(arm_rates(runs, arms))
    if parts is None:
        section.update(cases=0, underpowered=True,
                       note="Fewer than 2 cases have graded runs in both arms: nothing to plan from.")
        return section
    runs_now = planned_runs or parts.runs
    if parts.between == 0 and not parts.within:
        section.update(cases=parts.cases, runs=runs_now, underpowered=parts.cases < MIN_CASES,
                       note="The per-case deltas and the runs do not vary at all: there is no spread to plan from.")
        return section
    mde = minimum_detectable_effect(parts, parts.cases, runs_now, alpha=ALPHA, power=POWER)
    plan = plan_design(parts, chosen, alpha=ALPHA, power=POWER)
    section.update({
        "cases": parts.cases, "runs": runs_now, "between_case_variance": round(parts.between, 6),
        "within_case_variance": None if parts.within is None else round(parts.within, 6),
        "minimum_detectable_effect": round(mde, 4),
        "underpowered": parts.cases < MIN_CASES or mde > chosen,
        "to_detect_target": {
            "cases_at_current_runs": plan.cases_needed, "runs_at_current_cases": plan.runs_needed,
            "runs_note": _runs_note(plan.runs_plannable, parts.cases, plan.runs_needed),
            "better": plan.better, "agent_runs_adding_cases": plan.agent_runs_by_cases,
            "agent_runs_adding_runs": plan.agent_runs_by_runs}})
    return section


def _runs_note(plannable: bool, cases: int, needed: int | None) -> str | None:
    if not plannable:
        return "a pilot of one run per arm cannot split run noise from case differences: runs cannot be planned"
    if cases < MIN_CASES:
        return f"with fewer than {MIN_CASES} cases no number of runs can reach p < 0.05"
    if needed is None:
        return "no number of runs is enough at these cases: the cases differ too much; add cases"
    return None


def design_sentence(section: dict[str, Any]) -> str:
    """The plan in one or two sentences (for the verdict when it is "too little data", the terminal and
    benchmark.md)."""
    mde = section.get("minimum_detectable_effect")
    if mde is None:
        return str(section.get("note", ""))
    if section["cases"] < MIN_CASES:
        return (f"With fewer than {MIN_CASES} cases no p-value can fall below 0.05: add cases (about "
                f"{section['to_detect_target']['cases_at_current_runs']} to detect "
                f"{section['target_delta'] * 100:.0f} pp at {section['runs']} runs per arm).")
    target, todo = section["target_delta"], section["to_detect_target"]
    cases, runs = section["cases"], section["runs"]
    text = (f"This design ({cases} cases x {runs} runs per arm) detects a lift of {mde * 100:.0f} pp or more "
            f"with 80% power; to detect {target * 100:.0f} pp, run about {todo['cases_at_current_runs']} cases at "
            f"{runs} runs")
    if todo["runs_at_current_cases"] is not None:
        text += f", or {todo['runs_at_current_cases']} runs at {cases} cases"
        text += (" (adding runs costs fewer agent runs)" if todo["better"] == "runs"
                 else " (adding cases costs fewer agent runs)")
    elif todo.get("runs_note"):
        text += f" ({todo['runs_note']})"
    return text + "."
