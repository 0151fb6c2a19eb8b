"""The stdio transport of MCP skills: the SDK's client session over a program we start ourselves.

The SDK's own ``stdio_client`` passes the server a few of the caller's variables of its choosing and sends its
stderr to a file. This transport (an SDK ``Transport``: a context manager yielding the read and write streams
of JSON-RPC messages) starts the server as every skill program is started (see ``_process``): in the skill's
folder, with the clean environment of the subprocess adapter, in its own process group, with the tail of its
stderr kept for error messages and stdout lines capped at 16 MiB. Lines on stdout that are not JSON-RPC are
skipped (a server should not print them, but a stray log line must not end the session).

Each line is read like every reply of a skill (:func:`~eval_skills.formats.untrusted.loads_untrusted`): bytes
that are not UTF-8 and lone surrogates become U+FFFD, so a result holding them is kept, not dropped. A reply
we will not take (nested deeper than 256 levels, NaN) becomes an error response to its request, marked
:data:`UNUSABLE`, which the adapter makes that call's protocol error; when its id cannot be found, the server
is stopped as having broken the protocol.

When the program's stdout ends, the read stream closes: the SDK then fails the requests in flight with
"Connection closed". A program that exits while something it started keeps its stdout open is treated the
same, after a moment (see :func:`~eval_skills.procs.read_until_exit`). Leaving the context closes the server's
stdin, gives it ``grace`` seconds to exit, then kills its process group.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

from ..errors import SkillError
from ..formats.untrusted import NotJSON, UnusableJSON, loads_untrusted
from ..procs import MAX_LINE_BYTES, Child, describe_exit, excerpt, read_line, read_until_exit

__all__ = ["UNUSABLE", "StdioServer", "read_message"]

UNUSABLE = "eval-skills: a reply that is not usable JSON"  # ``data`` of the error standing in for such a reply
_STRING = rb'"(?:[^"\\]|\\.)*"'
# the "id" among the first members of a reply, before anything nested: where a deep reply still shows it
_MEMBER = rb'\s*' + _STRING + rb'\s*:\s*(?:' + _STRING + rb'|[^\s,{}\[\]"]+)\s*,'
_HEAD_ID = re.compile(rb'\A\s*\{(?:' + _MEMBER + rb')*?\s*"id"\s*:\s*(-?\d+|' + _STRING + rb')\s*[,}]')


class _Unreadable(Exception):  # noqa: N818 - a line the server must not send
    pass


def _reply_id(line: bytes) -> int | str | None:
    """The id of a reply we cannot read whole (too deep; NaN), when it can be found."""
    try:
        data = loads_untrusted(line, allow_nan=True)
        found = data.get("id") if isinstance(data, dict) else None
    except NotJSON:  # too deep to read at all: look at its first members
        match = _HEAD_ID.match(line)
        found = loads_untrusted(match.group(1)) if match else None
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def read_message(line: bytes) -> mcp_types.JSONRPCMessage | None:
    """The JSON-RPC message on a stdout line, or None for a line that is none (a log line).

    A reply we will not take (nested too deeply, NaN) is returned as an error response to its request with
    ``data`` :data:`UNUSABLE`; one whose id cannot be found raises ``_Unreadable``."""
    try:
        data = loads_untrusted(line)
    except UnusableJSON as exc:
        request_id = _reply_id(line)
        reason = f"a reply that is not usable JSON: {exc}"
        if request_id is None:
            raise _Unreadable(reason) from None
        return mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=mcp_types.ErrorData(
            code=mcp_types.PARSE_ERROR, message=reason, data=UNUSABLE))
    except NotJSON:
        return None
    try:
        message: mcp_types.JSONRPCMessage = mcp_types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValueError:
        return None
    return message


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
                        message = read_message(line)
                        if message is None:
                            self.last_line = line
                            continue
                        await read_writer.send(SessionMessage(message))
                except (SkillError, _Unreadable) as exc:  # a line over the limit, or unusable: the server is stopped
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
                group.start_soon(read_until_exit, child, reader())
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


_GENERIC = re.compile(r"Error executing tool [^:]*")  # all the mcp SDK tells a client of a tool that crashed
_EXCEPTION = re.compile(r"^((?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b:?.*)$")
_SDK_WRAPPER = re.compile(r"^(?:mcp\S*\.)?(?:Unexpected)?ToolError\b")  # the SDK's own wrapper: no news
_BOX = re.compile("[\u2500-\u257f]")  # the frames of a traceback drawn by rich


def crash_detail(message: str, stderr: str) -> tuple[str | None, int]:
    """What the server wrote on stderr about a tool that crashed, when its error ``message`` names only the
    tool (the mcp SDK keeps the exception to itself and logs it): the first exception line of a traceback
    (``ValueError: bad input``), else the last lines written, on one line; None when there is nothing. With
    it, how many characters of ``stderr`` it used (through that line), so that concurrent calls that crashed
    each take their own traceback, in the order the server logged them."""
    if not _GENERIC.fullmatch(message.strip()):
        return None, 0
    used = 0
    for raw in stderr.splitlines(keepends=True):
        used += len(raw)
        line = " ".join(raw.split())
        if line and not _BOX.search(line) and _EXCEPTION.match(line) and not _SDK_WRAPPER.match(line):
            return line[:300], used
    lines = [" ".join(line.split()) for line in stderr.splitlines() if not _BOX.search(line)]
    return " | ".join(line for line in lines if line)[-300:] or None, len(stderr)
