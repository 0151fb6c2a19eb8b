"""``eval-skills init``: a project folder with a commented config file, skills/, benchmarks/ and reports/."""

from __future__ import annotations

from pathlib import Path

import click

from ._github import echo_json


@click.command("init")
@click.option("--dir", "folder", type=click.Path(path_type=Path), default=".", show_default=True,
              help="The project folder (created if needed).")
@click.option("--force", is_flag=True, help="Replace an existing eval-skills.config.yaml.")
@click.option("--json", "as_json", is_flag=True, help='Print {"passed", "dir", "created": [paths]} as JSON.')
def init_command(folder: Path, force: bool, as_json: bool) -> None:
    """Create eval-skills.config.yaml (every setting commented at its default), skills/, benchmarks/ and
    reports/. An existing config file is kept unless --force."""
    from ..scaffold import init_project

    created = init_project(folder, force=force)
    if as_json:
        echo_json(True, {"dir": str(folder), "created": [str(p) for p in created]})
        return
    for path in created:
        click.echo(f"created {path}{'/' if path.is_dir() else ''}")
    click.echo("next: eval-skills create --name my_skill --from-template python_script "
               f"--output-dir {folder / 'skills'}")
