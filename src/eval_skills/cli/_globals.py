"""Global options, accepted by every command, before or after its name.

``-c/--config``, ``--json``, ``--no-color``, ``-v/--verbose``, ``--version`` and ``-h/--help`` work on every
command. A command that uses ``-c`` or ``--json`` declares them itself (its parameters ``config_path`` and
``as_json``); the others get them added when the command is loaded, so they are accepted everywhere.
Written before the command name (``eval-skills --json find ...``), they are moved after it before parsing.
"""

from __future__ import annotations

import difflib
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from .._version import __version__
from ..formats.untrusted import shown_text

FLAGS = ("--json", "--no-color", "-v", "--verbose")
VALUED = ("-c", "--config")
_MARK = "_eval_skills_globals"


class _TerminalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return shown_text(super().format(record), keep_newlines=True)


def move_leading_globals(args: list[str]) -> list[str]:
    """``--json -c x.yaml find -q y`` -> ``find --json -c x.yaml -q y``; anything else is left as it is."""
    leading: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in FLAGS or arg.startswith("--config=") or (arg.startswith("-c") and len(arg) > 2
                                                           and not arg.startswith("--")):
            leading.append(arg)
            index += 1
        elif arg in VALUED and index + 1 < len(args):
            leading += [arg, args[index + 1]]
            index += 2
        else:
            break
    if leading and index < len(args) and not args[index].startswith("-"):
        return [args[index], *leading, *args[index + 1:]]
    return args


