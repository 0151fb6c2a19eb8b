"""``openai``: a model behind any OpenAI-compatible chat-completions endpoint as a judge (OpenAI, or a local
server such as vLLM, Ollama or llama.cpp's with ``base_url``), through the official ``openai`` SDK.

The verdict is asked for as structured output (``response_format`` ``json_schema``, strict), else in JSON
mode (``json_object``), else as plain text, whichever the endpoint accepts. Key: ``EVAL_SKILLS_LLM_KEY``,
else ``OPENAI_API_KEY``, else ``OPENAI_KEY`` (which the original eval-skills also read).
"""

from __future__ import annotations

from typing import Any

from ..errors import JudgeError
from .model_judge import ModelJudge
from .prompts import verdict_schema

__all__ = ["OpenAIJudge"]


class OpenAIJudge(ModelJudge):
    backend = "openai"
    provider = "openai"
    key_variable = "OPENAI_API_KEY"
    more_key_variables = ("OPENAI_KEY",)
    modes = ("json_schema", "json_object", "plain")

    async def send(self, client: Any, mode: str, kind: str, system: str, user: str) -> str:
        options: dict[str, Any] = {}
        if mode == "json_schema":
            options["response_format"] = {"type": "json_schema", "json_schema": {
                "name": f"{kind}_verdict", "strict": True, "schema": verdict_schema(kind)}}
        elif mode == "json_object":
            options["response_format"] = {"type": "json_object"}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        reply = await client.chat.completions.create(
            model=self.model, messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            **options)
        if not reply.choices or reply.choices[0].message is None:
            raise JudgeError("the judge's reply has no message")
        message = reply.choices[0].message
        if getattr(message, "refusal", None):
            raise JudgeError(f"the judge refused: {message.refusal}")
        if not isinstance(message.content, str):
            raise JudgeError("the judge's reply has no text")
        return message.content
