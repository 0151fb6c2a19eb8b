"""The Benchmark tab of a paired-run workspace: the run summary (mean ± stddev per arm and the delta), the
pass-rate delta with its interval and p-value, pass@k, a chart of pass rate per case per arm, the
assertion x run grid, the non-discriminating assertions and the blind A/B results.

Numbers are shown as ``benchmark.json`` holds them; nothing is recomputed except the per-case means of the
chart and the grid's cells. Without a ``benchmark.json`` (an interrupted run) the chart and grid are built
from the runs' ``grading.json`` and ``timing.json`` files and the summary says it is missing.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..formats.workspace import ArmSummary, BenchmarkRun, Grading, RunResult, Timing
from .arms import arm_label, mean_pass_rates, run_error
from .iteration import IterationData
from .render import fixed, number, pct, points, visible
from .skill_creator import Comparisons
from .workspace import CaseRef, arm_order, case_sort_key

__all__ = ["benchmark_context", "bar_chart", "runs_from_folders"]

KIND_LABELS = {"always_pass": "passes in every run of both arms", "always_fail": "fails in every run of both arms",
               "only_without_skill": "passes only without the skill", "flaky": "passes in some runs, fails in others"}
EVIDENCE_LIMIT = 300
NO_ASSERTION = "(no assertion graded)"
RunKey = tuple[str, str, int]  # case, arm, run number


def runs_from_folders(src: IterationData, cases: list[CaseRef]) -> list[BenchmarkRun]:
    """``benchmark.json``-shaped run entries read from each run's grading.json and timing.json. A run whose
    grading or timing names an error is an error run; one with neither an error nor a ``grading.json`` (an
    interrupted iteration: it stopped before the run was graded) is marked ``graded: false``."""
    runs = []
    for case in cases:
        for ref in case.runs:
            grading, _ = src.read.model(ref.path / getattr(src, "grading_file", "grading.json"), Grading)
            timing, _ = src.read.model(ref.path / "timing.json", Timing)
            result = RunResult(time_seconds=timing.total_duration_seconds if timing else None,
                               tokens=timing.total_tokens if timing else None)
            extra: dict[str, Any] = {}
            if run_error(grading, timing):
                result.errors = 1
            elif grading is None:
                extra["graded"] = False
            else:
                s = grading.summary
                result.pass_rate, result.passed, result.failed, result.total = s.pass_rate, s.passed, s.failed, s.total
            runs.append(BenchmarkRun(eval_id=case.key, configuration=ref.arm, run_number=ref.number, result=result,
                                     expectations=grading.expectations if grading else [], **extra))
    return runs


def _graded(run: BenchmarkRun) -> bool:
    return (run.model_extra or {}).get("graded") is not False


def _delta(value: Any) -> float | None:
    """A delta as a number (skill-creator writes strings such as ``"+0.50"``)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _decimals(value: Any) -> int:
    """How many decimals a delta was written with (skill-creator writes ``"+0.50"``; ours numbers with 4)."""
    text = value if isinstance(value, str) else repr(value)
    return len(text.split(".")[1]) if "." in text else 0


