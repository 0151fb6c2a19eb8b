"""``eval-skills fixtures``: check instruction skills' worked examples, or score answers on disk."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from ..fixture_checks.check import FixturesReport, check_fixtures
from . import EXIT_GATE_FAILED, EXIT_OK
from ._github import echo_json, fixtures_step, in_github, publish


class ScoreType(click.ParamType):
    """A number from 0 to 1 (NaN and infinities are refused)."""

    name = "X"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not 0.0 <= number <= 1.0:
            self.fail(f"{value!r} is not a number from 0 to 1", param, ctx)
        return number


def _score(score: float | None) -> str:
    """Four decimals, rounded down so a score below 1 never shows as 1.0000."""
    if score is None:
        return "-"
    return f"{math.floor(score * 10_000 + 1e-6) / 10_000:.4f}"


def _quote(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def render_text(report: FixturesReport) -> str:
    """The report as aligned plain text: one row per skill, then every failure and problem."""
    what = "worked examples" if report.mode == "examples" else f"answers in {report.answers_dir}"
    lines = [f"Fixture check: {what} (skills in {report.skills_dir})", ""]
    rows = [(s.skill, _score(s.score), f"{s.passed}/{s.total}") for s in report.skills]
    rows.append(("overall", _score(report.overall.score if report.overall.total else None),
                 f"{report.overall.passed}/{report.overall.total}"))
    width = max(len("skill"), *(len(r[0]) for r in rows))
    lines.append(f"{'skill':<{width}}  {'score':>6}  tasks passed")
    for name, score, passed in rows:
        if name == "overall":
            lines.append("-" * (width + 22))
        lines.append(f"{name:<{width}}  {score:>6}  {passed}")

    failures = list(report.failures())
    if failures:
        lines += ["", f"Failures ({len(failures)}):"]
        for failure in failures:
            where = f"{failure.skill} / {failure.task}"
            if failure.check is None:
                lines.append(f"  {where}: missing file {failure.file}")
            else:
                check = failure.check
                lines.append(f"  {where}: {check.kind} {_quote(check.value)}: {check.evidence}")
    if report.problems:
        blocking = report.mode == "examples"
        lines += ["", f"Problems with the fixtures ({len(report.problems)}"
                      + ("" if blocking else ", not counted in the verdict") + "):"]
        for problem in report.problems:
            where = problem.skill + (f" / {problem.task}" if problem.task else "")
            lines.append(f"  {where}: {problem.kind}: {problem.message}")

    lines.append("")
    threshold = f"min score {report.min_score:g}"
    if report.overall.total == 0:
        lines.append(f"FAIL: no task was scored ({threshold})")
    elif not report.score_ok:
        lines.append(f"FAIL: overall score {_score(report.overall.score)} is below {threshold}")
    elif not report.ok:
        lines.append(f"FAIL: {len(report.problems)} problem(s) with the fixtures "
                     f"(overall score {_score(report.overall.score)}, {threshold})")
    else:
        lines.append(f"OK: overall score {_score(report.overall.score)} (at or above {threshold})")
    return "\n".join(lines)


@click.command("fixtures")
@click.option("--skills-dir", type=click.Path(path_type=Path), default=Path("skills"), show_default=True,
              help="Folder with one folder per skill, each holding SKILL.md and evals/tasks.json.")
@click.option("--answers", "answers_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Score DIR/<skill>/<task-id>.md instead of checking the worked examples.")
@click.option("--skill", "skill_names", multiple=True, metavar="NAME",
              help="Only this skill (repeatable). An unknown name is an error.")
@click.option("--min-score", type=ScoreType(), default=None,
              help="Pass threshold from 0 to 1 [default: 1, or 0 with --answers].")
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON instead of the table.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "junit"]), default=None,
              help="What stdout gets: the table, the report as JSON (as --json), or JUnit XML [default: text].")
@click.pass_context
def fixtures_command(ctx: click.Context, skills_dir: Path, answers_dir: Path | None,
                     skill_names: tuple[str, ...], min_score: float | None, as_json: bool,
                     output_format: str | None) -> None:
    """Check instruction skills' worked examples, or score answers against evals/tasks.json.

    Without --answers, every worked example evals/examples/<id>.md must pass its task's checks, every task
    must have one, and every must_include string must appear in SKILL.md, the skill's rules or references.
    Exit 0 at or above --min-score, 1 below it (or on a fixture problem), 2 for bad input.
    """
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json and --format {output_format} cannot be used together: give one of them")
    output_format = "json" if as_json else output_format or "text"
    report = check_fixtures(skills_dir, answers_dir=answers_dir, skills=skill_names, min_score=min_score)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output_format == "json":
        echo_json(report.ok, report.to_dict(), indent=None)  # compact: 7x faster than indented
    elif output_format == "junit":
        from ..reports.junit_kinds import fixtures_junit

        click.echo(fixtures_junit(report.to_dict()), nl=False)
    else:
        click.echo(render_text(report))
    if in_github():
        publish(fixtures_step(report, render_text(report).rsplit("\n", 1)[-1]), json_mode=output_format != "text")
    ctx.exit(EXIT_OK if report.ok else EXIT_GATE_FAILED)
