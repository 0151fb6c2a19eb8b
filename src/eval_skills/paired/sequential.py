"""An adaptive paired design (``--adaptive``): rounds of runs, each looked at with its share of the error rate.

Round ``k`` is run ``k`` of every case and arm. After each round the delta's interval is computed at the level
:func:`eval_skills.stats.sequential.look_levels` gives that round, and no further round starts once the
interval lies above 0, below 0, or inside ``(-X, X)`` for ``--target-delta X``: the verdict can no longer
change. Every round's interval holds at once with chance 95% or more, so the verdict read where it stopped keeps
its error rate. The record goes to ``statistics.sequential`` in benchmark.json.
"""

from __future__ import annotations

from typing import Any

from ..formats.workspace import run_id
from ..stats.sequential import look_levels, stop_reason
from .plan import PairedPlan
from .record import RunRecord
from .summary import delta_estimate, plural

__all__ = ["REASONS", "Sequential"]

REASONS = {"lift": "the interval lies above 0", "harm": "the interval lies below 0",
           "within_target": "the interval lies inside (-X, X): no lift larger than X"}
DESIGN = ("group-sequential: one look per round of runs, each at the error rate a Pocock-type Lan-DeMets "
          "spending function gives it (0.05 in all, Bonferroni across looks); interval by inverting the paired "
          "sign-flip test")


class Sequential:
    def __init__(self, plan: PairedPlan, target: float | None) -> None:
        self.plan, self.target = plan, target
        self.levels = look_levels(plan.runs)
        self.looks: list[dict[str, Any]] = []
        self.stopped: str | None = None
        self.rounds = 0

    @property
    def level(self) -> float:
        """The confidence level of the interval of the last look (95% before any)."""
        return 1 - self.levels[self.rounds - 1] if self.rounds else 0.95

    def look(self, number: int, records: dict[str, RunRecord]) -> bool:
        """Look after round ``number``; True when no further round should start."""
        self.rounds = number
        alpha = self.levels[number - 1]
        delta = delta_estimate(self.plan, {k: r for k, r in records.items() if r.number <= number},
                               level=1 - alpha)
        reason = None
        if delta.ci_low is not None and delta.ci_high is not None:
            reason = stop_reason(delta.ci_low, delta.ci_high, self.target)
        self.looks.append({"round": number, "alpha": round(alpha, 6), "estimate": delta.estimate,
                           "ci_low": delta.ci_low, "ci_high": delta.ci_high, "cases": delta.cases,
                           "stop": reason})
        if reason is not None and number < self.plan.runs:
            self.stopped = reason
            return True
        return False

    def saved(self, records: dict[str, RunRecord]) -> list[str]:
        """The run ids of the rounds not started because the design stopped."""
        return [run_id(c.key, arm, n) for n in range(self.rounds + 1, self.plan.runs + 1)
                for c in self.plan.cases for arm in self.plan.arms]

    def sentence(self) -> str:
        saved = (self.plan.runs - self.rounds) * len(self.plan.cases) * 2
        why = REASONS.get(self.stopped or "", "")
        if self.target is not None:
            why = why.replace("X", f"{self.target:g}")
        return (f"Adaptive: stopped after {plural(self.rounds, 'round')} of {self.plan.runs} because {why}; "
                f"{plural(saved, 'agent run')} saved.")

    def record(self, records: dict[str, RunRecord]) -> dict[str, Any]:
        return {"design": DESIGN, "rounds_planned": self.plan.runs, "rounds_run": self.rounds,
                "stopped_early": self.stopped is not None, "reason": self.stopped,
                "reason_text": REASONS.get(self.stopped or "", "every planned round ran"),
                "target_delta": self.target, "runs_saved": len(self.saved(records)) if self.stopped else 0,
                "looks": self.looks}
