"""The HTTP client of MCP skills over streamable HTTP: the server's replies are read before the SDK sees them.

The SDK parses what a server sends itself, and refuses what any skill's reply may hold (a lone surrogate, bytes
that are not UTF-8), turning it into an unreadable error. So the client's transport reads each JSON body, and
each ``data:`` line of an event stream, the way every reply of a skill is read
(:func:`~eval_skills.formats.untrusted.loads_untrusted`) and hands the SDK the same JSON, re-encoded:

- lone surrogates and bytes that are not UTF-8 become U+FFFD; the auth token, if the server echoes it, becomes
  ``[redacted]`` (as for HTTP skills);
- a reply we will not take (nested deeper than :data:`MAX_DEPTH` levels, which is as deep as the SDK reads;
  NaN; a body or line over 16 MiB) becomes an error response to the request, marked ``UNUSABLE``, which the
  adapter makes that call's protocol error.

Compressed bodies are not asked for (``Accept-Encoding: identity``); one sent anyway is passed on as it is.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

from ..formats.untrusted import NotJSON, UnusableJSON, loads_untrusted
from ..procs import MAX_LINE_BYTES
from ._mcp_stdio import UNUSABLE

__all__ = ["MAX_DEPTH", "mcp_http_client"]

MAX_DEPTH = 200  # the SDK's JSON parser reads a message nested at most about this deep
_REDACTED = b"[redacted]"
_SKIPPED = ("content-length", "content-encoding", "transfer-encoding")


def _error(request_id: Any, reason: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
        "code": -32700, "message": f"a reply that is not usable JSON: {reason}", "data": UNUSABLE}}).encode()


class _Replies(httpx2.AsyncBaseTransport):
    """An HTTP transport whose responses' JSON messages are read like every skill reply (see the module doc)."""

    def __init__(self, token: str | None, max_bytes: int) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._token = token.encode() if token else None
        self._max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        request_id = _request_id(request)
        if response.status_code >= 400 and response.status_code != 404 and request_id is not None:
            return await self._refusal(response, request_id)  # 404: the SDK's "Not Found"/"Session terminated"
        if response.headers.get("content-encoding", "identity").lower() not in ("", "identity") \
                or kind not in ("application/json", "text/event-stream"):
            return response
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _SKIPPED]
        if kind == "text/event-stream":
            return httpx2.Response(response.status_code, headers=headers, extensions=response.extensions,
                                   stream=_Events(self, response, request_id))
        body = await self._body(response, request_id)
        return httpx2.Response(response.status_code, headers=headers, extensions=response.extensions,
                               content=self.message(body, request_id))

    async def _body(self, response: httpx2.Response, request_id: Any) -> bytes:
        body = bytearray()
        try:
            async for chunk in response.stream:  # type: ignore[union-attr]
                body += chunk
                if len(body) > self._max_bytes:
                    return _error(request_id, f"larger than {self._max_bytes >> 20} MiB")
        finally:
            await response.aclose()
        return bytes(body)

    async def _refusal(self, response: httpx2.Response, request_id: Any) -> httpx2.Response:
        """A request the server refused with an HTTP status: its JSON-RPC error when the body is one, else an
        error naming the status and the start of the body (the SDK would say only "Server returned an error
        response", hiding a 401 behind it)."""
        raw = await self._body(response, request_id)
        message = self.message(raw, request_id)
        try:
            parsed = json.loads(message)
        except ValueError:
            parsed = None
        if not (isinstance(parsed, dict) and isinstance(parsed.get("error"), dict)):
            text = raw.replace(self._token, _REDACTED) if self._token else raw
            snippet = " ".join(text.decode("utf-8", "replace").split())[:300]
            status = f"HTTP {response.status_code} {response.reason_phrase}".strip()
            message = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
                "code": -32603, "message": f"the server answered {status}" + (f": {snippet}" if snippet else "")}},
                ensure_ascii=False).encode()
        return httpx2.Response(response.status_code, headers={"content-type": "application/json"},
                               extensions=response.extensions, content=message)

    def message(self, data: bytes, request_id: Any) -> bytes:
        """One JSON message as the SDK will get it."""
        if self._token is not None and self._token in data:
            data = data.replace(self._token, _REDACTED)
        try:
            value = loads_untrusted(data, max_depth=MAX_DEPTH)
        except UnusableJSON as exc:
            return _error(request_id, str(exc)) if request_id is not None else data
        except NotJSON:  # not ours to judge: the SDK says what is wrong with it
            return data
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Events(httpx2.AsyncByteStream):
    """An event stream whose ``data:`` lines are read like every reply; a line over the limit ends it."""

    def __init__(self, transport: _Replies, response: httpx2.Response, request_id: Any) -> None:
        self._transport = transport
        self._response = response
        self._request_id = request_id

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = bytearray()
        limit = self._transport._max_bytes
        async for chunk in self._response.stream:  # type: ignore[union-attr]
            pending += chunk
            end = pending.rfind(b"\n")
            if end >= 0:
                lines, pending = bytes(pending[:end + 1]), pending[end + 1:]
                yield b"".join(self._line(line) for line in lines.splitlines(keepends=True))
            if len(pending) > limit:
                yield b"data: " + _error(self._request_id, f"a line larger than {limit >> 20} MiB") + b"\n\n"
                return
        if pending:
            yield self._line(bytes(pending))

    def _line(self, line: bytes) -> bytes:
        if not line.startswith(b"data:"):
            return line
        body = line[5:].strip()
        ending = line[len(line.rstrip(b"\r\n")):]
        return b"data: " + self._transport.message(body, self._request_id) + ending

    async def aclose(self) -> None:
        await self._response.aclose()


def _request_id(request: httpx2.Request) -> Any:
    try:
        message = json.loads(request.content)
    except Exception:  # noqa: BLE001 - a streamed or empty body: no id to answer
        return None
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def mcp_http_client(headers: dict[str, str], token: str | None, max_bytes: int = MAX_LINE_BYTES,
                    timeout: httpx2.Timeout | None = None) -> httpx2.AsyncClient:
    """The SDK's client settings (its timeouts, unless ``timeout``), with replies read by :class:`_Replies`."""
    return httpx2.AsyncClient(headers={**headers, "Accept-Encoding": "identity"},
                              timeout=timeout or httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
                              transport=_Replies(token, max_bytes))
