"""An MCP server written by hand (no SDK), so it can send what the SDK never would: the tests' hostile server.

    python raw_mcp_server.py                 # stdio
    python raw_mcp_server.py --http PORT     # streamable HTTP (JSON responses) on 127.0.0.1:PORT/mcp
    python raw_mcp_server.py --sse PORT      # the same, each response as an event stream

It has one tool, ``act``; its argument ``do`` picks the reply: ok (text "ok"), surrogate (text with a lone
surrogate escape), badutf8 (text with bytes that are not UTF-8), deep (structured content nested 100,000 deep),
deepnoid (the same with the id after the result, where it cannot be found), nan (NaN in structured content),
huge (a 20 MiB text), echoauth (the request's Authorization header as text; HTTP), detach (stdio: starts a
descendant in its own session that holds stdout, writes its pid to ``pid_file``, and exits). Unknown methods get
a JSON-RPC error; notifications get nothing.
"""

import json
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEEP = "[" * 100000 + "]" * 100000


def reply(message: dict, auth: str | None = None) -> bytes | None:
    """The reply line (without newline) to one request, or None for a notification."""
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    head = '{"jsonrpc": "2.0", "id": ' + json.dumps(rid)
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "act", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        args = message["params"].get("arguments") or {}
        do = args.get("do", "ok")
        if do == "surrogate":
            return (head + ', "result": {"content": [{"type": "text", "text": "lone \\ud800 surrogate"}]}}').encode()
        if do == "badutf8":
            return head.encode() + b', "result": {"content": [{"type": "text", "text": "bad \xff\xfe bytes"}]}}'
        if do == "deep":
            return (head + ', "result": {"content": [], "structuredContent": {"result": ' + DEEP + '}}}').encode()
        if do == "deepnoid":
            return ('{"jsonrpc": "2.0", "result": {"content": [], "structuredContent": {"result": ' + DEEP
                    + '}}, "id": ' + json.dumps(rid) + "}").encode()
        if do == "nan":
            return (head + ', "result": {"content": [], "structuredContent": {"result": NaN}}}').encode()
        if do == "detach":
            child = subprocess.Popen(["setsid", "sleep", "780"])
            with open(args["pid_file"], "w") as handle:
                handle.write(str(child.pid))
            os._exit(0)
        text = {"huge": "h" * (20 << 20), "echoauth": f"auth {auth}"}.get(do, "ok")
        result = {"content": [{"type": "text", "text": text}]}
    else:
        return (head + ', "error": {"code": -32601, "message": "no such method"}}').encode()
    return (head + ', "result": ' + json.dumps(result) + "}").encode()


def serve_stdio() -> None:
    for line in sys.stdin.buffer:
        if line.strip():
            answer = reply(json.loads(line))
            if answer is not None:
                sys.stdout.buffer.write(answer + b"\n")
                sys.stdout.buffer.flush()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200 if self.path == "/health" else 405)
        self.end_headers()

    def do_DELETE(self) -> None:  # noqa: N802
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        message = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        answer = reply(message, self.headers.get("authorization"))
        if answer is None:
            self.send_response(202)
            self.end_headers()
            return
        if SSE:
            answer = b"event: message\ndata: " + answer + b"\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if SSE else "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


SSE = len(sys.argv) == 3 and sys.argv[1] == "--sse"

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--http", "--sse"):
        ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
    else:
        serve_stdio()
