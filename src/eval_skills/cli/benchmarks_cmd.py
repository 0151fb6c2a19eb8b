"""``eval-skills benchmarks list|import``: the benchmarks at hand, and GAIA / ToolBench converted from local files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ._github import echo_json
from ._globals import fitted_table, group, print_fitted
from ._options import GreedyCommand, split_words


def _folders(given: tuple[Path, ...], config_path: Path | None) -> list[Path]:
    from ..config import load_config
    from ..errors import InputError

    for folder in given:
        if not folder.is_dir():
            raise InputError("benchmarks folder not found", file=str(folder), hint="check --benchmarks-dir")
    if given:
        return list(given)
    default = Path(load_config(config_path).benchmarksDir)
    return [default] if default.is_dir() else []


@group("benchmarks", "List benchmarks, or import GAIA and ToolBench ones.")
def benchmarks_group() -> None:
    """Benchmarks: the built-ins and your own (--benchmarks-dir), and converters for GAIA and ToolBench."""


@benchmarks_group.command("list", cls=GreedyCommand, greedy=("--benchmarks-dir",))
@click.option("--benchmarks-dir", "folders", multiple=True, type=click.Path(path_type=Path),
              help="Folder(s) of your benchmarks [default: the config's benchmarksDir, ./benchmarks, if present].")
@click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
              help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml].")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def list_command(folders: tuple[Path, ...], config_path: Path | None, as_json: bool) -> None:
    """Every benchmark with its source, domain, task count and scorers. Files that do not load are listed
    with their problem; gaia-v1 and toolbench-lite show how to import them until they are."""
    from ..catalog import list_benchmarks

    infos = list_benchmarks(_folders(folders, config_path))
    if as_json:
        echo_json(True, {"benchmarks": [i.to_json() for i in infos]})
        return
    table = fitted_table(f"{len(infos)} benchmark(s)", [("id", "fold"), ("domain", "fold"), ("tasks", "num"),
                                                         ("scorers", "fold"), ("source", "fold")])
    for i in infos:
        table.add_row(i.id, i.domain, "" if i.tasks is None else str(i.tasks), ", ".join(i.scorers),
                      i.source + (f": {i.problem}" if i.problem else ""))
    print_fitted(table)


@benchmarks_group.group("import", cls=type(benchmarks_group), no_args_is_help=False)
def import_group() -> None:
    """Convert a local copy of a public data set into a benchmark file (the data is never downloaded)."""


def _target(output: Path | None, benchmarks_dir: Path | None, config_path: Path | None, benchmark_id: str) -> Path:
    from ..config import load_config

    if output is not None:
        return output
    folder = benchmarks_dir or Path(load_config(config_path).benchmarksDir)
    return folder / f"{benchmark_id}.json"


def _report(benchmark: dict[str, object], skipped: int, why: str, target: Path, as_json: bool) -> None:
    tasks = benchmark["tasks"]
    count = len(tasks) if isinstance(tasks, list) else 0
    # found by id only as <dir>/<id>.json; a file named otherwise is given by its path
    found_by_id = target.name == f"{benchmark['id']}.json"
    ref = f"{benchmark['id']} --benchmarks-dir {target.parent}" if found_by_id else str(target)
    command = f"eval-skills eval --skills SKILL --benchmark {ref}"
    if as_json:
        echo_json(True, {"output": str(target), "id": benchmark["id"], "tasks": count, "skipped": skipped,
                               "next": command})
        return
    click.echo(f"wrote {target}: {count} tasks" + (f" ({skipped} {why} skipped)" if skipped else ""))
    click.echo(f"run it: {command}")


_COMMON = [
    click.option("--output", type=click.Path(path_type=Path), default=None,
                 help="The benchmark file to write [default: <benchmarks-dir>/<id>.json]."),
    click.option("--benchmarks-dir", type=click.Path(path_type=Path), default=None,
                 help="Folder the benchmark is written to [default: the config's benchmarksDir, ./benchmarks]."),
    click.option("--id", "benchmark_id", default=None, help="The benchmark's id."),
    click.option("--limit", type=click.IntRange(min=1), default=None, help="Keep only the first N tasks."),
    click.option("--force", is_flag=True, help="Replace an existing benchmark file."),
    click.option("-c", "--config", "config_path", type=click.Path(path_type=Path), default=None,
                 help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml]."),
    click.option("--json", "as_json", is_flag=True, help="Print the file written, its id and task count as JSON."),
]


def _common(fn: Any) -> Any:
    for option in reversed(_COMMON):
        fn = option(fn)
    return fn


@import_group.command("gaia")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--level", "levels", multiple=True, default=("1",), show_default=True,
              help="GAIA level(s) to keep: 1, 2, 3 or all (repeatable, or comma-separated).")
@_common
def gaia_command(file: Path, levels: tuple[str, ...], output: Path | None, benchmarks_dir: Path | None,
                 benchmark_id: str | None, limit: int | None, force: bool, config_path: Path | None,
                 as_json: bool) -> None:
    """Convert GAIA's validation metadata.jsonl (a local copy) into a benchmark scored by the gaia scorer,
    which applies GAIA's answer normalisation (numbers, comma/semicolon lists, text)."""
    from ..catalog import GAIA_ID, import_gaia, write_benchmark

    chosen = split_words(levels)
    wanted = ("1", "2", "3") if "all" in chosen else tuple(dict.fromkeys(chosen))
    benchmark, skipped = import_gaia(file, levels=wanted, limit=limit, benchmark_id=benchmark_id or GAIA_ID)
    target = write_benchmark(benchmark, _target(output, benchmarks_dir, config_path, str(benchmark["id"])),
                             force=force)
    metadata = benchmark.get("metadata")
    missing = metadata.get("missingAttachments", []) if isinstance(metadata, dict) else []
    if missing:
        click.echo(f"warning: {len(missing)} attachment(s) are not beside {file} ({', '.join(missing[:3])}"
                   f"{', ...' if len(missing) > 3 else ''}): those tasks give the skill the file name only",
                   err=True)
    _report(benchmark, skipped, "records without an answer", target, as_json)


@import_group.command("toolbench")
@click.argument("file", type=click.Path(path_type=Path))
@_common
def toolbench_command(file: Path, output: Path | None, benchmarks_dir: Path | None, benchmark_id: str | None,
                      limit: int | None, force: bool, config_path: Path | None, as_json: bool) -> None:
    """Convert ToolBench single-tool (G1) queries (a local G1_query.json) into a benchmark: a task passes when
    the answer names every relevant API."""
    from ..catalog import TOOLBENCH_ID, import_toolbench, write_benchmark

    benchmark, skipped = import_toolbench(file, limit=limit, benchmark_id=benchmark_id or TOOLBENCH_ID)
    target = write_benchmark(benchmark, _target(output, benchmarks_dir, config_path, str(benchmark["id"])),
                             force=force)
    _report(benchmark, skipped, "queries without relevant APIs", target, as_json)
