"""``eval-skills run``: find -> eval -> select -> report in one command.

It shares eval's options and code path (``prepare_evaluation`` and ``run_evaluation`` of ``eval_cmd``); reports are
written for the selected skills only, and every candidate's results are recorded in the store.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import InputError
from . import EXIT_GATE_FAILED
from ._eval_summary import print_failures, print_summary
from ._github import echo_json, publish_eval
from ._globals import make_console
from ._options import FiniteFloat, GreedyCommand
from .eval_cmd import (
    dry_run,
    eval_command,
    exit_if_interrupted,
    prepare_evaluation,
    resolve_settings,
    run_evaluation,
    warn_inputs,
)
from .select_cmd import print_selection, strategy_from

log = logging.getLogger("eval_skills.run")

# eval's options that run takes as they are (same names, defaults, help and config keys)
SHARED = ("benchmark", "tasks_file", "concurrency", "timeout", "scorer_timeout", "retries", "runs", "evaluator",
          "formats", "output_dir", "benchmarks_dir", "store", "no_store", "config_path", "as_json", "backoff",
          "dry_run", "strict_input")


@click.command("run", cls=GreedyCommand, greedy=("--format", "--benchmarks-dir", "--tag", "-t"))
@click.option("-q", "--query", default=None, help="Only skills matching these keywords (as find --query).")
@click.option("-t", "--tag", "tags", multiple=True, help="Only skills with ALL these tags.")
@click.option("-a", "--adapter", type=click.Choice(["http", "subprocess", "mcp", "langchain", "custom"]),
              default=None, help="Only skills of this adapter type.")
@click.option("--skills-dir", type=click.Path(path_type=Path), default="./skills", show_default=True,
              help="Folder scanned for skill.json files.")
@click.option("--strategy", "strategy_path", type=click.Path(path_type=Path), default=None,
              help="Selection strategy YAML/JSON (filters, sortBy, order, topK) [default: rank by compositeScore].")
@click.option("--min-completion", type=FiniteFloat(0, 1), default=0.7, show_default=True,
              help="Selection filter: minimum completion rate (a strategy file's minCompletionRate wins over "
                   "the default and the config, this flag wins over both).")
@click.option("--top-k", type=click.IntRange(min=0), default=None,
              help="Keep only the best K (0: all) [default: all].")
@click.option("--exit-on-fail", is_flag=True, help="Exit 1 when no skill is selected.")
@click.pass_context
def run_command(ctx: click.Context, **params: Any) -> None:
    """Find the skills of --skills-dir (filtered by --query, --tag, --adapter), evaluate them all on the
    benchmark, select and rank them (--strategy, --min-completion, --top-k), write the reports of the
    selected skills in every --format, and print the ranked list."""
    from ..config import load_config
    from ..tool_skills.discovery import find_skills, scan_skills
    from ..tool_skills.selection import select_skills

    config = load_config(params["config_path"])
    opts = resolve_settings(ctx, params, config)
    strategy = strategy_from(params["strategy_path"], None, params["top_k"])
    source = ctx.get_parameter_source("min_completion")
    if (source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")) \
            or strategy.filters.minCompletionRate is None:
        strategy.filters.minCompletionRate = opts["min_completion"]
    scan = scan_skills(params["skills_dir"])
    for problem in scan.problems:
        click.echo(f"warning: skipped {problem}", err=True)
    found = find_skills(scan.skills, query=params["query"], tags=params["tags"], adapter=params["adapter"])
    if not found:
        raise InputError("no skills match" + (f" the query {params['query']!r}" if params["query"] else ""),
                         file=str(params["skills_dir"]), hint="check --skills-dir, --query, --tag and --adapter")
    skills = [f.skill for f in found]
    log.info("found %d skill(s): %s", len(skills), ", ".join(s.id for s in skills))
    plan, settings = prepare_evaluation(skills, opts, params)
    with plan:
        if params["dry_run"]:
            dry_run(plan, settings, opts, params)
            return
        picked: list[Any] = []

        def keep(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
            """The reports written: those of the selected skills; after an interrupted run (nothing ranks on
            partial results) every skill's, holding what finished, as ``eval`` writes them."""
            picked.append(select_skills(skills, {r["skillId"]: r for r in reports}, strategy))
            if any(r.get("interrupted") for r in reports):
                return reports
            chosen = {s["skillId"] for s in picked[0].selected}
            return [r for r in reports if r["skillId"] in chosen]

        outcome, signalled = run_evaluation(plan, settings, opts, params, keep=keep)
    selection = picked[0] if picked else select_skills(skills, {}, strategy)
    chosen = {s["skillId"] for s in selection.selected}
    files = outcome.report_files
    gate_failed = params["exit_on_fail"] and not chosen
    passed = not gate_failed and not outcome.interrupted and signalled is None
    if params["as_json"]:
        echo_json(passed, {**selection.to_json(), "reportFiles": [str(f) for f in files],
                           "evaluationId": outcome.evaluation_id, "reports": outcome.reports}, default=str)
        if not chosen and not outcome.interrupted:
            click.echo("note: no skill met the selection: no report written", err=True)
    else:
        console = print_summary(make_console(), outcome.reports)
        if outcome.interrupted:
            console.print("no ranking: the run was interrupted and partial results are not ranked; the reports "
                          "of every skill hold what finished")
        else:
            print_selection(selection)
        for path in files:
            console.print(f"report: {path}", markup=False)
        if not chosen and not outcome.interrupted:
            console.print("no skill met the selection: no report written")
        if outcome.evaluation_id:
            console.print(f"stored as evaluation {outcome.evaluation_id} in {opts['store']}", markup=False)
        print_failures(console, outcome)
        warn_inputs(outcome.reports)
    publish_eval("run", outcome, plan, passed=passed, below=[], min_completion=opts["min_completion"],
                 gated=False, json_mode=params["as_json"], selected=sorted(chosen))
    exit_if_interrupted(outcome, signalled, plan.total)
    if gate_failed:
        click.echo("quality gate failed: no skill met the selection", err=True)
        sys.exit(EXIT_GATE_FAILED)


run_command.params[:0] = [p for p in eval_command.params if p.name in SHARED]
