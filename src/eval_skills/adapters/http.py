"""The HTTP adapter: ``POST`` a task to a skill's endpoint, the JSON reply is the output.

The request body is ``{"skillId", "version", "input"}`` (no ``input`` when the task has no ``inputData``).
``method`` in ``adapter.config.json`` changes the method: ``PUT`` and ``PATCH`` send the same body, ``GET``
and ``DELETE`` send the input object's keys as query parameters. The URL is the manifest's ``entrypoint`` when
it is a full URL, else ``baseUrl`` (``adapter.config.json``) joined with the entrypoint path.

Failures: a status >= 400 is :class:`SkillHttpError` (with the status and the start of the body); a
reply that is not JSON, or a body over 16 MiB (counted as it is inflated: ``gzip`` and ``deflate`` are asked for
and decoded under that cap, any other ``Content-Encoding`` is refused), is :class:`SkillProtocolError`; a
connection failure is :class:`SkillHttpError`; no complete reply within the task's timeout is
:class:`SkillTimeout`. Running out of descriptors on our side is the harness's :class:`HarnessResourceError`,
never the skill's fault.

Auth: ``authType`` ``bearer`` sends ``Authorization: Bearer <token>``; ``api-key`` (also ``apiKey``,
``api_key``) sends the token in the header ``authHeader`` (default ``X-API-Key``). The token is read
from the caller's environment variable named by ``authTokenEnvKey`` when the adapter starts. It is
never put in a message or repr: a reply body that echoes it is redacted before it is quoted or parsed.

Token usage (``Invocation.usage``) comes from a ``usage`` object in the JSON reply, in any spelling
:func:`._process.parse_usage` accepts, or else from the response headers ``x-usage-prompt-tokens``,
``x-usage-completion-tokens`` and ``x-usage-total-tokens`` (a missing total is the sum of the others); the
original eval-skills' ``x-usage-input-tokens`` and ``x-usage-output-tokens`` are read too. Every request
carries ``X-Eval-Skills-Version``, as the original's do.

``start`` (a command string or list) launches the skill's server when the adapter starts: in the skill's
folder, with the clean environment of :func:`._process.child_env`, in its own process group. The adapter
then polls ``GET healthPath`` (or the base URL) until any HTTP response comes, for up to
``startTimeoutMs``; ``close()`` stops the server (SIGTERM to the group, SIGKILL after 3 seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import zlib
from typing import Any
from urllib.parse import urlsplit

import httpx

from .._version import __version__
from ..errors import (
    HarnessResourceError,
    InputError,
    SkillCrashed,
    SkillHttpError,
    SkillProtocolError,
    SkillTimeout,
)
from ..formats.skill import ADAPTER_CONFIG_FILE, Skill
from ..formats.untrusted import NotJSON, UnusableJSON, loads_untrusted
from ..procs import MAX_LINE_BYTES, Child, excerpt, resolve_argv, resource_failure, split_command
from ..results import Invocation, Usage
from ._body import ACCEPT_ENCODING, BodyTooLarge, BoundedBody, UnsupportedEncoding
from ._process import child_env, parse_usage
from .base import Adapter

__all__ = ["HttpAdapter", "USAGE_HEADERS", "health_url", "invoke_url", "request_headers", "start_argv",
           "start_server"]

USAGE_HEADERS = ("x-usage-prompt-tokens", "x-usage-completion-tokens", "x-usage-total-tokens")
STOP_GRACE = 3.0
_REDACTED = b"[redacted]"


def invoke_url(skill: Skill) -> str:
    """The URL a task is posted to. An entrypoint path without ``baseUrl`` is an InputError."""
    entrypoint = skill.manifest.entrypoint.strip()
    if urlsplit(entrypoint).scheme in ("http", "https"):
        return entrypoint
    base = skill.adapter.baseUrl
    if not base:
        raise InputError(f"entrypoint {entrypoint!r} is not a full URL and no baseUrl is set",
                         file=str(skill.path), field="$.entrypoint",
                         hint=f"give a full http(s) URL, or set baseUrl in {ADAPTER_CONFIG_FILE}")
    if urlsplit(base).scheme not in ("http", "https"):
        raise InputError(f"baseUrl {base!r} is not an http(s) URL",
                         file=str(skill.root / ADAPTER_CONFIG_FILE), field="$.baseUrl")
    return base.rstrip("/") + "/" + entrypoint.lstrip("/")


class _Secret:
    """A token that shows as ``***`` wherever it is printed."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<secret ***>"

    __str__ = __repr__


