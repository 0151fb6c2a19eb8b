"""The judge interface: a request in, a :class:`Judgement` out (a verdict, or a judge error).

:meth:`Judge.judge` is the shared machinery: it looks the request up in the verdict cache (when one is
given), asks the backend (:meth:`Judge.ask`), checks the reply against the request, asks **once more**
when the reply does not parse, lacks an entry or the judge failed, and otherwise records a judge error:
its own outcome, never a failed assertion. What a judge is sent came from agents and skills: the known secrets
(:meth:`Judge.secrets`: this process's and the judge's own keys) are masked in it first, so a hosted judge's
provider never receives an agent's key an output file quoted. Every judgement records the backend, model and
prompt version that produced it. Judges are safe to call concurrently.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from ..errors import JudgeError
from ..formats.workspace import Expectation
from ..masking import holds, mask_value, secret_values
from .models import CompareRequest, GradeRequest, ImproveRequest, ScoreRequest, Verdict, parse_verdict

__all__ = ["ATTEMPTS", "Judge", "Judgement", "VerdictCache"]

ATTEMPTS = 2  # a failed ask is tried once more, then it is a judge error
Request = GradeRequest | CompareRequest | ScoreRequest | ImproveRequest


class Judgement(BaseModel):
    """The outcome of one request: ``verdict`` or ``error`` (exactly one is set)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["grade", "compare", "score", "improve"]
    verdict: Verdict | None = None
    error: str | None = None
    backend: str
    model: str | None = None
    prompt_version: str
    attempts: int = 0
    cached: bool = False
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.verdict is not None

    def expectations(self, assertions: Sequence[str]) -> list[Expectation]:
        """The graded assertions of a grade request; on a judge error each is ungraded (``passed`` None)
        with the error as its evidence."""
        if self.verdict is not None and hasattr(self.verdict, "as_expectations"):
            graded: list[Expectation] = self.verdict.as_expectations()
            return graded
        reason = f"judge error: {self.error}" if self.error else "not graded"
        return [Expectation(text=text, passed=None, evidence=reason) for text in assertions]


class VerdictCache(Protocol):
    """Where verdicts are kept between runs (the store). Keys come from :meth:`Judge.cache_key`; values are
    the verdict as a JSON object. Only verdicts are stored, never judge errors."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, verdict: dict[str, Any]) -> None: ...


class Judge(ABC):
    """A judge backend. Subclasses set :attr:`backend` and implement :meth:`ask`."""

    backend: str = "judge"
    model: str | None = None

    def __init__(self, *, model: str | None = None, cache: VerdictCache | None = None) -> None:
        self.model = model
        self.cache = cache

    def prompt_version(self, kind: str) -> str:
        """The version of the prompt this judge uses for ``kind`` (recorded with each verdict)."""
        return "none"

    def identity(self) -> dict[str, Any]:
        """What, besides the request, decides the verdict: the cache key is made of it."""
        return {"backend": self.backend, "model": self.model}

    def check(self) -> None:  # noqa: B027 - optional hook
        """Raise InputError when the judge cannot be used (no key, program not found, unreachable)."""

    def keys(self) -> tuple[str | None, ...]:
        """The keys this judge sends (masked wherever they would be kept or sent)."""
        return ()

    def secrets(self) -> tuple[str, ...]:
        """The secrets masked in what this judge is sent and in what it answers (the environment scanned at the
        first call and kept while the keys stay the same: it costs more than a small judge call's other work)."""
        keys = self.keys()
        kept = getattr(self, "_secrets", None)
        if kept is None or kept[0] != keys:
            kept = self._secrets = (keys, secret_values(os.environ, keys))
        return kept[1]

    def masked(self, request: Request) -> Request:
        """``request`` with the known secrets masked in every text (the assertions, the user's own words that the
        verdict is checked against, as they are)."""
        secrets = self.secrets()
        data = request.model_dump(mode="json")
        if not holds(json.dumps(data, ensure_ascii=False), secrets):
            return request
        masked = mask_value(data, secrets)
        if "assertions" in data:
            masked["assertions"] = data["assertions"]
        return type(request).model_validate(masked)

    def cache_key(self, request: Request) -> str:
        """A hash of the judge's identity, the prompt version and the request."""
        body = {**self.identity(), "prompt_version": self.prompt_version(request.kind),
                "request": request.model_dump(mode="json")}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    @abstractmethod
    async def ask(self, request: Request, attempt: int, problem: str | None) -> str:
        """The judge's reply text to ``request``. ``attempt`` is 1, then 2 when asked again, with the
        ``problem`` of the first reply. Raises JudgeError when the judge could not answer."""

    async def judge(self, request: Request) -> Judgement:
        started = time.monotonic()
        request = self.masked(request)

        def outcome(**fields: Any) -> Judgement:
            return Judgement(kind=request.kind, backend=self.backend, model=self.model,
                             prompt_version=self.prompt_version(request.kind),
                             duration_s=time.monotonic() - started, **fields)

        key = self.cache_key(request) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                return outcome(verdict=parse_verdict(request, json.dumps(hit)), cached=True)
            except JudgeError:
                pass  # a stale or damaged entry: ask again
        problem: str | None = None
        for attempt in range(1, ATTEMPTS + 1):
            try:
                verdict = parse_verdict(request, await self.ask(request, attempt, problem))
            except JudgeError as exc:
                problem = str(exc)
                continue
            except Exception as exc:  # a judge's failure is its outcome, never a crash
                problem = f"{type(exc).__name__}: {exc}"
                continue
            if self.cache is not None:
                self.cache.put(key, verdict.model_dump(mode="json"))
            return outcome(verdict=verdict, attempts=attempt)
        return outcome(error=problem, attempts=ATTEMPTS)
