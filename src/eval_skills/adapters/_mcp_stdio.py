"""The stdio transport of MCP skills: the SDK's client session over a program we start ourselves.

The SDK's own ``stdio_client`` passes the server a few of the caller's variables of its choosing and sends its
stderr to a file. This transport (an SDK ``Transport``: a context manager yielding the read and write streams
of JSON-RPC messages) starts the server as every skill program is started (see ``_process``): in the skill's
folder, with the clean environment of the subprocess adapter, in its own process group, with the tail of its
stderr kept for error messages and stdout lines capped at 16 MiB. Lines on stdout that are not JSON-RPC are
skipped (a server should not print them, but a stray log line must not end the session).

When the program's stdout ends, the read stream closes: the SDK then fails the requests in flight with
"Connection closed". Leaving the context closes the server's stdin, gives it ``grace`` seconds to exit, then
kills its process group.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

from ..errors import SkillError
from ._process import MAX_LINE_BYTES, Child, describe_exit, excerpt, read_line

__all__ = ["StdioServer"]


class StdioServer:
    """One run of an MCP server program. ``transport()`` is entered once by the session; afterwards
    :meth:`ended` explains what became of the program."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: dict[str, str], grace: float = 2.0,
                 max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = env
        self.grace = grace
        self.max_line_bytes = max_line_bytes
        self.child: Child | None = None
        self.problem: str | None = None  # why we stopped reading, when it was our decision
        self.last_line = b""  # the last stdout line that was not JSON-RPC

    @property
    def pid(self) -> int | None:
        return self.child.proc.pid if self.child is not None else None

    async def describe_end(self, during: str = "", wait: float = 0.5) -> str:
        """How the program ended (or that it still runs), ``during`` what, with the tail of its stderr."""
        child = self.child
        if child is None:
            return "the MCP server was not started"
        await child.wait_exit(wait)
        await child.settle(0.2)
        if self.problem:
            how = f"the MCP server broke the protocol: {self.problem}"
        elif child.proc.returncode is None:
            how = "the MCP server closed its stdout"
        else:
            how = f"the MCP server {describe_exit(child.proc.returncode)}"
        tail = child.stderr.tail()
        last = f"; last stdout line: {excerpt(self.last_line)}" if self.last_line.strip() else ""
        return how + during + last + (f"; stderr: {tail}" if tail else "; stderr was empty")

    @contextlib.asynccontextmanager
    async def transport(self) -> AsyncIterator[tuple[Any, Any]]:
        child = self.child = await Child.start(self.argv, cwd=self.cwd, env=self.env)
        stdin, stdout = child.proc.stdin, child.proc.stdout
        assert stdin is not None and stdout is not None
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

        async def reader() -> None:
            async with read_writer:
                try:
                    while line := await read_line(stdout, self.max_line_bytes):
                        if not line.strip():
                            continue
                        try:
                            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except ValueError:
                            self.last_line = line
                            continue
                        await read_writer.send(SessionMessage(message))
                except SkillError as exc:  # a line over the limit: the server is stopped
                    self.problem = str(exc)
                    await child.kill()
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
                    pass

        async def writer() -> None:
            try:
                async with write_reader:
                    async for item in write_reader:
                        data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                        stdin.write(data.encode() + b"\n")
                        await stdin.drain()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError):
                await read_writer.aclose()  # the server stopped reading: the session must see the end

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(reader)
                group.start_soon(writer)
                try:
                    yield read_stream, write_stream
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(child)
                    group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await child.kill()

    async def _stop(self, child: Child) -> None:
        """EOF on stdin, ``grace`` seconds to exit, then the process group is killed."""
        stdin = child.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        await child.wait_exit(self.grace)
        await child.kill()