# the names the original eval-skills reads, for prompt and completion tokens
ORIGINAL_USAGE_HEADERS = ("x-usage-input-tokens", "x-usage-output-tokens")


def _header_usage(headers: httpx.Headers) -> Usage | None:
    values = [headers.get(name) for name in USAGE_HEADERS]
    for index, name in enumerate(ORIGINAL_USAGE_HEADERS):
        values[index] = values[index] or headers.get(name)
    if not any(values):
        return None
    try:
        prompt, completion, total = (int(v) if v else None for v in values)
    except ValueError:
        return None
    prompt, completion = prompt or 0, completion or 0
    return Usage(prompt, completion, total if total is not None else prompt + completion)


def request_headers(skill: Skill) -> tuple[dict[str, str], str | None]:
    """The headers of every request to a skill's server (``headers``, and the token of ``authType``) and the
    token itself (for redaction). A token variable that is not set is an InputError naming it."""
    config = skill.adapter
    headers = {"Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING,
               "X-Eval-Skills-Version": __version__, **config.headers}
    if config.authType == "none":
        return headers, None
    config_file = str(skill.root / ADAPTER_CONFIG_FILE)
    name = config.authTokenEnvKey
    if not name:
        raise InputError(f"authType {config.authType!r} needs the name of the environment variable "
                         "holding the token", file=config_file, field="$.authTokenEnvKey",
                         hint='set "authTokenEnvKey", e.g. "MY_SKILL_TOKEN"')
    token = os.environ.get(name)  # read once: it lives only in the client's headers and the redaction
    if not token:
        raise InputError(f"environment variable {name} is not set; it holds the {config.authType} token",
                         file=config_file, field="$.authTokenEnvKey", hint=f"export {name}=<token>")
    if config.authType == "bearer":
        headers["Authorization"] = f"Bearer {token}"
    else:
        headers[config.authHeader] = token
    return headers, token


def health_url(skill: Skill, url: str) -> str:
    """Where a started server is polled: ``healthPath`` (joined with ``baseUrl`` or the URL's origin), or that
    base itself."""
    config = skill.adapter
    parts = urlsplit(url)
    base = config.baseUrl or f"{parts.scheme}://{parts.netloc}"
    if not config.healthPath:
        return base
    if urlsplit(config.healthPath).scheme in ("http", "https"):
        return config.healthPath
    return base.rstrip("/") + "/" + config.healthPath.lstrip("/")


def start_argv(skill: Skill) -> list[str]:
    """The ``start`` command of ``adapter.config.json`` as a resolved command line; InputError (naming the
    file and field) when it does not parse or its program does not exist. Checked before anything runs."""
    config = skill.adapter
    assert config.start is not None
    file = str(skill.root / ADAPTER_CONFIG_FILE)
    try:
        command = split_command(config.start)
    except ValueError as exc:
        raise InputError(f"cannot split the start command into a command line: {exc}", file=file,
                         field="$.start") from None
    try:
        return resolve_argv(command, cwd=skill.root, env=child_env(config))
    except SkillCrashed as exc:
        raise InputError(str(exc), file=file, field="$.start",
                         hint="check the program's name and that it is executable") from None


async def _answers(client: httpx.AsyncClient, url: str, timeout: float) -> None:
    """Returns once ``url`` answers a GET with a status line (its body is not read: an event stream such as
    an MCP server's ``/sse`` never ends); httpx.HTTPError when it does not answer."""
    async with client.stream("GET", url, timeout=timeout):
        pass


