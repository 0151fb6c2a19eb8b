"""The MCP adapter: each task calls one tool of an MCP server, through the official ``mcp`` SDK.

- Transport: streamable HTTP when the ``entrypoint`` is an ``http(s)://`` URL, or the older HTTP+SSE transport
  (the only HTTP one the original eval-skills speaks) when that URL's path ends in ``/sse`` or
  ``metadata.transport`` is ``"sse"``; else stdio: the entrypoint (or ``command`` + ``args`` of
  ``adapter.config.json``) is started like a subprocess skill (see ``_mcp_stdio``).
  An HTTP server may be started by the harness with ``start`` (as for HTTP skills); ``headers`` and
  ``authType`` / ``authTokenEnvKey`` are sent with every request, the token never shown.
- The tool is ``metadata.toolName`` of ``skill.json``, else the skill's id. A task's ``inputData`` is its
  arguments. The output is the result's structured content when it has one (unless it only wraps a text
  that is a JSON object or array), else its text (the text blocks joined by newlines), read as JSON when it
  is JSON (as the original eval-skills reads it); without text, the content blocks as JSON. A result with
  ``isError`` is the task's error with the tool's message, not retried, like a JSON-RPC error of a
  subprocess skill.
- One session per skill for the whole evaluation; the runner's concurrent calls share it. A call that times
  out is cancelled on the server (status ``timeout``); the session goes on.
- A server that ends (or whose connection drops) fails the calls in flight with how it ended and the tail of
  its stderr. The next call starts a fresh session (and server), so the tasks after a crash run as usual; if
  the server cannot be started again, every remaining call fails at once with that reason.
- :meth:`McpAdapter.preflight` starts the session, lists the tools and checks the named one exists: a server
  that does not start or lacks the tool is an InputError naming the field to fix. The session is kept for the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

import httpx
import mcp_types

from ..errors import InputError, SkillCrashed, SkillError, SkillProtocolError, SkillRpcError
from ..formats.skill import ADAPTER_CONFIG_FILE, Skill
from ..procs import Child, describe_exit, resolve_argv
from ..results import Invocation
from ._mcp_http import mcp_http_client
from ._mcp_session import Session, reason_of
from ._mcp_skill import TOOL_FIELD, result_output, texts_of, tool_name, transport_of
from ._mcp_stdio import _GENERIC, StdioServer, crash_detail
from ._process import child_env, parse_usage
from .base import Adapter
from .http import health_url, request_headers, start_server
from .subprocess import skill_command

__all__ = ["McpAdapter", "result_output", "tool_name"]

logging.getLogger("mcp").addHandler(logging.NullHandler())  # failures reach the user as task errors instead

MAX_TOOL_PAGES = 100


class McpAdapter(Adapter):
    """Calls one tool of an MCP server per task over one session (see the module doc)."""

    def __init__(self, skill: Skill, *, stop_grace: float = 2.0) -> None:
        self.skill = skill
        self.tool = tool_name(skill)
        self.stop_grace = stop_grace
        entrypoint = skill.manifest.entrypoint.strip()
        config_file = str(skill.root / ADAPTER_CONFIG_FILE)
        self.transport = transport_of(skill)
        self.url: str | None = entrypoint if self.transport != "stdio" else None
        self.headers: dict[str, str] = {}
        self._token: str | None = None
        self.command: list[str] = []
        if self.url is not None:
            self.headers, self._token = request_headers(skill)  # an unset token variable stops the run now
            if "Accept" not in skill.adapter.headers:
                self.headers.pop("Accept", None)  # the SDK sets what streamable HTTP needs
            self.origin = (config_file, "$.start") if skill.adapter.start else (str(skill.path), "$.entrypoint")
        else:
            self.command = skill_command(skill)
            self.origin = (config_file, "$.command") if skill.adapter.command else (str(skill.path), "$.entrypoint")
        self.starts = 0  # sessions opened so far
        self._session: Session | None = None
        self._opening: asyncio.Future[Session] | None = None
        self._down: str | None = None  # why the server could not be started again
        self._stderr_read: tuple[Any, int] = (None, 0)  # how far crash reports have read a server's stderr
        self._server: Child | None = None  # the HTTP server ``start`` launched
        self._tool: mcp_types.Tool | None = None

    def __repr__(self) -> str:
        return f"<McpAdapter {self.skill.id} {self.tool!r} at {self.url or ' '.join(self.command)}>"

    @property
    def input_schema(self) -> dict[str, Any] | None:
        return dict(self._tool.input_schema) if self._tool is not None else None

    @property
    def server_pid(self) -> int | None:
        """The id of the server process of the current session (stdio) or of ``start`` (HTTP)."""
        session = self._session
        if session is not None and session.stdio is not None:
            return session.stdio.pid
        return self._server.proc.pid if self._server is not None else None

    def http_client(self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        """The HTTP client of a session over HTTP (the SDK's client factory for SSE): the replies read like every
        skill's (see ``_mcp_http``)."""
        return mcp_http_client({**self.headers, **(headers or {})}, self._token, timeout=timeout)

    def redact(self, text: str) -> str:
        return text.replace(self._token, "[redacted]") if self._token else text

    def new_stdio(self) -> StdioServer | None:
        if self.url is not None:
            return None
        env = child_env(self.skill.adapter)
        argv = resolve_argv(self.command, cwd=self.skill.root, env=env)
        return StdioServer(argv, cwd=self.skill.root, env=env, grace=self.stop_grace)

    async def server_output(self) -> str:
        server = self._server
        if server is None:
            return ""
        await server.wait_exit(0.2)
        how = "" if server.running else f"; its server {describe_exit(server.proc.returncode or 0)}"
        tail = server.stderr.tail()
        return how + (f"; server output: {tail}" if tail else "")

    # -- sessions ------------------------------------------------------------------------------------

    async def _ensure(self) -> Session:
        """The live session: the current one, else a new one (one opening at a time, shared by the callers)."""
        session = self._session
        if session is not None and not session.dead:
            return session
        if self._down is not None:
            raise SkillCrashed(self._down)
        if self._opening is None or self._opening.done():
            self._opening = asyncio.ensure_future(self._open(session))
        return await asyncio.shield(self._opening)

    async def _open(self, previous: Session | None) -> Session:
        if previous is not None:
            await previous.close()
        config = self.skill.adapter
        wait_s = config.startTimeoutMs / 1000
        try:
            if self.url is not None and config.start and (self._server is None or not self._server.running):
                if self._server is not None:
                    await self._server.kill()
                async with httpx.AsyncClient() as probe:
                    self._server = await start_server(self.skill, probe, health_url(self.skill, self.url))
            session = Session(self)
            await session.open(wait_s)
        except SkillError as exc:
            if not self.starts:
                raise
            self._down = f"the MCP server could not be started again after it failed: {exc}"
            raise SkillCrashed(self._down) from None
        self._session = session
        self.starts += 1
        return session

    async def start(self) -> None:
        await self._ensure()

    async def preflight(self) -> list[str]:
        """Start the session, list the tools, check the named tool exists (InputError if any of it fails)."""
        file, field = self.origin
        try:
            session = await self._ensure()
        except SkillError as exc:
            started = self.url is not None and self._server is not None and self._server.running
            if started:  # the server ``start`` launched answers, but no session came of it (a 401, say)
                file, field = str(self.skill.path), "$.entrypoint"
            what = "did not start" if self.url is None or (self.skill.adapter.start and not started) \
                else "did not answer"
            raise InputError(f"the MCP server {what}: {exc}", file=file, field=field) from None
        tools = await self._list_tools(session, file, field)
        names = [tool.name for tool in tools]
        self._tool = next((tool for tool in tools if tool.name == self.tool), None)
        shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
        if self._tool is None:
            raise InputError(f"the MCP server has no tool {self.tool!r} (its tools: {shown or 'none'})",
                             file=str(self.skill.path), field=TOOL_FIELD,
                             hint="set metadata.toolName to one of its tools" if names else None)
        assert session.client is not None
        where = self.url or " ".join(self.command)
        described = f": {' '.join(self._tool.description.split())[:120]}" if self._tool.description else ""
        count = f"{len(names)} tool" + ("" if len(names) == 1 else "s")
        return [f"MCP server {where} (protocol {session.client.protocol_version}) has {count}: {shown}",
                f"tool {self.tool!r} found{described}"]

    async def _list_tools(self, session: Session, file: str, field: str) -> list[mcp_types.Tool]:
        assert session.client is not None
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        try:
            async with asyncio.timeout(self.skill.adapter.startTimeoutMs / 1000):
                for _ in range(MAX_TOOL_PAGES):
                    page = await session.client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
        except TimeoutError:
            raise InputError("the MCP server did not list its tools in time", file=file, field=field) from None
        except Exception as exc:  # noqa: BLE001 - whatever the server did wrong
            reason = await session.describe_end(exc) if session.dead else self.redact(reason_of(exc))
            raise InputError(f"the MCP server did not list its tools: {reason}", file=file, field=field) from None
        return tools

    # -- calls ---------------------------------------------------------------------------------------

    async def invoke(self, input_data: Any, timeout: float) -> Invocation:
        if input_data is not None and not isinstance(input_data, dict):
            raise SkillProtocolError(f"an MCP tool takes an object of arguments; this inputData is a "
                                     f"{type(input_data).__name__}")
        session = await self._ensure()  # a fresh server after a crash: its start is not the task's latency
        ring = self._stderr_ring(session)
        mark = ring.total if ring is not None else 0
        started = time.perf_counter()
        try:
            result = await session.call(self.tool, input_data, timeout)
        except SkillError as exc:
            exc.latency_ms = (time.perf_counter() - started) * 1000
            raise
        latency_ms = (time.perf_counter() - started) * 1000
        if result.is_error:
            texts = texts_of(result)
            message = "\n".join(texts) if texts else json.dumps(result_output(result))
            if ring is not None and _GENERIC.fullmatch(message.strip()):
                await asyncio.sleep(0.05)  # the traceback the server logged before it answered: let it be read
                read_ring, read = self._stderr_read
                written = ring.since(max(mark, read) if read_ring is ring else mark)
                detail, used = crash_detail(message, written)
                self._stderr_read = (ring, ring.total - len(written[used:].encode()))
                message += f" (the server's stderr: {detail})" if detail else ""
            message = " ".join(self.redact(message).split())
            error = SkillRpcError(f"the tool reported an error: {message[:500]}{'...' if len(message) > 500 else ''}")
            error.latency_ms = latency_ms
            raise error
        output = result_output(result)
        usage = parse_usage(output.get("usage")) if isinstance(output, dict) and "usage" in output else None
        return Invocation(output=output, usage=usage, latency_ms=latency_ms)

    def _stderr_ring(self, session: Session) -> Any:
        """Where the server's stderr is kept: the stdio program's, or that of the HTTP server we started."""
        if session.stdio is not None:
            return session.stdio.child.stderr if session.stdio.child is not None else None
        return self._server.stderr if self._server is not None else None

    async def close(self) -> None:
        """End the session and stop the servers the harness started. Never raises."""
        with contextlib.suppress(Exception):
            if self._opening is not None and not self._opening.done():
                self._opening.cancel()
                await asyncio.gather(self._opening, return_exceptions=True)
            session, self._session = self._session, None
            if session is not None:
                await session.close()
            server, self._server = self._server, None
            if server is not None:
                await server.stop(self.stop_grace)
