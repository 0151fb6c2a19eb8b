"""``eval-skills view``: the review page of a paired-run workspace or of tool-skill evaluations."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import InputError

if TYPE_CHECKING:
    from ..viewer.source import Source
from ._github import echo_json
from ._signals import exit_for

SQLITE_MAGIC = b"SQLite format 3\x00"


def _is_store(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _source(targets: tuple[Path, ...], iteration: int | None, evaluations: tuple[str, ...],
            benchmark_ref: str | None, grading_version: int | None = None) -> Source:
    """What the targets name: a workspace folder, report files, or a results store."""
    from .. import viewer

    for target in targets:
        if not target.exists():
            raise InputError("not found", file=str(target),
                             hint="pass a workspace folder, eval-result-*.json files or a results store")
    folders = [t for t in targets if t.is_dir()]
    if folders:
        if len(targets) > 1:
            raise InputError("give one workspace folder, alone", file=str(folders[0]))
        if evaluations or benchmark_ref:
            raise InputError("--evaluation and --benchmark apply to tool-skill evaluations, not to a workspace",
                             field="--evaluation" if evaluations else "--benchmark")
        return viewer.open_workspace_source(folders[0], iteration, grading_version)
    if grading_version is not None:
        raise InputError("--grading-version applies to a workspace folder", field="--grading-version")
    if iteration is not None:
        raise InputError("--iteration applies to a workspace folder", field="--iteration")
    benchmark = None
    if benchmark_ref:
        from ..formats.benchmark import resolve_benchmark

        benchmark = resolve_benchmark(benchmark_ref)
    stores = [t for t in targets if _is_store(t)]
    if stores:
        if len(targets) > 1:
            raise InputError("give one results store, alone (choose evaluations with --evaluation)",
                             file=str(stores[0]))
        return viewer.from_store(stores[0], list(evaluations) or ["latest"], benchmark)
    if evaluations:
        raise InputError("--evaluation applies to a results store", field="--evaluation")
    return viewer.from_report_files(list(targets), benchmark)


@click.command("view")
@click.argument("targets", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="TARGET...")
@click.option("--iteration", type=click.IntRange(min=1), default=None,
              help="The workspace's iteration to review [default: the latest].")
@click.option("--grading-version", type=click.IntRange(min=1), default=None,
              help="The grading version of the iteration to show (eval-skills regrade makes them) [default: the "
                   "latest].")
@click.option("--evaluation", "evaluations", multiple=True, metavar="REF",
              help="With a results store: an evaluation id, unique prefix or 'latest' (repeat to compare) "
                   "[default: latest].")
@click.option("--benchmark", "benchmark_ref", metavar="ID|FILE", default=None,
              help="The benchmark tool-skill reports were run on, to show each task's input "
                   "[default: the built-in one the report names].")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--static", "static_out", type=click.Path(path_type=Path), default=None, metavar="OUT.html",
              help="Write one self-contained page instead of serving it.")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"output", "bytes", "cases"} (with --static), else {"url", "feedback"} once serving.')
def view_command(targets: tuple[Path, ...], iteration: int | None, evaluations: tuple[str, ...],
                 benchmark_ref: str | None, port: int, static_out: Path | None, open_browser: bool,
                 as_json: bool, grading_version: int | None = None) -> None:
    """Review outputs side by side, the benchmark and routing results, and write feedback.json.

    TARGET is a workspace of eval-skills paired / routing (or one of its iteration-<n> folders), one or more
    eval-result-*.json report files (several are compared), or a results store (.db) with --evaluation.
    The page is served on 127.0.0.1 until Ctrl-C; feedback typed into it is saved to the iteration's
    feedback.json as you type.
    """
    from .. import viewer

    source = _source(targets, iteration, evaluations, benchmark_ref, grading_version)
    for warning in getattr(source, "warnings", []):  # folders that cannot be read as runs: said, not skipped
        click.echo(f"warning: {warning}", err=True)
    if static_out is not None:
        out = viewer.write_static(source, static_out)
        if as_json:
            echo_json(True, {"output": str(out), "bytes": out.stat().st_size, "cases": len(source.cases())},
                      indent=None)
            return
        click.echo(f"Wrote {out} ({out.stat().st_size / 1024:,.0f} KiB, {len(source.cases())} cases). Open it in a "
                   + ("browser; its 'Download feedback.json' button saves your reviews." if source.feedback is not None
                      else "browser."))
        return

    def ready(url: str) -> None:
        if as_json:
            feedback = str(source.feedback.path) if source.feedback is not None else None
            echo_json(True, {"url": url, "feedback": feedback}, indent=None)
        else:
            _say_ready(url)
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    def _say_ready(url: str) -> None:
        click.echo(f"Review page: {url}")
        if source.feedback is not None:
            click.echo(f"Feedback is saved to {source.feedback.path}")
        click.echo("Press Ctrl-C to stop.")

    try:
        signum = viewer.serve(source, port=port, ready=ready)
    except KeyboardInterrupt:  # Ctrl-C before the server took the signals over
        signum = signal.SIGINT
    if signum is not None:
        click.echo("Stopped.", err=True)
        exit_for(signum)
