"""Keeping what exists before a long run out of the collector's full passes while it runs."""

from __future__ import annotations

import functools
import gc
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["gc_frozen"]

P = ParamSpec("P")
R = TypeVar("R")


def gc_frozen(run: Callable[P, Awaitable[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """``run`` with what exists when it starts (modules, models, the plan) left out of the collector's full passes
    until it ends: with thousands of results alive, each full pass would otherwise walk every object again."""

    @functools.wraps(run)
    async def frozen(*args: P.args, **kwargs: P.kwargs) -> R:
        gc.freeze()
        try:
            return await run(*args, **kwargs)
        finally:
            gc.unfreeze()

    return frozen
