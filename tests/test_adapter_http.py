"""The http adapter against real HTTP servers on 127.0.0.1 (a stdlib server in a thread, or started by ``start``)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gzip
import json
import re
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest
from procs import gone, running_with

from eval_skills.adapters import create_adapter
from eval_skills.adapters.http import HttpAdapter, invoke_url
from eval_skills.errors import InputError, SkillCrashed, SkillHttpError, SkillProtocolError, SkillTimeout
from eval_skills.formats.skill import AdapterConfig, Skill, SkillManifest, load_skill
from eval_skills.results import Usage

HERE = Path(__file__).parent
SKILLS = HERE / "skills"
CAPITALS = HERE.parent / "examples" / "skills" / "capitals"
TOKEN = "tok-7f3a9c-very-secret"
T = TypeVar("T")


@functools.cache
def gzip_bomb() -> bytes:
    """100 MiB of JSON in about 100 KiB of gzip: each 64 KiB read inflates to some 64 MiB."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    zeros = b"0" * (1 << 20)
    return b"".join([deflate.compress(b'{"result": "'), *(deflate.compress(zeros) for _ in range(100)),
                     deflate.compress(b'"}'), deflate.flush()])


class Handler(BaseHTTPRequestHandler):
    server: Server

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/endless":  # a body that never ends (a health page streaming forever)
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 40))
            self.end_headers()
            deadline = time.monotonic() + 10
            with contextlib.suppress(OSError):
                while time.monotonic() < deadline:
                    self.wfile.write(b"x" * 1024)
                    time.sleep(0.01)
            return
        self._send(200, {"status": "ok"})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        path = self.path
        if path == "/ok":
            self._send(200, {"result": f"hello {body['input']['name']}", "headers": dict(self.headers)})
        elif path == "/usage-body":
            self._send(200, {"result": "x", "usage": {"promptTokens": 3, "completionTokens": 4}})
        elif path == "/usage-snake":
            self._send(200, {"result": "x", "usage": {"input_tokens": 5, "output_tokens": 6}})
        elif path == "/usage-headers":
            self._send(200, {"result": "x"}, {"x-usage-prompt-tokens": "8", "x-usage-completion-tokens": "2",
                                              "x-usage-total-tokens": "10"})
        elif path == "/error":
            self._send(500, b"Internal boom " + b"y" * 5000)
        elif path == "/badjson":
            self._send(200, b"<html>not json</html>")
        elif path == "/deep":
            self._send(200, b'{"result": ' + b"[" * 100000 + b"]" * 100000 + b"}")
        elif path == "/surrogate":
            self._send(200, b'{"result": "lone \\ud800 surrogate"}')
        elif path == "/huge":
            self._send(200, b'{"result": "' + b"z" * (20 << 20) + b'"}')
        elif path == "/gzip-bomb":
            self._send(200, gzip_bomb(), {"Content-Encoding": "gzip"})
        elif path == "/gzip-ok":
            self._send(200, gzip.compress(b'{"result": "inflated"}'), {"Content-Encoding": "gzip"})
        elif path == "/deflate-raw":  # raw deflate (no zlib header), as some servers send it
            raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
            self._send(200, raw.compress(b'{"result": "raw"}') + raw.flush(), {"Content-Encoding": "deflate"})
        elif path == "/brotli":
            self._send(200, b"\x0b\x02\x80{}\x03", {"Content-Encoding": "br"})
        elif path == "/bad-gzip":
            self._send(200, b"not gzip at all", {"Content-Encoding": "gzip"})
        elif path == "/hang":
            self.server.release.wait(10)
        elif path == "/bearer":
            if self.headers.get("Authorization") == f"Bearer {TOKEN}" and self.headers.get("X-Extra") == "1":
                self._send(200, {"result": "let in"})
            else:
                self._send(401, {"error": f"bad credentials: {self.headers.get('Authorization')}"})
        elif path == "/apikey":
            if self.headers.get("X-Custom-Key") == TOKEN:
                self._send(200, {"result": "let in"})
            else:
                self._send(403, {"error": f"bad key: {self.headers.get('X-Custom-Key')}"})
        elif path == "/echo-secret":
            self._send(401, {"error": f"you sent {self.headers.get('Authorization')}"})
        else:
            self._send(404, {"error": "no such path"})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.bodies: list[Any] = []
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_skill(entrypoint: str, *, root: Path = SKILLS, **config: Any) -> Skill:
    manifest = SkillManifest(id="web", name="Web", version="2.1.0", adapterType="http", entrypoint=entrypoint)
    return Skill(manifest=manifest, path=root / "skill.json", adapter=AdapterConfig(**config))


