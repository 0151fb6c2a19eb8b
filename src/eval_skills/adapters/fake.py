"""An in-process adapter for the engine's own tests: answers with a function you give it."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import SkillTimeout
from ..results import Invocation
from .base import Adapter

Responder = Callable[[Any], Any | Awaitable[Any]]


class FakeAdapter(Adapter):
    """``FakeAdapter(lambda inp: {"result": ...})``. The responder may be async, may raise a SkillError,
    or may return an :class:`Invocation` to report usage. Every call is recorded in ``calls``."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.calls: list[Any] = []
        self.started = False
        self.closed = False

    async def start(self) -> None:
        self.started = True

    async def invoke(self, input_data: Any, timeout: float) -> Invocation:
        self.calls.append(input_data)

        async def call() -> Any:
            value = self.responder(input_data)
            return await value if inspect.isawaitable(value) else value

        try:
            value = await asyncio.wait_for(call(), timeout)
        except TimeoutError:
            raise SkillTimeout(f"no answer within {timeout:g}s") from None
        return value if isinstance(value, Invocation) else Invocation(output=value)

    async def close(self) -> None:
        self.closed = True