def _summary_rows(run_summary: dict[str, Any], arms: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The summary rows, and the problems with the file's delta. The delta shown is computed here, the first
    arm's mean minus the second's (``arms`` in page order: with_skill first): skill-creator's aggregator
    subtracts configurations in the order it met them, so its ``delta`` may be ``old_skill - with_skill``.
    The file's value is shown when it agrees with that difference (to its rounding); else the page says so."""
    summaries: dict[str, ArmSummary | None] = {}
    for arm in arms:
        try:
            summaries[arm] = ArmSummary.model_validate(run_summary.get(arm) or {})
        except ValidationError:
            summaries[arm] = None
    found = run_summary.get("delta")
    delta: dict[str, Any] = found if isinstance(found, dict) else {}
    rows, problems = [], []
    first, second = (arms + [None, None])[:2]
    for key, label, show, show_delta in (
            ("pass_rate", "Pass rate", pct, points),
            ("time_seconds", "Time (s)", lambda v: fixed(v, 1), lambda v: fixed(v, 1, signed=True)),
            ("tokens", "Tokens", number, lambda v: fixed(v, 0, signed=True))):
        cells = []
        for arm in arms:
            summary = summaries.get(arm)
            stat = getattr(summary, key) if summary is not None else None
            cells.append(None if stat is None else {"mean": show(stat.mean), "stddev": show(stat.stddev),
                                                    "min": show(stat.min), "max": show(stat.max)})
        means = [getattr(getattr(summaries.get(a), key, None), "mean", None) if a else None for a in (first, second)]
        value = None if None in means else float(means[0]) - float(means[1])  # type: ignore[arg-type]
        given = _delta(delta.get(key)) if delta else None
        if value is not None and given is not None:
            slack = 0.5 * 10 ** -min(_decimals(delta.get(key)), 6) + 1e-4  # the file's rounding, and the means'
            if abs(given - value) <= slack:
                value = given
            else:
                problems.append(f"benchmark.json: run_summary.delta.{key} is {delta.get(key)}, which is not "
                                f"{arm_label(str(first))} − {arm_label(str(second))} ({value:+.4f}): the page shows "
                                "the difference it computed from the two configurations")
        rows.append({"label": label, "cells": cells, "delta": None if value is None else show_delta(value),
                     "delta_sign": 0 if not value else (1 if value > 0 else -1)})
    return rows, problems


def bar_chart(labels: list[str], series: list[str], rates: dict[str, dict[str, float | None]]) -> dict[str, Any]:
    """The geometry of a horizontal bar chart: one group of bars per label, one bar per series, rates 0-1."""
    label_w, bar_w, bar_h, gap = 170, 420, 11, 9
    bars, texts, y = [], [], 6
    for label in map(visible, labels):  # a case id is a folder name: its control characters are shown escaped
        top = y
        for index, name in enumerate(series):
            rate = rates.get(label, {}).get(name)
            bars.append({"y": y, "w": 0 if rate is None else round(rate * bar_w, 1), "series": index,
                         "value": "–" if rate is None else f"{rate * 100:.0f}%",
                         "title": f"{label} · {name}: " + ("no graded run" if rate is None else pct(rate))})
            y += bar_h + 2
        shown = label if len(label) <= 24 else label[:23] + "…"
        texts.append({"y": round(top + (y - top) / 2 + 2, 1), "text": shown, "title": label})
        y += gap
    return {"width": label_w + bar_w + 60, "height": y, "x0": label_w, "bar_w": bar_w, "bar_h": bar_h,
            "bars": bars, "labels": texts, "series": series}


def _error_run(run: BenchmarkRun) -> bool:
    return bool(run.result.errors or run.result.pass_rate is None and not run.expectations)


def _error_reasons(src: IterationData, cases: list[CaseRef], runs: list[BenchmarkRun]) -> dict[RunKey, str]:
    """(case, arm, run number) -> why that error run failed, read from its folder."""
    paths = {(case.key, ref.arm, ref.number): ref.path for case in cases for ref in case.runs}
    reasons: dict[RunKey, str] = {}
    for run in runs:
        key = (str(run.eval_id), run.configuration, run.run_number)
        if _graded(run) and _error_run(run) and key in paths:
            grading, _ = src.read.model(paths[key] / getattr(src, "grading_file", "grading.json"), Grading)
            reason = run_error(grading, None)
            if not reason:
                timing, _ = src.read.model(paths[key] / "timing.json", Timing)
                reason = run_error(None, timing)
            if reason:
                reasons[key] = reason if len(reason) <= EVIDENCE_LIMIT else reason[:EVIDENCE_LIMIT] + "…"
    return reasons


def _grid(case_ids: list[str], runs: list[BenchmarkRun], arms: list[str],
          reasons: dict[RunKey, str]) -> dict[str, Any]:
    by_key = {(str(r.eval_id), r.configuration, r.run_number): r for r in runs}
    numbers = {arm: sorted({r.run_number for r in runs if r.configuration == arm}) for arm in arms}
    columns = [(arm, n) for arm in arms for n in numbers[arm]]
    rows = []
    for case in case_ids:
        texts: list[str] = []
        for entry in runs:
            if str(entry.eval_id) == case:
                texts += [e.text for e in entry.expectations if e.text not in texts]
        texts = texts or [NO_ASSERTION]  # every run an error (or none ran): the case still has its row
        for text in texts:
            cells = []
            for arm, n in columns:
                run = by_key.get((case, arm, n))
                if run is None:
                    cells.append({"mark": "", "css": "none", "title": f"{arm_label(arm)} run {n}: no such run"})
                    continue
                if not _graded(run):
                    cells.append({"mark": "…", "css": "none", "title": f"{arm_label(arm)} run {n}: not graded (yet)"})
                    continue
                if _error_run(run):
                    why = reasons.get((case, arm, n))
                    cells.append({"mark": "E", "css": "err",
                                  "title": f"{arm_label(arm)} run {n}: error run" + (f": {why}" if why else "")})
                    continue
                found = next((e for e in run.expectations if e.text == text), None)
                if found is None:
                    cells.append({"mark": "", "css": "none", "title": f"{arm_label(arm)} run {n}: not graded"})
                    continue
                mark, css = ("✓", "pass") if found.passed else ("?", "na") if found.passed is None else ("✗", "fail")
                evidence = found.evidence if len(found.evidence) <= EVIDENCE_LIMIT else \
                    found.evidence[:EVIDENCE_LIMIT] + "…"
                cells.append({"mark": mark, "css": css, "title": f"{arm_label(arm)} run {n}: {evidence}"})
            rows.append({"case": case, "text": text, "cells": cells, "first": text == texts[0]})
    return {"arms": [(arm, arm_label(arm), len(numbers[arm])) for arm in arms], "columns": columns, "rows": rows}


def _fact(value: Any) -> str:
    """A setting as a person reads it: yes / no, "none" for a value not set, never Python's None or True."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def benchmark_context(src: IterationData) -> dict[str, Any]:
    bench, problem = src.benchmark()
    cases = src.scan()
    problems = [problem] if problem else []
    runs = src.bench_runs(bench.runs) if bench is not None and bench.runs else runs_from_folders(src, cases)
    arms = sorted({r.configuration for r in runs} | {a for c in cases for a in c.arms}, key=arm_order)
    case_ids = [c.key for c in cases]
    case_ids += sorted({str(r.eval_id) for r in runs} - set(case_ids), key=case_sort_key)
    errors = {arm: sum(1 for r in runs if r.configuration == arm and _graded(r)
                       and (r.result.errors or r.result.pass_rate is None)) for arm in arms}
    counts = {arm: sum(1 for r in runs if r.configuration == arm) for arm in arms}
    ab_cases = []
    for case in cases:
        found, p = src.read.model(case.path / "comparison.json", Comparisons)
        problems += [p] if p else []
        ab_cases += [(case.key, c) for c in (found.comparisons if found else [])]
    metadata = bench.metadata if bench else {}
    summary_rows, delta_problems = _summary_rows(bench.run_summary, arms) if bench else ([], [])
    problems += delta_problems
    delta_label = f"{arm_label(arms[0])} − {arm_label(arms[1])}" if len(arms) >= 2 else "n/a (one configuration)"
    from .portability_view import portability_context  # the per-agent table, when several agents ran

    return {
        "bench": bench, "problems": problems, "bench_broken": bool(problem),  # there, but cannot be read
        "arms": [(a, arm_label(a)) for a in arms],
        "facts": [(k.replace("_", " "), _fact(v)) for k, v in metadata.items()
                  if isinstance(v, str | int | float | bool) or v is None],
        "verdict": str((bench.model_extra or {}).get("verdict") or "") if bench else "",
        "summary": summary_rows, "delta_label": delta_label,
        "baseline": next((arm_label(a) for a in arms if a != "with_skill"), "baseline"),
        "errors": errors, "counts": counts,
        "statistics": bench.statistics if bench else None, "trust": _trust(src, runs, arms, bench),
        "chart": bar_chart(case_ids, arms, mean_pass_rates(runs)),
        "grid": _grid(case_ids, runs, arms, _error_reasons(src, cases, runs)),
        "non_discriminating": [(n, KIND_LABELS.get(n.kind, n.kind))
                               for n in (bench.non_discriminating if bench else [])],
        "ab": bench.comparison if bench else None, "ab_cases": ab_cases,
        "notes": bench.notes if bench else [], "arm_label": arm_label,
        "portability": portability_context(src.root, src.ws.iteration_path),
    }


def _trust(src: Any, runs: list[BenchmarkRun], arms: list[str], bench: Any) -> dict[str, Any] | None:
    """How far to trust the judge, from the marks in feedback.json as they are now (None: nothing to say)."""
    from ..stats.judge_trust import judge_trust, trust_sentence

    feedback = getattr(src, "feedback", None)
    if feedback is None:
        return None
    marks = {run: {m["text"]: m["passed"] for m in found if isinstance(m.get("text"), str)
                   and isinstance(m.get("passed"), bool)} for run, found in feedback.marks().items()}
    trust = judge_trust(runs, marks, arms=arms[:2] if len(arms) >= 2 else None,
                        seed=int((bench.metadata.get("seed") if bench else 0) or 0))
    trust["sentence"] = trust_sentence(trust)
    trust["judges"] = (bench.model_extra or {}).get("judges_agreement") if bench else None
    trust["empty"] = not trust["marks"] and not trust["judges"]
    return trust
