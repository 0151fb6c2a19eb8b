"""How far to trust the judge of an iteration: its grades against the people's marks, and against another judge.

Pure functions of an iteration's ``benchmark.json`` runs (each expectation with ``graded_by``) and the marks the
reviewers left in ``feedback.json`` (per run, ``grade_marks``: for an assertion, whether the person found it
passed; see :func:`marks_by_run`). A mark is the person's grade, whatever the judge said when it was made, so it
still counts against a judge that graded the runs again.

- :func:`judge_trust`: agreement overall and per assertion (raw agreement with a Wilson interval, Cohen's kappa
  with its interval), the assertions with the most disagreements first, the disagreements themselves, and the
  pass-rate delta with the people's corrections beside the judge's; ``low`` when, on the assertions that decide
  the delta (those whose pass rate differs between the arms), there are at least :data:`TRUST_MIN_MARKS` marks
  and kappa is below :data:`TRUST_KAPPA`.
- :func:`judges_alpha`: Krippendorff's alpha between the judge grades of two gradings of the same runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..formats.workspace import BenchmarkRun, Feedback, run_id
from .agreement import agreement, krippendorff_alpha
from .intervals import sign_flip_interval

__all__ = ["TRUST_KAPPA", "TRUST_MIN_MARKS", "judge_trust", "judges_alpha", "marks_by_run", "trust_sentence"]

TRUST_KAPPA = 0.6  # below this (Landis and Koch: "moderate" at best), the judge is not to be taken on trust
TRUST_MIN_MARKS = 10  # fewer marks than this on the deciding assertions say too little to warn


def _judged(run: BenchmarkRun) -> dict[str, bool]:
    """The run's judge grades by assertion text (the checks of the assertion engine left out)."""
    out: dict[str, bool] = {}
    for e in run.expectations:
        by = (e.model_extra or {}).get("graded_by")
        if by in (None, "judge") and e.passed is not None:
            out[e.text] = e.passed
    return out


def marks_by_run(feedback: Feedback) -> dict[str, dict[str, bool]]:
    """run id -> assertion text -> the person's grade, from the reviews' ``grade_marks`` (malformed ones are
    left out: the file is written by a page and may be edited by hand)."""
    found: dict[str, dict[str, bool]] = {}
    for review in feedback.reviews:
        marks = (review.model_extra or {}).get("grade_marks")
        if not isinstance(marks, list):
            continue
        for mark in marks:
            if isinstance(mark, dict) and isinstance(mark.get("text"), str) and isinstance(mark.get("passed"), bool):
                found.setdefault(review.run_id, {})[mark["text"]] = mark["passed"]
    return found


def _delta(runs: Sequence[BenchmarkRun], arms: Sequence[str], grades: Mapping[tuple[str, str], dict[str, bool]],
           seed: int) -> dict[str, Any]:
    """The pass-rate delta over cases (per case, the mean run pass rate of the first arm minus the second's) of
    ``grades`` (per run, its expectations' pass or fail), with its sign-flip interval."""
    rates: dict[tuple[str, str], list[float]] = defaultdict(list)
    for run in runs:
        graded = grades.get((run_id(str(run.eval_id), run.configuration, run.run_number), run.configuration))
        if graded:
            rates[(str(run.eval_id), run.configuration)].append(sum(graded.values()) / len(graded))
    cases = sorted({case for case, _ in rates})
    deltas = [math.fsum(rates[(c, arms[0])]) / len(rates[(c, arms[0])])
              - math.fsum(rates[(c, arms[1])]) / len(rates[(c, arms[1])])
              for c in cases if rates.get((c, arms[0])) and rates.get((c, arms[1]))]
    if not deltas:
        return {"estimate": None, "ci_low": None, "ci_high": None, "cases": 0}
    interval = sign_flip_interval(deltas, seed=seed)
    assert interval is not None
    return {"estimate": round(math.fsum(deltas) / len(deltas), 4), "ci_low": round(interval[0], 4),
            "ci_high": round(interval[1], 4), "cases": len(deltas)}


def _all_grades(run: BenchmarkRun) -> dict[str, bool]:
    return {e.text: e.passed for e in run.expectations if e.passed is not None}


