"""``eval-skills eval``: evaluate tool skills on a benchmark."""

from __future__ import annotations

import gc
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import InputError
from ..reports import FORMATS, normalize_formats
from . import EXIT_GATE_FAILED
from ._agent_options import judge_options
from ._github import echo_json, publish_eval
from ._options import FiniteFloat, GreedyCommand, split_words
from ._ray_options import eval_scheduler, executor_options
from ._signals import exit_for, run_until_signalled

if TYPE_CHECKING:  # pydantic and asyncio are imported when a command runs, not for --help
    import asyncio

    from ..config import Config

log = logging.getLogger("eval_skills.eval")


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def resolve_settings(ctx: click.Context, params: dict[str, Any], config: Config) -> dict[str, Any]:
    """Flags given on the command line win over the config files, which win over the defaults."""
    if params["tasks_file"] is not None and _given(ctx, "benchmark"):
        raise click.UsageError("--tasks and --benchmark cannot be used together: give one of them", ctx=ctx)
    mapping = {"concurrency": "concurrency", "timeout": "timeoutMs", "retries": "retries", "runs": "runs",
               "evaluator": "evaluator", "output_dir": "outputDir", "store": "store",
               "min_completion": "minCompletion", "benchmark": "benchmark", "scorer_timeout": "scorerTimeoutMs"}
    out = {flag: params[flag] if _given(ctx, flag) else getattr(config, key) for flag, key in mapping.items()}
    if not _given(ctx, "store") and not params.get("no_store"):
        from ..config import default_store

        default_store(config)  # the config's store, with its note when it sits beside the original's store
    # a timeout the user chose (flag or config file) wins over the skill's adapter.config.json timeoutMs
    out["timeout_override"] = out["timeout"] if _given(ctx, "timeout") or "timeoutMs" in config.model_fields_set \
        else None
    # likewise retries: the user's win over a skill's adapter.config.json retries
    out["retries_override"] = out["retries"] if _given(ctx, "retries") or "retries" in config.model_fields_set \
        else None
    if params["formats"] and not split_words(params["formats"]):
        raise InputError("--format needs at least one format", field="--format",
                         hint=f"use one or more of: {', '.join(FORMATS)}")
    out["formats"] = normalize_formats(split_words(params["formats"]) if params["formats"] else config.format)
    given = [Path(d) for d in params["benchmarks_dir"]]
    for folder in given:
        if not folder.is_dir():
            raise InputError("benchmarks folder not found", file=str(folder), hint="check --benchmarks-dir")
    default = Path(config.benchmarksDir)
    out["benchmarks_dirs"] = given or ([default] if default.is_dir() else [])
    log.info("settings: concurrency %s, timeout %s ms, retries %s, runs %s, evaluator %s, formats %s, "
             "reports in %s, store %s (config: %s)", out["concurrency"], out["timeout"], out["retries"], out["runs"],
             out["evaluator"], " ".join(out["formats"]), out["output_dir"],
             "none" if params.get("no_store") else out["store"],
             ", ".join(f"{key}={getattr(config, key)!r}" for key in sorted(config.model_fields_set)) or "defaults")
    out["llm"] = config.llm  # the judge of llm_judge tasks
    return out


@click.command("eval", cls=GreedyCommand, greedy=("--skills", "--format", "--benchmarks-dir"))
@click.option("--skills", "skills", multiple=True, required=True, type=click.Path(path_type=Path),
              help="Skill file(s) or folder(s); a folder is searched for skill.json. Several may follow.")
@click.option("--benchmark", default="coding-easy", show_default=True,
              help="A built-in benchmark id, an id of a benchmark in --benchmarks-dir, or a path to a "
                   "benchmark.json.")
@click.option("--tasks", "tasks_file", type=click.Path(path_type=Path),
              help="A task file (array of tasks or a benchmark object) used instead of --benchmark.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Tasks run at once (lowered, with a note, when the open-file limit is too low for it).")
@click.option("--timeout", type=click.IntRange(min=1), default=30000, show_default=True,
              help="Per-task timeout in ms. A task's own timeoutMs wins; this wins over a skill's "
                   "adapter.config.json timeoutMs when given.")
@click.option("--scorer-timeout", type=click.IntRange(min=1), default=5000, show_default=True,
              help="Time in ms a scorer may take for one task; past it the task is an error naming the scorer.")
