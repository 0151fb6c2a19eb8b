"""The iteration's reports: ``benchmark.json`` (skill-creator's shape plus ``statistics``,
``non_discriminating`` and ``comparison``), ``benchmark.md`` (the same as tables, led by one sentence of
verdict) and ``feedback.json`` (one review per run for a person to fill in)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats.skill_files import read_regular
from ..formats.workspace import ABSummary, Benchmark, BenchmarkStatistics, Comparison, Feedback, Review, review_time
from ..reports.markdown import md_cell
from .plan import PairedPlan
from .power import clustered_se, design_section, design_sentence
from .record import RunRecord, write_json
from .summary import (
    ab_summary,
    delta_estimate,
    non_discriminating,
    pass_at_k,
    plural,
    run_entries,
    run_summary,
    verdict_sentence,
)
from .trust_report import trust_markdown

UNREADABLE_FEEDBACK = "feedback.json.unreadable"

__all__ = ["ab_sentence", "build_benchmark", "render_markdown", "write_feedback", "write_reports"]

ARM_LABELS = {"with_skill": "with skill", "without_skill": "without skill", "old_skill": "old skill"}
KIND_LABELS = {"always_pass": "passes in every run of both arms", "always_fail": "fails in every run of both arms",
               "only_without_skill": "passes only in the baseline arm",
               "flaky": "passes in some runs of an arm, fails in others"}


def build_benchmark(plan: PairedPlan, records: dict[str, RunRecord], comparisons: dict[str, dict[int, Comparison]],
                    metadata: dict[str, Any], notes: list[str], *, pending: int = 0, target_delta: float | None = None,
                    level: float = 0.95, sequential: dict[str, Any] | None = None,
                    runs_done: int | None = None) -> Benchmark:
    """``comparisons`` empty: the blind A/B was not asked for. ``pending``: run pairs not compared yet.
    ``target_delta``: the lift the design is judged against (``statistics.design``); ``level`` and
    ``sequential``: an adaptive design's interval level at the round it stopped, and its record."""
    delta = delta_estimate(plan, records, level=level)
    entries = run_entries(plan, records)
    summary = run_summary(plan, records)
    for arm in plan.arms:
        summary[arm]["pass_rate_se_clustered"] = clustered_se(entries, arm)
    design = design_section(entries, plan.arms, target=target_delta, planned_runs=runs_done or plan.runs)
    statistics = BenchmarkStatistics(pass_rate_delta=delta, pass_at_k=pass_at_k(plan, records), design=design,
                                     **({"sequential": sequential} if sequential else {}))
    return Benchmark.model_validate({
        "metadata": metadata, "runs": entries, "run_summary": summary, "statistics": statistics,
        "non_discriminating": non_discriminating(plan, records),
        "comparison": ab_summary(plan, comparisons, pending) if comparisons else None, "notes": notes,
        "verdict": verdict_sentence(delta, plan.baseline, design)})


ERROR_CHARS = 300  # of an error run's reason in benchmark.md


def _cell(text: Any, limit: int | None = None) -> str:
    """Untrusted text (an assertion, an agent's error, a note, a model name) as Markdown: one line, ``|``
    escaped, ``<``, ``>`` and ``&`` as entities, so a renderer shows it as text and never as HTML."""
    return md_cell(" ".join(str(text).split()), limit)


