"""The benchmark's numbers, computed in code from the graded runs and the blind comparisons.

- ``runs``: one entry per finished run, as skill-creator writes them;
- ``run_summary``: per arm ``pass_rate``, ``time_seconds`` and ``tokens`` as ``{mean, stddev, min, max}`` over
  every run of every case pooled (error runs left out; the pass rate over graded runs only), and ``delta``:
  with_skill minus the baseline arm, as numbers;
- ``statistics.pass_rate_delta``: the delta estimated over cases (per case, the mean over its runs with the
  skill minus the mean over the baseline's), the 95% interval got by inverting the paired sign-flip test (exact
  up to 16 cases, so it keeps its coverage with few cases, where a bootstrap interval does not), and the
  two-sided paired sign-flip permutation test of the per-case deltas; ``statistics.pass_at_k`` per arm when
  there are several runs;
- ``non_discriminating``: assertions that pass everywhere, fail everywhere, pass only without the skill, or
  pass in some runs of an arm and fail in others;
- ``comparison``: the blind A/B verdicts as the skill's wins, ties and losses.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..formats.workspace import (
    ABSummary,
    ArmSummary,
    BenchmarkRun,
    Comparison,
    DeltaEstimate,
    NonDiscriminating,
    PassAtK,
    RunResult,
    Stat,
)
from ..stats import min_two_sided_p, pass_at_k_task, pass_hat_k_task, sample_summary, sign_flip_test
from ..stats.estimators import EXACT_MAX
from ..stats.intervals import sign_flip_interval
from .plan import WITHOUT_SKILL, Case, PairedPlan
from .power import design_sentence
from .record import RunRecord

__all__ = ["MIN_CASES_FOR_P", "ab_summary", "delta_estimate", "non_discriminating", "pass_at_k", "pending_pairs",
           "plural", "run_entries", "run_summary", "verdict_sentence"]

MIN_CASES_FOR_P = 6  # below this, no sign-flip p-value can be under 0.05


@dataclass(frozen=True)
class _Key:
    case: str
    arm: str


def _rate(record: RunRecord) -> float | None:
    """The run's pass rate, passed / total from the counts (``grading.json``'s ``pass_rate`` is rounded to 4
    decimals, and a sum of rounded thirds moves a p-value): None for an error run, a run not graded yet, or one
    with nothing graded."""
    if not record.ok or record.grading is None:
        return None
    summary = record.grading.summary
    return summary.passed / summary.total if summary.total else None


def plural(count: int, word: str) -> str:
    """``1 case``, ``2 cases``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def _r4(value: float) -> float:
    """Rounded to 4 decimals, without a negative zero (``-0.0`` reads as a loss)."""
    return round(value, 4) + 0.0


def _judge_error(record: RunRecord) -> bool:
    grading = record.grading
    return grading is not None and any(e.passed is None for e in grading.expectations)


def _by_case_arm(records: Iterable[RunRecord]) -> dict[_Key, list[RunRecord]]:
    grouped: dict[_Key, list[RunRecord]] = defaultdict(list)
    for record in records:
        grouped[_Key(record.case_key, record.arm)].append(record)
    for runs in grouped.values():
        runs.sort(key=lambda r: r.number)
    return grouped


def run_entries(plan: PairedPlan, records: dict[str, RunRecord]) -> list[BenchmarkRun]:
    """The ``runs`` of benchmark.json: by case, arm (with_skill first) and run number."""
    grouped = _by_case_arm(records.values())
    entries = []
    for case in plan.cases:
        for arm in plan.arms:
            for record in grouped.get(_Key(case.key, arm), []):
                grading = record.grading
                fields: dict[str, object] = {"time_seconds": round(record.duration_s, 3), "tokens": record.tokens,
                                             "tool_calls": record.tool_calls, "errors": 0 if record.ok else 1}
                if grading is not None and record.ok:
                    s = grading.summary
                    fields.update(pass_rate=s.pass_rate, passed=s.passed, failed=s.failed, total=s.total,
                                  ungraded=sum(e.passed is None for e in grading.expectations))
                elif record.ok:
                    fields["not_graded"] = True
                else:
                    fields["error"] = record.error
                result = RunResult.model_validate(fields)
                entries.append(BenchmarkRun(eval_id=case.case.id, eval_name=case.name,
                                            configuration=arm, run_number=record.number, result=result,
                                            expectations=grading.expectations if grading and record.ok else []))
    return entries


