"""The command line: the only place that imports click, prints or exits.

The command group (``cli``, in ``_group``) and each command are loaded only when needed:
``eval-skills --version`` imports neither click nor any command.
"""

from __future__ import annotations

import sys

from ._exits import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["COMMANDS", "EXIT_GATE_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE",
           "LazyGroup", "Terminated", "cli", "main"]
_FROM_GROUP = ("COMMANDS", "LazyGroup", "Terminated", "cli")


def main(argv: list[str] | None = None) -> Any:
    """Console entry point."""
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:  # the one answer that needs no command group
        from .._version import __version__

        sys.stdout.write(f"eval-skills, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(EXIT_OK)
    import gc

    # Start-up makes what lives until the end (modules, classes, models): the collector's passes over it would find
    # nothing. It is off until the command is loaded; then what exists is frozen (left out of later passes) and the
    # collector turned back on (``LazyGroup.get_command``).
    gc.disable()
    from ._group import cli

    try:
        return cli.main(args=argv, prog_name="eval-skills")
    finally:
        gc.enable()


def __getattr__(name: str) -> Any:
    if name not in _FROM_GROUP:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _group

    value = getattr(_group, name)
    globals()[name] = value
    return value
