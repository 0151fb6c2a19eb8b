"""The sections of ``benchmark.md`` that say which grading version it holds and how far to trust the judge
(``metadata.grading_version``, ``judge_trust`` and ``judges_agreement`` of ``benchmark.json``)."""

from __future__ import annotations

from typing import Any

from ..formats.workspace import Benchmark
from ..reports.markdown import md_cell
from .summary import plural

__all__ = ["trust_markdown"]


def _judge_text(judge: dict[str, Any] | None) -> str:
    if not judge:
        return "no judge"
    model = judge.get("model") or "default model"
    ident = f", id {judge['identity'][:7]}" if judge.get("identity") else ""
    return f"{judge.get('backend')} ({model}, prompt {judge.get('grade_prompt')}{ident})"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f} pp"


def _num(value: float | None, spec: str = ".2f") -> str:
    return "n/a" if value is None else format(value, spec)


def trust_markdown(bench: Benchmark) -> list[str]:
    """The lines of ``benchmark.md`` saying which grading version it holds and how far to trust the judge."""
    extra = bench.model_extra or {}
    lines: list[str] = []
    meta = bench.metadata
    if meta.get("grading_version"):
        lines += ["", "## Grading version", "",
                  md_cell(f"Version {meta['grading_version']} of {meta.get('grading_versions', 1)}: "
                          f"{meta.get('grading_made_by', 'paired')}, judge {_judge_text(meta.get('grading_judge'))}, "
                          f"assertions from {meta.get('evals_path')}. Iterations are compared before and after "
                          "only under one grading rule.")]
    trust = extra.get("judge_trust")
    if trust:
        lines += ["", "## How far to trust the judge", ""]
        overall = trust["overall"]
        if not trust["marks"]:
            lines.append("No reviewer has marked a judge grade right or wrong yet (the review page does, saved "
                         "to feedback.json).")
        else:
            lines.append(md_cell(
                f"{plural(trust['marks'], 'judge grade')} checked by people: raw agreement "
                f"{_num(overall['raw_agreement'])} (95% Wilson interval {_num(overall['raw_ci_low'])} to "
                f"{_num(overall['raw_ci_high'])}), Cohen's kappa {_num(overall['kappa'])} (95% interval "
                f"{_num(overall['kappa_ci_low'])} to {_num(overall['kappa_ci_high'])}). Low when kappa is below "
                f"{trust['threshold']['kappa']} over at least {trust['threshold']['min_marks']} marks on the "
                "assertions that decide the delta."))
            delta = trust.get("delta")
            if delta:
                lines += ["", md_cell(f"Pass-rate delta with the judge's grades {_pct(delta['judge']['estimate'])}; "
                                      f"with the people's corrections ({plural(delta['corrected'], 'grade')} "
                                      f"changed) {_pct(delta['people']['estimate'])}.")]
            lines += ["", "| case | assertion | marks | disagree | agreement | kappa |", "|---|---|---|---|---|---|"]
            lines += [f"| {md_cell(a['eval_id'])} | {md_cell(a['assertion'], 200)} | {a['n']} | {a['disagree']} | "
                      f"{_num(a['raw_agreement'])} | {_num(a['kappa'])} |" for a in trust["assertions"]]
    judges = extra.get("judges_agreement")
    if judges:
        lines += ["", "## Two judges", "", md_cell(
            f"Versions {judges['versions'][0]} and {judges['versions'][1]} were graded by "
            f"{_judge_text(judges['judges'][0])} and {_judge_text(judges['judges'][1])}: Krippendorff's alpha "
            f"{_num(judges['alpha'])} over {plural(judges['units'], 'grade')} both gave ({judges['agree']} the "
            f"same; {judges['unpaired']} graded by one only).")]
    return lines