def _stat(values: list[float]) -> Stat | None:
    """``{mean, stddev, min, max}``, or None without values (skill-creator's viewer shows a missing figure
    as a dash, but fails on a figure whose mean is null)."""
    return Stat(**sample_summary(values)) if values else None


def run_summary(plan: PairedPlan, records: dict[str, RunRecord]) -> dict[str, Any]:
    """``run_summary``: per arm the pooled statistics and counts (``tokens_estimated``: the runs whose tokens
    are an estimate, the agent having reported none), and ``delta`` (with_skill minus baseline, from the
    unrounded means, then rounded to 4 decimals)."""
    summary: dict[str, Any] = {}
    means: dict[str, dict[str, float | None]] = {}
    for arm in plan.arms:
        runs = [r for r in records.values() if r.arm == arm]
        # summed in the order skill-creator's aggregator reads the folders (eval-<case>/<arm>/run-<n>, names
        # sorted as text): a float sum depends on its order, and a tie at the 4th decimal on the sum
        ok = sorted((r for r in runs if r.ok), key=lambda r: (f"eval-{r.case_key}", f"run-{r.number}"))
        values = {"pass_rate": [rate for r in ok if (rate := _rate(r)) is not None],
                  # as each run's files hold it (3 decimals), so skill-creator's aggregator gets the same figures
                  "time_seconds": [round(r.duration_s, 3) for r in ok],
                  "tokens": [float(r.tokens) for r in ok if r.tokens is not None]}
        estimated = sum(r.tokens is not None and r.token_measurement != "measured" for r in ok)
        arm_summary = ArmSummary.model_validate({
            **{key: _stat(v) for key, v in values.items()}, "runs": len(runs), "graded": len(values["pass_rate"]),
            "errors": len(runs) - len(ok), "judge_errors": sum(_judge_error(r) for r in ok),
            "tokens_estimated": estimated})
        summary[arm] = arm_summary.model_dump(mode="json")
        means[arm] = {key: _mean(v) if v else None for key, v in values.items()}
    with_skill, baseline = means[plan.arms[0]], means[plan.arms[1]]
    delta: dict[str, float | None] = {}
    for key in ("pass_rate", "time_seconds", "tokens"):
        mine, theirs = with_skill[key], baseline[key]
        delta[key] = None if mine is None or theirs is None else _r4(mine - theirs)
    summary["delta"] = delta
    return summary


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def case_deltas(plan: PairedPlan, records: dict[str, RunRecord]) -> tuple[dict[str, float], list[str]]:
    """Per case: the mean pass rate with the skill minus the baseline's, over graded runs; and the cases left
    out because an arm has no graded run."""
    grouped = _by_case_arm(records.values())
    deltas: dict[str, float] = {}
    left_out: list[str] = []
    for case in plan.cases:
        rates = [[rate for r in grouped.get(_Key(case.key, arm), []) if (rate := _rate(r)) is not None]
                 for arm in plan.arms]
        if rates[0] and rates[1]:
            deltas[case.key] = _mean(rates[0]) - _mean(rates[1])
        else:
            left_out.append(case.key)
    return deltas, left_out


