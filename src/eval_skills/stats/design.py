"""Planning a paired design from a pilot: pure functions of per-case, per-run pass rates.

A case's observed delta (its mean pass rate over runs with the skill minus the baseline's) varies for two
reasons: cases differ in how much the skill helps them (the *between-case* variance ``tau2`` of the true
per-case lifts), and a run of the agent is noisy (the *within-case* variance ``sigma2`` of one run's pass rate,
the two arms' added). With ``n`` cases of ``r`` runs per arm the mean delta has variance
``(tau2 + sigma2 / r) / n``, so at a two-sided level ``alpha`` and a power ``power`` (normal approximation):

- the minimum detectable effect is ``(z[1 - alpha/2] + z[power]) * sqrt((tau2 + sigma2 / r) / n)``;
- detecting a lift ``X`` needs ``n >= z^2 (tau2 + sigma2 / r) / X^2`` cases, or, at ``n`` cases,
  ``r >= sigma2 / (n X^2 / z^2 - tau2)`` runs, which no number of runs reaches once ``n X^2 / z^2 <= tau2``.

From a pilot, ``sigma2`` is the mean over cases of the two arms' sample variances over runs, and ``tau2`` the
variance of the observed case deltas less the part the runs' noise explains (at least 0). A pilot of one run per
arm cannot split the two: its whole variance is taken as between-case, and runs cannot be planned.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DesignPlan", "VarianceParts", "minimum_detectable_effect", "plan_design", "variance_parts",
           "z_total"]

MIN_CASES = 6  # below this, the paired sign-flip test cannot reach p < 0.05 at all


@dataclass(frozen=True)
class VarianceParts:
    between: float  # tau2: the variance of the true per-case lifts
    within: float | None  # sigma2: one run's variance, both arms added; None when no case has 2 runs in each arm
    cases: int
    runs: int  # the runs per case and arm of the pilot (the smallest over its cases)


def _variance(values: Sequence[float]) -> float:
    return statistics.variance(values) if len(values) > 1 else 0.0


def variance_parts(cases: Sequence[tuple[Sequence[float], Sequence[float]]]) -> VarianceParts | None:
    """``cases``: per case, the pass rates of its runs in the two arms (with the skill, baseline). Cases with
    no run in an arm are left out; None when fewer than 2 cases are left."""
    usable = [(list(a), list(b)) for a, b in cases if a and b]
    if len(usable) < 2:
        return None
    deltas = [math.fsum(a) / len(a) - math.fsum(b) / len(b) for a, b in usable]
    repeated = [(a, b) for a, b in usable if len(a) > 1 and len(b) > 1]
    runs = min(min(len(a), len(b)) for a, b in usable)
    total = _variance(deltas)
    if not repeated:
        return VarianceParts(between=total, within=None, cases=len(usable), runs=runs)
    within = math.fsum(_variance(a) + _variance(b) for a, b in repeated) / len(repeated)
    noise = math.fsum(_variance(a) / len(a) + _variance(b) / len(b) for a, b in repeated) / len(repeated)
    return VarianceParts(between=max(0.0, total - noise), within=within, cases=len(usable), runs=runs)


def z_total(alpha: float = 0.05, power: float = 0.8) -> float:
    """``z[1 - alpha/2] + z[power]``: 2.8016 at the usual 0.05 and 0.8."""
    normal = statistics.NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


def _per_case_variance(parts: VarianceParts, runs: int) -> float:
    return parts.between + (parts.within or 0.0) / runs


def minimum_detectable_effect(parts: VarianceParts, cases: int, runs: int, *, alpha: float = 0.05,
                              power: float = 0.8) -> float:
    """The smallest true lift detected with chance ``power`` by ``cases`` x ``runs`` (see the module doc)."""
    return z_total(alpha, power) * math.sqrt(_per_case_variance(parts, runs) / cases)


@dataclass(frozen=True)
class DesignPlan:
    target: float
    cases_needed: int  # at the pilot's runs per arm
    runs_needed: int | None  # at the pilot's cases; None: no number of runs is enough (or cannot be planned)
    runs_plannable: bool  # False when the pilot had one run per arm
    better: str  # "cases" or "runs": which reaches the target with fewer agent runs
    agent_runs_by_cases: int  # both arms
    agent_runs_by_runs: int | None


def plan_design(parts: VarianceParts, target: float, *, alpha: float = 0.05, power: float = 0.8) -> DesignPlan:
    """What it takes to detect a lift of ``target`` (> 0), by adding cases or by adding runs."""
    if not target > 0:
        raise ValueError("the target lift must be above 0")
    z2 = z_total(alpha, power) ** 2
    per_case = _per_case_variance(parts, parts.runs)
    cases_needed = max(MIN_CASES, math.ceil(z2 * per_case / target ** 2 - 1e-9))
    runs_needed: int | None = None
    plannable = parts.within is not None
    if plannable and parts.cases >= MIN_CASES:
        room = parts.cases * target ** 2 / z2 - parts.between
        if room > 0:
            runs_needed = max(1, math.ceil((parts.within or 0.0) / room - 1e-9))
    by_cases = 2 * cases_needed * parts.runs
    by_runs = 2 * parts.cases * runs_needed if runs_needed is not None else None
    better = "runs" if by_runs is not None and by_runs < by_cases else "cases"
    return DesignPlan(target=target, cases_needed=cases_needed, runs_needed=runs_needed, runs_plannable=plannable,
                      better=better, agent_runs_by_cases=by_cases, agent_runs_by_runs=by_runs)
