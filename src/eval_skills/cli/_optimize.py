"""``eval-skills routing --optimize``: the options, the improver built from them, the run and its table."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import InputError
from . import EXIT_GATE_FAILED
from ._github import echo_json
from ._options import FiniteFloat
from ._signals import exit_for, run_until_signalled

if TYPE_CHECKING:
    import asyncio

__all__ = ["OPTIMIZE_ONLY", "build_improver", "optimize_options", "run_optimize_command"]

F = Callable[..., Any]
# option -> its flag: given without --optimize, it is refused rather than ignored
OPTIMIZE_ONLY = {"iterations": "--iterations", "holdout": "--holdout", "improver": "--improver",
                 "improver_model": "--improver-model", "improver_cmd": "--improver-cmd",
                 "budget_tokens": "--budget-tokens", "resume": "--resume", "write": "--write", "seed": "--seed"}
_RENAMED = {"--judge": "--improver", "--judge-model": "--improver-model", "--judge-cmd": "--improver-cmd"}


def optimize_options(fn: F) -> F:
    options = [
        click.option("--optimize", is_flag=True,
                     help="Improve the skill's description from these queries: split them into train and test, "
                          "run each candidate description, ask the improver for the next from the train failures, "
                          "and pick the candidate with the best held-out F1."),
        click.option("--iterations", type=click.IntRange(min=1), default=None,
                     help="Most candidates run, the original included [default: 5]."),
        click.option("--holdout", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=None,
                     help="Share of each class of queries kept aside as the test set [default: 0.4]."),
        click.option("--seed", type=int, default=None, help="Seeds the train/test split [default: 0]."),
        click.option("--improver", default=None,
                     help="The improver's backend, as --judge takes it: openai, anthropic or command [default: "
                          "command when --improver-cmd is given, else the config's llm.provider, else openai]."),
        click.option("--improver-model", default=None, help="The improver's model [default: the config's llm.model]."),
        click.option("--improver-cmd", default=None,
                     help="A program as improver: the improve request JSON on stdin, {\"description\": ...} on "
                          "stdout."),
        click.option("--budget-tokens", type=click.IntRange(min=1), default=None,
                     help="Start no agent run once the runs of this invocation have used this many tokens."),
        click.option("--resume", is_flag=True,
                     help="Continue the latest unfinished optimisation of the workspace (finished runs are kept)."),
        click.option("--write", is_flag=True,
                     help="Replace the description in SKILL.md with the winner's when it beats the original on "
                          "the held-out set (nothing else in the file changes)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def check_optimize_flags(params: dict[str, Any]) -> None:
    """Options of --optimize given without it, or options a routing test takes that --optimize does not."""
    if not params.get("optimize"):
        for key, flag in OPTIMIZE_ONLY.items():
            if params.get(key) not in (None, False):
                raise InputError("applies only with --optimize", field=flag, hint=f"add --optimize or drop {flag}")
        return
    for key, flag in (("static", "--static"), ("min_f1", "--min-f1")):
        if params.get(key) not in (None, False):
            raise InputError("is not available with --optimize", field=flag, hint=f"drop {flag}")


def build_improver(params: dict[str, Any], llm: dict[str, Any]) -> Any:
    """The improver: a judge backend built from ``--improver*`` as ``--judge*`` build a judge."""
    from ._agent_options import build_judge

    judge_params = {"judge": params.get("improver"), "judge_model": params.get("improver_model"),
                    "judge_cmd": params.get("improver_cmd"), "no_judge_cache": True}
    try:
        return build_judge(judge_params, llm)
    except InputError as exc:
        field = _RENAMED.get(exc.field or "", exc.field)
        hint = exc.hint
        for old, new in _RENAMED.items():
            hint = hint.replace(old, new) if hint else hint
        problem = exc.problem.replace("judge", "improver")
        raise InputError(problem, file=exc.file, field=field, hint=hint) from None


def run_optimize_command(params: dict[str, Any], plan: Any, agent: Any, settings: Any, workspace: Path,
                         store_path: Path | None, executor: Any = None) -> None:
    from ..config import load_config
    from ..routing.optimize import OptimizeSettings, find_resumable
    from ..routing.split import split_queries

    opt = OptimizeSettings(iterations=params["iterations"] or 5,
                           holdout=0.4 if params["holdout"] is None else params["holdout"],
                           seed=params["seed"] or 0, budget_tokens=params["budget_tokens"])
    split = split_queries(plan.queries, opt.holdout, opt.seed, file=str(plan.routing_file))  # before any run
    resumed = find_resumable(workspace) if params["resume"] else None
    improver = build_improver(params, load_config().llm)
    if params["dry_run"]:
        _dry_run(params, plan, agent, settings, workspace, store_path, opt, split, improver, resumed)
        return
    outcome, signum = _run(plan, agent, improver, opt, settings, workspace, store_path, params, executor)
    results = outcome.results
    if params["as_json"]:
        passed = not outcome.interrupted and results.metadata.get("stop_reason") != "errors"
        echo_json(passed, results.model_dump(mode="json"))
    else:
        print_table(results, outcome.folder)
    winner = results.winner
    if winner is not None and winner.warning:
        click.echo(f"warning: {winner.warning}", err=True)
    if outcome.interrupted:
        click.echo(f"interrupted: {len(results.candidates)} candidate(s) recorded in {outcome.folder}; continue "
                   "with --resume", err=True)
        exit_for(signum)
    if results.metadata.get("stop_reason") == "budget":
        click.echo(f"--budget-tokens reached: {results.metadata.get('stop_detail')}", err=True)
    if results.metadata.get("stop_reason") == "improver":
        click.echo(f"warning: stopped early: {results.metadata.get('stop_detail')}", err=True)
    if results.metadata.get("stop_reason") == "errors":
        click.echo(f"nothing measured: {results.metadata.get('stop_detail')}", err=True)
        sys.exit(EXIT_GATE_FAILED)
    if params["write"]:
        _write(plan, results)


def _dry_run(params: dict[str, Any], plan: Any, agent: Any, settings: Any, workspace: Path,
             store_path: Path | None, opt: Any, split: Any, improver: Any, resumed: Path | None) -> None:
    """The routing test's plan, then the optimisation's: the split, the stop rules, the improver."""
    from ..routing.dry_run import dry_run_plan
    from ._dry_run import print_routing_plan

    routing = dry_run_plan(plan, agent, settings, workspace, store_path)
    if resumed is not None:
        routing["results_folder"] = str(resumed)
    optimize = {"split": split.to_json(plan.queries), "iterations": opt.iterations,
                "budget_tokens": opt.budget_tokens, "resume": str(resumed) if resumed else None,
                "improver": {"backend": improver.backend, "model": improver.model},
                "agent_runs_per_candidate": plan.total, "write": bool(params["write"])}
    if params["as_json"]:
        print_routing_plan({**routing, "optimize": optimize}, as_json=True)
        return
    print_routing_plan(routing, as_json=False)
    counts = optimize["split"]["counts"]
    for name in ("train", "test"):
        indices = optimize["split"][name]
        click.echo(f"{name} ({len(indices)} queries, {counts[name]['should_trigger']} should trigger): "
                   + ", ".join(str(i) for i in indices))
    click.echo(f"optimize: at most {opt.iterations} candidates of {plan.total} agent runs each (the original first)"
               + (f", at most {opt.budget_tokens} tokens" if opt.budget_tokens else "")
               + f"; improver {improver.backend}" + (f", model {improver.model}" if improver.model else ""))


def _write(plan: Any, results: Any) -> None:
    from ..routing.optimize import fingerprint_of_skill
    from ..routing.rewrite_description import write_description

    winner = results.winner
    if winner is None or not winner.beats_original:
        click.echo(f"--write: {plan.skill.path} left as it is: no candidate beat the original description on the "
                   "held-out set", err=True)
        return
    if fingerprint_of_skill(plan) != results.metadata.get("fingerprint", {}).get("skill_md_sha256"):
        raise InputError("changed since the optimisation started: the description was not written",
                         file=str(plan.skill.path), field="--write", hint="rerun the optimisation")
    description = results.candidates[winner.number - 1].description
    path = write_description(plan.skill.folder, description)
    click.echo(f"--write: the description of candidate {winner.number} written to {path}", err=True)


def print_table(results: Any, folder: Path) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..routing.optimize_report import rate, stop_line

    console = Console() if sys.stdout.isatty() else Console(width=200)
    winner = results.winner.number if results.winner else None
    table = Table(title=f"optimize: {escape(str(results.metadata.get('skill_name')))}", title_justify="left")
    for col in ("#", "origin", "train P", "train R", "train F1", "test P", "test R", "test F1", "test F1 95%",
                "status"):
        table.add_column(col, justify="right" if col[0] in "#t" and col != "test F1 95%" else "left",
                         overflow="fold")
    for c in results.candidates:
        ci = f"[{c.test_f1_ci[0]:.2f}, {c.test_f1_ci[1]:.2f}]" if c.test_f1_ci else "–"
        cells = [rate(m) for part in (c.train, c.test) for m in
                 ((part.precision, part.recall, part.f1) if part else (None, None, None))]
        table.add_row(str(c.number), c.origin, *cells, ci, c.status + (" *" if c.number == winner else ""))
    console.print(table)
    for c in results.candidates:
        short = c.description if len(c.description) <= 160 else c.description[:159] + "…"
        console.print(f"{c.number}: {escape(short)}", highlight=False)
    split = results.split
    console.print(f"split: train {len(split.train)}, test {len(split.test)} queries (seed {split.seed}, holdout "
                  f"{split.holdout}); stopped: {escape(stop_line(results))}", highlight=False)
    w = results.winner
    if w is not None:
        line = f"winner: candidate {w.number} ({escape(w.why)})"
        if w.difference is not None:
            ci = f"[{w.difference_ci[0]:+.4f}, {w.difference_ci[1]:+.4f}]" if w.difference_ci else "n/a"
            line += f"; held-out F1 {rate(w.test_f1)} vs original {rate(w.original_test_f1)}, difference " \
                    f"{w.difference:+.4f} {ci}"
        console.print(line, highlight=False)
    console.print(f"results: {folder}", highlight=False)


def _run(plan: Any, agent: Any, improver: Any, opt: Any, settings: Any, workspace: Path, store_path: Path | None,
         params: dict[str, Any], executor: Any = None) -> tuple[Any, int | None]:
    from ..routing.optimize import run_optimize

    show = not params["as_json"] and sys.stderr.isatty()

    async def main(stop: asyncio.Event) -> Any:
        progress: Any = None
        on_run = on_step = None
        if show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            progress = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            bar = progress.add_task("starting", total=plan.total)

            def on_step(text: str) -> None:
                progress.update(bar, description=text, completed=0)

            def on_run(_: Any) -> None:
                progress.advance(bar)

            progress.start()
        try:
            return await run_optimize(plan, agent, improver, opt, settings, workspace=workspace,
                                      store_path=store_path, stop=stop, resume=params["resume"], on_run=on_run,
                                      on_step=on_step, executor=executor)
        finally:
            if progress is not None:
                progress.stop()

    return run_until_signalled(main)
