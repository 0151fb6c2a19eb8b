"""One MCP client session, owned by a task of its own, and how its failures read as task errors.

The SDK's task groups must be left by the task that entered them, while the runner's calls come from many
tasks: a :class:`Session` keeps the client in one owner task and turns every way a call or the connection can
fail into the matching :class:`~eval_skills.errors.SkillError`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Protocol

import mcp_types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from .._version import __version__
from ..errors import SkillCrashed, SkillProtocolError, SkillRpcError, SkillTimeout
from ._mcp_stdio import UNUSABLE, StdioServer

__all__ = ["IN_FLIGHT", "Session", "SessionOwner", "reason_of"]

IN_FLIGHT = " while the call was in flight"


class SessionOwner(Protocol):
    """What a session needs of its adapter: where the server is and how to reach it."""

    url: str | None
    transport: str
    stop_grace: float

    def new_stdio(self) -> StdioServer | None: ...

    def http_client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any: ...

    def redact(self, text: str) -> str: ...

    async def server_output(self) -> str: ...


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def reason_of(exc: BaseException) -> str:
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return f"MCP error {exc.error.code}: {exc.error.message}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Session:
    """One client session, owned by a task of its own: the SDK's task groups must be left by the task that
    entered them, and the runner's calls come from many tasks."""

    def __init__(self, adapter: SessionOwner) -> None:
        self.adapter = adapter
        self.stdio = adapter.new_stdio()
        self.client: Client | None = None
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self._failed = False

    @property
    def dead(self) -> bool:
        return (self._failed or (self._owner is not None and self._owner.done())
                or (self.stdio is not None and self.stdio.child is not None and not self.stdio.child.running))

    @contextlib.asynccontextmanager
    async def _connect(self) -> AsyncIterator[Client]:
        info = mcp_types.Implementation(name="eval-skills", version=__version__)
        if self.stdio is not None:
            async with Client(self.stdio.transport(), cache=None, client_info=info) as client:
                yield client
            return
        url = self.adapter.url
        assert url is not None
        if self.adapter.transport == "sse":
            connect = sse_client(url, httpx_client_factory=self.adapter.http_client)
            async with Client(connect, cache=None, client_info=info) as client:
                yield client
            return
        async with self.adapter.http_client() as http, \
                Client(streamable_http_client(url, http_client=http), cache=None, client_info=info) as client:
            yield client

    async def _own(self, ready: asyncio.Future[BaseException | None]) -> None:
        try:
            async with self._connect() as client:
                self.client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - the session ended: say why to whoever waits
            if not ready.done():
                ready.set_result(exc)
        finally:
            self._failed = True

    async def open(self, timeout: float) -> None:
        ready: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.ensure_future(self._own(ready))
        try:
            async with asyncio.timeout(timeout):
                failure = await asyncio.shield(ready)
        except TimeoutError:
            await self.close()
            raise SkillTimeout(f"no answer to the MCP handshake within {timeout:g}s{await self.stderr()}") from None
        except BaseException:
            await self.close()
            raise
        if failure is not None:
            await self.close()
            raise SkillCrashed(await self.describe_end(failure, opening=True))

    async def stderr(self) -> str:
        if self.stdio is None or self.stdio.child is None:
            return await self.adapter.server_output()
        await self.stdio.child.settle(0.2)
        tail = self.stdio.child.stderr.tail()
        return f"; stderr: {tail}" if tail else ""

    async def describe_end(self, exc: BaseException | None = None, during: str = "", opening: bool = False) -> str:
        """Why the session ended (or never began): how the server program ended and its stderr, or the
        connection's error."""
        if self.stdio is not None:
            if self.stdio.child is None and exc is not None:  # the program could not be run at all
                return str(_leaf(exc))
            return await self.stdio.describe_end(during)
        reason = f": {self.adapter.redact(reason_of(exc))}" if exc is not None else ""
        output = await self.adapter.server_output()
        what = "no session with" if opening else "lost the connection to"
        return f"{what} the MCP server at {self.adapter.url}{during}{reason}{output}"

    async def call(self, name: str, arguments: Any, timeout: float) -> mcp_types.CallToolResult:
        client = self.client
        assert client is not None
        try:
            async with asyncio.timeout(timeout + 1.0):  # the SDK's own timeout comes first; this one is a net
                return await client.call_tool(name, arguments, read_timeout_seconds=timeout)
        except TimeoutError:
            raise SkillTimeout(f"no result within {timeout:g}s") from None
        except MCPError as exc:
            code = exc.error.code
            if exc.error.data == UNUSABLE:  # a reply we read but will not take (see _mcp_stdio)
                raise SkillProtocolError(exc.error.message) from None
            if code == mcp_types.REQUEST_TIMEOUT:
                raise SkillTimeout(f"no result within {timeout:g}s") from None
            if code == mcp_types.CONNECTION_CLOSED or self.dead:
                self._failed = True
                raise SkillCrashed(await self.describe_end(during=IN_FLIGHT)) from None
            message = self.adapter.redact(" ".join(exc.error.message.split()))
            raise SkillRpcError(f"MCP error {code}: {message}", code=code, data=exc.error.data) from None
        except ValidationError as exc:
            raise SkillProtocolError(f"the MCP server's result is not valid: {reason_of(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - a transport failure: the connection is gone or broken
            if self.dead or self.adapter.url is not None:
                self._failed = True
                raise SkillCrashed(await self.describe_end(exc, during=IN_FLIGHT)) from None
            raise SkillProtocolError(self.adapter.redact(reason_of(exc))) from None

    async def close(self) -> None:
        self._stop.set()
        owner = self._owner
        if owner is None or owner.done():
            return
        if self.client is None:  # still in the handshake: nothing to end gracefully
            if self.stdio is not None:
                self.stdio.grace = 0.0
            owner.cancel()
        done, _ = await asyncio.wait([owner], timeout=self.adapter.stop_grace + 3.0)
        if not done:
            owner.cancel()
            await asyncio.gather(owner, return_exceptions=True)
