"""The adapter interface: how the runner calls a tool skill, whatever the transport."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Any

from ..results import Invocation


class Adapter(ABC):
    """Calls one skill. Used as an async context manager: started once, closed once.

    ``invoke`` returns an :class:`Invocation` or raises a :class:`~eval_skills.errors.SkillError`
    (``SkillTimeout`` when ``timeout`` seconds pass). It must be safe to call concurrently;
    an adapter that can only do one call at a time serialises internally.
    """

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Prepare (start a server, spawn a persistent process). Raises SkillError on failure."""

    async def preflight(self) -> list[str]:
        """Checks that need the skill itself, made before anything runs or is written (start a server and list
        its tools, import a module). Raises :class:`~eval_skills.errors.InputError` for a problem that must stop
        the run; returns lines of notes for ``--dry-run``. The adapter may keep what it started for the run;
        ``close()`` releases it."""
        return []

    @property
    def input_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the input the skill itself declares, when the adapter learns one (an MCP tool's
        ``inputSchema``, known after :meth:`preflight`). None when there is none."""
        return None

    @abstractmethod
    async def invoke(self, input_data: Any, timeout: float) -> Invocation:
        """Call the skill once with a task's ``inputData``."""

    async def healthcheck(self, timeout: float = 5.0) -> bool:
        """True when the skill answers its health check."""
        return True

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release processes, servers and connections. Never raises."""

    async def __aenter__(self) -> Adapter:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()
