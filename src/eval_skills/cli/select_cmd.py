"""``eval-skills select``: filter and rank candidate skills by their evaluation reports."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import InputError
from ._github import echo_json
from ._globals import fitted_table, make_console, print_fitted
from ._options import FiniteFloat, GreedyCommand

log = logging.getLogger("eval_skills.select")


def load_candidates(source: Path) -> list[Any]:
    """Candidate skills from a folder (every skill.json below it) or a JSON file listing skill paths:
    ``["a/skill.json", ...]``, ``[{"path": ...}, ...]`` (the output of ``find --json``), an object with a
    ``selected`` or ``skills`` list (the output of ``select``), or skill objects with the ``rootPath`` of
    their folder (what the original eval-skills' ``select --output`` writes). Relative paths are from the
    file's folder."""
    from ..formats._load import read_json
    from ..formats.skill import load_skills
    from ..tool_skills.discovery import scan_skills

    if source.is_dir():
        scan = scan_skills(source)
        for problem in scan.problems:
            click.echo(f"warning: skipped {problem}", err=True)
        return scan.skills
    data = read_json(source)
    if isinstance(data, dict):
        data = data.get("selected", data.get("skills"))
    if not isinstance(data, list):
        raise InputError("expected a folder, or a JSON list of skill paths (or of objects with a path or rootPath)",
                         file=str(source), field="$", hint="check --from")
    paths = []
    for index, item in enumerate(data):
        raw = item.get("path", item.get("rootPath")) if isinstance(item, dict) else item
        if not isinstance(raw, str):
            raise InputError("expected a skill path (or an object with a path or rootPath)", file=str(source),
                             field=f"$[{index}]")
        path = source.parent / raw
        if not path.exists():  # named by this file and index, not as a --skills path
            raise InputError(f"no such skill file or folder: {str(path)!r} (relative paths are from this file's "
                             "folder)", file=str(source), field=f"$[{index}]", hint="check --from")
        paths.append(path)
    return load_skills(paths)


def gather_reports(report_files: tuple[Path, ...], store: Path, skill_ids: list[str],
                   unfinished: dict[str, str] | None = None) -> dict[str, Any]:
    """The newest report per skill from the given report files, else the newest finished one in the results
    store (skills evaluated only in runs that did not finish get that run's status in ``unfinished``)."""
    from ..reports import load_report_file
    from ..tool_skills.discovery import latest_reports
    from ..tool_skills.selection import newest_by_skill

    if report_files:
        return newest_by_skill([r for path in report_files for r in load_report_file(path)])
    found = latest_reports(store, skill_ids, unfinished=unfinished)
    if not found and not store.is_file():
        raise InputError("no reports: pass --reports, or evaluate the skills first", file=str(store),
                         hint="eval-skills eval records every evaluation in this store")
    return found


def strategy_from(path: Path | None, min_completion: float | None, top_k: int | None) -> Any:
    from ..formats.strategy import Strategy, load_strategy

    strategy = load_strategy(path) if path is not None else Strategy()
    if min_completion is not None:
        strategy.filters.minCompletionRate = min_completion
    if top_k is not None:
        strategy.topK = top_k or None  # 0: no limit
    return strategy


def print_selection(selection: Any) -> None:
    def fmt(value: Any, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    table = fitted_table(f"selected {len(selection.selected)} skill(s), by {selection.strategy.sortBy}",
                         [("rank", "num"), ("skill", "id"), ("version", "fold"), ("adapter", "keep"),
                          *((name, "num") for name in ("completion", "errors", "p95 ms", "composite", "tokens"))],
                         keep=5)  # as the eval summary's skill column
    for s in selection.selected:
        table.add_row(str(s["rank"]), s["skillId"], s["version"], s["adapterType"], fmt(s["completionRate"], ".4f"),
                      fmt(s["errorRate"], ".4f"), fmt(s["latencyP95Ms"], ".1f"), fmt(s["compositeScore"], ".4f"),
                      fmt(s["totalTokens"], ",.0f"))
    print_fitted(table)
    console = make_console()
    for e in selection.excluded:
        console.print(f"excluded {e['skillId']}: {e['reason']}")


@click.command("select", cls=GreedyCommand, greedy=("--reports",))
@click.option("--from", "source", required=True, type=click.Path(path_type=Path),
              help="Candidate skills: a folder, or a JSON file listing skill paths (find --json, select output).")
@click.option("--reports", "report_files", multiple=True, type=click.Path(path_type=Path),
              help="Evaluation report JSON file(s); several may follow [default: the newest reports in the store].")
@click.option("--strategy", "strategy_path", type=click.Path(path_type=Path), default=None,
              help="Strategy YAML/JSON file (filters, sortBy, order, topK) [default: rank by compositeScore].")
@click.option("--min-completion", type=FiniteFloat(0, 1), default=None,
              help="Override the strategy's minCompletionRate filter.")
@click.option("--top-k", type=click.IntRange(min=0), default=None,
              help="Keep only the best K (0: all) [default: all].")
@click.option("--output", type=click.Path(path_type=Path), default=None,
              help="Write the selection JSON to this file [default: stdout].")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="Results store used when no --reports are given [default: the config's store].")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the selection JSON on stdout (also with --output).")
def select_command(source: Path, report_files: tuple[Path, ...], strategy_path: Path | None,
                   min_completion: float | None, top_k: int | None, output: Path | None, store: Path | None,
                   config_path: Path | None, as_json: bool) -> None:
    """Filter candidates by completion rate, error rate, P95 latency, adapter type and required tags, rank
    them by compositeScore, completionRate, latency or tokenCost, and keep the top K. On a terminal the selection
    is a table; piped, or with --json, it is JSON: {strategy, selected: [{rank, skillId, ...metrics}], excluded:
    [{skillId, reason}]}."""
    from ..config import default_store, load_config
    from ..tool_skills.selection import select_skills
    from .report_cmd import write_text

    strategy = strategy_from(strategy_path, min_completion, top_k)  # bad strategy: exit 2 before anything
    if not source.exists():
        raise InputError("no such file or folder", file=str(source), hint="check --from")
    for path in report_files:
        if not path.is_file():
            raise InputError("report file not found", file=str(path), hint="check --reports")
    skills = load_candidates(source)
    if not skills:  # an empty or wrong folder: say so rather than select nothing
        raise InputError("no candidate skills (no skill.json found)" if source.is_dir() else "lists no skill",
                         file=str(source), hint="check --from")
    unfinished: dict[str, str] = {}
    reports = gather_reports(report_files, store or default_store(load_config(config_path)), [s.id for s in skills],
                             unfinished)
    log.info("%d candidates, %d reports", len(skills), len(reports))
    selection = select_skills(skills, reports, strategy)
    for entry in selection.excluded:
        if entry["skillId"] in unfinished and entry["reason"] == "no evaluation report":
            entry["reason"] = f"no finished evaluation (the latest was {unfinished[entry['skillId']]})"
    benchmarks = sorted({str(s["benchmarkId"]) for s in selection.selected})
    if len(benchmarks) > 1:  # ranking scores of different benchmarks against each other misleads
        click.echo(f"warning: the selected skills' reports come from different benchmarks ({', '.join(benchmarks)}); "
                   "their scores are not comparable: pass reports of one benchmark", err=True)
    text = json.dumps(selection.to_json(), indent=2, ensure_ascii=False)
    if output is not None:
        write_text(output, text + "\n")
        click.echo(f"wrote {output}: {len(selection.selected)} selected, {len(selection.excluded)} excluded",
                   err=as_json)
    if as_json or (output is None and not sys.stdout.isatty()):  # piped: JSON, for scripts
        echo_json(True, selection.to_json())
    elif output is None:  # a terminal: the table (--json for the JSON)
        print_selection(selection)
