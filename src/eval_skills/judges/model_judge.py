"""What the judges backed by a model API (``openai``, ``anthropic``) share: settings, the key, the check before
a run, the prompts, and asking for structured output with a fallback.

Settings: ``model`` (required), ``base_url`` (another endpoint: a proxy, a local server), ``temperature``
(sent only when set: some models refuse it), ``timeout`` (seconds per request), ``max_retries`` (the SDK's
retries of 429 and 5xx replies, with backoff). The key comes from ``EVAL_SKILLS_LLM_KEY``, else the
backend's usual variable; it is required for the provider's own endpoint and optional with a ``base_url``. An
endpoint that quotes the key back (in an error, in a reply) never gets it into a judgement: it reads ``***``.

Each backend lists its ways of asking for JSON, best first (structured output, then a JSON mode, then
plain text). An endpoint that refuses one (a 400 reply) is asked at once the next way, and the judge keeps
to the way that worked (only once one has: a request refused every way, one too long for the model say, leaves
the judge as it was). Whatever comes back is checked by :func:`~eval_skills.judges.models.parse_verdict`.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

from ..errors import InputError, JudgeError
from ..llm import check_endpoint, describe_api_error, find_key, make_client
from ..masking import mask
from .base import Judge, Request, VerdictCache
from .prompts import load_prompt, render

__all__ = ["KEY_VARIABLE", "ModelJudge"]

KEY_VARIABLE = "EVAL_SKILLS_LLM_KEY"


class ModelJudge(Judge):
    provider: str = ""  # the SDK: openai or anthropic
    key_variable: str = ""  # the provider's usual key variable
    more_key_variables: tuple[str, ...] = ()  # read after it (the original eval-skills also read OPENAI_KEY)
    modes: tuple[str, ...] = ("plain",)  # ways of asking for JSON, best first

    def __init__(self, *, model: str | None = None, base_url: str | None = None, temperature: float | None = None,
                 timeout: float = 120.0, max_retries: int = 3, env: Mapping[str, str] | None = None,
                 cache: VerdictCache | None = None) -> None:
        super().__init__(model=model, cache=cache)
        if temperature is not None and not (isinstance(temperature, int | float) and 0 <= temperature <= 2):
            raise InputError(f"the judge temperature must be a number from 0 to 2, not {temperature!r}",
                             field="llm.temperature")
        if not timeout > 0:
            raise InputError(f"the judge timeout must be positive, not {timeout!r}", field="judge timeout")
        self.base_url = base_url or None
        self.temperature = temperature
        self.timeout = timeout
        self.max_retries = max_retries
        self.env = dict(env) if env is not None else None
        self.mode = 0  # index into modes: the best way the endpoint accepts

    def prompt_version(self, kind: str) -> str:
        return load_prompt(kind).version

    def identity(self) -> dict[str, Any]:
        """Also the endpoint the SDK will call: without ``base_url``, the one its variable names
        (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``), so a local server's verdicts never answer for another's."""
        endpoint = self.base_url or os.environ.get(f"{self.provider.upper()}_BASE_URL") or None
        return {**super().identity(), "base_url": endpoint, "temperature": self.temperature}

    def key(self) -> tuple[str | None, str | None]:
        """The key and the variable it came from."""
        return find_key((KEY_VARIABLE, self.key_variable, *self.more_key_variables), self.env)

    def keys(self) -> tuple[str | None, ...]:
        return (self.key()[0],)

    def check(self) -> None:
        what = f"the {self.backend} judge"
        if not self.model:
            raise InputError(f"{what} needs a model", field="--judge-model",
                             hint="give --judge-model or set llm.model in the config")
        key, source = self.key()
        if key is None and self.base_url is None:
            raise InputError(f"{what} needs a key: set {KEY_VARIABLE} or {self.key_variable}", field="--judge")
        check_endpoint(self.provider, key=key, base_url=self.base_url, what=what, field="--judge", key_name=source,
                       model=self.model)

    async def ask(self, request: Request, attempt: int, problem: str | None) -> str:
        if not self.model:
            raise JudgeError(f"the {self.backend} judge has no model")
        system, user = render(request, problem)
        key = self.key()[0]
        secrets = self.secrets()
        client = make_client(self.provider, key=key, base_url=self.base_url, timeout=self.timeout,
                             max_retries=self.max_retries)
        mode = self.mode
        try:
            while True:
                try:
                    text = await self.send(client, self.modes[mode], request.kind, system, user)
                except Exception as exc:
                    if getattr(exc, "status_code", None) != 400 or mode + 1 >= len(self.modes):
                        raise JudgeError(_describe(exc, secrets)) from None
                    mode += 1  # the endpoint refused this way of asking for JSON (or this request): the next one
                    continue
                # keep to the way that worked; a request refused every way (too long, say) changes nothing
                self.mode = max(self.mode, mode)
                return mask(text, secrets)  # the verdict's text is kept: never with the key in it
        finally:
            await client.close()

    @abstractmethod
    async def send(self, client: Any, mode: str, kind: str, system: str, user: str) -> str:
        """One request in ``mode``; the reply text (a JSON object, if the model complied)."""


def _describe(exc: BaseException, secrets: tuple[str, ...]) -> str:
    return mask(str(exc), secrets) if isinstance(exc, JudgeError) else describe_api_error(exc, "the judge", secrets)
