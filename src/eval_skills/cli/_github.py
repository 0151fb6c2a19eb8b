"""What every command leaves for GitHub Actions: a Markdown job summary appended to ``$GITHUB_STEP_SUMMARY``
(when it is set) and the failing tasks, assertions and queries as workflow annotations (when
``GITHUB_ACTIONS`` is ``true``), and the one ``passed`` field of every command's ``--json``.

Annotations go to stdout, where the runner reads workflow commands; with ``--json`` they go to stderr (the
runner reads those too), so stdout stays one JSON document.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from ..masking import secret_values
from ..reports.github import Finding, Level, StepReport, annotation_lines, render_summary

__all__ = ["Finding", "StepReport", "echo_json", "eval_step", "fixtures_step", "in_github", "junit_option",
           "paired_outputs", "paired_step", "publish", "publish_eval", "repo_path", "routing_outputs", "routing_step",
           "validate_step", "write_junit"]


def echo_json(passed: bool, body: dict[str, Any], *, indent: int | None = 2, **dumps: Any) -> None:
    """Print one command's ``--json`` document: ``passed`` first (true exactly when the command exits 0), then
    ``body``."""
    from ..formats.indented_json import dumps_indented

    doc = {"passed": passed, **{k: v for k, v in body.items() if k != "passed"}}
    if indent is None:
        click.echo(json.dumps(doc, ensure_ascii=False, **dumps))
    else:
        click.echo(dumps_indented(doc, ensure_ascii=False, **dumps))


def repo_path(path: str | Path | None) -> str | None:
    """``path`` relative to the repository (``$GITHUB_WORKSPACE``, else the current folder) when it is inside
    it, so an annotation points at the file; else as it is."""
    if path is None or str(path) == "":
        return None
    root = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return str(path)


def in_github(env: dict[str, str] | None = None) -> bool:
    """True when there is a job summary to write or annotations to make."""
    env = dict(os.environ) if env is None else env
    return bool(env.get("GITHUB_STEP_SUMMARY")) or env.get("GITHUB_ACTIONS") == "true"


def publish(report: StepReport, *, json_mode: bool = False, env: dict[str, str] | None = None) -> None:
    """The job summary and the annotations of ``report``, when run in GitHub Actions; nothing otherwise.
    A summary file that cannot be written is a warning, never the command's failure."""
    env = dict(os.environ) if env is None else env
    secrets = secret_values(env)
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as out:
                out.write(render_summary(report, secrets))
        except OSError as exc:
            click.echo(f"warning: cannot write the job summary to {summary}: {exc.strerror or exc}", err=True)
    if env.get("GITHUB_ACTIONS") == "true":
        where = "the job summary" if summary else "the command's output"
        for line in annotation_lines(report, secrets, more_where=where):
            click.echo(line, err=json_mode)
        sys.stdout.flush()


def _first_line(text: Any, limit: int = 300) -> str:
    from ..formats.untrusted import shown_text

    line = next((part.strip() for part in str(text or "").splitlines() if part.strip()), "")
    line = shown_text(line)
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2%}"


def eval_step(command: str, outcome: Any, plan: Any, *, passed: bool, verdict: str) -> StepReport:
    """``eval`` and ``run``: one row per skill, one finding per task result that did not pass (the task's
    file is the benchmark's, when it has one)."""
    source = getattr(plan.benchmark, "source", None)
    skill_files = {s.id: s.path for s in plan.skills}
    rows = [[r["skillId"], str(r["skillVersion"]), _pct(r["summary"]["completionRate"]),
             "n/a" if r["summary"]["compositeScore"] is None else f"{r['summary']['compositeScore']:.4f}",
             _pct(r["summary"]["errorRate"])] for r in outcome.reports]
    runs = len({r.run_id for r in outcome.results}) > 1
    findings = []
    for r in sorted((r for r in outcome.results if r.status != "pass"),
                    key=lambda r: (r.skill_id, r.task_id, r.run_id)):
        where = f"{r.skill_id} / {r.task_id}" + (f" run {r.run_id}" if runs else "")
        reason = _first_line(r.error) or _first_line(r.reason) or "no reason given"
        findings.append(Finding(f"{where}: {r.status}", reason, repo_path(source or skill_files.get(r.skill_id))))
    return StepReport(command, passed, verdict, ("skill", "version", "pass", "composite", "errors"), rows,
                      findings, [str(repo_path(f)) for f in outcome.report_files])


