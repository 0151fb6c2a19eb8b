"""``eval-skills history``: a skill's past evaluations from the results store, newest first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ._github import echo_json
from ._globals import fitted_table, print_fitted


def _rate(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _change(value: Any) -> str:
    if value is None:
        return ""
    return "→ +0.0000" if value == 0 else f"{'▲' if value > 0 else '▼'} {value:+.4f}"


@click.command("history")
@click.option("--skill", "skill_id", required=True, help="The skill id.")
@click.option("--benchmark", default=None, help="Only evaluations on this benchmark id.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many evaluations.")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="The results store [default: the config's store, ./eval-skills.db].")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
def history_command(skill_id: str, benchmark: str | None, limit: int | None, store: Path | None,
                    config_path: Path | None, as_json: bool) -> None:
    """A skill's evaluations, newest first: date, benchmark, version, completion rate, P95, composite score,
    and the change from the evaluation before on the same benchmark."""
    from ..config import default_store, load_config
    from ..tool_skills.discovery import history

    store_path = store or default_store(load_config(config_path))
    rows = history(store_path, skill_id, benchmark, limit)
    if as_json:
        echo_json(True, {"evaluations": rows})
        return
    if not rows:  # a known skill with nothing on this benchmark: an empty listing, said on stderr
        click.echo(f"no evaluations of {skill_id} in {store_path}" + (f" on {benchmark}" if benchmark else ""),
                   err=True)
        return
    columns = [("date", "keep"), ("benchmark", "fold"), ("version", "fold"), ("status", "keep"),
               ("pass", "num"), ("p95 ms", "num"), ("composite", "num"), ("id", "keep")]
    table = fitted_table(f"{skill_id}: {len(rows)} evaluation(s), newest first; below each rate its change "
                         "from the evaluation before on the same benchmark", columns, keep=9)
    for r in rows:
        date = str(r["startedAt"]).replace("T", "\n")[:16]  # minutes are enough; the evaluation id is exact
        table.add_row(date, str(r["benchmarkId"]), str(r["skillVersion"]), str(r["status"]),
                      "\n".join(filter(None, (_rate(r["completionRate"]), _change(r["completionChange"])))),
                      "n/a" if r["p95Ms"] is None else f"{r['p95Ms']:.1f}",
                      "\n".join(filter(None, (_rate(r["compositeScore"]), _change(r["compositeChange"])))),
                      str(r["evaluationId"])[:8])
    print_fitted(table)