def _num(value: Any, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def _stat(stat: dict[str, Any] | None, spec: str) -> str:
    if not stat or stat.get("mean") is None:
        return "n/a"
    return (f"{format(stat['mean'], spec)} ± {format(stat['stddev'], spec)} "
            f"({format(stat['min'], spec)} – {format(stat['max'], spec)})")


def render_markdown(bench: Benchmark, plan: PairedPlan) -> str:
    meta = bench.metadata
    with_arm, base_arm = plan.arms
    labels = [ARM_LABELS.get(a, a) for a in plan.arms]
    lines = [f"# Benchmark: {_cell(meta.get('skill_name', plan.skill.name))} (iteration {meta.get('iteration')})",
             "", f"**Verdict.** {_cell((bench.model_extra or {}).get('verdict', ''))}", ""]
    lines.append(f"Agent {_cell(meta.get('agent'))} (model {_cell(meta.get('model') or 'default')}), judge "
                 f"{_cell(meta.get('judge') or 'none')} (model {_cell(meta.get('judge_model') or 'default')}); "
                 f"{plural(len(plan.cases), 'case')} x {plural(plan.runs, 'run')} per arm; seed {plan.seed}; "
                 f"{_cell(meta.get('timestamp'))}.")
    if not meta.get("complete", True):
        missing = meta.get("missing_runs") or []
        left = [f"{len(missing)} of {plan.total} runs are missing"]
        left += [f"{plural(len(meta['ungraded_runs']), 'run')} not graded"] if meta.get("ungraded_runs") else []
        left += ([f"{plural(len(meta['pending_comparisons']), 'run pair')} not compared"]
                 if meta.get("pending_comparisons") else [])
        lines += ["", f"**Not finished ({_cell(meta.get('cut_short') or 'judging')}):** {', '.join(left)}; the "
                      "numbers below cover what finished (finish with `--resume`)."]
    summary = bench.run_summary
    delta = summary.get("delta") or {}
    lines += ["", "## Run summary", "", f"| metric | {labels[0]} | {labels[1]} | delta |", "|---|---|---|---|"]
    estimated = any(summary[a].get("tokens_estimated") for a in plan.arms)
    for key, label, spec in (("pass_rate", "pass rate", ".2f"), ("time_seconds", "time (s)", ".1f"),
                             ("tokens", "tokens (≈ estimated)" if estimated else "tokens", ".0f")):
        lines.append(f"| {label} | {_stat(summary[with_arm].get(key), spec)} | "
                     f"{_stat(summary[base_arm].get(key), spec)} | {_num(delta.get(key), '+' + spec)} |")
    counts = [summary[a] for a in plan.arms]
    lines.append("| runs (error runs, runs with judge errors) | "
                 + " | ".join(f"{c['runs']} ({c['errors']}, {c['judge_errors']})" for c in counts)
                 + " | |")
    stats = bench.statistics
    d = stats.pass_rate_delta if stats else None
    if d is not None:
        lines += ["", "## Pass-rate delta over cases"]
        if d.estimate is not None:
            lines += ["", f"Estimate {d.estimate:+.4f}, {d.confidence:.0%} interval (sign-flip) "
                          f"[{d.ci_low:+.4f}, {d.ci_high:+.4f}], "
                          f"two-sided paired sign-flip p = {_num(d.p_value, '.4g')}, over "
                          f"{plural(d.cases or 0, 'case')}."]
        if d.note:
            lines += ["", _cell(d.note)]
        deltas = (d.model_extra or {}).get("case_deltas") or {}
        if deltas:
            lines += ["", f"| case | delta ({labels[0]} − {labels[1]}) |", "|---|---|"]
            lines += [f"| {_cell(key)} | {value:+.4f} |" for key, value in deltas.items()]
    design = stats.design if stats else None
    if design:
        lines += ["", "## What this design can detect", "", _cell(design_sentence(design))]
        if design.get("minimum_detectable_effect") is not None:
            within = design.get("within_case_variance")
            lines += ["", "| figure | value |", "|---|---|",
                      "| minimum detectable effect (alpha 0.05, power 0.8) | "
                      f"{design['minimum_detectable_effect']:.4f} |",
                      f"| target lift ({design['target_from']}) | {design['target_delta']:.4f} |",
                      f"| underpowered | {'yes' if design['underpowered'] else 'no'} |",
                      f"| between-case variance | {design['between_case_variance']:.4f} |",
                      f"| within-case variance (one run, both arms) | {_num(within, '.4f')} |"]
    sequential = (stats.model_extra or {}).get("sequential") if stats else None
    if sequential:
        lines += ["", "## Adaptive rounds", "", _cell(f"{sequential['design']}. Ran {sequential['rounds_run']} of "
                                                       f"{sequential['rounds_planned']} rounds: "
                                                       f"{sequential['reason_text']}; {sequential['runs_saved']} "
                                                       "agent runs saved."),
                  "", "| round | alpha spent | estimate | interval |", "|---|---|---|---|"]
        lines += [f"| {look['round']} | {look['alpha']:.4f} | {_num(look['estimate'], '+.4f')} | "
                  f"[{_num(look['ci_low'], '+.4f')}, {_num(look['ci_high'], '+.4f')}] |"
                  for look in sequential["looks"]]
    if stats and stats.pass_at_k:
        lines += ["", "## pass@k and pass^k", "", "| arm | k | pass@k | pass^k | cases |", "|---|---|---|---|---|"]
        for arm, p in stats.pass_at_k.items():
            lines.append(f"| {ARM_LABELS.get(arm, arm)} | {p.k} | {_num(p.pass_at_k, '.4f')} | "
                         f"{_num(p.pass_hat_k, '.4f')} | {(p.model_extra or {}).get('cases', '')} |")
    if bench.comparison is not None:
        lines += ["", "## Blind A/B", "", ab_sentence(bench.comparison, labels[1])]
    if bench.non_discriminating:
        lines += ["", "## Assertions that do not tell the arms apart", "",
                  "| case | assertion | kind | passed / runs |", "|---|---|---|---|"]
        for n in bench.non_discriminating:
            shown = "; ".join(f"{ARM_LABELS.get(a, a)} {c['passed']}/{c['runs']}" for a, c in n.counts.items())
            lines.append(f"| {_cell(n.eval_id)} | {_cell(n.assertion)} | {KIND_LABELS.get(n.kind, n.kind)} | "
                         f"{shown} |")
    errors = [r for r in bench.runs if r.result.errors]
    if errors:
        lines += ["", "## Error runs", "", "Left out of the pass-rate statistics, never counted as failures.", ""]
        lines += [f"- eval {_cell(r.eval_id)}, {ARM_LABELS.get(r.configuration, r.configuration)}, run "
                  f"{r.run_number}: {_cell((r.result.model_extra or {}).get('error') or 'error', ERROR_CHARS)}"
                  for r in errors]
    if not meta.get("complete", True) and meta.get("missing_runs"):
        lines += ["", "## Missing runs", "", _cell(", ".join(meta["missing_runs"]))]
    lines += trust_markdown(bench)
    if bench.notes:
        lines += ["", "## Notes", ""] + [f"- {_cell(note)}" for note in bench.notes]
    return "\n".join(lines) + "\n"


def ab_sentence(ab: ABSummary, baseline_label: str) -> str:
    """The blind A/B results in one sentence, with what was not decided."""
    extra = ab.model_extra or {}
    apart = [f"{plural(extra.get('errors', 0), 'judge error')}",
             f"{plural(extra.get('not_compared', 0), 'pair')} with an error run not compared"]
    if extra.get("pending"):
        apart.append(f"{plural(extra['pending'], 'pair')} not compared yet")
    return (f"The skill's response won {ab.wins}, tied {ab.ties} and lost {ab.losses} blind comparisons against "
            f"{baseline_label} ({', '.join(apart)}).")


def write_feedback(iteration: Path, run_ids: list[str], given: Feedback | None = None) -> Path:
    """``feedback.json``: the given file's reviews (or the ones already there), plus an empty review for every
    run that has none; a file that gets new runs to review is ``in_progress`` again, whatever its status was.
    A ``feedback.json`` that cannot be read is moved to ``feedback.json.unreadable`` (with a warning), so the
    reviews in it can be mended by hand."""
    path = iteration / "feedback.json"
    feedback = given
    if feedback is None:
        try:  # a regular file only: missing, or a FIFO or a device in its place, is no feedback (and never blocks)
            feedback = Feedback.model_validate_json(read_regular(path))
        except InputError:
            feedback = None
        except ValueError as exc:  # reviews someone wrote, broken: kept beside the new file, never lost
            kept = path.with_name(UNREADABLE_FEEDBACK)
            os.replace(path, kept)
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            logging.getLogger(__name__).warning(f"warning: {path} could not be read ({problem}): it is kept as "
                                                f"{kept.name}, and a new feedback.json is written")
            feedback = None
    feedback = feedback.model_copy(deep=True) if feedback is not None else Feedback()
    known = {review.run_id for review in feedback.reviews}
    stamp = review_time()
    added = [Review(run_id=r, feedback="", timestamp=stamp) for r in run_ids if r not in known]
    feedback.reviews += added
    if added:
        feedback.status = "in_progress"
    write_json(path, feedback)
    return path


def write_reports(iteration: Path, bench: Benchmark, plan: PairedPlan) -> list[Path]:
    write_json(iteration / "benchmark.json", bench)
    md = iteration / "benchmark.md"
    md.write_text(render_markdown(bench, plan), encoding="utf-8")
    return [iteration / "benchmark.json", md]