def publish_eval(command: str, outcome: Any, plan: Any, *, passed: bool, below: list[str], min_completion: float,
                 gated: bool, json_mode: bool, selected: list[str] | None = None) -> None:
    """The job summary and annotations of ``eval`` or ``run`` (``selected``: the skills ``run`` selected)."""
    if in_github():
        verdict = eval_verdict(outcome, below, min_completion, gated)
        if selected is not None:
            verdict += (f" Selected: {', '.join(selected)}." if selected else " No skill met the selection.")
        publish(eval_step(command, outcome, plan, passed=passed, verdict=verdict), json_mode=json_mode)


def eval_verdict(outcome: Any, below: Iterable[str], min_completion: float, gated: bool) -> str:
    total = len(outcome.results)
    passed = sum(r.status == "pass" for r in outcome.results)
    text = f"{passed} of {total} task results passed across {len(outcome.reports)} skill(s)."
    below = list(below)
    if outcome.interrupted:
        text += " The run was interrupted: the reports hold what finished."
    if below:
        text += f" Quality gate failed: completion rate below {min_completion} for {', '.join(below)}."
    elif gated:
        text += f" Every skill reached the completion rate {min_completion}."
    return text


def fixtures_step(report: Any, verdict: str) -> StepReport:
    """``fixtures``: one row per skill, one finding per failed check or missing file, then the problems."""
    base = Path(report.skills_dir)
    rows = [[s.skill, "-" if s.score is None else f"{s.score:.4f}", f"{s.passed}/{s.total}"] for s in report.skills]
    findings = []
    for f in report.failures():
        file = repo_path(f.file if Path(f.file).is_absolute() else Path(f.file))
        if f.check is None:
            findings.append(Finding(f"{f.skill} / {f.task}", f"missing file {f.file}", file))
        else:
            value = json.dumps(f.check.value, ensure_ascii=False) if isinstance(f.check.value, str) else f.check.value
            findings.append(Finding(f"{f.skill} / {f.task}: {f.check.kind}", f"{value}: {f.check.evidence}", file))
    for p in report.problems:
        where = p.skill + (f" / {p.task}" if p.task else "")
        level: Level = "error" if report.mode == "examples" else "warning"
        findings.append(Finding(f"{where}: {p.kind}", p.message, repo_path(base / p.skill / "evals" / "tasks.json"),
                                level))
    return StepReport("fixtures", report.ok, verdict, ("skill", "score", "tasks passed"), rows, findings)


def paired_step(bench: Any, plan: Any, *, passed: bool, failures: list[str], files: Iterable[Any],
                label: str = "") -> StepReport:
    """``paired``: the arms' pass rates and the delta, the verdict sentence and the gates; one finding per
    error run, and per assertion that failed in a ``with_skill`` run (a baseline failing is what is measured)."""
    summary = bench.run_summary
    rows = []
    for arm in plan.arms:
        s = summary.get(arm) or {}
        rate = (s.get("pass_rate") or {}).get("mean")
        rows.append([arm, _pct(rate), str(s.get("runs")), str(s.get("errors"))])
    delta = (summary.get("delta") or {}).get("pass_rate")
    rows.append(["delta", "n/a" if delta is None else f"{delta * 100:+.1f} pp", "", ""])
    verdict = label + str((bench.model_extra or {}).get("verdict", ""))
    if failures:
        verdict += " Quality gate failed: " + "; ".join(failures) + "."
    evals = repo_path(plan.evals_path) if getattr(plan, "evals_path", None) else None
    findings = []
    for run in bench.runs:
        where = f"eval {run.eval_id} {run.configuration} run {run.run_number}"
        error = (run.result.model_extra or {}).get("error")
        if run.result.pass_rate is None and (run.result.errors or error):
            findings.append(Finding(f"{where}: error", _first_line(error) or "the agent run failed", evals))
            continue
        if run.configuration != "with_skill":
            continue
        for e in run.expectations:
            if e.passed is False:
                findings.append(Finding(f"{where}: assertion failed", f"{e.text}: {_first_line(e.evidence)}",
                                        evals))
    return StepReport("paired", passed, verdict, ("arm", "pass rate", "runs", "error runs"), rows, findings,
                      [str(repo_path(f)) for f in files])


