"""Who may use the review page: whoever holds its token, for every request, reads included (as Jupyter does).

``eval-skills view`` prints the page's address with the token (``http://127.0.0.1:PORT/?token=...``). A request
carries it in one of three ways: that ``token`` query parameter (a page opened from the printed address is then
redirected to the same address without it, and given a cookie), the cookie (``eval-skills-review-PORT``, so two
pages on two ports keep their own; ``HttpOnly``, ``SameSite=Strict``, ``Path=/``), or an ``Authorization: token
...`` (or ``Bearer ...``) header, for scripts. Anything else is refused with 403 before it reaches a route, so
another local user or process that can reach 127.0.0.1 reads nothing of the workspace through the server.
"""

from __future__ import annotations

import secrets
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["COOKIE_PREFIX", "TokenGate", "cookie_name", "new_token"]

COOKIE_PREFIX = "eval-skills-review-"
REFUSED_PAGE = (b"<!doctype html><meta charset=utf-8><title>Review page: token needed</title>"
                b"<p>This review page needs its token. Open the address <code>eval-skills view</code> printed "
                b"(it ends in <code>?token=...</code>).</p>")
REFUSED_JSON = b'{"error":"missing or wrong token: open the address eval-skills view printed"}'


def new_token() -> str:
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    return f"{COOKIE_PREFIX}{port}"


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return ""


class TokenGate:
    """Refuses every HTTP request that does not carry ``token`` (see the module doc)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    def _same(self, given: str) -> bool:
        return bool(given) and secrets.compare_digest(given.encode(), self.token.encode())

    def _from_cookie(self, scope: Scope, name: str) -> str:
        jar = SimpleCookie()
        try:
            jar.load(_header(scope, b"cookie"))
        except CookieError:
            return ""
        morsel = jar.get(name)
        return morsel.value if morsel is not None else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        port = int((scope.get("server") or ("", 0))[1] or 0)
        name = cookie_name(port)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for key, value in query if key == "token"]
        if given and self._same(given[-1]):
            if scope.get("method") in ("GET", "HEAD"):  # the printed address: keep the token out of the history
                rest = urlencode([(k, v) for k, v in query if k != "token"])
                location = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
                await self._redirect(send, location, name)
                return
            await self.app(scope, receive, send)
            return
        scheme, _, value = _header(scope, b"authorization").partition(" ")
        if (scheme.lower() in ("token", "bearer") and self._same(value.strip())) \
                or self._same(self._from_cookie(scope, name)):
            await self.app(scope, receive, send)
            return
        await self._refuse(scope, send)

    async def _redirect(self, send: Send, location: str, name: str) -> None:
        cookie = f"{name}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", location.encode("latin-1", "replace")),
                                (b"set-cookie", cookie.encode()), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(self, scope: Scope, send: Send) -> None:
        page = scope["path"] in ("", "/") and "json" not in _header(scope, b"accept")
        body = REFUSED_PAGE if page else REFUSED_JSON
        kind = b"text/html; charset=utf-8" if page else b"application/json"
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