@click.option("--retries", type=click.IntRange(min=0), default=0, show_default=True,
              help="Retries for errors and timeouts, with incremental backoff. JSON-RPC errors (the skill "
                   "said no) and wrong answers are never retried.")
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Repeat the benchmark N times (consistency needs 2 or more).")
@click.option("--evaluator", default="exact", show_default=True, help="Default scorer type.")
@click.option("--format", "formats", multiple=True,
              help="Report formats: json markdown html csv junit [default: json markdown].")
@click.option("--output-dir", type=click.Path(path_type=Path), default="./reports", show_default=True,
              help="Folder for the eval-result-<timestamp>.<ext> report files.")
@click.option("--exit-on-fail", is_flag=True, help="Exit 1 when a skill's completion rate is below --min-completion.")
@click.option("--min-completion", type=FiniteFloat(0, 1), default=0.7, show_default=True,
              help="The completion rate --exit-on-fail requires of every skill.")
@click.option("--dry-run", is_flag=True, help="Validate skills and tasks, print the plan, write nothing.")
@click.option("--strict-input", is_flag=True,
              help="A task input that does not match the skill's inputSchema is the task's error "
                   "[default: sent anyway, with a warning].")
@click.option("--benchmarks-dir", "benchmarks_dir", multiple=True, type=click.Path(path_type=Path),
              help="Folder(s) of user benchmarks, searched by id [default: ./benchmarks if present].")
@click.option("--store", type=click.Path(path_type=Path), default="./eval-skills.db", show_default=True,
              help="SQLite file recording every evaluation and task result.")
@click.option("--no-store", is_flag=True, help="Do not record the run in a store.")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path),
              help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the reports' JSON to stdout instead of a table.")
@click.option("--backoff", type=click.IntRange(min=0), default=500, show_default=True, hidden=True,
              help="Base retry backoff in ms (retry n waits n x backoff).")
@judge_options
@executor_options
@click.option("--shard-tasks", type=click.IntRange(min=1), default=None,
              help="With --executor ray: tasks of one skill per Ray task [default: two shards per slot].")
@click.pass_context
def eval_command(ctx: click.Context, **params: Any) -> None:
    """Evaluate tool skills on a benchmark: skills x tasks x runs, scored, stored and reported."""
    gc.disable()  # loading (the imports, the models, the files) makes what lives until the end: nothing to collect
    try:
        from ..config import load_config
        from ..formats.skill import load_skills

        config = load_config(params["config_path"])
        opts = resolve_settings(ctx, params, config)
        plan, settings = prepare_evaluation(load_skills(list(params["skills"])), opts, params)
    finally:
        gc.freeze()  # left out of the collector's passes from now on (a pass would walk it all, in vain)
        gc.enable()
    with plan:
        if params["dry_run"]:
            dry_run(plan, settings, opts, params)
            return
        outcome, signalled = run_evaluation(plan, settings, opts, params, scheduler=eval_scheduler(plan, params))
    below = [r["skillId"] for r in outcome.reports
             if (r["summary"]["completionRate"] or 0.0) < opts["min_completion"]] if params["exit_on_fail"] else []
    passed = not below and not outcome.interrupted and signalled is None
    _show(outcome, opts, params["as_json"], passed)
    publish_eval("eval", outcome, plan, passed=passed, below=below, min_completion=opts["min_completion"],
                 gated=params["exit_on_fail"], json_mode=params["as_json"])
    exit_if_interrupted(outcome, signalled, plan.total)
    if below:
        click.echo(f"quality gate failed: completion rate below {opts['min_completion']} for "
                   + ", ".join(below), err=True)
        sys.exit(EXIT_GATE_FAILED)


