"""``eval-skills paired --plan`` (an iteration read as a pilot, and what a design able to detect the target
lift would take) and ``--compare-iterations A B``. Both run nothing and write nothing."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError
from ..formats._load import load_model
from ..formats.workspace import Benchmark
from ..paired.power import design_section, design_sentence
from ._github import echo_json


def _iteration_folder(workspace: Path, iteration: int | None) -> Path:
    if iteration is not None:
        folder = workspace / f"iteration-{iteration}"
        if not (folder / "benchmark.json").is_file():
            raise InputError("has no benchmark.json to plan from", file=str(folder), field="--iteration",
                             hint="name a finished iteration of this workspace")
        return folder
    found = sorted((int(p.name.split("-", 1)[1]), p) for p in workspace.glob("iteration-*")
                   if p.name.split("-", 1)[1].isdigit() and (p / "benchmark.json").is_file())
    if not found:
        raise InputError("holds no iteration with a benchmark.json to plan from", file=str(workspace),
                         field="--plan", hint="run a small pilot first (a few cases, 2 or 3 runs), then --plan")
    return found[-1][1]


def print_plan(workspace: Path, iteration: int | None, target: float | None, *, as_json: bool) -> None:
    folder = _iteration_folder(workspace, iteration)
    bench = load_model(Benchmark, folder / "benchmark.json")
    arms = bench.metadata.get("configurations") or [a for a in bench.run_summary if a != "delta"]
    if len(arms) != 2:
        raise InputError("does not name the two arms of a paired iteration", file=str(folder / "benchmark.json"),
                         field="metadata.configurations")
    section = design_section(bench.runs, (arms[0], arms[1]), target=target)
    section["pilot"] = str(folder)
    if as_json:
        echo_json(True, section)
        return
    click.echo(f"pilot: {folder}")
    if section.get("minimum_detectable_effect") is not None:
        within = section["within_case_variance"]
        click.echo(f"between-case variance {section['between_case_variance']:.4f}, within-case variance (one run, "
                   f"both arms) {'n/a' if within is None else format(within, '.4f')}")
    click.echo(design_sentence(section))
    if section.get("underpowered"):
        click.echo("underpowered: this design cannot detect the target lift with 80% power")


def print_comparison(workspace: Path, first: int, second: int, allow: set[str], *, seed: int,
                     as_json: bool) -> None:
    from ..paired.compare_iterations import compare_iterations

    result = compare_iterations(workspace, first, second, allow=allow, seed=seed)
    if as_json:
        echo_json(True, result)
        return
    for arm in result["arms"]:
        if arm.get("estimate") is None:
            click.echo(f"{arm['configuration']}: no case with graded runs in both iterations")
            continue
        click.echo(f"{arm['configuration']}: {arm['estimate'] * 100:+.1f} pp (95% interval "
                   f"{arm['ci_low'] * 100:+.1f} to {arm['ci_high'] * 100:+.1f} pp), p = {arm['p_value']:.3g}, "
                   f"{arm['cases']} cases" + (f"; left out: {', '.join(arm['left_out'])}" if arm["left_out"] else ""))
    click.echo(result["verdict"])
