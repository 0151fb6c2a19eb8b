"""``eval-skills validate``: check Agent Skills folders, one line per problem."""

from __future__ import annotations

from pathlib import Path

import click

from ..formats.skill_folder import FolderCheck, check_skill_folder, find_skill_folders
from . import EXIT_GATE_FAILED, EXIT_OK
from ._github import echo_json, in_github, publish, validate_step


def _summary(checks: list[FolderCheck]) -> str:
    invalid = sum(not c.valid for c in checks)
    warnings = sum(p.level == "warning" for c in checks for p in c.problems)
    skills = f"{len(checks)} skill folder{'s' if len(checks) != 1 else ''}"
    if invalid:
        return f"FAIL: {invalid} of {skills} invalid ({warnings} warnings)"
    return f"OK: {skills} valid ({warnings} warnings)"


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
@click.option("--strict", is_flag=True,
              help="Frontmatter keys outside the Agent Skills specification are errors, as skills-ref has it "
                   "[default: warnings].")
@click.option("--json", "as_json", is_flag=True, help='Print {"passed", "skills": [{folder, name, valid, problems}]}.')
@click.pass_context
def validate_command(ctx: click.Context, paths: tuple[Path, ...], strict: bool, as_json: bool) -> None:
    """Check Agent Skills folders: SKILL.md's frontmatter by the specification, evals/evals.json (and its
    fixture files), evals/routing.json, evals/tasks.json and its examples.

    PATH is a skill folder, its SKILL.md, or a folder holding skill folders (searched below it). One line per
    problem, "error:" or "warning:", then a summary. Exit 0 when every folder is valid, 1 when one is not,
    2 for a path that names no skill.
    """
    folders: list[Path] = []
    for path in paths:
        folders += [f for f in find_skill_folders(path) if f not in folders]
    checks = [check_skill_folder(folder, strict=strict) for folder in folders]
    ok = all(c.valid for c in checks)
    if as_json:  # "ok" is "passed" under its earlier name
        echo_json(ok, {"ok": ok, "strict": strict, "skills": [c.to_dict() for c in checks]}, indent=None)
    else:
        lines = [p.line() for c in checks for p in c.problems]
        lines.append(_summary(checks))
        click.echo("\n".join(lines))
    if in_github():
        publish(validate_step(checks, ok, _summary(checks)), json_mode=as_json)
    ctx.exit(EXIT_OK if ok else EXIT_GATE_FAILED)
