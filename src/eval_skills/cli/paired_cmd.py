"""``eval-skills paired``: run each eval case with the skill and without it (or with its previous version),
grade every run, and say how much the skill changes the result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import EXIT_GATE_FAILED
from ._agent_options import agent_options, build_agent, build_judge, judge_options, per_agent, verdict_cache
from ._github import echo_json, junit_option, paired_outputs
from ._options import FiniteFloat
from ._ray_options import connect_cluster, executor_options, on_ray, ray_executor
from ._signals import exit_for, run_until_signalled

if TYPE_CHECKING:
    import asyncio


def _warn(text: str) -> None:
    click.echo(f"warning: {text}", err=True)


@click.command("paired")
@click.option("--skill-path", required=True, type=click.Path(path_type=Path),
              help="The skill folder (holding SKILL.md and evals/evals.json).")
@click.option("--baseline-skill-path", type=click.Path(path_type=Path), default=None,
              help="A previous version of the skill: the baseline arm is old_skill instead of without_skill.")
@click.option("--evals", "evals_path", type=click.Path(path_type=Path), default=None,
              help="The eval cases [default: <skill>/evals/evals.json].")
@click.option("--workspace", type=click.Path(path_type=Path), default=None,
              help="Where iterations are written [default: <skill>-workspace/ beside the skill].")
@click.option("--iteration", type=click.IntRange(min=1), default=None,
              help="The iteration number [default: the next free one; with --resume, the latest].")
@agent_options
@judge_options
@executor_options
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per case and arm (pass@k and pass^k need 2 or more).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Agent runs at once (grading overlaps with running).")
@click.option("--timeout", type=FiniteFloat(min=0, min_open=True), default=600.0, show_default=True,
              help="Seconds one agent run may take.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seeds the run order, the A/B labels, and the Monte Carlo test and interval above 16 cases.")
@click.option("--feedback", "feedback_path", type=click.Path(path_type=Path), default=None,
              help="A feedback.json to start this iteration's reviews from [default: one empty review per run].")
@click.option("--no-compare", is_flag=True, help="Skip the blind A/B comparison.")
@click.option("--budget-tokens", type=click.IntRange(min=1), default=None,
              help="Start no new run once the agent runs of this invocation have used this many tokens.")
@click.option("--resume", is_flag=True,
              help="Finish an interrupted iteration: finished runs are kept, graded runs are not judged again.")
@click.option("--adaptive", is_flag=True,
              help="Run the --runs in rounds (run 1 of every case and arm, then run 2, ...) and start no further "
                   "round once the verdict cannot change; the interval stays valid under this stopping.")
@click.option("--target-delta", type=FiniteFloat(min=0, min_open=True, max=1), default=None,
              help="The lift worth detecting (0.15 = 15 points): the design is judged against it (default 0.2), "
                   "and --adaptive also stops once no lift larger than this remains possible.")
@click.option("--fail-underpowered", is_flag=True,
              help="Exit 1 when the design cannot detect the target lift with 80% power.")
@click.option("--plan", "plan_only", is_flag=True,
              help="Run nothing: read an iteration (--iteration, else the latest) as a pilot and print what "
                   "detecting --target-delta would take.")
@click.option("--compare-iterations", nargs=2, type=click.IntRange(min=1), default=None, metavar="A B",
              help="Run nothing: compare iteration B of the workspace with iteration A, case by case; refused "
                   "when the model, the agent CLI's version, the test set, the fixtures or the grading rule differ.")
@click.option("--allow-different", multiple=True,
              type=click.Choice(["model", "agent-version", "test-set", "fixtures", "grading"]),
              help="With --compare-iterations: compare although this condition differs (said in every output).")
@click.option("--check-assertions", is_flag=True,
              help="Before any agent runs, grade each case's expected_output and an empty response: report "
                   "assertions the expected output fails and ones an empty response passes.")
@click.option("--strict-assertions", is_flag=True,
              help="As --check-assertions, and exit 1 before any agent runs when it finds either.")
@click.option("--min-delta", type=FiniteFloat(), default=None,
              help="Exit 1 when the pass-rate delta (with_skill minus baseline) is below this.")
@click.option("--min-delta-ci", type=FiniteFloat(), default=None,
              help="Exit 1 when the lower bound of the delta's 95% interval is below this.")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="SQLite file recording every run and verdict [default: the config's store, else ./eval-skills.db].")
@click.option("--no-store", is_flag=True, help="Do not record the runs in a store.")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Config file (its llm settings choose the judge) [default: ./eval-skills.config.yaml].")
@click.option("--dry-run", is_flag=True,
              help="Make every check, print the plan (cases, arms, runs, the agent's command line, the judge) and "
                   "stop: nothing is run or written.")
@click.option("--json", "as_json", is_flag=True,
              help="Print benchmark.json to stdout instead of the summary (with --dry-run: the plan).")
@junit_option("iteration-<n>")
@click.pass_context
def paired_command(ctx: click.Context, **params: Any) -> None:
    """Does the skill make the agent's work better? Each case runs with the skill and without it (or with
    --baseline-skill-path), in a fresh folder per run, graded, compared blind, and summarised with the
    pass-rate delta, its 95% interval and a p-value.

    Exit 0 on success, 1 when --min-delta or --min-delta-ci fails or nothing could be measured (every agent run
    failed, or no case has a graded run in both arms), 2 for bad input, 130 when interrupted (every finished run
    is kept: finish with --resume).
    """
    from ..config import default_store, load_config
    from ..formats._load import load_model
    from ..formats.workspace import Feedback
    from ..paired import LocalExecutor, PairedSettings, load_plan, resolve_iteration

    if params["adaptive"] and params["runs"] < 2:
        raise click.UsageError("--adaptive needs --runs 2 or more (it stops between rounds of runs)")
    plan = load_plan(params["skill_path"], baseline_path=params["baseline_skill_path"],
                     evals_path=params["evals_path"], runs=params["runs"], seed=params["seed"])
    if params["compare_iterations"]:
        from ._paired_plan import print_comparison

        workspace = params["workspace"] or plan.skill_path.resolve().parent / f"{plan.skill.name}-workspace"
        first, second = params["compare_iterations"]
        print_comparison(workspace, first, second, set(params["allow_different"]), seed=params["seed"],
                         as_json=params["as_json"])
        return
    if params["plan_only"]:
        from ._paired_plan import print_plan

        workspace = params["workspace"] or plan.skill_path.resolve().parent / f"{plan.skill.name}-workspace"
        print_plan(workspace, params["iteration"], params["target_delta"], as_json=params["as_json"])
        return
    feedback = load_model(Feedback, params["feedback_path"]) if params["feedback_path"] else None
    workspace = params["workspace"] or plan.skill_path.resolve().parent / f"{plan.skill.name}-workspace"
    agent_sets = per_agent(params)
    several = len(agent_sets) > 1
    places = [workspace / "agents" / str(p["agent"]) if several else workspace for p in agent_sets]
    for place in places:
        resolve_iteration(place, params["iteration"], params["resume"])  # a taken iteration fails here
    config = load_config(params["config_path"])
    ray = on_ray(params)  # on Ray, the agents are checked on the nodes
    agents = [build_agent(p, check=not ray) for p in agent_sets]  # every agent checked before any runs
    cluster = connect_cluster(params) if ray else None
    remote = {id(agent): ray_executor(params, agent, cluster) for agent in agents} if cluster is not None else {}
    compare = not params["no_compare"]
    store_path = None if params["no_store"] else params["store"] or default_store(config)
    cache = None if params["dry_run"] else verdict_cache(params, store_path)
    judge = build_judge(params, config.llm, cache) if plan.needs_judge or compare else None
    checked = None
    if (params["check_assertions"] or params["strict_assertions"]) and not params["dry_run"]:
        checked = _check_assertions(plan, judge, strict=params["strict_assertions"])
    for text in plan.warnings:
        _warn(text)
    outcomes = []
    for one, agent, place in zip(agent_sets, agents, places, strict=True):
        notes = []
        user_level = agent.user_level_skills([plan.skill.name])
        if user_level:
            notes.append(f"A skill named {plan.skill.name!r} is installed at user level ({user_level[0]}): the "
                         f"agent may load it in the {plan.baseline} runs too, so the baseline is not clean.")
        for text in notes:
            _warn(text)
        settings = PairedSettings(
            workspace=place, iteration=params["iteration"], resume=params["resume"],
            concurrency=params["concurrency"], timeout=params["timeout"], max_turns=params["max_turns"],
            model=one["model"], compare=compare, budget_tokens=params["budget_tokens"], feedback=feedback,
            agent={"agent": agent.name, "skills_subdir": agent.skills_subdir, "baseline_clean": not user_level,
                   "isolation": agent.isolation(), "agent_version": None if params["dry_run"] else agent.cli_version()},
            notes=tuple(notes), adaptive=params["adaptive"], target_delta=params["target_delta"],
            assertion_check=checked)
        if params["dry_run"]:
            from ..paired.dry_run import dry_run_plan
            from ._dry_run import print_paired_plan

            print_paired_plan(dry_run_plan(plan, settings, agent, judge, store_path), as_json=params["as_json"])
            continue
        executor = remote.get(id(agent)) or LocalExecutor(agent, concurrency=params["concurrency"])
        outcome, received = _run(plan, settings, executor, judge, store_path, show_progress=not params["as_json"])
        gates = _gates(outcome.benchmark, params["min_delta"], params["min_delta_ci"], params["fail_underpowered"])
        passed = not (gates or outcome.unmeasured or outcome.interrupted)
        outcomes.append((one, outcome, gates, passed))
        label = f"agent {one['agent']}: " if several else ""
        written = paired_outputs(outcome, plan, params, passed=passed, failures=gates, label=label)
        if params["as_json"] and not several:
            echo_json(passed, outcome.benchmark.model_dump(mode="json"))
        elif not params["as_json"]:
            if several:
                click.echo(f"agent {agent.name}" + (f" (model {one['model']})" if one["model"] else "") + ":")
            _print_summary(outcome, plan)
            for file in written:
                click.echo(f"wrote {file}")
        if outcome.interrupted:
            _interrupted(outcome, plan, received)
    if params["dry_run"]:
        return
    if several:
        _portability(plan, [(one, outcome) for one, outcome, _, _ in outcomes], workspace, as_json=params["as_json"],
                     seed=params["seed"], passed=all(passed for *_, passed in outcomes))
    for _, outcome, _, _ in outcomes:
        if outcome.cut_short == "budget":
            _warn(f"--budget-tokens reached: {len(outcome.missing)} runs not started (finish with --resume "
                  f"--iteration {outcome.number})")
    for _, outcome, _, _ in outcomes:
        if outcome.unmeasured:
            click.echo(f"nothing measured: {outcome.unmeasured}; see {outcome.iteration / 'benchmark.md'}",
                       err=True)
            sys.exit(EXIT_GATE_FAILED)
    for one, _, gates, _ in outcomes:
        if gates:
            click.echo("quality gate failed: " + (f"agent {one['agent']}: " if several else "") + "; ".join(gates),
                       err=True)
            sys.exit(EXIT_GATE_FAILED)


def _interrupted(outcome: Any, plan: Any, received: int | None) -> None:
    meta = outcome.benchmark.metadata
    left = [f"{len(outcome.missing)} of {plan.total} runs missing"]
    left += [f"{len(meta['ungraded_runs'])} not graded"] if meta.get("ungraded_runs") else []
    pending = meta.get("pending_comparisons")
    left += [f"{len(pending)} run pairs not compared"] if pending else []
    click.echo(f"interrupted: {', '.join(left)}; every finished run was kept (finish with --resume "
               f"--iteration {outcome.number})", err=True)
    exit_for(received)


def _portability(plan: Any, outcomes: list[Any], workspace: Path, *, as_json: bool, seed: int, passed: bool) -> None:
    from ..paired.portability import portability, write_portability

    report = portability([(str(one["agent"]), one["model"], outcome.benchmark, outcome.iteration)
                          for one, outcome in outcomes], seed=seed)
    files = write_portability(workspace / "agents", report)
    if as_json:
        echo_json(passed, {"portability": report, "benchmarks": {
            str(one["agent"]): outcome.benchmark.model_dump(mode="json") for one, outcome in outcomes}})
        return
    click.echo(report["verdict"])
    for file in files:
        click.echo(f"wrote {file}")


def _check_assertions(plan: Any, judge: Any, *, strict: bool) -> list[dict[str, Any]]:
    import asyncio

    from ..formats.untrusted import shown_text
    from ..paired.assertion_check import check_assertions

    findings = asyncio.run(check_assertions(plan, judge))
    said = {"contradicts": "fails on the case's own expected_output", "checks_nothing": "passes an empty response",
            "judge_error": "got no verdict from the judge"}
    for f in findings:
        evidence = " ".join(shown_text(f.evidence).split())[:200]
        _warn(f"eval {f.eval_id}: the assertion {shown_text(f.assertion)!r} {said[f.kind]} ({evidence})")
    problems = [f for f in findings if f.kind != "judge_error"]
    click.echo(f"assertion check: {len(plan.cases)} cases, "
               f"{sum(f.kind == 'contradicts' for f in findings)} assertions contradict their case, "
               f"{sum(f.kind == 'checks_nothing' for f in findings)} check nothing", err=True)
    if strict and problems:
        click.echo("assertion check failed (--strict-assertions): fix the assertions before running agents",
                   err=True)
        sys.exit(EXIT_GATE_FAILED)
    return [f.as_dict() for f in findings]


def _gates(bench: Any, min_delta: float | None, min_delta_ci: float | None,
           fail_underpowered: bool = False) -> list[str]:
    """The quality gates that failed, each said in a phrase ([] when none did)."""
    delta = bench.statistics.pass_rate_delta if bench.statistics else None
    failed = []
    design = (bench.statistics.design if bench.statistics else None) or {}
    if fail_underpowered and design.get("underpowered"):
        mde = design.get("minimum_detectable_effect")
        failed.append(f"the design is underpowered: it detects "
                      f"{'no lift' if mde is None else f'lifts of {mde * 100:.0f} pp or more'} with 80% power, "
                      f"not {design['target_delta'] * 100:.0f} pp (--fail-underpowered)")
    if min_delta is not None:
        estimate = delta.estimate if delta else None
        if estimate is None or estimate < min_delta:
            failed.append(f"pass-rate delta {'n/a' if estimate is None else f'{estimate:+.4f}'} is below "
                          f"--min-delta {min_delta:+g}")
    if min_delta_ci is not None:
        low = delta.ci_low if delta else None
        if low is None or low < min_delta_ci:
            failed.append(f"the interval's lower bound {'n/a' if low is None else f'{low:+.4f}'} is below "
                          f"--min-delta-ci {min_delta_ci:+g}")
    return failed


def _run(plan: Any, settings: Any, executor: Any, judge: Any, store_path: Path | None,
         *, show_progress: bool) -> tuple[Any, int | None]:
    import asyncio

    from ..paired import run_paired, thread_pool

    async def main(stop: asyncio.Event) -> Any:
        asyncio.get_running_loop().set_default_executor(thread_pool(settings.concurrency))
        progress = bar = None
        on_progress = None
        if show_progress and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            progress = Progress("runs", BarColumn(), MofNCompleteColumn(),
                                TextColumn("errors {task.fields[errors]}  tokens {task.fields[tokens]:,}  "
                                           "grading {task.fields[grading]}"),
                                TimeElapsedColumn(), transient=True)
            bar = progress.add_task("runs", total=plan.total, errors=0, tokens=0, grading=0)

            def on_progress(p: Any) -> None:
                progress.update(bar, completed=p.done, errors=p.errors, tokens=p.tokens, grading=p.grading)

            progress.start()
        try:
            return await run_paired(plan, settings, executor=executor, judge=judge, store_path=store_path,
                                    on_progress=on_progress, stop=stop)
        finally:
            if progress is not None:
                progress.stop()

    return run_until_signalled(main)


def _print_summary(outcome: Any, plan: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..paired.report import ARM_LABELS, ab_sentence

    bench = outcome.benchmark
    console = Console(stderr=False, width=None if sys.stdout.isatty() else 200, highlight=False, markup=False)
    summary = bench.run_summary
    table = Table(title=f"{plan.skill.name}: iteration {outcome.number}", title_justify="left")
    for column in ("arm", "pass rate", "time (s)", "tokens", "runs", "error runs", "judge errors"):
        table.add_column(column, justify="left" if column == "arm" else "right", no_wrap=True)

    def stat(value: Any, spec: str) -> str:
        if not value or value.get("mean") is None:
            return "n/a"
        return f"{format(value['mean'], spec)} ± {format(value['stddev'], spec)}"

    for arm in plan.arms:
        s = summary[arm]
        tokens = ("≈" if s.get("tokens_estimated") else "") + stat(s.get("tokens"), ".0f")
        table.add_row(arm, stat(s.get("pass_rate"), ".2f"), stat(s.get("time_seconds"), ".1f"), tokens,
                      str(s.get("runs")), str(s.get("errors")), str(s.get("judge_errors")))
    delta = summary.get("delta") or {}

    def signed(value: Any, spec: str) -> str:
        return "n/a" if value is None else format(value, "+" + spec)

    rate = delta.get("pass_rate")  # in percentage points, as in the verdict and on the review page
    table.add_row("delta", "n/a" if rate is None else f"{rate * 100:+.1f} pp", signed(delta.get("time_seconds"), ".1f"),
                  signed(delta.get("tokens"), ".0f"), "", "", "")
    console.print(table)
    if bench.comparison is not None:
        ab = bench.comparison
        console.print(ab_sentence(ab, ARM_LABELS.get(plan.baseline, plan.baseline)))
    verdict = (bench.model_extra or {}).get("verdict", "")
    console.print(verdict)
    design = (bench.statistics.design if bench.statistics else None) or {}
    if design.get("underpowered") and not verdict.startswith("Too little data"):
        from ..paired.power import design_sentence

        console.print(f"Underpowered: {design_sentence(design)}")
    for file in outcome.files:
        console.print(f"wrote {file}")