def delta_estimate(plan: PairedPlan, records: dict[str, RunRecord], *, level: float = 0.95) -> DeltaEstimate:
    """The delta over cases with its interval at ``level`` (an adaptive design's looks ask for more than 95%)."""
    deltas, left_out = case_deltas(plan, records)
    values = list(deltas.values())
    n = len(values)
    # a case whose delta is 0 is the same under both signs: the smallest p-value is 2 / 2^(cases that differ)
    differ = sum(abs(v) > 1e-9 for v in values)
    smallest = min_two_sided_p(differ)
    notes = []
    if 0 < n < MIN_CASES_FOR_P:
        notes.append(f"With {plural(n, 'case')} no p-value below 0.05 is possible (the smallest is "
                     f"{smallest:.4g}): add cases before reading the p-value.")
    elif differ < MIN_CASES_FOR_P <= n:
        notes.append(f"Only {differ} of the {n} cases differ between the arms (the others have a delta of 0, "
                     f"which no sign flip changes), so no p-value below 0.05 is possible (the smallest is "
                     f"{smallest:.4g}).")
    if left_out:
        notes.append(f"{plural(len(left_out), 'case')} left out, without graded runs in both arms: "
                     f"{', '.join(left_out)}.")
    if n == 0:
        return DeltaEstimate.model_validate({"cases": 0, "case_deltas": {}, "left_out": left_out,
                                             "note": " ".join(notes or ["No case has graded runs in both arms."])})
    interval = sign_flip_interval(values, level=level, seed=plan.seed)
    assert interval is not None
    return DeltaEstimate.model_validate({
        "estimate": _r4(_mean(values)), "ci_low": _r4(interval[0]), "ci_high": _r4(interval[1]),
        "confidence": level, "p_value": sign_flip_test(values, seed=plan.seed), "cases": n,
        "note": " ".join(notes), "case_deltas": {k: _r4(v) for k, v in deltas.items()}, "left_out": left_out,
        "min_p_value": smallest,
        "method": f"two-sided paired sign-flip permutation test ({'exact' if n <= EXACT_MAX else 'seeded Monte Carlo'}"
                  f"), interval by inverting that test ({'exact' if n <= EXACT_MAX else 'seeded random subsets'})"})


def _run_passed(record: RunRecord) -> bool | None:
    """A run passes when every expectation passed; None when it cannot tell (an error run, nothing graded, or
    an ungraded expectation)."""
    grading = record.grading
    if not record.ok or grading is None or not grading.expectations:
        return None
    if any(e.passed is None for e in grading.expectations):
        return None
    return all(e.passed for e in grading.expectations)


def pass_at_k(plan: PairedPlan, records: dict[str, RunRecord]) -> dict[str, PassAtK]:
    """With ``runs`` > 1: per arm the mean over cases of the unbiased pass@k and pass^k, k = runs (a case
    counts when all k of its runs in the arm could be judged passed or not)."""
    if plan.runs < 2:
        return {}
    k = plan.runs
    grouped = _by_case_arm(records.values())
    out = {}
    for arm in plan.arms:
        at, hat = [], []
        for case in plan.cases:
            outcomes = [p for r in grouped.get(_Key(case.key, arm), []) if (p := _run_passed(r)) is not None]
            if len(outcomes) >= k:
                at.append(pass_at_k_task(len(outcomes), sum(outcomes), k))
                hat.append(pass_hat_k_task(len(outcomes), sum(outcomes), k))
        out[arm] = PassAtK.model_validate({"k": k, "pass_at_k": round(_mean(at), 4) if at else None,
                                           "pass_hat_k": round(_mean(hat), 4) if hat else None, "cases": len(at)})
    return out


def _counts(case: Case, runs: list[RunRecord]) -> list[dict[str, int]]:
    """Per expectation of the case: how many graded runs passed it, out of how many graded it."""
    texts = case.texts
    counts = [{"passed": 0, "runs": 0} for _ in texts]
    for record in runs:
        grading = record.grading
        if not record.ok or grading is None:
            continue
        if len(grading.expectations) == len(texts):
            pairs = list(enumerate(grading.expectations))
        else:  # the evals changed under a resumed run: match by text
            index = {text: i for i, text in enumerate(texts)}
            pairs = [(index[e.text], e) for e in grading.expectations if e.text in index]
        for j, expectation in pairs:
            if expectation.passed is not None:
                counts[j]["runs"] += 1
                counts[j]["passed"] += bool(expectation.passed)
    return counts