def run_with(skill: Skill, body: Callable[[HttpAdapter], Awaitable[T]]) -> T:
    async def main() -> T:
        async with HttpAdapter(skill) as adapter:
            assert isinstance(adapter, HttpAdapter)
            return await body(adapter)

    return asyncio.run(main())


def call(skill: Skill, input_data: Any, timeout: float = 5.0) -> Any:
    async def body(adapter: HttpAdapter) -> Any:
        return await adapter.invoke(input_data, timeout)

    return run_with(skill, body)


# -- answers ---------------------------------------------------------------------------------------

def test_posts_the_task_and_returns_the_json_reply(server: Server) -> None:
    skill = make_skill("/ok", baseUrl=server.url + "/")
    result = call(skill, {"name": "Ada"})
    assert result.output["result"] == "hello Ada"
    assert result.usage is None
    assert server.bodies[-1] == {"skillId": "web", "version": "2.1.0", "input": {"name": "Ada"}}


def test_a_full_url_entrypoint_is_used_as_is(server: Server) -> None:
    assert call(make_skill(server.url + "/ok"), {"name": "Bo"}).output["result"] == "hello Bo"
    assert invoke_url(make_skill("/ok", baseUrl="http://h:1/api")) == "http://h:1/api/ok"
    with pytest.raises(InputError, match=r"\$\.entrypoint"):
        invoke_url(make_skill("/ok"))


@pytest.mark.parametrize(("path", "usage"), [("/usage-body", Usage(3, 4, 7)), ("/usage-snake", Usage(5, 6, 11)),
                                             ("/usage-headers", Usage(8, 2, 10))])
def test_usage_is_read_from_the_body_or_headers(server: Server, path: str, usage: Usage) -> None:
    assert call(make_skill(server.url + path), {}).usage == usage


def test_healthcheck(server: Server) -> None:
    async def body(adapter: HttpAdapter) -> bool:
        return await adapter.healthcheck(2)

    assert run_with(make_skill("/ok", baseUrl=server.url, healthPath="/health"), body) is True
    assert run_with(make_skill(f"http://127.0.0.1:{free_port()}/ok"), body) is False


# -- failures --------------------------------------------------------------------------------------

def test_a_healthcheck_does_not_read_the_body(server: Server) -> None:
    async def body(adapter: HttpAdapter) -> tuple[bool, float]:
        started = time.monotonic()
        healthy = await adapter.healthcheck(timeout=3.0)
        return healthy, time.monotonic() - started

    healthy, took = run_with(make_skill(server.url + "/ok", healthPath="/endless"), body)
    assert healthy and took < 2.0, took


def test_status_500_is_an_http_error_with_a_short_excerpt(server: Server) -> None:
    with pytest.raises(SkillHttpError) as info:
        call(make_skill(server.url + "/error"), {})
    assert info.value.status_code == 500
    assert "HTTP 500" in str(info.value) and "Internal boom" in str(info.value)
    assert len(str(info.value)) < 700


def test_invalid_json_is_a_protocol_error(server: Server) -> None:
    with pytest.raises(SkillProtocolError, match="not JSON.*<html>"):
        call(make_skill(server.url + "/badjson"), {})


def test_a_reply_nested_100000_deep_is_a_protocol_error(server: Server) -> None:
    with pytest.raises(SkillProtocolError) as info:
        call(make_skill(server.url + "/deep"), {})
    assert str(info.value).startswith(f"reply from {server.url}/deep is not usable JSON (HTTP 200; nested deeper "
                                      "than 256 levels): ")


def test_a_lone_surrogate_in_a_reply_becomes_the_replacement_character(server: Server) -> None:
    assert call(make_skill(server.url + "/surrogate"), {}).output == {"result": "lone \ufffd surrogate"}


def test_a_body_over_16_mib_is_refused(server: Server) -> None:
    with pytest.raises(SkillProtocolError, match=f"reply from {server.url}/huge is larger than 16 MiB"):
        call(make_skill(server.url + "/huge"), {})


def test_gzip_and_deflate_replies_are_inflated_and_asked_for(server: Server) -> None:
    assert call(make_skill(f"{server.url}/gzip-ok"), {}).output["result"] == "inflated"
    assert call(make_skill(f"{server.url}/deflate-raw"), {}).output["result"] == "raw"
    assert call(make_skill(f"{server.url}/ok"), {"name": "x"}).output["headers"]["Accept-Encoding"] == "gzip, deflate"


