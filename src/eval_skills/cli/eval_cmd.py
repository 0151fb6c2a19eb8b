"""``eval-skills eval``: evaluate tool skills on a benchmark."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import click

from ..config import Config, load_config
from ..errors import InputError
from ..reports import normalize_formats
from . import EXIT_GATE_FAILED, EXIT_INTERRUPTED
from ._agent_options import judge_options
from ._options import GreedyCommand, split_words


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def resolve_settings(ctx: click.Context, params: dict[str, Any], config: Config) -> dict[str, Any]:
    """Flags given on the command line win over the config files, which win over the defaults."""
    mapping = {"concurrency": "concurrency", "timeout": "timeoutMs", "retries": "retries", "runs": "runs",
               "evaluator": "evaluator", "output_dir": "outputDir", "store": "store",
               "min_completion": "minCompletion", "benchmark": "benchmark"}
    out = {flag: params[flag] if _given(ctx, flag) else getattr(config, key) for flag, key in mapping.items()}
    # a timeout the user chose (flag or config file) wins over the skill's adapter.config.json timeoutMs
    out["timeout_override"] = out["timeout"] if _given(ctx, "timeout") or "timeoutMs" in config.model_fields_set \
        else None
    out["formats"] = normalize_formats(split_words(params["formats"]) if params["formats"] else config.format)
    given = [Path(d) for d in params["benchmarks_dir"]]
    for folder in given:
        if not folder.is_dir():
            raise InputError("benchmarks folder not found", file=str(folder), hint="check --benchmarks-dir")
    default = Path(config.benchmarksDir)
    out["benchmarks_dirs"] = given or ([default] if default.is_dir() else [])
    out["llm"] = config.llm  # the judge of llm_judge tasks
    return out


def _summary_table(reports: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    table = Table(title="eval-skills results", title_justify="left")
    for col in ("skill", "version", "completion", "partial", "errors", "consistency", "p50 ms", "p95 ms",
                "composite"):
        table.add_column(col, justify="left" if col in ("skill", "version") else "right", no_wrap=True)
    def fmt(value: float | None, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    for r in reports:
        s, lat = r["summary"], r["latency"]
        table.add_row(r["skillId"], r["skillVersion"], fmt(s["completionRate"], ".2%"), fmt(s["partialScore"], ".4f"),
                      fmt(s["errorRate"], ".2%"), fmt(s["consistencyScore"], ".4f"), fmt(lat["p50Ms"], ".1f"),
                      fmt(lat["p95Ms"], ".1f"), fmt(s["compositeScore"], ".4f"))
    return table


@click.command("eval", cls=GreedyCommand, greedy=("--skills", "--format", "--benchmarks-dir"))
@click.option("--skills", "skills", multiple=True, required=True, type=click.Path(path_type=Path),
              help="Skill file(s) or folder(s); a folder is searched for skill.json. Several may follow.")
@click.option("--benchmark", default="coding-easy", show_default=True,
              help="Built-in benchmark id or path to a benchmark.json.")
@click.option("--tasks", "tasks_file", type=click.Path(path_type=Path),
              help="A task file (array of tasks or a benchmark object) used instead of --benchmark.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Tasks run at once.")
@click.option("--timeout", type=click.IntRange(min=1), default=30000, show_default=True,
              help="Per-task timeout in ms. A task's own timeoutMs wins; this wins over a skill's "
                   "adapter.config.json timeoutMs when given.")
@click.option("--retries", type=click.IntRange(min=0), default=0, show_default=True,
              help="Retries for errors and timeouts, with incremental backoff.")
@click.option("--runs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Repeat the benchmark N times (consistency needs 2 or more).")
@click.option("--evaluator", default="exact", show_default=True, help="Default scorer type.")
@click.option("--format", "formats", multiple=True,
              help="Report formats: json markdown html csv junit [default: json markdown].")
@click.option("--output-dir", type=click.Path(path_type=Path), default=Path("./reports"), show_default=True,
              help="Folder for the eval-result-<timestamp>.<ext> report files.")
@click.option("--exit-on-fail", is_flag=True, help="Exit 1 when a skill's completion rate is below --min-completion.")
@click.option("--min-completion", type=click.FloatRange(0, 1), default=0.7, show_default=True,
              help="The completion rate --exit-on-fail requires of every skill.")
@click.option("--dry-run", is_flag=True, help="Validate skills and tasks, print the plan, write nothing.")
@click.option("--benchmarks-dir", "benchmarks_dir", multiple=True, type=click.Path(path_type=Path),
              help="Folder(s) of user benchmarks, searched by id [default: ./benchmarks if present].")
@click.option("--store", type=click.Path(path_type=Path), default=Path("./eval-skills.db"), show_default=True,
              help="SQLite file recording every evaluation and task result.")
@click.option("--no-store", is_flag=True, help="Do not record the run in a store.")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path),
              help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the reports' JSON to stdout instead of a table.")
@click.option("--backoff", type=click.IntRange(min=0), default=500, show_default=True, hidden=True,
              help="Base retry backoff in ms (retry n waits n x backoff).")
@judge_options
@click.pass_context
def eval_command(ctx: click.Context, **params: Any) -> None:
    """Evaluate tool skills on a benchmark: skills x tasks x runs, scored, stored and reported."""
    from ..formats.skill import load_skills

    config = load_config(params["config_path"])
    opts = resolve_settings(ctx, params, config)
    plan, settings = prepare_evaluation(load_skills(list(params["skills"])), opts, params)
    if params["dry_run"]:
        dry_run(plan, settings, opts, params["as_json"])
        return
    outcome = _run(plan, settings, opts, params)
    if params["as_json"]:
        click.echo(json.dumps(outcome.reports, indent=2, ensure_ascii=False, default=str))
    else:
        from rich.console import Console

        console = Console() if sys.stdout.isatty() else Console(width=200)
        console.print(_summary_table(outcome.reports))
        for path in outcome.report_files:
            console.print(f"report: {path}", highlight=False)
        if outcome.evaluation_id:
            console.print(f"stored as evaluation {outcome.evaluation_id} in {opts['store']}", highlight=False)
    if outcome.interrupted:
        click.echo(f"interrupted: {len(outcome.results)} of {plan.total} items finished and were recorded",
                   err=True)
        sys.exit(EXIT_INTERRUPTED)
    if params["exit_on_fail"]:
        below = [r["skillId"] for r in outcome.reports
                 if (r["summary"]["completionRate"] or 0.0) < opts["min_completion"]]
        if below:
            click.echo(f"quality gate failed: completion rate below {opts['min_completion']} for "
                       + ", ".join(below), err=True)
            sys.exit(EXIT_GATE_FAILED)


def prepare_evaluation(skills: list[Any], opts: dict[str, Any], params: dict[str, Any]) -> tuple[Any, Any]:
    """The plan and run settings of an evaluation (shared by ``eval`` and ``run``); InputError if anything
    in the skills, the benchmark or the settings is wrong, or when tasks need a judge that cannot be used."""
    from ..formats.benchmark import load_tasks_file, resolve_benchmark
    from ..plan import build_plan
    from ..runner import RunSettings

    if params["tasks_file"] is not None:
        benchmark = load_tasks_file(params["tasks_file"])
    else:
        benchmark = resolve_benchmark(opts["benchmark"], opts["benchmarks_dirs"])
    source = benchmark.source
    plan = build_plan(skills, benchmark, runs=opts["runs"], default_evaluator=opts["evaluator"],
                      base_dir=source.parent if source else None,
                      benchmark_file=str(source) if source else None)
    if any(task.scorer_type == "llm_judge" for task in plan.tasks):  # checked now, before any task runs
        from ..judging import JudgeForScoring
        from ._agent_options import build_judge, verdict_cache

        store_path = None if params.get("no_store") else opts["store"]
        plan.scoring.judge = JudgeForScoring(build_judge(params, opts.get("llm"), verdict_cache(params, store_path)))
    settings = RunSettings(concurrency=opts["concurrency"], timeout_ms=opts["timeout"], retries=opts["retries"],
                           backoff_ms=params["backoff"], timeout_override_ms=opts["timeout_override"])
    return plan, settings


def dry_run(plan: Any, settings: Any, opts: dict[str, Any], as_json: bool) -> None:
    """Check what can be checked without running a task, print the plan, write nothing: adapter settings (type,
    command, token variable), then what needs the skill (a server started and its tools listed, a module
    imported; all stopped again), then the report folder."""
    from ..adapters import create_adapter
    from ..preflight import dry_run_notes
    from ..reports import prepare_output_dir

    adapters = {skill.id: create_adapter(skill) for skill in plan.skills}
    notes = asyncio.run(dry_run_notes(plan, adapters))
    prepare_output_dir(opts["output_dir"], opts["formats"], create=False)
    _print_plan(plan, settings, opts, as_json, notes)


def _print_plan(plan: Any, settings: Any, opts: dict[str, Any], as_json: bool, notes: dict[str, list[str]]) -> None:
    doc = {
        "skills": [{"id": s.id, "version": s.manifest.version, "adapterType": s.manifest.adapterType,
                    "path": str(s.path), "persistent": s.adapter.persistent} for s in plan.skills],
        "benchmark": {"id": plan.benchmark.id, "version": plan.benchmark.version, "tasks": len(plan.tasks)},
        "runs": plan.runs, "totalItems": plan.total, "concurrency": settings.concurrency,
        "timeoutMs": settings.timeout_ms, "retries": settings.retries,
        "inputMismatches": len(plan.input_problems),
        "preflight": notes,
    }
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"dry run: nothing executed, nothing written\nbenchmark {plan.benchmark.id} "
               f"{plan.benchmark.version}: {len(plan.tasks)} tasks")
    for s in doc["skills"]:
        click.echo(f"skill {s['id']} {s['version']} ({s['adapterType']}) {s['path']}")
        for line in notes.get(s["id"], []):
            click.echo(f"  {line}")
    click.echo(f"{len(plan.skills)} skills x {len(plan.tasks)} tasks x {plan.runs} runs = {plan.total} items")
    if plan.input_problems:
        click.echo(f"{len(plan.input_problems)} task inputs do not match a skill's inputSchema "
                   "(they will be recorded as errors)")


def _run(plan: Any, settings: Any, opts: dict[str, Any], params: dict[str, Any]) -> Any:
    from ..evaluation import evaluate

    show_progress = not params["as_json"] and sys.stderr.isatty()
    store_path = None if params["no_store"] else opts["store"]

    async def main() -> Any:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        progress = None
        on_result = None
        if show_progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            progress = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), transient=True)
            bar = progress.add_task("evaluating", total=plan.total)

            def on_result(_: Any) -> None:
                progress.advance(bar)

            progress.start()
        try:
            return await evaluate(plan, settings, store_path=store_path, output_dir=opts["output_dir"],
                                  formats=opts["formats"], on_result=on_result, stop=stop,
                                  run_info={"benchmark": plan.benchmark.id, "evaluator": opts["evaluator"],
                                            "formats": list(opts["formats"])})
        finally:
            if progress is not None:
                progress.stop()
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)

    return asyncio.run(main())