async def start_server(skill: Skill, client: httpx.AsyncClient, url: str) -> Child:
    """Run the ``start`` command of ``adapter.config.json`` (in the skill's folder, clean environment, own process
    group) and wait until ``url`` answers with any HTTP response, for up to ``startTimeoutMs``. A server that
    exits first is SkillCrashed with its output; one that never answers is SkillTimeout (and is stopped)."""
    config = skill.adapter
    argv = start_argv(skill)
    shown = " ".join(split_command(config.start or ""))
    env = child_env(config)
    try:  # a server already answering there would be mistaken for ours
        await _answers(client, url, 1.0)
    except httpx.HTTPError:
        pass
    else:
        raise SkillCrashed(f"cannot run start command {shown!r}: {url} already answers "
                           "(is another server using the port?)")
    server = await Child.start(argv, cwd=skill.root, env=env, stdin=asyncio.subprocess.DEVNULL, merge_output=True)
    loop = asyncio.get_running_loop()
    wait_s = config.startTimeoutMs / 1000
    deadline = loop.time() + wait_s
    pause = 0.02
    try:
        while True:
            if server.proc.returncode is not None:
                await server.kill()
                raise server.failure(f"before answering (start command {shown!r})")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise SkillTimeout(f"the server of start command {shown!r} did not answer {url} "
                                   f"within {wait_s:g}s")
            try:
                await _answers(client, url, min(1.0, remaining))
            except httpx.HTTPError:
                await asyncio.sleep(min(pause, max(deadline - loop.time(), 0)))
                pause = min(pause * 1.5, 0.25)
                continue
            return server
    except BaseException:
        await server.stop(STOP_GRACE)
        raise