@pytest.mark.parametrize(("path", "reason"), [
    ("/gzip-bomb", "is larger than 16 MiB"),
    ("/brotli", "is encoded with 'br', which was not asked for (Accept-Encoding: gzip, deflate)"),
    ("/bad-gzip", "does not decode as its Content-Encoding 'gzip' says: Error -3"),
])
def test_an_encoded_reply_we_cannot_take_is_a_protocol_error(server: Server, path: str, reason: str) -> None:
    with pytest.raises(SkillProtocolError, match=f"^reply from {server.url}{path} {re.escape(reason)}"):
        call(make_skill(f"{server.url}{path}"), {}, timeout=30)


def test_a_gzip_bomb_is_refused_before_it_is_inflated() -> None:
    # the server runs in another process, so the high-water mark is the reading side's alone
    script = r"""
import resource, sys
sys.path.insert(0, sys.argv[1])
from test_adapter_http import call, make_skill
from eval_skills.errors import SkillProtocolError
url = sys.argv[2]
call(make_skill(f"{url}/gzip-ok"), {})  # warm up: imports, client
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    call(make_skill(f"{url}/gzip-bomb"), {}, timeout=60)
    outcome = "accepted"
except SkillProtocolError as exc:
    outcome = str(exc)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, outcome)
"""
    srv = subprocess.Popen([sys.executable, "-c", SERVE_CASE, str(HERE)], stdout=subprocess.PIPE, text=True)
    try:
        assert srv.stdout is not None
        url = srv.stdout.readline().strip()
        out = subprocess.run([sys.executable, "-c", script, str(HERE), url], capture_output=True, text=True,
                             timeout=120)
    finally:
        srv.kill()
        srv.wait()
    assert out.returncode == 0, out.stderr
    grown_kib, outcome = out.stdout.strip().split(" ", 1)
    assert outcome.endswith("/gzip-bomb is larger than 16 MiB"), outcome
    assert int(grown_kib) < 40 * 1024, grown_kib  # 100 MiB once inflated; at most the 16 MiB cap kept


SERVE_CASE = r"""
import sys
sys.path.insert(0, sys.argv[1])
from test_adapter_http import Server
srv = Server()
print(srv.url, flush=True)
srv.serve_forever()
"""


def test_no_answer_is_a_timeout(server: Server) -> None:
    started = time.monotonic()
    with pytest.raises(SkillTimeout, match="within 0.5s"):
        call(make_skill(server.url + "/hang"), {}, timeout=0.5)
    assert time.monotonic() - started < 3


def test_connection_refused_is_an_http_error() -> None:
    with pytest.raises(SkillHttpError, match="cannot reach") as info:
        call(make_skill(f"http://127.0.0.1:{free_port()}/invoke"), {})
    assert info.value.status_code is None


# -- auth ------------------------------------------------------------------------------------------

