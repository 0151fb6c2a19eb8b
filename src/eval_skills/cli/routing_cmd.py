"""``eval-skills routing``: does the agent pick the skill up when it should, and only then?"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import InputError
from . import EXIT_GATE_FAILED
from ._agent_options import agent_options, build_agent, one_agent
from ._github import echo_json, junit_option, routing_outputs
from ._optimize import check_optimize_flags, optimize_options, run_optimize_command
from ._options import FiniteFloat, GreedyCommand
from ._ray_options import connect_cluster, executor_options, on_ray, ray_executor
from ._signals import exit_for, run_until_signalled

if TYPE_CHECKING:
    import asyncio


def _queries(count: int) -> str:
    return f"{count} query" if count == 1 else f"{count} queries"


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


@click.command("routing", cls=GreedyCommand, greedy=("--distractors",))
@click.option("--skill-path", type=click.Path(path_type=Path), required=True,
              help="The skill's folder (it holds SKILL.md).")
@click.option("--routing", "routing_file", type=click.Path(path_type=Path),
              help="The queries, a JSON array of {query, should_trigger, invocation_type?} "
                   "[default: <skill>/evals/routing.json].")
@agent_options
@executor_options
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs of every query (2 or more give each trigger rate a Wilson interval).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Agent runs at once.")
@click.option("--distractors", multiple=True, type=click.Path(path_type=Path),
              help="Other skills installed beside it in every run: skill folders, or folders of skill folders. "
                   "Several may follow.")
@click.option("--workspace", type=click.Path(path_type=Path),
              help="Where routing-<n>/ is written [default: <skill>-workspace beside the skill].")
@click.option("--timeout", type=FiniteFloat(min=0, min_open=True), default=300.0, show_default=True,
              help="Seconds one agent run may take (a run that takes longer is an error).")
@click.option("--min-f1", type=FiniteFloat(0, 1), default=None, help="Exit 1 when F1 is below this.")
@click.option("--static", "static", is_flag=True,
              help="Check the description against the queries without running an agent.")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="SQLite file recording every run [default: the config's store, else ./eval-skills.db].")
@click.option("--no-store", is_flag=True, help="Do not record the test in a store.")
@click.option("--dry-run", is_flag=True,
              help="Make every check, print the plan (queries, skills, runs, the agent's command line) and stop: "
                   "nothing is run or written.")
@click.option("--json", "as_json", is_flag=True,
              help="Print routing_results.json (or the check, or with --dry-run the plan) on stdout.")
@optimize_options
@junit_option("routing-<n>")
def routing_command(**params: Any) -> None:
    """Run each routing query through an agent with the skill (and the distractors) installed, and measure
    whether it invokes the skill when it should and only then: precision, recall, F1, accuracy.

    Exit 0 on success, 1 when --min-f1 fails or every agent run failed (or --static finds a broken
    frontmatter), 2 for bad input, 130 when interrupted (the runs that finished are kept).

    With --optimize, improve the description instead (see docs/guides/optimize.md)."""
    from ..routing import (
        RunSettings,
        check_agent_reports_skills,
        check_min_f1,
        check_workspace,
        default_workspace,
        load_plan,
        load_queries,
        routing_file_of,
    )

    params = one_agent(params, "routing")
    check_optimize_flags(params)
    if params["static"]:
        if params["dry_run"]:
            raise InputError("--static runs no agent already: drop --dry-run", field="--dry-run")
        if params["min_f1"] is not None:
            raise InputError("--min-f1 needs agent runs, and --static runs none", field="--min-f1")
        _static(params["skill_path"], load_queries(routing_file_of(params["skill_path"], params["routing_file"])),
                params["as_json"])
        return

    plan = load_plan(params["skill_path"], params["routing_file"], params["distractors"], params["runs"])
    if params["min_f1"] is not None:
        check_min_f1(plan.queries, plan.routing_file)
    workspace = params["workspace"] or default_workspace(plan)
    check_workspace(workspace, plan)
    agent = build_agent(params, check=not on_ray(params))  # on Ray, checked on the nodes
    check_agent_reports_skills(agent)
    for warning in plan.skill.warnings:
        click.echo(f"warning: {plan.skill.path}: {warning}", err=True)
    for note in plan.notes:
        click.echo(f"warning: {note}", err=True)
    for path in agent.user_level_skills([plan.skill.name, *(d.name for d in plan.distractors)]):
        click.echo(f"warning: {path} is installed at user level too: the agent may see it in every run, "
                   "whatever the workspace holds", err=True)
    store_path = None
    if not params["no_store"]:
        from ..config import default_store, load_config

        store_path = params["store"] or default_store(load_config())
    settings = RunSettings(concurrency=params["concurrency"], timeout_s=params["timeout"],
                           max_turns=params["max_turns"], model=params["model"])
    executor = None
    if on_ray(params):  # only the list of files a run changed is kept: their bytes stay on the node
        executor = ray_executor(params, agent, connect_cluster(params), max_file_bytes=0)
    if params["optimize"]:
        run_optimize_command(params, plan, agent, settings, workspace, store_path, executor)
        return
    if params["dry_run"]:
        from ..routing.dry_run import dry_run_plan
        from ._dry_run import print_routing_plan

        print_routing_plan(dry_run_plan(plan, agent, settings, workspace, store_path), as_json=params["as_json"])
        return
    outcome, signum = _run(plan, agent, settings, workspace, store_path,
                           show_progress=not params["as_json"] and sys.stderr.isatty(), executor=executor)
    results = outcome.results
    gates = _gate_failures(results, params["min_f1"])
    passed = not gates and not outcome.interrupted
    written = routing_outputs(outcome, plan, params, passed=passed, failures=gates)
    if params["as_json"]:
        echo_json(passed, results.model_dump(mode="json"))
    else:
        _print_summary(outcome, store_path)
        for file in written:
            click.echo(f"wrote {file}")
    errors = results.metadata["error_runs"]
    if errors:
        click.echo(f"warning: {errors} of {results.metadata['finished_runs']} runs were errors (see routing.md); "
                   "they count neither as triggered nor as not", err=True)
    if outcome.interrupted:
        click.echo(f"interrupted: {results.metadata['finished_runs']} of {plan.total} runs finished and were "
                   "recorded", err=True)
        exit_for(signum)
    if gates:
        click.echo(gates[0] + (f"; see {outcome.folder / 'routing.md'}" if gates[0].startswith("nothing") else ""),
                   err=True)
        sys.exit(EXIT_GATE_FAILED)


def _gate_failures(results: Any, min_f1: float | None) -> list[str]:
    """Why the test failed: every agent run failed, or F1 is undefined or below ``min_f1`` ([] when it passed)."""
    errors, finished = results.metadata["error_runs"], results.metadata["finished_runs"]
    if finished and errors == finished:  # a wrong agent command, a missing key: no success
        first = next((run.error for q in results.queries for run in q.run_results if run.error), None)
        first = " ".join(str(first or "no reason given").split())
        first = first if len(first) <= 200 else first[:199] + "…"
        return [f"nothing measured: every agent run failed ({errors} error runs; the first: {first})"]
    if min_f1 is not None:
        f1 = results.metrics.f1
        if f1 is None:
            why = results.metrics.undefined.get("f1", "no query finished without error")
            return [f"quality gate failed: F1 is undefined ({why})"]
        if f1 < min_f1:
            return [f"quality gate failed: F1 {f1:.4f} is below {min_f1}"]
    return []


def _run(plan: Any, agent: Any, settings: Any, workspace: Path, store_path: Path | None, *,
         show_progress: bool, executor: Any = None) -> tuple[Any, int | None]:
    from ..routing import run_routing

    async def main(stop: asyncio.Event) -> Any:
        progress = None
        on_run = None
        if show_progress:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            progress = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            bar = progress.add_task("routing runs", total=plan.total)

            def on_run(_: Any) -> None:
                progress.advance(bar)

            progress.start()
        try:
            return await run_routing(plan, agent, settings, workspace=workspace, store_path=store_path,
                                     on_run=on_run, stop=stop, executor=executor)
        finally:
            if progress is not None:
                progress.stop()

    return run_until_signalled(main)


def _print_summary(outcome: Any, store_path: Path | None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    results = outcome.results
    console = Console() if sys.stdout.isatty() else Console(width=200)
    table = Table(title=f"routing: {escape(results.metadata['skill_name'])}", title_justify="left")
    for col in ("#", "query", "should", "type", "triggers", "errors", "rate", "result"):
        table.add_column(col, justify="right" if col in ("#", "triggers", "errors", "rate") else "left",
                         overflow="fold")
    for q in results.queries:
        rate = _rate(q.trigger_rate)
        if q.trigger_rate_ci is not None:
            rate += f" [{q.trigger_rate_ci[0]:.2f}, {q.trigger_rate_ci[1]:.2f}]"
        verdict = "n/a" if q.passed is None else ("pass" if q.passed else "[red]FAIL[/red]")
        table.add_row(str(q.index), escape(q.query), "yes" if q.should_trigger else "no",
                      escape(q.invocation_type or ""), f"{q.triggers}/{q.runs - q.errors}", str(q.errors), rate,
                      verdict)
    console.print(table)
    m = results.metrics
    console.print(f"precision {_rate(m.precision)}  recall {_rate(m.recall)}  f1 {_rate(m.f1)}  "
                  f"accuracy {_rate(m.accuracy)}  (tp {m.tp}, fp {m.fp}, fn {m.fn}, tn {m.tn})", highlight=False)
    for name, why in m.undefined.items():
        console.print(f"{name} is undefined: {escape(why)}", highlight=False)
    for name, g in m.by_invocation_type.items():
        console.print(f"  {escape(name)}: {_queries(g.queries)}, precision {_rate(g.precision)}, recall "
                      f"{_rate(g.recall)}, f1 {_rate(g.f1)}, accuracy {_rate(g.accuracy)}", highlight=False)
    console.print(f"results: {outcome.folder}", highlight=False)
    if outcome.routing_id:
        console.print(f"stored as routing test {outcome.routing_id} in {store_path}", highlight=False)


def _static(skill_path: Path, queries: list[Any], as_json: bool) -> None:
    from ..routing import static_check

    report = static_check(skill_path, queries)
    if as_json:
        echo_json(report.ok, report.to_json())
    else:
        click.echo(f"Description check of {report.skill_name or '(no name)'} ({report.skill_path}); no agent ran")
        click.echo(f"description: {report.description_chars} characters, {report.description_words} words")
        click.echo("key terms: " + (", ".join(report.key_terms) or "none"))
        for error in report.errors:
            click.echo(f"error: {error}")
        for warning in report.warnings:
            click.echo(f"warning: {warning}")
        for q in report.queries:
            share = "n/a" if q.overlap is None else f"{q.overlap:.2f}"
            mark = f"  <- {q.flag}" if q.flag else ""
            click.echo(f"{q.index:>3}. [{'should' if q.should_trigger else 'should not'}] shares "
                       f"{len(q.shared)} ({share}) {q.query!r}{mark}")
        s = report.summary()
        click.echo(f"{s['flagged']} of {_queries(s['queries'])} flagged; mean share of key terms: should trigger "
                   f"{_rate(s['mean_overlap_should_trigger'])}, should not "
                   f"{_rate(s['mean_overlap_should_not_trigger'])}")
        click.echo("This is a lexical check of the description; only agent runs measure routing.")
    if not report.ok:
        click.echo(f"description check failed: {len(report.errors)} frontmatter rule(s) broken", err=True)
        sys.exit(EXIT_GATE_FAILED)