class HttpAdapter(Adapter):
    """Posts tasks to a skill's HTTP endpoint with one :class:`httpx.AsyncClient` (see the module doc).

    ``max_connections`` bounds the client's pool (and its keep-alive connections): size it to the run's
    concurrency. ``stop_grace`` is how long a started server gets between SIGTERM and SIGKILL; a reply
    body longer than ``max_body_bytes`` is a protocol error.
    """

    def __init__(self, skill: Skill, *, max_connections: int = 64, stop_grace: float = STOP_GRACE,
                 max_body_bytes: int = MAX_LINE_BYTES) -> None:
        self.skill = skill
        self.url = invoke_url(skill)
        self.max_connections = max_connections
        self.max_body_bytes = max_body_bytes
        self.stop_grace = stop_grace
        self._client: httpx.AsyncClient | None = None
        self._server: Child | None = None
        self._secret: _Secret | None = None
        self._lock = asyncio.Lock()
        self._headers()  # a token variable that is not set is an input error before anything runs or is written

    def __repr__(self) -> str:
        return f"<HttpAdapter {self.skill.id} {self.url}>"

    @property
    def server_pid(self) -> int | None:
        """The id of the server process ``start`` launched, while it runs."""
        return self._server.proc.pid if self._server is not None else None

    # -- lifetime ------------------------------------------------------------------------------------

    async def preflight(self) -> list[str]:
        """The ``start`` command must parse and its program exist (else InputError); notes say what runs."""
        notes = [f"sends each task to {self.url} ({self.skill.adapter.method})"]
        if self.skill.adapter.start:
            argv = start_argv(self.skill)
            notes.append(f"starts the server with {shlex.join(argv)} in {self.skill.root}")
        return notes

    async def start(self) -> None:
        """Open the client and launch the ``start`` command, if any, waiting until the server answers."""
        async with self._lock:
            if self._client is not None:
                return
            headers = self._headers()
            limits = httpx.Limits(max_connections=self.max_connections,
                                  max_keepalive_connections=self.max_connections)
            self._client = httpx.AsyncClient(headers=headers, limits=limits, timeout=30.0)
            if self.skill.adapter.start:
                try:
                    self._server = await start_server(self.skill, self._client, self._health_url())
                except BaseException:
                    await self._shutdown()
                    raise

    async def close(self) -> None:
        """Close the client and stop the server ``start`` launched. Never raises."""
        with contextlib.suppress(Exception):  # closing must not fail the run
            await self._shutdown()

    async def _shutdown(self) -> None:
        client, self._client = self._client, None
        server, self._server = self._server, None
        try:
            if client is not None:
                await client.aclose()
        finally:
            if server is not None:
                await server.stop(self.stop_grace)

    def _headers(self) -> dict[str, str]:
        headers, token = request_headers(self.skill)
        self._secret = _Secret(token) if token else None
        return headers

    # -- calls ---------------------------------------------------------------------------------------

    async def invoke(self, input_data: Any, timeout: float) -> Invocation:
        client = self._client
        if client is None:
            await self.start()
            client = self._client
            assert client is not None
        try:
            async with asyncio.timeout(timeout):
                async with client.stream(self.skill.adapter.method, self.url, timeout=timeout,
                                         **self._payload(input_data)) as response:
                    content = await self._read_body(response)
        except (TimeoutError, httpx.TimeoutException):
            raise SkillTimeout(f"no reply from {self.url} within {timeout:g}s") from None
        except SkillProtocolError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the connection does, it is this task's result
            if resource_failure(exc):
                raise HarnessResourceError(f"cannot reach {self.url}: {self._describe(exc)}") from exc
            raise SkillHttpError(f"cannot reach {self.url}: {self._describe(exc)}") from None
        content = self._redact(content)
        status = response.status_code
        if status >= 400:
            raise SkillHttpError(f"HTTP {status} {response.reason_phrase} from {self.url}: "
                                 f"{excerpt(content, 500) if content.strip() else '(empty body)'}",
                                 status_code=status)
        try:
            output = loads_untrusted(content)
        except NotJSON as exc:
            what = "not usable JSON" if isinstance(exc, UnusableJSON) else "not JSON"
            raise SkillProtocolError(f"reply from {self.url} is {what} (HTTP {status}; {exc}): "
                                     f"{excerpt(content) if content.strip() else '(empty body)'}") from None
        usage = parse_usage(output.get("usage")) if isinstance(output, dict) else None
        return Invocation(output=output, usage=usage or _header_usage(response.headers))

    async def _read_body(self, response: httpx.Response) -> bytes:
        """The body, decoded, refused as soon as it passes ``max_body_bytes`` once decoded (so a skill cannot
        fill the harness's memory, not even with a gzip bomb)."""
        cap = self.max_body_bytes
        try:
            body = BoundedBody(response.headers.get("content-encoding", ""), cap)
            async for chunk in response.aiter_raw():
                body.feed(chunk)
            return body.finish()
        except BodyTooLarge:
            raise SkillProtocolError(f"reply from {self.url} is larger than {cap >> 20} MiB") from None
        except UnsupportedEncoding as exc:
            raise SkillProtocolError(f"reply from {self.url} is encoded with {str(exc)!r}, which was not asked "
                                     f"for (Accept-Encoding: {ACCEPT_ENCODING})") from None
        except zlib.error as exc:
            raise SkillProtocolError(f"reply from {self.url} does not decode as its Content-Encoding "
                                     f"{response.headers.get('content-encoding')!r} says: {exc}") from None

    async def healthcheck(self, timeout: float = 5.0) -> bool:
        """True when ``GET healthPath`` (or the base URL) answers with a status below 400 (its body is not read)."""
        client = self._client
        if client is None:
            return False
        try:
            async with asyncio.timeout(timeout), client.stream("GET", self._health_url(), timeout=timeout) as response:
                return response.status_code < 400
        except (TimeoutError, httpx.HTTPError):
            return False

    # -- helpers -------------------------------------------------------------------------------------

    def _payload(self, input_data: Any) -> dict[str, Any]:
        """The request's body (``POST``, ``PUT``, ``PATCH``) or query (``GET``, ``DELETE``): a body is
        ``{"skillId", "version", "input"}``, without ``input`` when the task has none; a query holds the
        input object's keys (values that are not strings as JSON), or ``input`` for an input that is not
        an object."""
        if self.skill.adapter.method in ("GET", "DELETE"):
            if input_data is None:
                return {}
            fields = input_data if isinstance(input_data, dict) else {"input": input_data}
            return {"params": {k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}}
        manifest = self.skill.manifest
        body: dict[str, Any] = {"skillId": manifest.id, "version": manifest.version}
        if input_data is not None:
            body["input"] = input_data
        return {"json": body}

    def _redact(self, content: bytes) -> bytes:
        secret = self._secret
        if secret is not None:
            token = secret.value.encode()
            if token in content:
                content = content.replace(token, _REDACTED)
        return content

    def _describe(self, exc: Exception) -> str:
        text = str(exc) or type(exc).__name__
        if self._secret is not None:
            text = text.replace(self._secret.value, _REDACTED.decode())
        return f"{type(exc).__name__}: {text}"

    def _health_url(self) -> str:
        return health_url(self.skill, self.url)
