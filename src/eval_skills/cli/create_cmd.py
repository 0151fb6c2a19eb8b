"""``eval-skills create``: a new skill from a template."""

from __future__ import annotations

from pathlib import Path

import click

from ..scaffold import TEMPLATES, create_skill


@click.command("create")
@click.option("--name", required=True, help="Skill name: its id and folder name (lowercase, digits, _ and -).")
@click.option("--from-template", "template", default="http_request", show_default=True,
              help=f"Template: {', '.join(TEMPLATES)}.")
@click.option("--output-dir", type=click.Path(path_type=Path), default=Path("./skills"), show_default=True,
              help="Folder the skill's folder is created in.")
@click.option("--description", default=None, help="Human-readable description embedded in skill.json (or SKILL.md).")
def create_command(name: str, template: str, output_dir: Path, description: str | None) -> None:
    """Generate a skill skeleton that passes its own test as generated.

    http_request, python_script and mcp_tool write skill.json, adapter.config.json, tests/basic.eval.json and
    the program (server.py or skill.py); agent_skill writes SKILL.md and evals/ for eval-skills fixtures.
    An existing folder is never overwritten.
    """
    folder = create_skill(name, template, output_dir, description)
    click.echo(f"created {folder}/ from template {template}")
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        click.echo(f"  {path.relative_to(folder)}")
    if template == "agent_skill":
        click.echo(f"check it: eval-skills fixtures --skills-dir {output_dir}")
    else:
        test = folder / "tests" / "basic.eval.json"
        click.echo(f"evaluate it: eval-skills eval --skills {folder} --benchmark {test}")
