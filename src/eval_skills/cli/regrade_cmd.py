"""``eval-skills regrade``: grade the runs a paired iteration already holds again, with the current assertions or
another judge, without running any agent; and refresh how far to trust the judge from the reviewers' marks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._agent_options import build_judge, judge_options, verdict_cache
from ._github import echo_json
from ._signals import exit_for, run_until_signalled

if TYPE_CHECKING:
    import asyncio


@click.command("regrade")
@click.argument("workspace", type=click.Path(path_type=Path))
@click.option("--iteration", type=click.IntRange(min=1), default=None,
              help="The iteration to grade again [default: the latest].")
@click.option("--evals", "evals_path", type=click.Path(path_type=Path), default=None,
              help="The evals file with the revised assertions [default: the one the iteration ran].")
@judge_options
@click.option("--resume", is_flag=True, help="Finish an interrupted regrade: runs already graded are kept.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Judge requests at once.")
@click.option("--agreement-only", is_flag=True,
              help="Grade nothing: recompute how far to trust the judge from the marks in feedback.json.")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="SQLite file recording the grades [default: the config's store, else ./eval-skills.db].")
@click.option("--no-store", is_flag=True, help="Do not record the grades in a store.")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Config file (its llm settings choose the judge) [default: ./eval-skills.config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the new benchmark.json to stdout.")
def regrade_command(**params: Any) -> None:
    """Grade the saved runs of a paired iteration again, with the assertions of the evals file as they are now
    or with another judge (--judge-cmd, --judge, --judge-model). No agent runs. The new grades are a new grading
    version: grading.json, benchmark.json and benchmark.md hold it, the earlier ones stay as .vN files.

    A case whose prompt or fixture files changed is refused (its runs answered another question); an added
    assertion is graded on every run, a removed one dropped; a verdict whose assertion, response and judge are
    unchanged is reused, not asked again.

    Exit 0 on success, 2 for bad input, 130 when interrupted (the grades that finished are kept: finish with
    --resume).
    """
    from ..config import default_store, load_config
    from ..paired.regrade import RegradeSettings, run_regrade

    config = load_config(params["config_path"])
    store_path = None if params["no_store"] else params["store"] or default_store(config)
    judge = None
    if not params["agreement_only"] and any(params.get(k) for k in ("judge", "judge_cmd", "judge_model")):
        judge = build_judge(params, config.llm, verdict_cache(params, store_path))
    settings = RegradeSettings(workspace=params["workspace"], iteration=params["iteration"],
                               evals_path=params["evals_path"], resume=params["resume"],
                               concurrency=params["concurrency"], agreement_only=params["agreement_only"])

    async def main(stop: asyncio.Event) -> Any:
        return await run_regrade(settings, judge=judge, store_path=store_path, stop=stop)

    outcome, received = run_until_signalled(main)
    if outcome.interrupted:
        click.echo(f"interrupted: {outcome.graded} runs graded into version {outcome.version} were kept (finish "
                   f"with eval-skills regrade {params['workspace']} --iteration {outcome.number} --resume)", err=True)
        exit_for(received)
    bench = outcome.benchmark
    if params["as_json"]:
        echo_json(True, bench.model_dump(mode="json") if bench else {})
        return
    if not params["agreement_only"]:
        changes = [f"{len(outcome.added)} assertions added", f"{len(outcome.removed)} removed",
                   f"{outcome.asked} judge verdicts asked", f"{outcome.reused} reused"]
        click.echo(f"{outcome.iteration.name}: grading version {outcome.version} ({'; '.join(changes)}; "
                   f"{outcome.graded} runs graded)")
    if bench is not None:
        click.echo(str((bench.model_extra or {}).get("verdict") or ""))
        trust = (bench.model_extra or {}).get("judge_trust") or {}
        if trust.get("marks"):
            overall = trust["overall"]
            kappa = "n/a" if overall["kappa"] is None else f"{overall['kappa']:.2f}"
            click.echo(f"judge against people: {trust['marks']} marks, agreement {overall['raw_agreement']:.2f}, "
                       f"kappa {kappa}")
    for file in outcome.files:
        click.echo(f"wrote {file}")
