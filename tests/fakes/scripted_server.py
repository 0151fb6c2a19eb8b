"""A real HTTP server on 127.0.0.1 answering from a script, for tests that stand in for a hosted model API.

    with ScriptedServer() as server:               # started in a thread; server.base is http://127.0.0.1:<port>
        server.script(Reply(429, {"error": ...}, headers={"retry-after-ms": "1"}), Reply(200, {...}))
        server.handler = lambda request: Reply(200, {...})   # answers once the script is used up
        ... server.requests                        # every request: method, path, headers, json body

Each POST takes the next scripted reply, else asks ``handler``, else answers 500 "nothing scripted". GET
requests go to ``get_handler`` (default: 404). A reply may be delayed (``delay`` seconds) or be raw bytes
(``raw``: a malformed body). ``key``: when set, a request without ``Authorization: Bearer <key>`` or
``x-api-key: <key>`` gets 401. Used by fakes of the OpenAI and Anthropic APIs (``openai_server.py``,
``anthropic_server.py``) and the scripted model of the agent CLIs (``model_server.py``), which override
:meth:`ScriptedServer.respond`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # sent as is instead of the JSON body
    delay: float = 0.0


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.replies: list[Reply] = []
        self.requests: list[Request] = []
        self.handler: Callable[[Request], Reply] | None = None
        self.get_handler: Callable[[Request], Reply] = lambda request: Reply(404, {"error": "not found"})
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # ---- lifetime ----------------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server._answer(self, "GET")

            def do_POST(self) -> None:
                server._answer(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # ---- script ------------------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def posts(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.method == "GET":
                return self.get_handler(request)
            if self.replies:
                return self.replies.pop(0)
        if self.handler is not None:
            return self.handler(request)
        return Reply(500, {"error": {"message": "nothing scripted for this request", "type": "server_error"}})

    def _authorised(self, headers: dict[str, str]) -> bool:
        return self.key is None or self.key in (headers.get("authorization", "").removeprefix("Bearer "),
                                                headers.get("x-api-key"))

    def _answer(self, http: BaseHTTPRequestHandler, method: str) -> None:
        """The request loop: read one request (its JSON body parsed, else kept as text) and :meth:`respond`."""
        length = int(http.headers.get("content-length") or 0)
        data = http.rfile.read(length) if length else b""
        try:
            body = json.loads(data) if data else None
        except ValueError:
            body = data.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in http.headers.items()}
        self.respond(http, Request(method, http.path, headers, body))

    def respond(self, http: BaseHTTPRequestHandler, request: Request) -> None:
        """Answer one request: 401 without the key, else the next scripted reply (a subclass answers its own way,
        with :meth:`send`)."""
        if not self._authorised(request.headers):
            with self._lock:
                self.requests.append(request)
            reply = Reply(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
        else:
            reply = self._next(request)
        self.send(http, reply)

    def send(self, http: BaseHTTPRequestHandler, reply: Reply) -> None:
        """Send ``reply`` (after its ``delay``); a client that gave up is no error."""
        if reply.delay:
            time.sleep(reply.delay)
        payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        try:
            http.send_response(reply.status)
            http.send_header("content-type", "application/json")
            http.send_header("content-length", str(len(payload)))
            for key, value in reply.headers.items():
                http.send_header(key, value)
            http.end_headers()
            http.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout): fine
            pass