def non_discriminating(plan: PairedPlan, records: dict[str, RunRecord]) -> list[NonDiscriminating]:
    grouped = _by_case_arm(records.values())
    with_arm, base_arm = plan.arms
    found = []
    for case in plan.cases:
        counts = {arm: _counts(case, grouped.get(_Key(case.key, arm), [])) for arm in plan.arms}
        for j, text in enumerate(case.texts):
            w, b = counts[with_arm][j], counts[base_arm][j]
            if not w["runs"] or not b["runs"]:
                continue
            if w["passed"] == w["runs"] and b["passed"] == b["runs"]:
                kind = "always_pass"
            elif w["passed"] == 0 and b["passed"] == 0:
                kind = "always_fail"
            elif w["passed"] == 0:
                kind = "only_without_skill"
            elif 0 < w["passed"] < w["runs"] or 0 < b["passed"] < b["runs"]:
                kind = "flaky"
            else:
                continue
            found.append(NonDiscriminating(eval_id=case.case.id, assertion=text, kind=kind,
                                           counts={with_arm: w, base_arm: b}))
    return found


def pending_pairs(plan: PairedPlan, records: dict[str, RunRecord],
                  comparisons: dict[str, dict[int, Comparison]]) -> list[str]:
    """The run pairs whose two runs are in but that were not compared yet (an interrupted judge)."""
    found = {(r.case_key, r.number, r.arm) for r in records.values()}
    return [f"eval-{case.key}-run-{n}" for n in range(1, plan.runs + 1) for case in plan.cases
            if all((case.key, n, arm) in found for arm in plan.arms) and n not in comparisons.get(case.key, {})]


def ab_summary(plan: PairedPlan, comparisons: dict[str, dict[int, Comparison]], pending: int = 0) -> ABSummary:
    """The unblinded verdicts as the skill's wins, ties and losses; judge errors, pairs with an error run and
    pairs not compared yet (``pending``) counted apart."""
    with_arm, base_arm = plan.arms
    every = [c for by_number in comparisons.values() for c in by_number.values()]
    return ABSummary.model_validate({"pending": pending,
        "wins": sum(c.winner_arm == with_arm for c in every), "ties": sum(c.winner == "TIE" for c in every),
        "losses": sum(c.winner_arm == base_arm for c in every),
        "errors": sum(c.winner is None and "not_compared" not in (c.model_extra or {}) for c in every),
        "not_compared": sum("not_compared" in (c.model_extra or {}) for c in every), "pairs": len(every)})


def verdict_sentence(delta: DeltaEstimate, baseline: str, design: dict[str, Any] | None = None) -> str:
    """One sentence a person can act on: the estimate with its interval, and whether the data can say; when
    it cannot, what a design that could would take (from ``design``, ``statistics.design``)."""
    text = _verdict(delta, baseline)
    if design is not None and text.startswith("Too little data") and design.get("minimum_detectable_effect"):
        text += " " + design_sentence(design)
    return text


def _verdict(delta: DeltaEstimate, baseline: str) -> str:
    against = "the runs without the skill" if baseline == WITHOUT_SKILL else "the previous version of the skill"
    n = delta.cases or 0
    if delta.estimate is None or n == 0:
        return "Too little data to say: no case has graded runs in both arms, so there is no delta to estimate."
    assert delta.ci_low is not None and delta.ci_high is not None
    p = "n/a" if delta.p_value is None else f"{delta.p_value:.3g}"
    stated = (f"{delta.estimate * 100:+.1f} pp (95% interval {delta.ci_low * 100:+.1f} to {delta.ci_high * 100:+.1f} "
              f"pp, p = {p}, {plural(n, 'case')})")  # percentage points, as the review page says
    if n < MIN_CASES_FOR_P:
        return (f"Too little data to say: the pass-rate delta against {against} is {stated}, and with fewer "
                f"than {MIN_CASES_FOR_P} cases no p-value can fall below 0.05.")
    smallest = (delta.model_extra or {}).get("min_p_value")
    if isinstance(smallest, float) and smallest > 0.05:  # the other cases have a delta of 0
        return (f"Too little data to say: the pass-rate delta against {against} is {stated}, and with fewer "
                f"than {MIN_CASES_FOR_P} cases that differ between the arms no p-value can fall below 0.05.")
    if delta.ci_low > 0:
        return f"The skill raises the pass rate by {stated} against {against}."
    if delta.ci_high < 0:
        return f"The skill lowers the pass rate against {against}: {stated}."
    return (f"No clear difference: the pass-rate delta against {against} is {stated}, and the interval "
            "includes 0.")
