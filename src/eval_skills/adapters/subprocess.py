"""The subprocess adapter: JSON-RPC 2.0 over a program's stdin and stdout.

Each call writes one request line ``{"jsonrpc":"2.0","method":"invoke","params":<inputData>,"id":N}``
(without ``params`` when the task has no ``inputData``).
The reply is a stdout line holding a JSON object with ``result`` or ``error``; any other line is a
log line and is skipped. A reply's output is its ``result``; token usage, when the skill reports it,
is read from a ``usage`` object beside ``result`` or inside it (see :func:`._process.parse_usage`).

Two modes, chosen by ``persistent`` in ``adapter.config.json``:

- one-shot (default): a new process per call. The request is written and stdin closed; stdout is read
  to its end and the *last* reply line whose id is the request's (or null) counts. The program must then
  exit with code 0: a reply followed by another exit code is an error ("exited with code 3 after
  replying"), the reply kept as the result's output. No reply and a non-zero exit is
  :class:`SkillCrashed` (with the tail of stderr); no reply otherwise is :class:`SkillProtocolError`.
- persistent: one process answers one request per line. Requests are pipelined (see ``_persistent``):
  they are written as they come and matched to replies by id (a reply with a null id answers the oldest
  request). Latency and timeouts start when the process can start on a request. A process
  that ends, closes its stdout, breaks the protocol or times out fails the request it was on and is
  replaced; the requests queued behind it go to the new process.

The command is ``command`` + ``args`` from ``adapter.config.json`` (a ``command`` with spaces and no
``args`` is split like a shell would) or else the manifest's ``entrypoint``, split the same way. It
runs in the skill's folder with a clean environment (see :func:`._process.child_env`), in its own
process group: a timeout kills the group and every descendant (see :mod:`eval_skills.procs`).

A reply line is parsed by :func:`~eval_skills.formats.untrusted.loads_untrusted`: a line that is JSON
but unusable (nested too deeply, NaN) is a protocol error, never a crash of the harness.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, SkillCrashed, SkillError, SkillProtocolError, SkillRpcError, SkillTimeout
from ..formats.skill import ADAPTER_CONFIG_FILE, Skill
from ..formats.untrusted import NotJSON, UnusableJSON, loads_untrusted
from ..procs import (
    MAX_LINE_BYTES,
    STDERR_BYTES,
    Child,
    excerpt,
    read_line,
    read_until_exit,
    resolve_argv,
    split_command,
)
from ..results import Invocation
from ._persistent import PersistentChannel
from ._process import child_env, parse_usage
from .base import Adapter

__all__ = ["SubprocessAdapter", "skill_command"]

Reply = dict[str, Any]


def skill_command(skill: Skill) -> list[str]:
    """The command line of a subprocess skill, before its program is resolved."""
    config = skill.adapter
    if config.command and (config.args or not any(ch.isspace() for ch in config.command.strip())):
        return [config.command, *config.args]
    text, file, field = ((config.command, str(skill.root / ADAPTER_CONFIG_FILE), "$.command") if config.command
                         else (skill.manifest.entrypoint, str(skill.path), "$.entrypoint"))
    try:
        return split_command(text)
    except ValueError as exc:
        raise InputError(f"cannot split {text!r} into a command line: {exc}", file=file, field=field) from None


def _request(method: str, params: Any, request_id: int) -> bytes:
    """One request line. A task without ``inputData`` sends no ``params`` at all (as the original does)."""
    if params is None:
        return f'{{"jsonrpc":"2.0","method":"{method}","id":{request_id}}}\n'.encode()
    try:
        body = json.dumps(params)
    except (TypeError, ValueError) as exc:
        raise InputError(f"the task's inputData cannot be sent as JSON: {exc}", field="$.inputData") from None
    return f'{{"jsonrpc":"2.0","method":"{method}","params":{body},"id":{request_id}}}\n'.encode()


def _as_reply(line: bytes) -> Reply | None:
    """The response on this line, or None for a log line. Only a line starting with ``{`` is parsed.

    A line that is JSON we cannot take (nested too deeply; a reply holding NaN) raises SkillProtocolError.
    """
    if line[:1] != b"{":
        line = line.lstrip()
        if line[:1] != b"{":
            return None
    try:
        message = loads_untrusted(line)
    except UnusableJSON as exc:
        try:
            message = loads_untrusted(line, allow_nan=True)
        except NotJSON:
            message = {"result": None}  # too deep to read: meant as a reply, surely
        if type(message) is dict and ("result" in message or "error" in message):
            raise SkillProtocolError(f"a reply that is not usable JSON: {exc}") from None
        return None
    except NotJSON:
        return None
    if type(message) is dict and ("result" in message or "error" in message):
        return message
    return None


def _rpc_error(error: Any) -> SkillRpcError:
    code: int | None = None
    data: Any = None
    if isinstance(error, dict):
        raw_code, message, data = error.get("code"), error.get("message"), error.get("data")
        code = raw_code if isinstance(raw_code, int) and not isinstance(raw_code, bool) else None
        text = str(message) if message is not None else json.dumps(error)
    else:
        text = str(error)
    if len(text) > 500:
        text = text[:500] + "..."
    return SkillRpcError(f"JSON-RPC error {code}: {text}" if code is not None else f"JSON-RPC error: {text}",
                         code=code, data=data)


def _invocation(reply: Reply) -> Invocation:
    error = reply.get("error")
    if error is not None:
        raise _rpc_error(error)
    result = reply.get("result")
    usage = reply.get("usage")
    if usage is None and type(result) is dict:
        usage = result.get("usage")
    return Invocation(output=result, usage=parse_usage(usage) if usage is not None else None)


_INTERPRETER = re.compile(r"(python[0-9.]*|node|nodejs|deno|bun|tsx|ts-node|bash|sh|zsh|ruby|perl|php)")
_SCRIPT = re.compile(r".+\.(py|js|mjs|cjs|ts|mts|sh|bash|rb|pl|php)")


def missing_script(command: Sequence[str], root: Path) -> str | None:
    """The script an interpreter's command line names (``python3 skill.py``: ``skill.py``) when it is not a
    file (relative to ``root``, the skill's folder); None when it is, or when the command names none."""
    if len(command) < 2 or not _INTERPRETER.fullmatch(os.path.basename(command[0])):
        return None
    first = command[1]
    if first.startswith("-") or not _SCRIPT.fullmatch(first):  # python -m x, node -e '...': no script file
        return None
    path = Path(first) if os.path.isabs(first) else root / first
    return None if path.is_file() else first


class SubprocessAdapter(Adapter):
    """Calls a program that speaks JSON-RPC on stdin/stdout, one-shot or persistent (see the module doc).

    ``max_line_bytes`` caps one stdout line (a longer one fails the call and kills the program);
    ``stderr_bytes`` is how much of stderr is kept for error messages; ``exit_grace`` is how long a
    program that closed its stdout may take to exit before it is killed.
    """

    def __init__(self, skill: Skill, *, max_line_bytes: int = MAX_LINE_BYTES,
                 stderr_bytes: int = STDERR_BYTES, exit_grace: float = 1.0) -> None:
        self.skill = skill
        self.persistent = skill.adapter.persistent
        self.command = skill_command(skill)
        self.max_line_bytes = max_line_bytes
        self.stderr_bytes = stderr_bytes
        self.exit_grace = exit_grace
        self._argv: list[str] | None = None
        self._env: dict[str, str] = {}
        self._channel = PersistentChannel(self._spawn, _as_reply, self._ended, max_line_bytes=max_line_bytes)
        self._next_id = 0

    def __repr__(self) -> str:
        mode = "persistent" if self.persistent else "one-shot"
        return f"<SubprocessAdapter {self.skill.id} {mode} {self.command!r}>"

    @property
    def argv(self) -> list[str]:
        """The resolved command line (the program found once, on the child's PATH)."""
        if self._argv is None:
            self._env = child_env(self.skill.adapter)
            self._argv = resolve_argv(self.command, cwd=self.skill.root, env=self._env)
        return self._argv

    @property
    def pid(self) -> int | None:
        """The persistent process's id, while there is one."""
        child = self._channel.child
        return child.proc.pid if child is not None else None

    async def preflight(self) -> list[str]:
        """The program must exist and be executable (else InputError naming the file and field)."""
        try:
            argv = self.argv
        except SkillCrashed as exc:
            config = self.skill.adapter
            file, field = ((str(self.skill.root / ADAPTER_CONFIG_FILE), "$.command") if config.command
                           else (str(self.skill.path), "$.entrypoint"))
            raise InputError(str(exc), file=file, field=field,
                             hint="check the program's name and that it is executable") from None
        script = missing_script(self.command, self.skill.root)
        if script is not None:
            config = self.skill.adapter
            file, field = ((str(self.skill.root / ADAPTER_CONFIG_FILE), "$.args" if config.args else "$.command")
                           if config.command else (str(self.skill.path), "$.entrypoint"))
            raise InputError(f"the script {script!r} it names is not in {self.skill.root}", file=file, field=field,
                             hint="check the script's name; it is looked up in the skill's folder")
        mode = "persistent" if self.persistent else "one process per task"
        return [f"runs {shlex.join(argv)} in {self.skill.root} ({mode})"]

    async def start(self) -> None:
        """Resolve the command; in persistent mode also start the process. SkillCrashed if it cannot start."""
        self.argv  # noqa: B018 - resolves, raising SkillCrashed for a missing program
        if self.persistent:
            await self._channel.ensure_started()

    async def invoke(self, input_data: Any, timeout: float) -> Invocation:
        if self.persistent:
            reply, seconds = await self._call_persistent("invoke", input_data, timeout)
            invocation = _invocation(reply)
            invocation.latency_ms = seconds * 1000
            return invocation
        return _invocation(await self._call_once("invoke", input_data, timeout))

    async def healthcheck(self, timeout: float = 5.0) -> bool:
        """True when the skill answers the ``healthcheck`` method with a result."""
        try:
            if self.persistent:
                reply, _ = await self._call_persistent("healthcheck", {}, timeout)
            else:
                reply = await self._call_once("healthcheck", {}, timeout)
        except SkillError:
            return False
        return reply.get("error") is None

    async def close(self) -> None:
        """End the persistent process: EOF on its stdin, then SIGKILL to its group. Never raises."""
        child = await self._channel.close()
        if child is None:
            return
        try:
            if child.proc.stdin is not None:
                child.proc.stdin.close()
            await child.wait_exit(self.exit_grace)
            await child.kill()
        except Exception:  # noqa: BLE001 - closing must not fail the run
            pass

    # -- the two modes -------------------------------------------------------------------------------

    async def _spawn(self) -> Child:
        return await Child.start(self.argv, cwd=self.skill.root, env=self._env,
                                 stderr_bytes=self.stderr_bytes)

    async def _call_persistent(self, method: str, params: Any, timeout: float) -> tuple[Reply, float]:
        return await self._channel.call(lambda request_id: _request(method, params, request_id), timeout)

    async def _call_once(self, method: str, params: Any, timeout: float) -> Reply:
        self._next_id += 1
        request_id = self._next_id
        request = _request(method, params, request_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        reply: Reply | None = None
        refused: SkillProtocolError | None = None  # the last reply-like line was unusable
        last = other = b""  # the last log line; the last reply with another id
        child: Child | None = None
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    child = await self._spawn()
                    stdin, stdout = child.proc.stdin, child.proc.stdout
                    assert stdin is not None and stdout is not None
                    stdin.write(request)
                    stdin.close()  # flushed in the background; a program that never reads is fine

                    async def read_all() -> None:
                        nonlocal reply, last, refused, other
                        while line := await read_line(stdout, self.max_line_bytes):
                            try:
                                message = _as_reply(line)
                            except SkillProtocolError as exc:
                                reply, refused = None, exc
                                continue
                            if message is None:
                                if line.strip():
                                    last = line
                            elif message.get("id") is None or (message.get("id") == request_id
                                                               and type(message.get("id")) is int):
                                reply, refused = message, None
                            else:
                                other = line

                    await read_until_exit(child, read_all())
            except TimeoutError:
                if reply is not None:
                    raise SkillTimeout(f"replied but did not end its output within {timeout:g}s "
                                       "(a one-shot skill must exit after replying)") from None
                partial = child.unread_output() if child is not None else b""
                raise SkillTimeout(f"no reply within {timeout:g}s"
                                   + (f"; last output: {excerpt(last)}" if last else "")
                                   + (f"; an unfinished line (no newline yet): {excerpt(partial)}"
                                      if partial.strip() else "")) from None
            assert child is not None
            exited = await child.wait_exit(min(self.exit_grace, max(deadline - loop.time(), 0.05)))
            code = child.proc.returncode
            if reply is not None:
                if exited and code and "error" not in reply:  # a reply, then a failure exit code: a failure
                    failed = child.failure("after replying")
                    failed.output = reply.get("result")
                    raise failed
                return reply
            if refused is not None:
                raise refused
            unmatched = f"; a reply matched no request (its id must be {request_id} or null): " \
                f"{excerpt(other)}" if other else ""
            if not exited:
                raise SkillProtocolError("closed its stdout without a JSON-RPC reply and kept running"
                                         + (f"; last output: {excerpt(last)}" if last else "") + unmatched)
            if code:
                await child.kill()
                crashed = child.failure("without a JSON-RPC reply")
                crashed.args = (crashed.args[0] + unmatched,)
                raise crashed
            if other:
                raise SkillProtocolError("no JSON-RPC reply" + unmatched)
            raise SkillProtocolError(f"no JSON-RPC reply; last output: {excerpt(last)}" if last
                                     else "no JSON-RPC reply; the skill printed nothing on stdout")
        finally:
            if child is not None:
                await child.kill()

    async def _ended(self, child: Child, what: str) -> SkillError:
        """The error for a process whose stdout ended: a crash, or a protocol fault if it runs on."""
        exited = await child.wait_exit(self.exit_grace)
        await child.kill()
        if not exited:
            return SkillProtocolError(f"closed its stdout {what} (the process kept running and was stopped)")
        return child.failure(what)
