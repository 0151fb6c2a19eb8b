"""``anthropic``: a Claude model through the Messages API as a judge, with the official ``anthropic`` SDK
(``base_url`` for a proxy or another endpoint speaking the Messages API).

The verdict is asked for as structured output (``output_config.format``, a JSON schema), else through a tool
the model must call with the verdict as its input, else as plain text, whichever the endpoint accepts.
Key: ``EVAL_SKILLS_LLM_KEY``, else ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import JudgeError
from .model_judge import ModelJudge
from .prompts import verdict_schema

__all__ = ["AnthropicJudge"]

MAX_TOKENS = 4096
TOOL = "record_verdict"


class AnthropicJudge(ModelJudge):
    backend = "anthropic"
    provider = "anthropic"
    key_variable = "ANTHROPIC_API_KEY"
    modes = ("output_config", "tool", "plain")

    async def send(self, client: Any, mode: str, kind: str, system: str, user: str) -> str:
        extra: dict[str, Any] = {}
        options: dict[str, Any] = {}
        if mode == "output_config":
            extra["output_config"] = {"format": {"type": "json_schema", "schema": verdict_schema(kind)}}
        elif mode == "tool":
            options["tools"] = [{"name": TOOL, "description": f"Record the {kind} verdict.",
                                 "input_schema": verdict_schema(kind)}]
            options["tool_choice"] = {"type": "tool", "name": TOOL}
        if self.temperature is not None:
            extra["temperature"] = self.temperature
        reply = await client.messages.create(model=self.model, max_tokens=MAX_TOKENS, system=system,
                                             messages=[{"role": "user", "content": user}], extra_body=extra or None,
                                             **options)
        texts = []
        for block in reply.content or []:
            if getattr(block, "type", None) == "tool_use" and isinstance(block.input, dict):
                return json.dumps(block.input)
            if getattr(block, "type", None) == "text":
                texts.append(block.text)
        if not texts:
            raise JudgeError(f"the judge's reply has no text (stop reason: {getattr(reply, 'stop_reason', None)})")
        return "".join(texts)
