"""The review page served on 127.0.0.1 (Starlette on uvicorn).

Routes: ``/`` the page; ``/assets/<name>`` its script and styles; ``/api/case/<key>``, ``/api/tab/<name>`` and
``/api/detail/<ref>`` fragments as JSON (``{"html": ...}``), loaded when shown or unfolded; ``/api/feedback``
(GET the file, POST ``{"run_id", "feedback"}``), ``/api/grade-mark`` (POST ``{"run_id", "text", "judge_passed",
"right", "grading_version"}``: a mark on a judge's grade) and ``/api/status`` (POST ``{"status"}``) for the iteration's
``feedback.json``; ``/files/<path>`` a file below the workspace (images inline, anything else as a download).

Defences, since the page shows untrusted text and the server writes files: it listens on 127.0.0.1 only;
every request, reads included, needs the page's token (:mod:`.access`); requests whose ``Host`` is not
127.0.0.1 or localhost are refused (no DNS rebinding); every response carries a Content-Security-Policy that
allows only the server's own script and styles; writes also need the token in ``X-Review-Token``, a JSON body
(at most BODY_LIMIT bytes, refused as soon as it is longer, never buffered whole; nested at most MAX_DEPTH
deep) and, when the browser sends one, an ``Origin`` of this server, so another site open in the browser cannot
write feedback. A file is served from the one descriptor it was checked on (:func:`.files.open_below`).
"""

from __future__ import annotations

import secrets
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import quote, unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InputError
from ..formats.untrusted import NotJSON, clean_text, loads_untrusted
from .access import TokenGate, new_token
from .feedback import UnknownRunError
from .files import IMAGE_TYPES
from .page import SERVED_CSP, asset, render_page
from .render import visible
from .source import Source

__all__ = ["create_app", "serve"]

HOST = "127.0.0.1"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
BODY_LIMIT = 1_000_000  # bytes of a request body
MAX_DEPTH = 16  # the deepest JSON a request body may hold (they hold one object of strings)
MAX_REF = 4096  # characters of a case key, a file path or a piece's reference
ASSET_TYPES = {"viewer.js": "text/javascript; charset=utf-8", "viewer.css": "text/css; charset=utf-8",
               "highlight.css": "text/css; charset=utf-8"}
