"""``eval-skills find``: search the skills of a folder by keyword, tag, adapter type or past results."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from ._github import echo_json
from ._globals import fitted_table, print_fitted
from ._options import FiniteFloat, GreedyCommand

log = logging.getLogger("eval_skills.find")


def _completion(found: Any) -> str:
    if found.report is None:
        return f"no finished evaluation ({found.unfinished})" if found.unfinished else "never evaluated"
    value = found.completion
    return "n/a" if value is None else f"{value:.2%} ({found.report.get('benchmarkId')})"


@click.command("find", cls=GreedyCommand, greedy=("--tag", "-t"))
@click.option("-q", "--query", default=None, help="Keywords matched against name, description and tags.")
@click.option("-t", "--tag", "tags", multiple=True,
              help="Only skills with ALL these tags (several may follow one flag).")
@click.option("-a", "--adapter", type=click.Choice(["http", "subprocess", "mcp", "langchain", "custom"]),
              default=None, help="Only skills of this adapter type.")
@click.option("--min-completion", type=FiniteFloat(0, 1), default=None,
              help="Only skills whose latest recorded completion rate is at least this (0 to 1).")
@click.option("--skills-dir", type=click.Path(path_type=Path), default="./skills", show_default=True,
              help="Folder scanned for skill.json files.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="At most this many results.")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="Results store read for past completion rates [default: the config's store, ./eval-skills.db].")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def find_command(query: str | None, tags: tuple[str, ...], adapter: str | None, min_completion: float | None,
                 skills_dir: Path, limit: int, store: Path | None, config_path: Path | None, as_json: bool) -> None:
    """Search skills. With --query they are ranked by relevance (name counts most, then tags, then the
    description); without, by the completion rate recorded in the store, highest first. Skills never
    evaluated say so. Skill files that cannot be read are reported on stderr and skipped."""
    from ..config import default_store, load_config
    from ..tool_skills.discovery import find_skills, scan_skills

    store_path = store or default_store(load_config(config_path))
    scan = scan_skills(skills_dir)
    for problem in scan.problems:
        click.echo(f"warning: skipped {problem}", err=True)
    log.info("%d skills in %s; store %s", len(scan.skills), skills_dir, store_path)
    found = find_skills(scan.skills, query=query, tags=tags, adapter=adapter, min_completion=min_completion,
                        limit=limit, store_path=store_path)
    if as_json:
        echo_json(True, {"skills": [f.to_json() for f in found]})
        return
    if not found:  # a search that matches nothing is an empty listing (exit 0), said on stderr
        click.echo(f"no skills match in {skills_dir}", err=True)
        return
    columns = [("#", "num"), ("id", "id"), ("version", "fold"), ("adapter", "keep"), ("tags", "fold"),
               ("completion", "fold")] + ([("relevance", "num")] if query else []) + [("path", "fold")]
    table = fitted_table(f"{len(found)} skill(s)", columns)
    for rank, f in enumerate(found, start=1):
        m = f.skill.manifest
        row = [str(rank), m.id, m.version, m.adapterType, ", ".join(m.tags), _completion(f)]
        row += [f"{f.relevance:g}"] if query else []
        table.add_row(*row, str(f.skill.path.parent))
    print_fitted(table)
