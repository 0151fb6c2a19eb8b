"""Global options, accepted by every command, before or after its name.

``-c/--config``, ``--json``, ``--no-color``, ``-v/--verbose``, ``--version`` and ``-h/--help`` work on every
command. A command that uses ``-c`` or ``--json`` declares them itself (its parameters ``config_path`` and
``as_json``); the others get them added when the command is loaded, so they are accepted everywhere.
Written before the command name (``eval-skills --json find ...``), they are moved after it before parsing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import click

from .._version import __version__
from ..formats.untrusted import terminal_text

FLAGS = ("--json", "--no-color", "-v", "--verbose")
VALUED = ("-c", "--config")
_MARK = "_eval_skills_globals"
class _TerminalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record), keep_newlines=True)


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


def _verbose(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value:
        logger = logging.getLogger("eval_skills")
        if not logger.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(_TerminalFormatter("%(levelname)s %(name)s: %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if value > 1 else logging.INFO)
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