def routing_step(results: Any, *, passed: bool, failures: list[str], folder: Any, routing_file: Any) -> StepReport:
    """``routing``: the metrics, one finding per query routed wrongly and per query whose every run failed."""
    m = results.metrics

    def rate(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    rows = [[rate(m.precision), rate(m.recall), rate(m.f1), rate(m.accuracy), f"{m.tp}/{m.fp}/{m.fn}/{m.tn}"]]
    file = repo_path(routing_file)
    findings = []
    for q in results.queries:
        if q.passed is False:
            should = "should trigger" if q.should_trigger else "should not trigger"
            findings.append(Finding(f"query {q.index}: {should}", f"{q.query} (triggered {q.triggers} of "
                                    f"{q.runs - q.errors} runs)", file))
        elif q.passed is None and q.errors:
            first = next((r.error for r in q.run_results if r.error), None)
            findings.append(Finding(f"query {q.index}: every run failed", _first_line(first) or q.query, file))
    verdict = (f"Routing of {results.metadata.get('skill_name')}: {len(results.queries)} queries, "
               f"{sum(q.passed is True for q in results.queries)} routed as they should.")
    if failures:
        verdict += " " + "; ".join(failures) + "."
    return StepReport("routing", passed, verdict, ("precision", "recall", "f1", "accuracy", "tp/fp/fn/tn"), rows,
                      findings, [str(repo_path(folder))])


def validate_step(checks: list[Any], ok: bool, verdict: str) -> StepReport:
    """``validate``: one row per skill folder, one finding per problem (warnings as warnings)."""
    rows = [[str(c.name or c.folder), "valid" if c.valid else "invalid",
             str(sum(p.level == "error" for p in c.problems)), str(sum(p.level == "warning" for p in c.problems))]
            for c in checks]
    findings = []
    for c in checks:
        for p in c.problems:
            file = getattr(p, "file", None) or Path(c.folder) / "SKILL.md"
            level: Level = "error" if p.level == "error" else "warning"
            findings.append(Finding(f"{c.name or c.folder}: {p.level}", p.message, repo_path(file), level))
    return StepReport("validate", ok, verdict, ("skill", "verdict", "errors", "warnings"), rows, findings)


def junit_option(what: str) -> Any:
    """``--format junit``: also write ``junit.xml`` into the folder the command writes its results to."""
    return click.option("--format", "formats", multiple=True, type=click.Choice(["junit"]),
                        help=f"Also write {what}/junit.xml: JUnit XML for CI test reports.")


def write_junit(folder: Path, xml: str) -> Path:
    from .._atomic import write_atomic

    path = folder / "junit.xml"
    write_atomic(path, xml)
    return path


def paired_outputs(outcome: Any, plan: Any, params: dict[str, Any], *, passed: bool, failures: list[str],
                   label: str = "") -> list[Path]:
    """``paired``'s JUnit file (with ``--format junit``), job summary and annotations; the files written."""
    files = []
    if "junit" in (params.get("formats") or ()):
        from ..reports.junit_kinds import paired_junit

        xml = paired_junit(outcome.benchmark.model_dump(mode="json"), skill=plan.skill.name, passed=passed,
                           failures=failures)
        files.append(write_junit(outcome.iteration, xml))
    if in_github():
        publish(paired_step(outcome.benchmark, plan, passed=passed, failures=failures,
                            files=[*outcome.files, *files], label=label), json_mode=params["as_json"])
    return files


def routing_outputs(outcome: Any, plan: Any, params: dict[str, Any], *, passed: bool,
                    failures: list[str]) -> list[Path]:
    """``routing``'s JUnit file (with ``--format junit``), job summary and annotations; the files written."""
    files = []
    if "junit" in (params.get("formats") or ()):
        from ..reports.junit_kinds import routing_junit

        xml = routing_junit(outcome.results.model_dump(mode="json"), passed=passed, failures=failures)
        files.append(write_junit(outcome.folder, xml))
    if in_github():
        publish(routing_step(outcome.results, passed=passed, failures=failures, folder=outcome.folder,
                             routing_file=plan.routing_file), json_mode=params["as_json"])
    return files
