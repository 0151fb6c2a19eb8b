"""What the adapters share beyond :mod:`eval_skills.procs` (which runs the programs): the child's clean
environment and token usage in replies.

Every skill program is started in its own session (so its process group can be killed whole), with the
skill's folder as working directory and an environment that holds only what the skill is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..formats.skill import AdapterConfig
from ..results import Usage

__all__ = ["BASE_ENV_KEYS", "child_env", "parse_usage"]

BASE_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


def child_env(config: AdapterConfig, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The clean environment of a skill's program: a few harmless variables of the caller, the names
    listed in ``passEnv``, then the literal ``env``. Nothing else of the caller (no secrets)."""
    source = os.environ if environ is None else environ
    env = {key: source[key] for key in BASE_ENV_KEYS if key in source}
    env.setdefault("PATH", os.defpath)
    env["PYTHONUNBUFFERED"] = "1"  # a Python skill that forgets to flush still answers
    for name in config.passEnv:
        if name in source:
            env[name] = source[name]
    env.update(config.env)
    return env


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value >= 0 else None


_USAGE_KEYS = (("prompt_tokens", "completion_tokens", "total_tokens"),
               ("promptTokens", "completionTokens", "totalTokens"),
               ("input_tokens", "output_tokens", "total_tokens"),
               ("inputTokens", "outputTokens", "totalTokens"))


def parse_usage(usage: Any) -> Usage | None:
    """A :class:`Usage` from a ``usage`` object in any of the common spellings, else None.

    Accepted: ``prompt_tokens/completion_tokens/total_tokens``, ``promptTokens/completionTokens/totalTokens``
    and ``input_tokens/output_tokens`` (or camelCase). A missing total is the sum of the other two.
    """
    if not isinstance(usage, dict):
        return None
    for prompt_key, completion_key, total_key in _USAGE_KEYS:
        prompt, completion, total = (_count(usage.get(k)) for k in (prompt_key, completion_key, total_key))
        if prompt is not None or completion is not None:
            prompt, completion = prompt or 0, completion or 0
            return Usage(prompt, completion, total if total is not None else prompt + completion)
    total = _count(usage.get("total_tokens", usage.get("totalTokens")))
    return Usage(0, 0, total) if total is not None else None