def test_bearer_token_from_the_environment(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_TOKEN", TOKEN)
    skill = make_skill(server.url + "/bearer", authType="bearer", authTokenEnvKey="WEB_TOKEN",
                       headers={"X-Extra": "1"})
    assert call(skill, {}).output == {"result": "let in"}


@pytest.mark.parametrize("auth_type", ["api-key", "apiKey", "api_key"])
def test_api_key_header(server: Server, monkeypatch: pytest.MonkeyPatch, auth_type: str) -> None:
    monkeypatch.setenv("WEB_TOKEN", TOKEN)
    skill = make_skill(server.url + "/apikey", authType=auth_type, authTokenEnvKey="WEB_TOKEN",
                       authHeader="X-Custom-Key")
    assert call(skill, {}).output == {"result": "let in"}
    monkeypatch.setenv("WEB_TOKEN", "wrong")
    with pytest.raises(SkillHttpError) as info:
        call(skill, {})
    assert info.value.status_code == 403


def test_the_token_never_appears_in_errors_or_reprs(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEB_TOKEN", TOKEN)
    skill = make_skill(server.url + "/echo-secret", authType="bearer", authTokenEnvKey="WEB_TOKEN")
    seen: list[str] = []

    async def body(adapter: HttpAdapter) -> None:
        seen.extend([repr(adapter), str(adapter), repr(vars(adapter))])
        with pytest.raises(SkillHttpError) as info:
            await adapter.invoke({}, 5)
        seen.extend([str(info.value), repr(info.value)])
        assert "[redacted]" in str(info.value)

    run_with(skill, body)
    refused = make_skill(f"http://127.0.0.1:{free_port()}/x", authType="bearer", authTokenEnvKey="WEB_TOKEN")
    with pytest.raises(SkillHttpError) as info:
        call(refused, {})
    seen.append(str(info.value))
    assert not [text for text in seen if TOKEN in text]


def test_missing_token_variable_is_an_input_error_when_the_adapter_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEB_TOKEN_UNSET", raising=False)
    with pytest.raises(InputError) as info:
        HttpAdapter(make_skill("http://127.0.0.1:9/x", authType="bearer", authTokenEnvKey="WEB_TOKEN_UNSET"))
    assert info.value.field == "$.authTokenEnvKey"
    assert str(info.value.file).endswith("adapter.config.json")
    assert "WEB_TOKEN_UNSET" in str(info.value)


# -- start -----------------------------------------------------------------------------------------

def test_start_launches_the_server_and_close_stops_it(tmp_path: Path) -> None:
    port = free_port()
    pid_file = tmp_path / "pid"
    skill = make_skill("/invoke", baseUrl=f"http://127.0.0.1:{port}", healthPath="/health",
                       start=f"python3 http_server.py --port {port}", env={"PID_FILE": str(pid_file)})

    async def main() -> Any:
        adapter = create_adapter(skill)
        async with adapter:
            result = await adapter.invoke({"q": 1}, 5)
        return result

    result = asyncio.run(main())
    pid = int(pid_file.read_text())
    assert result.output["result"] == {"q": 1} and result.output["pid"] == pid
    assert Path(result.output["cwd"]) == SKILLS.resolve()
    deadline = time.monotonic() + 3
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(pid)
    with pytest.raises(SkillHttpError):
        call(make_skill(f"http://127.0.0.1:{port}/invoke"), {})


def test_a_server_that_exits_first_is_a_crash_with_its_output() -> None:
    port = free_port()
    skill = make_skill("/invoke", baseUrl=f"http://127.0.0.1:{port}",
                       start=["python3", "http_server.py", "--port", str(port), "--exit-code", "4"])
    with pytest.raises(SkillCrashed, match="exited with code 4.*failing on purpose"):
        asyncio.run(HttpAdapter(skill).start())


def test_start_refuses_a_port_another_server_answers(server: Server) -> None:
    skill = make_skill("/ok", baseUrl=server.url, start=["python3", "http_server.py", "--port", "1"])
    with pytest.raises(SkillCrashed, match="already answers"):
        asyncio.run(HttpAdapter(skill).start())


def test_a_server_that_never_listens_times_out_and_is_stopped(tmp_path: Path) -> None:
    port = free_port()
    pid_file = tmp_path / "pid"
    skill = make_skill("/invoke", baseUrl=f"http://127.0.0.1:{port}", startTimeoutMs=400,
                       start=["python3", "http_server.py", "--port", str(port), "--no-listen"],
                       env={"PID_FILE": str(pid_file)})
    with pytest.raises(SkillTimeout, match="did not answer"):
        asyncio.run(HttpAdapter(skill).start())
    # stopped, whether or not it got as far as writing its pid (on a busy machine it may not, in 0.4 s)
    assert running_with("http_server.py", str(port), "--no-listen") == []
    assert not pid_file.exists() or gone(int(pid_file.read_text()))


def test_capitals_example() -> None:
    skill = load_skill(CAPITALS)
    assert skill.adapter.start and skill.adapter.baseUrl
    port = free_port()  # not the example's fixed port, which another run may hold
    skill = Skill(manifest=skill.manifest, path=skill.path, adapter=skill.adapter.model_copy(update={
        "baseUrl": f"http://127.0.0.1:{port}", "start": ["python3", "server.py", "--port", str(port)]}))

    async def body(adapter: HttpAdapter) -> list[Any]:
        assert await adapter.healthcheck()
        with pytest.raises(SkillHttpError) as info:
            await adapter.invoke({"country": "Atlantis"}, 5)
        assert info.value.status_code == 404
        questions = [{"country": "France"}, {"capital": "Tokyo"}, {"country": "Kenya", "field": "currency"},
                     {"question": "What is the capital of New Zealand?"}]
        return [(await adapter.invoke(q, 5)).output["result"] for q in questions]

    assert run_with(skill, body) == ["Paris", "Japan", "Kenyan shilling", "Wellington"]
