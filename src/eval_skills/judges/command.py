"""``command``: any program as a judge. The request JSON goes to its stdin, the reply JSON comes on its stdout.

The program runs in the caller's folder with the caller's environment (a judge may need its keys), in its
own process group, killed whole at the timeout. Asked a second time (the first reply did not fit), it gets
the same request with ``EVAL_SKILLS_JUDGE_ATTEMPT=2`` and ``EVAL_SKILLS_JUDGE_PROBLEM`` (what was wrong)
in its environment; ``EVAL_SKILLS_JUDGE_MODEL`` holds the model when one is set. A crash, a non-zero exit,
a timeout or more than 16 MiB of output is a failed attempt.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, JudgeError, SkillError
from ..procs import Child, describe_exit, feed_stdin, read_until_exit, resolve_argv
from .base import Judge, Request, VerdictCache

__all__ = ["CommandJudge"]

MAX_REPLY = 16 << 20
HASHED = 4 << 20  # bytes of a file the command names, hashed into the cache key


class CommandJudge(Judge):
    backend = "command"

    def __init__(self, command: str | Sequence[str], *, timeout: float = 120.0, model: str | None = None,
                 env: Mapping[str, str] | None = None, cache: VerdictCache | None = None) -> None:
        super().__init__(model=model, cache=cache)
        try:
            self.argv = shlex.split(command) if isinstance(command, str) else [str(w) for w in command]
        except ValueError as exc:
            raise InputError(f"cannot split the judge command: {exc}", field="judge command") from None
        if not self.argv:
            raise InputError("the judge command is empty", field="judge command")
        if not timeout > 0:
            raise InputError(f"the judge timeout must be positive, not {timeout!r}", field="judge timeout")
        self.timeout = timeout
        self.env = dict(env or {})

    def prompt_version(self, kind: str) -> str:
        return "external"  # the prompt, if any, belongs to the program

    def identity(self) -> dict[str, Any]:
        """The command line, and what the files it names hold: edit the judge's script (its prompt, its rules)
        and its verdicts are asked again."""
        return {**super().identity(), "command": self.argv, "files": [_fingerprint(word) for word in self.argv]}

    def _env(self, extra: Mapping[str, str]) -> dict[str, str]:
        key = (self.model, tuple(self.env.items()))
        kept = getattr(self, "_environ", None)
        if kept is None or kept[0] != key:  # copied at the first call and kept (see Judge.secrets)
            model = {"EVAL_SKILLS_JUDGE_MODEL": self.model} if self.model else {}
            kept = self._environ = (key, {**os.environ, **self.env, **model})
        return {**kept[1], **extra}

    def check(self) -> None:
        try:
            resolve_argv(self.argv, cwd=Path.cwd(), env=self._env({}))
        except SkillError as exc:
            raise InputError(str(exc).replace("the skill", "the judge"), field="judge command") from None

    async def ask(self, request: Request, attempt: int, problem: str | None) -> str:
        extra = {"EVAL_SKILLS_JUDGE_ATTEMPT": str(attempt)}
        if problem:
            extra["EVAL_SKILLS_JUDGE_PROBLEM"] = problem
        env = self._env(extra)
        try:
            cwd = Path.cwd()
            argv = resolve_argv(self.argv, cwd=cwd, env=env)
            child = await Child.start(argv, cwd=cwd, env=env, stderr_bytes=16 << 10)
        except SkillError as exc:
            raise JudgeError(str(exc)) from None
        try:
            async with asyncio.timeout(self.timeout):
                request_bytes = request.model_dump_json().encode()
                # a judge that exits while something it started holds its stdout is read to its exit, not to the
                # timeout
                out, _ = await asyncio.gather(read_until_exit(child, _read(child)),
                                              feed_stdin(child.proc.stdin, request_bytes))
                await child.exited()
        except TimeoutError:
            raise JudgeError(f"the judge command timed out after {self.timeout:g} s") from None
        finally:
            await child.kill()
        code = child.proc.returncode
        if code != 0:
            tail = child.stderr.tail(300)
            raise JudgeError(f"the judge command {describe_exit(code or 0)}; "
                             + (f"stderr: {tail}" if tail else "stderr was empty"))
        return out.decode("utf-8", "replace")


def _fingerprint(word: str) -> str | None:
    """A hash of the file a word of the command line names (relative to the current folder), for files up to
    ``HASHED`` bytes; a bigger one (an interpreter) by its size and time; None for a word that names no file."""
    try:
        path = Path(word)
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > HASHED:
            return f"{info.st_size}:{info.st_mtime_ns}"
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, ValueError):
        return None


async def _read(child: Child) -> bytes:
    stdout = child.proc.stdout
    data = bytearray()
    while stdout is not None and (chunk := await stdout.read(1 << 16)):
        data += chunk
        if len(data) > MAX_REPLY:
            raise JudgeError(f"the judge command printed more than {MAX_REPLY >> 20} MiB")
    return bytes(data)

