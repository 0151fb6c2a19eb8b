"""The command group: global options, the commands (each loaded only when it runs), and how a command ends."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import click

from .._version import __version__
from ..formats.untrusted import shown_text
from ._exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE
from ._globals import GlobalsGroup, add_global_options, global_options

# command name -> "module:attribute" (relative to this package)
COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("eval_cmd:eval_command", "Evaluate tool skills on a benchmark."),
    "fixtures": ("fixtures_cmd:fixtures_command", "Check instruction skills' worked examples or answers."),
    "init": ("init_cmd:init_command", "Create a project: config file, skills/, benchmarks/, reports/."),
    "create": ("create_cmd:create_command", "Generate a skill skeleton from a template."),
    "find": ("find_cmd:find_command", "Search skills by keyword, tag, adapter or past completion rate."),
    "select": ("select_cmd:select_command", "Filter and rank skills by their evaluation reports."),
    "run": ("run_cmd:run_command", "Find, evaluate, select and report in one command."),
    "report": ("report_cmd:report_group", "Convert a report to another format, or compare two reports."),
    "config": ("config_cmd:config_group", "List, read or set configuration values."),
    "history": ("history_cmd:history_command", "A skill's past evaluations from the store, newest first."),
    "benchmarks": ("benchmarks_cmd:benchmarks_group", "List benchmarks, or import GAIA and ToolBench ones."),
    "view": ("view_cmd:view_command", "Review outputs side by side and write feedback (serves a page)."),
    "routing": ("routing_cmd:routing_command", "Test whether an agent invokes a skill when it should."),
    "paired": ("paired_cmd:paired_command", "Run a skill's eval cases with and without it; measure the change."),
    "regrade": ("regrade_cmd:regrade_command", "Grade a paired iteration's saved runs again, without running them."),
    "validate": ("validate_cmd:validate_command", "Check Agent Skills folders: SKILL.md, evals, fixtures."),
}

class Terminated(BaseException):  # noqa: N818 - like KeyboardInterrupt, for SIGTERM
    """SIGTERM arrived outside a run (a run handles it itself and keeps what finished)."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


class LazyGroup(GlobalsGroup):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        target, _ = COMMANDS[cmd_name]
        module_name, attr = target.split(":")
        module = importlib.import_module(f"{__package__}.{module_name}")
        command: click.Command = getattr(module, attr)
        gc.freeze()  # what loading made stays: left out of the collector's passes from now on
        gc.enable()  # off while the command group and the command were loaded (see ``main``)
        return add_global_options(command)

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """Every way a command can end, in one place: usage and input errors are one line on stderr with
        exit 2 (``EVAL_SKILLS_DEBUG=1``: the traceback), Ctrl-C is 130, SIGTERM 143."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        import signal

        from ..errors import EvalSkillsError, InputError

        previous = signal.getsignal(signal.SIGTERM)
        if previous == signal.SIG_DFL:
            try:
                signal.signal(signal.SIGTERM, _terminate)
            except ValueError:  # not the main thread
                previous = None
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:  # the bare command: its help, as --help would
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
            code = EXIT_OK
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else (prog_name or self.name or "eval-skills")
            click.echo(f"error: {' '.join(exc.format_message().split())} (see '{where} --help')", err=True)
            code = EXIT_USAGE
        except click.ClickException as exc:
            click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
            code = exc.exit_code
        except (click.Abort, KeyboardInterrupt):
            click.echo("interrupted", err=True)
            code = EXIT_INTERRUPTED
        except Terminated:
            click.echo("terminated", err=True)
            code = EXIT_TERMINATED
        except EvalSkillsError as exc:
            if os.environ.get("EVAL_SKILLS_DEBUG", "") not in ("", "0"):
                raise
            click.echo(f"error: {shown_text(exc.line() if isinstance(exc, InputError) else str(exc))}", err=True)
            code = EXIT_USAGE
        except OSError as exc:  # a path the system refuses: too long, a symlink loop, no permission, ...
            if os.environ.get("EVAL_SKILLS_DEBUG", "") not in ("", "0") or exc.filename is None:
                raise
            click.echo(f"error: {exc.filename}: {exc.strerror or exc}", err=True)
            code = EXIT_USAGE
        finally:
            if previous == signal.SIG_DFL:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.exit(code if isinstance(code, int) else EXIT_OK)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             params=[opt for opt in global_options() if "--version" not in opt.opts])
@click.version_option(__version__, "--version", prog_name="eval-skills")
def cli() -> None:
    """eval-skills: tells you whether your AI agent skills work, and whether they got better or worse.

    Exit codes: 0 success, 1 a quality gate failed, 2 usage or input error, 130 interrupted (143 for
    SIGTERM).
    Set EVAL_SKILLS_DEBUG=1 to see tracebacks. The global options work before or after a command's name.
    """

