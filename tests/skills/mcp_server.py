"""An MCP server for the tests, written with the SDK: tools that answer, fail, hang and crash.

    python mcp_server.py                       # stdio
    python mcp_server.py --http PORT           # streamable HTTP on 127.0.0.1:PORT, path /mcp
    python mcp_server.py --sse PORT            # the older HTTP+SSE transport: GET /sse, POST /messages/
    --starts FILE   append a line to FILE each time the server starts (to count sessions)
    --fail-start    write to stderr and exit 5 before serving
    --max-starts N  the same once FILE of --starts already lists N starts
    --token T       (HTTP) answer 401 unless the request has "Authorization: Bearer T"
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any, TypedDict

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("test-server")


class Counted(TypedDict):
    result: str
    usage: dict[str, int]


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


@server.tool(structured_output=False)
def shout(text: str) -> str:
    print(f"shouting {text}", file=sys.stderr, flush=True)
    return text.upper() + "!"


@server.tool()
def counted(text: str) -> Counted:
    return {"result": text, "usage": {"prompt_tokens": 3, "completion_tokens": 4}}


@server.tool(description="Do what `do` says: echo, slow (sleep `seconds`, then echo), fail, crash (after `seconds`).")
async def act(do: str, text: str = "", seconds: float = 0.0) -> str:
    if do in ("slow", "crash"):
        await asyncio.sleep(seconds)
    if do == "fail":
        raise ToolError(f"failing on purpose: {text}")
    if do == "raise":  # a crash of the tool, not of the server: the client is told only the tool's name
        raise ValueError(f"raised on purpose: {text}")
    if do == "crash":
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    return text


@server.tool(structured_output=False)
def as_json_text(text: str) -> str:
    """Answer ``{"result": text}`` as JSON in a text block, as MCP servers without structured output do."""
    return json.dumps({"result": text})


@server.tool()
def environment() -> dict[str, Any]:
    return {"cwd": os.getcwd(), "names": sorted(os.environ)}


def _guard(app: Any, token: str) -> Any:
    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                # the refusal quotes what it got, as some servers do: the client must not repeat the token
                got = headers.get(b"authorization", b"nothing")
                await send({"type": "http.response.body", "body": b"unauthorized: got " + got})
                return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--sse", type=int)
    parser.add_argument("--starts")
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--max-starts", type=int)
    parser.add_argument("--token")
    args = parser.parse_args()
    if args.starts:
        if args.max_starts is not None and os.path.exists(args.starts):
            with open(args.starts) as handle:
                args.fail_start = len(handle.readlines()) >= args.max_starts
        with open(args.starts, "a") as handle:
            handle.write(f"{os.getpid()}\n")
    if args.fail_start:
        print("cannot open the database: no such file", file=sys.stderr, flush=True)
        sys.exit(5)
    if args.http is None and args.sse is None:
        server.run()
        return
    import uvicorn

    app = server.streamable_http_app() if args.sse is None else server.sse_app()
    if args.token:
        app = _guard(app, args.token)
    uvicorn.run(app, host="127.0.0.1", port=args.http or args.sse, log_level="warning")


if __name__ == "__main__":
    main()
