"""The arms as the page names them, and the figures per case and arm that several tabs show."""

from __future__ import annotations

from collections import defaultdict

from ..formats.workspace import BenchmarkRun, Grading, Timing

__all__ = ["ARM_LABELS", "arm_label", "mean_pass_rates", "run_error"]

ARM_LABELS = {"with_skill": "with skill", "without_skill": "without skill", "old_skill": "old skill"}


def run_error(grading: Grading | None, timing: Timing | None) -> str | None:
    """Why a run failed, as its grading.json or timing.json says (None: it did not)."""
    error = grading.error if grading is not None else None
    if not error and timing is not None:
        error = (timing.model_extra or {}).get("error")
    return str(error) if error else None


def arm_label(arm: str) -> str:
    return ARM_LABELS.get(arm, arm.replace("_", " "))


def mean_pass_rates(runs: list[BenchmarkRun]) -> dict[str, dict[str, float | None]]:
    """case id -> arm -> mean pass rate over its graded runs (None when every run was an error)."""
    rates: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        bucket = rates[str(run.eval_id)][run.configuration]
        if run.result.pass_rate is not None and not run.result.errors:
            bucket.append(run.result.pass_rate)
    return {case: {arm: (sum(v) / len(v) if v else None) for arm, v in arms.items()}
            for case, arms in rates.items()}