SECURITY_HEADERS = [
    (b"content-security-policy", SERVED_CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


def create_app(source: Source, *, token: str) -> Starlette:
    """The ASGI application of one review page."""

    def index(request: Request) -> Response:
        return HTMLResponse(render_page(source, static=False, token=token))

    def assets(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSET_TYPES:
            return _error(404, "no such asset")
        return Response(asset(name), media_type=ASSET_TYPES[name])

    def fragment(render: Callable[..., str | None], ref: str, missing: str) -> Response:
        """A fragment as JSON; 404 for a reference no file could have (too long a name) or none there is."""
        try:
            html = render(ref, static=False) if len(ref) <= MAX_REF else None
        except OSError:  # a name the file system refuses (longer than a file name can be)
            html = None
        return _error(404, missing) if html is None else JSONResponse({"html": html})

    def case(request: Request) -> Response:
        return fragment(source.case_html, request.path_params["key"], "no such case")

    def tab(request: Request) -> Response:
        return fragment(source.tab_html, request.path_params["name"], "no such view")

    def detail(request: Request) -> Response:
        return fragment(source.detail_html, request.path_params["ref"], "no such piece")

    def files(request: Request) -> Response:
        # the path as sent, its escapes decoded to the bytes they stand for (a file name need not be UTF-8)
        raw = request.scope.get("raw_path") or request.url.path.encode()
        ref = unquote(raw.decode("latin-1").partition("?")[0].removeprefix("/files/"), errors="surrogateescape")
        opened = source.file(ref) if len(ref) <= MAX_REF else None
        if opened is None:
            return _error(404, "no such file in the workspace")
        kind = IMAGE_TYPES.get(Path(opened.name).suffix.lower())
        headers = {"content-security-policy": "default-src 'none'; sandbox"}
        if kind is None:
            # saved under the name the page shows: a bidi override would disguise rtl\u202egnp.exe as rtlexe.png
            headers["content-disposition"] = f"attachment; filename*=UTF-8''{quote(visible(clean_text(opened.name)))}"
        else:
            headers["content-length"] = str(opened.size)
        # what is downloaded may be a file an agent wrote: the known secrets are masked in it (not in images)
        return StreamingResponse(opened.chunks(masked=kind is None), media_type=kind or "application/octet-stream",
                                 headers=headers)

    def feedback_get(request: Request) -> Response:
        if source.feedback is None:
            return _error(404, "this page takes no feedback")
        return JSONResponse({"texts": source.feedback.texts(), "status": source.feedback.status,
                             "marks": source.feedback.marks()})

    async def payload(request: Request) -> dict[str, Any] | Response:
        if source.feedback is None:
            return _error(404, "this page takes no feedback")
        if not secrets.compare_digest(request.headers.get("x-review-token", ""), token):
            return _error(403, "missing or wrong review token: reload the page")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"http://{request.headers.get('host', '')}":
            return _error(403, "cross-origin writes are refused")
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _error(415, "send JSON")
        too_large = _error(413, f"a request body is at most {BODY_LIMIT:,} bytes")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > BODY_LIMIT:
            return too_large
        body = bytearray()
        async for chunk in request.stream():  # refused as soon as it is too long: never held whole
            body += chunk
            if len(body) > BODY_LIMIT:
                return too_large
        try:
            data = loads_untrusted(bytes(body), max_depth=MAX_DEPTH)
        except NotJSON as exc:
            return _error(400, f"not usable JSON: {exc}")
        return data if isinstance(data, dict) else _error(400, "expected a JSON object")

    async def feedback_post(request: Request) -> Response:
        data = await payload(request)
        if isinstance(data, Response):
            return data
        run, text = data.get("run_id"), data.get("feedback")
        if not isinstance(run, str) or not isinstance(text, str):
            return _error(400, "expected {run_id, feedback} strings")
        assert source.feedback is not None
        try:
            review = await run_in_threadpool(source.feedback.set, run, text)
        except UnknownRunError:
            return _error(404, f"no run {run!r} in this iteration")
        except InputError as exc:
            return _error(400, exc.line())
        return JSONResponse({"ok": True, "timestamp": review.timestamp, "status": source.feedback.status})

    async def mark_post(request: Request) -> Response:
        data = await payload(request)
        if isinstance(data, Response):
            return data
        run, text, judged, right = data.get("run_id"), data.get("text"), data.get("judge_passed"), data.get("right")
        version = data.get("grading_version")
        if not (isinstance(run, str) and isinstance(text, str) and isinstance(judged, bool)
                and (right is None or isinstance(right, bool))
                and (version is None or (isinstance(version, int) and not isinstance(version, bool)))):
            return _error(400, "expected {run_id, text, judge_passed, right (true, false or null), grading_version}")
        assert source.feedback is not None
        try:
            marks = await run_in_threadpool(source.feedback.set_mark, run, text, judged, right, version)
        except UnknownRunError:
            return _error(404, f"no run {run!r} in this iteration")
        except InputError as exc:
            return _error(400, exc.line())
        return JSONResponse({"ok": True, "marks": marks, "status": source.feedback.status})

    async def status_post(request: Request) -> Response:
        data = await payload(request)
        if isinstance(data, Response):
            return data
        assert source.feedback is not None
        try:
            await run_in_threadpool(source.feedback.set_status, str(data.get("status")))
        except InputError as exc:
            return _error(400, exc.line())
        return JSONResponse({"ok": True, "status": source.feedback.status})

    routes = [
        Route("/", index), Route("/assets/{name}", assets), Route("/api/case/{key:path}", case),
        Route("/api/tab/{name}", tab), Route("/api/detail/{ref:path}", detail),
        Route("/api/feedback", feedback_get, methods=["GET"]),
        Route("/api/feedback", feedback_post, methods=["POST"]), Route("/api/status", status_post, methods=["POST"]),
        Route("/api/grade-mark", mark_post, methods=["POST"]),
        Route("/files/{ref:path}", files),
    ]
    middleware = [Middleware(SecurityHeaders),
                  Middleware(TrustedHostMiddleware, allowed_hosts=[HOST, "localhost"]),
                  Middleware(TokenGate, token=token)]
    return Starlette(routes=routes, middleware=middleware)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: a free one). InputError when the port is taken."""
    # proto IPPROTO_TCP, so asyncio sets TCP_NODELAY on each connection (with proto 0 it does not, and every
    # response on a kept-alive connection waits 40 ms for a delayed ACK)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {HOST}:{port} ({exc.strerror or exc})", field="--port",
                         hint="choose another port, or leave --port out for a free one") from None
    return sock


def serve(source: Source, *, port: int = 0, ready: Callable[[str], None] | None = None) -> int | None:
    """Serve the page until SIGINT or SIGTERM, and return that signal's number (None if it stopped otherwise);
    ``ready`` gets its address, with the token, once it accepts connections.

    A signal never raises in the middle of starting: it asks the server to stop, which it does once started
    (the requests in flight answered), whenever the signal came."""
    import uvicorn

    from .render import warm_up

    sock = bind(port)
    token = new_token()
    app = create_app(source, token=token)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False)
    server = uvicorn.Server(config)
    stopped: list[int] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        stopped.append(signum)
        server.should_exit = True

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        warm_up()
        if ready is not None and not stopped:
            ready(f"http://{HOST}:{sock.getsockname()[1]}/?token={token}")
        server.run(sockets=[sock])  # it handles the signals itself while it runs, then raises them again
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sock.close()
    return stopped[0] if stopped else None
