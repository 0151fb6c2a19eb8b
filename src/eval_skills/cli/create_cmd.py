"""``eval-skills create``: a new skill from a template."""

from __future__ import annotations

from pathlib import Path

import click

from ._github import echo_json

TEMPLATE_NAMES = ("http_request", "python_script", "mcp_tool", "agent_skill")  # scaffold.TEMPLATES, in order


@click.command("create")
@click.option("--name", required=True, help="Skill name: its id and folder name (lowercase, digits, _ and -).")
@click.option("--from-template", "template", default="http_request", show_default=True,
              help=f"Template: {', '.join(TEMPLATE_NAMES)}.")
@click.option("--output-dir", type=click.Path(path_type=Path), default="./skills", show_default=True,
              help="Folder the skill's folder is created in.")
@click.option("--description", default=None, help="Human-readable description embedded in skill.json (or SKILL.md).")
@click.option("--json", "as_json", is_flag=True, help="Print the skill's folder, files and next command as JSON.")
def create_command(name: str, template: str, output_dir: Path, description: str | None, as_json: bool) -> None:
    """Generate a skill skeleton that passes its own test as generated.

    http_request, python_script and mcp_tool write skill.json, adapter.config.json, tests/basic.eval.json and
    the program (server.py or skill.py); agent_skill writes SKILL.md and evals/ for eval-skills fixtures.
    An existing folder is never overwritten.
    """
    from ..scaffold import create_skill

    folder = create_skill(name, template, output_dir, description)
    files = [str(path.relative_to(folder)) for path in sorted(p for p in folder.rglob("*") if p.is_file())]
    if template == "agent_skill":
        verb, command = "check it", f"eval-skills fixtures --skills-dir {output_dir}"
    else:
        verb, command = "evaluate it", (f"eval-skills eval --skills {folder} "
                                        f"--benchmark {folder / 'tests' / 'basic.eval.json'}")
    if as_json:
        echo_json(True, {"folder": str(folder), "template": template, "files": files, "next": command})
        return
    click.echo(f"created {folder}/ from template {template}")
    for path in files:
        click.echo(f"  {path}")
    click.echo(f"{verb}: {command}")