def _no_color(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.color = False
        os.environ["NO_COLOR"] = "1"  # rich and most terminal libraries honour it
        os.environ.pop("FORCE_COLOR", None)
    return value


class _StderrHandler(logging.StreamHandler):
    """Writes to the ``sys.stderr`` of the moment (a command run in-process gets its own)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _verbose(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value:
        logger = logging.getLogger("eval_skills")
        if not logger.handlers:
            handler = _StderrHandler()
            handler.setFormatter(_TerminalFormatter("%(levelname)s %(name)s: %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if value > 1 else logging.INFO)
        ctx.find_root().meta["eval_skills.verbose"] = True
    elif not ctx.find_root().meta.get("eval_skills.verbose"):  # each invocation its own level (in-process too)
        logging.getLogger("eval_skills").setLevel(logging.NOTSET)
    return value


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"eval-skills, version {__version__}")
        ctx.exit(0)


def global_options(exposed: bool = False) -> list[click.Option]:
    """The global options as click parameters (not passed to the command function unless ``exposed``)."""
    return [
        click.Option(["-c", "--config", "config_path"], type=click.Path(), expose_value=exposed,
                     help="Config file [default: ./eval-skills.config.yaml, then ~/.eval-skills/config.yaml]."),
        click.Option(["--json", "as_json"], is_flag=True, expose_value=exposed,
                     help="JSON output on stdout (for scripts and CI)."),
        click.Option(["--no-color"], is_flag=True, expose_value=False, callback=_no_color,
                     help="No colours in the output."),
        click.Option(["-v", "--verbose"], count=True, expose_value=False, callback=_verbose,
                     help="Log what happens on stderr (-vv: more)."),
        click.Option(["--version"], is_flag=True, expose_value=False, is_eager=True, callback=_version,
                     help="Show the version and exit."),
    ]


def add_global_options(command: click.Command) -> click.Command:
    """Give ``command`` every global option it does not declare itself (idempotent)."""
    if getattr(command, _MARK, False):
        return command
    taken = {opt for param in command.params for opt in getattr(param, "opts", [])}
    for option in global_options():
        if not taken & set(option.opts):
            command.params.append(option)
    setattr(command, _MARK, True)
    return command


class GlobalsGroup(click.Group):
    """A command group whose subcommands all take the global options, before or after their name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, move_leading_globals(args))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        return None if command is None else add_global_options(command)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                               list[str]]:
        """A mistyped command name says which command was meant (``evaluate``: did you mean 'eval'?)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            known = self.list_commands(ctx)
            close = [c for c in known if name.startswith(c) or c.startswith(name)]
            close += [c for c in difflib.get_close_matches(name, known, n=3, cutoff=0.6) if c not in close]
            if close:
                listed = " or ".join(repr(c) for c in close[:3])
                raise click.UsageError(f"No such command {name!r}. Did you mean {listed}?", ctx=ctx)
        return super().resolve_command(ctx, args)


def group(name: str, help_text: str) -> Callable[[Callable[..., Any]], GlobalsGroup]:
    """``@group("report", "...")``: a GlobalsGroup that takes the global options itself too."""

    def make(fn: Callable[..., Any]) -> GlobalsGroup:
        grp = GlobalsGroup(name, callback=fn, help=help_text, no_args_is_help=False)
        add_global_options(grp)
        return grp

    return make


def make_console() -> Any:
    """A rich console for tables: the terminal's width, or a wide one when the output is piped. Markup is off:
    what the cells hold (a skill's id or version, a report's text) is shown as written, ``[blink]`` included."""
    import sys

    from rich.console import Console

    width = None if sys.stdout.isatty() else 200
    return Console(highlight=False, markup=False, width=width)


def fitted_table(title: str, columns: list[tuple[str, str]], *, keep: int = 12) -> Any:
    """A table that fits the terminal (piped: ``COLUMNS``, else 80 columns) as the eval summary does: no frame;
    columns ``(name, "fold")`` fold (the first of them, an id, keeping ``keep`` columns when it can),
    ``"id"`` columns stay whole when the table fits the terminal so (else they fold like the first ``"fold"``),
    ``"keep"`` and ``"num"`` (right-aligned) never wrap. Print it with :func:`print_fitted`."""
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=None, padding=(0, 1), pad_edge=False,
                  header_style="bold underline")
    first = next((name for name, mode in columns if mode in ("fold", "id")), None)
    for name, mode in columns:
        table.add_column(name, overflow="fold", no_wrap=mode in ("keep", "num"),
                         justify="right" if mode == "num" else "left",
                         min_width=keep if name == first or mode == "id" else None)
        if mode == "id":
            table.columns[-1].style = _WHOLE  # a mark read by print_fitted
    return table


_WHOLE = "none"


def print_fitted(table: Any, fold_to: int = 6) -> None:
    """Print ``table`` on the terminal's width. The columns that never wrap keep their width; ``"id"`` columns
    keep theirs too when the rest still fits; the folding ones share the room left evenly (one that needs less
    than its share keeps its own width and leaves the rest to the others), none below ``fold_to`` columns (or
    its ``min_width``): when even that is too wide, the table is printed wider rather than
    losing a column. Markup off, as in :func:`make_console`."""
    from rich.cells import cell_len
    from rich.console import Console

    console = Console(highlight=False, markup=False)
    natural = {id(c): max(cell_len(line) for cell in [c.header, *c.cells] for line in str(cell).split("\n"))
               for c in table.columns}
    folding = [c for c in table.columns if not c.no_wrap]
    floor = {id(c): min(natural[id(c)], c.min_width or fold_to) for c in folding}
    fixed = sum(natural[id(c)] for c in table.columns if c.no_wrap) + 2 * (len(table.columns) - 1)
    whole = {id(c): natural[id(c)] for c in folding if c.style == _WHOLE}
    if whole and fixed + sum({**floor, **whole}.values()) <= console.width:
        floor.update(whole)
    room = max(console.width - fixed, sum(floor.values()))
    waiting = sorted(folding, key=lambda c: natural[id(c)])
    while waiting:  # smallest first: those under the even share keep their width
        share = room // len(waiting)
        column = waiting.pop(0)
        column.width = max(floor[id(column)], min(natural[id(column)], share))
        room -= column.width
    for column in table.columns:
        if column.no_wrap:
            column.width = natural[id(column)]
        if column.style == _WHOLE:
            column.style = ""
    needed = sum(c.width for c in table.columns) + 2 * (len(table.columns) - 1)
    if needed > console.width:
        console = Console(highlight=False, markup=False, width=needed)
    console.print(table)