def prepare_evaluation(skills: list[Any], opts: dict[str, Any], params: dict[str, Any]) -> tuple[Any, Any]:
    """The plan and run settings of an evaluation (shared by ``eval`` and ``run``); InputError if anything
    in the skills, the benchmark or the settings is wrong. The plan holds the custom scorers' workers: use it
    as a context manager (``with plan:``) so they are stopped.

    It also sets up the process for running skills: the open-file limit raised (and ``--concurrency``
    lowered, with a note, when the limit still allows fewer tasks at once), and the harness made a child
    subreaper, so orphans of a skill's descendants come to it and can be killed. When tasks need a judge
    (``llm_judge``), it is built and checked now, before any task runs."""
    from ..formats.benchmark import load_tasks_file, resolve_benchmark
    from ..procs import become_subreaper, fd_capacity, raise_fd_limit
    from ..tool_skills.plan import build_plan
    from ..tool_skills.runner import RunSettings

    notes: list[str] = []
    if params["tasks_file"] is not None:
        benchmark = load_tasks_file(params["tasks_file"])
    else:
        benchmark = resolve_benchmark(opts["benchmark"], opts["benchmarks_dirs"], notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if not params["no_store"]:
        from ..store import Store

        Store.check(opts["store"])  # a file that is not our store (the original's, say) stops us now
    raise_fd_limit()
    become_subreaper()
    concurrency = opts["concurrency"]
    capacity = fd_capacity()
    if capacity is not None and concurrency > capacity:
        click.echo(f"note: --concurrency {concurrency} lowered to {capacity}: the open-file limit allows no more "
                   "(raise it with ulimit -n)", err=True)
        concurrency = capacity
    source = benchmark.source
    plan = build_plan(skills, benchmark, runs=opts["runs"], default_evaluator=opts["evaluator"],
                      base_dir=source.parent if source else None, benchmark_file=str(source) if source else None,
                      scorer_timeout_s=opts["scorer_timeout"] / 1000, strict_input=params["strict_input"])
    if any(planned.scorer.name == "llm_judge" for planned in plan.tasks):
        from ..tool_skills.judging import JudgeForScoring
        from ._agent_options import build_judge, verdict_cache

        store_path = None if params.get("no_store") else opts["store"]
        plan.scoring.services["judge"] = JudgeForScoring(build_judge(params, opts.get("llm"),
                                                                     verdict_cache(params, store_path)))
    log.info("benchmark %s %s: %d tasks (%s)", benchmark.id, benchmark.version, len(plan.tasks),
             source or "built-in")
    for skill in skills:
        log.info("skill %s %s (%s) %s", skill.id, skill.manifest.version, skill.manifest.adapterType, skill.path)
    log.info("%d items: %d skills x %d tasks x %d runs", plan.total, len(skills), len(plan.tasks), plan.runs)
    settings = RunSettings(concurrency=concurrency, timeout_ms=opts["timeout"], retries=opts["retries"],
                           backoff_ms=params["backoff"], timeout_override_ms=opts["timeout_override"],
                           retries_override=opts["retries_override"])
    return plan, settings


def exit_if_interrupted(outcome: Any, signalled: int | None, total: int) -> None:
    """Exit 130 (Ctrl-C) or 143 (SIGTERM) after a run that was stopped, also by a signal that came while the
    reports were written; what finished is recorded."""
    if outcome.interrupted or signalled is not None:
        click.echo(f"interrupted: {len(outcome.results)} of {total} items finished and were recorded", err=True)
        exit_for(signalled)


def warn_inputs(reports: list[dict[str, Any]]) -> None:
    """One line naming the skills whose task inputs did not match their inputSchema (sent anyway)."""
    counts = [(r["skillId"], r["summary"].get("inputWarnings") or 0) for r in reports]
    counts = [(skill, n) for skill, n in counts if n]
    if counts:
        listed = ", ".join(f"{skill} {n}" for skill, n in counts)
        click.echo(f"warning: task inputs that do not match the skill's inputSchema were sent anyway ({listed}); "
                   "see \"warnings\" in the report, or use --strict-input to make them errors", err=True)


def _show(outcome: Any, opts: dict[str, Any], as_json: bool, passed: bool) -> None:
    if as_json:
        echo_json(passed, {"reports": outcome.reports, "reportFiles": [str(f) for f in outcome.report_files],
                           "evaluationId": outcome.evaluation_id}, default=str)
        return
    from ._eval_notes import failure_lines
    from ._plain_summary import plain_output

    lines = [f"report: {path}" for path in outcome.report_files]
    if outcome.evaluation_id:
        lines.append(f"stored as evaluation {outcome.evaluation_id} in {opts['store']}")
    lines += failure_lines(outcome.results, outcome.report_files)
    plain = plain_output(outcome.reports, lines)  # not a terminal, nothing but plain text: rich is not needed
    if plain is not None:
        sys.stdout.write(plain)
        sys.stdout.flush()
    else:
        from rich.console import Console

        from ._eval_summary import print_summary

        console = print_summary(Console(), outcome.reports)  # a terminal's width; piped: COLUMNS, else 80
        for line in lines:
            console.print(line, highlight=False, soft_wrap=True, markup=False)
    warn_inputs(outcome.reports)


def dry_run(plan: Any, settings: Any, opts: dict[str, Any], params: dict[str, Any]) -> None:
    """Check what a run would check first, print the plan, write nothing: adapter settings (type, command,
    token variable), then each adapter's preflight (a program that exists; a server started and its tools
    listed, a module imported; all stopped again), then the report folder (the store was checked already)."""
    import asyncio

    from ..adapters import create_adapter
    from ..reports import prepare_output_dir
    from ..tool_skills.preflight import dry_run_notes

    adapters = {skill.id: create_adapter(skill) for skill in plan.skills}
    notes = asyncio.run(dry_run_notes(plan, adapters))
    prepare_output_dir(opts["output_dir"], opts["formats"], create=False)
    doc = {
        "skills": [{"id": s.id, "version": s.manifest.version, "adapterType": s.manifest.adapterType,
                    "path": str(s.path), "persistent": s.adapter.persistent} for s in plan.skills],
        "benchmark": {"id": plan.benchmark.id, "version": plan.benchmark.version, "tasks": len(plan.tasks)},
        "runs": plan.runs, "totalItems": plan.total, "concurrency": settings.concurrency,
        "timeoutMs": settings.timeout_ms, "scorerTimeoutMs": opts["scorer_timeout"], "retries": settings.retries,
        "inputMismatches": len(plan.input_problems),
        "taskTimeoutsMs": {skill.id: {p.task.id: settings.timeout_for(p.timeout_ms, skill.adapter.timeoutMs)
                                      for p in plan.tasks} for skill in plan.skills},
        "preflight": notes,
    }
    if params["as_json"]:
        echo_json(True, doc)
        return
    click.echo(f"dry run: nothing executed, nothing written\nbenchmark {plan.benchmark.id} "
               f"{plan.benchmark.version}: {len(plan.tasks)} tasks")
    for s in doc["skills"]:
        click.echo(f"skill {s['id']} {s['version']} ({s['adapterType']}) {s['path']}")
        for line in notes.get(s["id"], []):
            click.echo(f"  {line}")
    click.echo(f"{len(plan.skills)} skills x {len(plan.tasks)} tasks x {plan.runs} runs = {plan.total} items")
    from ._eval_notes import overridden_timeout_note, timeout_lines

    for line in timeout_lines(plan, settings):
        click.echo(line)
    note = overridden_timeout_note(plan, settings)
    if note:
        click.echo(note.removeprefix("note: "))
    if log.isEnabledFor(logging.INFO):
        for skill in plan.skills:
            for planned in plan.tasks:
                log.info("task %s of %s: timeout %d ms", planned.task.id, skill.id,
                         settings.timeout_for(planned.timeout_ms, skill.adapter.timeoutMs))
    if plan.input_problems:
        fate = "recorded as errors" if plan.strict_input else "sent anyway, with a warning"
        click.echo(f"{len(plan.input_problems)} task inputs do not match a skill's inputSchema ({fate})")


def run_evaluation(plan: Any, settings: Any, opts: dict[str, Any], params: dict[str, Any],
                   keep: Any = None, scheduler: Any = None) -> tuple[Any, int | None]:
    """Run with a progress bar on a terminal; Ctrl-C and SIGTERM stop the run and keep what finished.
    Returns the outcome and the signal that stopped it, if one did. ``keep`` picks the reports written."""
    from ..tool_skills.evaluation import evaluate
    from ._eval_notes import overridden_timeout_note

    note = overridden_timeout_note(plan, settings)
    if note:
        click.echo(note, err=True)
    show_progress = not params["as_json"] and sys.stderr.isatty()
    store_path = None if params["no_store"] else opts["store"]

    async def main(stop: asyncio.Event) -> Any:
        progress = None
        bar: Any = None
        debug = log.isEnabledFor(logging.DEBUG)  # -vv: one line per task result

        def on_result(result: Any) -> None:
            if debug:
                latency = "n/a" if result.latency_ms is None else f"{result.latency_ms:.1f} ms"
                log.debug("%s / %s run %d: %s %s%s", result.skill_id, result.task_id, result.run_id,
                          result.status, latency, f" ({result.error})" if result.error else "")
            if progress is not None:
                progress.advance(bar)

        if show_progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            progress = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), transient=True)
            bar = progress.add_task("evaluating", total=plan.total)
            progress.start()
        try:
            return await evaluate(plan, settings, store_path=store_path, output_dir=opts["output_dir"],
                                  formats=opts["formats"], on_result=on_result, stop=stop,
                                  run_info={"benchmark": plan.benchmark.id, "evaluator": opts["evaluator"],
                                            "formats": list(opts["formats"]),
                                            "scorerTimeoutMs": opts["scorer_timeout"]}, keep=keep,
                                  **({"scheduler": scheduler} if scheduler is not None else {}))
        finally:
            if progress is not None:
                progress.stop()

    return run_until_signalled(main)