def judge_trust(runs: Sequence[BenchmarkRun], marks: Mapping[str, Mapping[str, bool]], *,
                arms: Sequence[str] | None = None, seed: int = 0, level: float = 0.95) -> dict[str, Any]:
    """See the module doc. ``arms``: (the skill's arm, the baseline arm), by default as the runs name them."""
    arms = list(arms or dict.fromkeys(r.configuration for r in runs))
    pairs: list[tuple[bool, bool]] = []
    by_assertion: dict[tuple[str, str], list[tuple[bool, bool]]] = defaultdict(list)
    disagreements: list[dict[str, Any]] = []
    judge_grades: dict[tuple[str, str], dict[str, bool]] = {}
    people_grades: dict[tuple[str, str], dict[str, bool]] = {}
    pass_counts: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for run in runs:
        rid = run_id(str(run.eval_id), run.configuration, run.run_number)
        judged = _judged(run)
        every = _all_grades(run)
        corrected = dict(every)
        for text, passed in judged.items():
            counts = pass_counts[(str(run.eval_id), text)][run.configuration]
            counts[0] += passed
            counts[1] += 1
            person = (marks.get(rid) or {}).get(text)
            if person is None:
                continue
            pairs.append((passed, person))
            by_assertion[(str(run.eval_id), text)].append((passed, person))
            corrected[text] = person
            if person != passed:
                disagreements.append({"run_id": rid, "eval_id": run.eval_id, "configuration": run.configuration,
                                      "run_number": run.run_number, "assertion": text, "judge": passed,
                                      "people": person})
        key = (rid, run.configuration)
        judge_grades[key], people_grades[key] = every, corrected
    per: list[dict[str, Any]] = []
    for (case, text), found in by_assertion.items():
        row = agreement(found, level=level)
        per.append({"eval_id": case, "assertion": text, "disagree": row["n"] - row["agree"], **row})
    per.sort(key=lambda r: (-r["disagree"], r["raw_agreement"] if r["raw_agreement"] is not None else 1.0,
                            r["eval_id"], r["assertion"]))
    deciding = {key for key, counts in pass_counts.items() if len(arms) == 2
                and len({round(c[0] / c[1], 9) for c in (counts.get(a) for a in arms) if c and c[1]}) > 1}
    deciding_pairs = [p for key in deciding for p in by_assertion.get(key, [])]
    on_deciding = agreement(deciding_pairs, level=level)
    low = (on_deciding["n"] >= TRUST_MIN_MARKS and on_deciding["kappa"] is not None
           and on_deciding["kappa"] < TRUST_KAPPA)
    out: dict[str, Any] = {
        "marks": len(pairs), "overall": agreement(pairs, level=level), "assertions": per,
        "disagreements": disagreements, "deciding": {"assertions": len(deciding), **on_deciding},
        "low": low, "threshold": {"kappa": TRUST_KAPPA, "min_marks": TRUST_MIN_MARKS}}
    if len(arms) == 2:
        out["delta"] = {"judge": _delta(runs, arms, judge_grades, seed),
                        "people": _delta(runs, arms, people_grades, seed),
                        "corrected": len(disagreements)}
    return out


def judges_alpha(first: Iterable[BenchmarkRun], second: Iterable[BenchmarkRun]) -> dict[str, Any]:
    """Krippendorff's alpha between the judge grades of two gradings of the same runs, over the (run, assertion)
    units either graded (one graded by only one of them cannot be paired and is counted apart)."""
    a = {(run_id(str(r.eval_id), r.configuration, r.run_number), t): p for r in first for t, p in _judged(r).items()}
    b = {(run_id(str(r.eval_id), r.configuration, r.run_number), t): p for r in second for t, p in _judged(r).items()}
    units = [(a.get(k), b.get(k)) for k in sorted(set(a) | set(b))]
    result = krippendorff_alpha(units)
    result["agree"] = sum(x == y for x, y in units if x is not None and y is not None)
    return result


def trust_sentence(trust: Mapping[str, Any]) -> str | None:
    """What the verdict adds when the judge's agreement with people is low on the deciding assertions."""
    if not trust.get("low"):
        return None
    d = trust["deciding"]
    text = (f"The judge agrees poorly with the people who checked it on the assertions that decide this delta "
            f"(kappa {d['kappa']:.2f} over {d['n']} marks, below {TRUST_KAPPA}): check its grades before trusting "
            "the verdict")
    delta = trust.get("delta") or {}
    people = (delta.get("people") or {}).get("estimate")
    if people is not None:
        text += f"; with their corrections the delta is {people * 100:+.1f} pp"
    return text + "."
