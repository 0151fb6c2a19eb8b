"""``eval-skills report convert|diff``: a report file in another format, or two report files compared."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .._atomic import write_atomic
from ..errors import InputError
from ..reports import EXTENSIONS, load_report_file, normalize_formats, render
from . import EXIT_GATE_FAILED
from ._github import echo_json
from ._globals import group
from ._options import FiniteFloat

CONVERT_FORMATS = ("markdown", "html", "csv", "junit", "json")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file, so a reader never sees half a file."""
    if path.is_dir():
        raise InputError("is a folder, expected a file name", file=str(path), hint="check --output")
    if not path.parent.is_dir():
        raise InputError("its folder does not exist", file=str(path), hint="create the folder or check --output")
    write_atomic(path, text)


@group("report", "Convert a report to another format, or compare two reports.")
def report_group() -> None:
    """Report files: convert an eval-result JSON file, or diff two of them."""


@report_group.command("convert")
@click.option("--input", "input_path", required=True, type=click.Path(path_type=Path),
              help="An eval-result-<timestamp>.json report file.")
@click.option("--format", "fmt", default="markdown", show_default=True,
              help=f"Output format: {', '.join(CONVERT_FORMATS)} (md and xml are aliases).")
@click.option("--output", "output", type=click.Path(path_type=Path), default=None,
              help="Output file, or - for stdout [default: the input's name with the format's extension].")
@click.option("--json", "as_json", is_flag=True, help='Print {"input", "format", "output"} as JSON.')
def convert_command(input_path: Path, fmt: str, output: Path | None, as_json: bool) -> None:
    """Render a JSON report file as Markdown, HTML, CSV or JUnit XML."""
    (name,) = normalize_formats([fmt])
    reports = load_report_file(input_path)
    if output == Path("-"):  # what the original printed when given no --output
        click.echo(render(reports, name), nl=False)
        return
    target = output or input_path.with_suffix(f".{EXTENSIONS[name]}")
    if target.resolve() == input_path.resolve():
        raise InputError("would replace the input report", file=str(target), hint="pass another --output")
    write_text(target, render(reports, name))
    if as_json:
        echo_json(True, {"input": str(input_path), "format": name, "output": str(target)})
    else:
        click.echo(f"wrote {target}")


@report_group.command("diff")
@click.argument("report_a", type=click.Path(path_type=Path))
@click.argument("report_b", type=click.Path(path_type=Path))
@click.option("--label-a", default=None, help="Name of the first report in the output [default: its file name].")
@click.option("--label-b", default=None, help="Name of the second report in the output [default: its file name].")
@click.option("--output", type=click.Path(path_type=Path), default=None,
              help="Write the diff to this file (JSON when it ends in .json, else Markdown) [default: stdout].")
@click.option("--fail-on-regression", type=FiniteFloat(0, 1), default=None, metavar="X",
              help="Exit 1 when a skill's completion rate drops by more than X (0 to 1).")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
def diff_command(report_a: Path, report_b: Path, label_a: str | None, label_b: str | None, output: Path | None,
                 fail_on_regression: float | None, as_json: bool) -> None:
    """Compare two report files: per skill the completion rate, error rate, P95 latency and composite score
    with arrows, the tasks that changed status, and the skills found in one report only."""
    from ..reports.diff import diff_reports, regressions, render_diff_markdown

    a, b = load_report_file(report_a), load_report_file(report_b)
    diff = diff_reports(a, b)
    label_a, label_b = label_a or report_a.name, label_b or report_b.name
    document = {"labelA": label_a, "labelB": label_b, **diff}
    markdown = render_diff_markdown(diff, label_a, label_b)
    found = regressions(diff, fail_on_regression) if fail_on_regression is not None else []
    if output is not None:
        as_file = output.suffix.lower() == ".json"
        write_text(output, json.dumps(document, indent=2, ensure_ascii=False) + "\n" if as_file else markdown)
    if as_json:
        echo_json(not found, document)
    elif output is None:
        click.echo(markdown, nl=False)
    else:
        click.echo(f"wrote {output}")
    if found:
        listing = ", ".join(f"{skill} (-{drop:.4f})" if drop is not None else f"{skill} (no completion rate in "
                            f"{label_b})" for skill, drop in found)
        click.echo(f"regression: completion rate dropped by more than {fail_on_regression:g} for {listing}",
                   err=True)
        raise SystemExit(EXIT_GATE_FAILED)
