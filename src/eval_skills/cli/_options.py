"""Click helpers shared by commands: options that take several values (``--skills a b c``), numbers that must
be finite."""

from __future__ import annotations

import math
from typing import Any

import click


class GreedyCommand(click.Command):
    """A command whose options named in ``greedy`` take every following word up to the next option.

    ``--skills a b --format json markdown`` is rewritten to ``--skills a --skills b --format json
    --format markdown`` before click parses it, so the options are plain ``multiple=True`` options.
    """

    def __init__(self, *args: Any, greedy: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.greedy = set(greedy)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rewritten: list[str] = []
        current: str | None = None
        values = 0  # the values that followed ``current`` so far
        missing: list[str] = []  # greedy options no value followed
        for arg in args:
            is_option = arg == "--" or (arg.startswith("-") and arg != "-")
            if is_option and current is not None and values == 0:
                missing.append(current)
            if arg == "--":
                current = None
                rewritten.append(arg)
            elif is_option:
                name = arg.split("=", 1)[0]
                if name in self.greedy and "=" not in arg:
                    current, values = name, 0
                    continue
                current = None
                rewritten.append(arg)
            elif current is not None:
                rewritten.extend([current, arg])
                values += 1
            else:
                rewritten.append(arg)
        if current is not None and values == 0:
            missing.append(current)
        if missing and not {"--help", "-h"} & set(args):
            # "--reports" followed by nothing (a shell glob that matched no file, a forgotten value) is an
            # error, not a silently absent option
            raise click.BadOptionUsage(missing[0], f"Option '{missing[0]}' requires at least one value.", ctx=ctx)
        return super().parse_args(ctx, rewritten)


def split_words(values: tuple[str, ...]) -> list[str]:
    """``("json,markdown", "html")`` -> ``["json", "markdown", "html"]``."""
    return [word for value in values for word in value.replace(",", " ").split()]


class FiniteFloat(click.FloatRange):
    """A ``FloatRange`` that refuses ``nan`` and the infinities, which click's float accepts: ``nan`` passes every
    range check (every comparison with it is false), so ``--min-f1 nan`` would be a gate that never fails and
    ``--timeout nan`` a limit no run can meet."""

    name = "finite float"

    def _describe_range(self) -> str:
        """No bounds: no range shown (click would print ``x<=None``)."""
        if self.min is None and self.max is None:
            return ""
        return super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
