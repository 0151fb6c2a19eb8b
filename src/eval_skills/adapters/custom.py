"""The custom adapter: a Python function called in-process, the fastest way to evaluate one.

``entrypoint`` is ``module:function`` (both may be dotted: ``pkg.tools:Tools.run``). The module is found in the
skill's folder first, else among the installed modules (see ``_pyload`` for how skills' modules are kept apart).
The function takes the task's ``inputData`` (a fresh copy each call) and returns the output; it may be sync or
async. A returned dict with a ``usage`` object reports token usage, as a subprocess skill's reply does.

It is imported by :meth:`CustomAdapter.preflight` (or ``start``), off the event loop, within ``startTimeoutMs``:
a module that is missing, fails to import or lacks the function is an InputError before anything runs. Calls run
on worker threads with the statuses of the other adapters (see ``_inprocess``): an exception or ``sys.exit`` is
the task's error with its reason, a value that is not JSON too, a call that does not return in time a timeout.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from ..errors import InputError, SkillProtocolError
from ..formats.skill import ADAPTER_CONFIG_FILE, Skill
from ..results import Invocation, Usage
from ._inprocess import WorkerPool, capture_output, release_output, run_in_thread, to_json
from ._process import parse_usage
from ._pyload import describe_exception, load_attribute, parse_entrypoint
from .base import Adapter

__all__ = ["CustomAdapter"]


class CustomAdapter(Adapter):
    """Calls ``module:function`` with each task's ``inputData`` (see the module doc)."""

    what = "a function"

    def __init__(self, skill: Skill) -> None:
        self.skill = skill
        self.module, self.attr = parse_entrypoint(skill)
        self.target: Any = None
        self._pool = WorkerPool()
        self._capturing = False
        self._loading: asyncio.Future[Any] | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.skill.id} {self.module}:{self.attr}>"

    # -- loading -------------------------------------------------------------------------------------

    def check_target(self, obj: Any) -> Any:
        """The object to call, from what the entrypoint names; InputError when it cannot be (runs off the loop)."""
        if not callable(obj):
            raise InputError(f"{self.module}:{self.attr} is not callable (it is a {type(obj).__name__})",
                             file=str(self.skill.path), field="$.entrypoint")
        return obj

    async def _load(self) -> Any:
        if self.target is not None:
            return self.target
        if self._loading is None:
            self._loading = asyncio.ensure_future(self._import())
        self.target = await asyncio.shield(self._loading)
        return self.target

    async def _import(self) -> Any:
        if not self._capturing:  # what the module prints when imported is not ours to show either
            capture_output()
            self._capturing = True
        wait_s = self.skill.adapter.startTimeoutMs / 1000
        future = run_in_thread(lambda: self.check_target(load_attribute(self.skill, self.module, self.attr, wait_s)))
        try:
            async with asyncio.timeout(wait_s):
                ok, value = await future
        except TimeoutError:
            raise InputError(f"module {self.module!r} did not finish importing within {wait_s:g}s",
                             file=str(self.skill.path), field="$.entrypoint",
                             hint=f"raise startTimeoutMs in {ADAPTER_CONFIG_FILE} if it is slow to import") from None
        if not ok:
            if isinstance(value, InputError):
                raise value
            raise InputError(f"{self.module}:{self.attr} cannot be used: {describe_exception(value)}",
                             file=str(self.skill.path), field="$.entrypoint")
        return value

    async def preflight(self) -> list[str]:
        """Import the module and find the function: InputError if that fails. Notes: what will be called."""
        target = await self._load()
        return [f"calls {self.module}:{self.attr} ({self.describe_target(target)})"]

    def describe_target(self, target: Any) -> str:
        kind = "an async function" if inspect.iscoroutinefunction(target) else self.what
        try:
            source: str | None = inspect.getfile(target)
        except TypeError:  # a built-in, or a callable object
            source = None
        return f"{kind} from {source}" if source else kind

    async def start(self) -> None:
        await self._load()

    # -- calls ---------------------------------------------------------------------------------------

    def call(self, target: Any, input_data: Any) -> Any:
        """The call made on the worker thread: its value, or an awaitable the worker runs."""
        return target(input_data)

    def convert(self, value: Any) -> tuple[Any, Usage | None]:
        """The output as JSON data and the token usage it reports (on the worker thread)."""
        output = to_json(value)
        usage = parse_usage(output.get("usage")) if type(output) is dict and "usage" in output else None
        return output, usage

    def _failure(self, exc: BaseException) -> str:
        described = describe_exception(exc, self.skill.root.resolve())
        return described if isinstance(exc, SystemExit) else f"raised {described}"

    async def invoke(self, input_data: Any, timeout: float) -> Invocation:
        target = self.target if self.target is not None else await self._load()
        try:  # each call gets its own copy, so a function that edits it harms no other
            encoded = json.dumps(input_data)
        except (TypeError, ValueError) as exc:
            raise SkillProtocolError(f"the task's inputData cannot be copied as JSON: {exc}") from None

        def make() -> Any:
            return self.call(target, json.loads(encoded))

        (output, usage), seconds = await self._pool.call(make, self.convert, timeout, self._failure)
        return Invocation(output=output, usage=usage, latency_ms=seconds * 1000)

    async def close(self) -> None:
        self._pool.close()
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
        if self._capturing:
            self._capturing = False
            release_output()
