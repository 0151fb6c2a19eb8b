"""Ctrl-C and SIGTERM during a run: they set the stop event the run watches (it stops starting work and keeps what
finished), and the command then exits 130 or 143.

asyncio is imported when a run starts, not with the command (``--help`` does not need it).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

from ._exits import EXIT_INTERRUPTED, EXIT_TERMINATED

if TYPE_CHECKING:
    import asyncio

__all__ = ["STOP_SIGNALS", "exit_for", "run_until_signalled"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
T = TypeVar("T")


def run_until_signalled(main: Callable[[asyncio.Event], Awaitable[T]]) -> tuple[T, int | None]:
    """Run ``main(stop)`` in a new event loop, ``stop`` set by the first SIGINT or SIGTERM; return what it
    returned and the first signal that came (None if none did).

    The handlers are installed before ``main`` starts and removed once it ended (after its own cleanup); the
    SIGTERM handler in place before is put back, as asyncio leaves the default one behind."""
    import asyncio

    received: list[int] = []

    async def guarded() -> T:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def interrupt(signum: int) -> None:
            received.append(signum)
            stop.set()

        for signum in STOP_SIGNALS:
            loop.add_signal_handler(signum, interrupt, signum)
        try:
            return await main(stop)
        finally:
            for signum in STOP_SIGNALS:
                loop.remove_signal_handler(signum)

    previous = signal.getsignal(signal.SIGTERM)
    try:
        outcome = asyncio.run(guarded())
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)  # asyncio leaves the default handler behind
    return outcome, received[0] if received else None


def exit_for(signalled: int | None) -> NoReturn:
    """Exit 143 after SIGTERM, else 130 (Ctrl-C, or a run that stopped short without a signal seen)."""
    sys.exit(EXIT_TERMINATED if signalled == signal.SIGTERM else EXIT_INTERRUPTED)
