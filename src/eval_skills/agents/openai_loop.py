"""``openai``: a small built-in agent loop over any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
Ollama, llama.cpp server, ...), through the official ``openai`` SDK.

The system message tells the model it works in a folder and, when skills are installed, lists their names and
descriptions in the ``<available_skills>`` form the Agent Skills specification recommends (no skills, no list,
and no ``load_skill`` tool). Tools: ``load_skill``, ``read_file``, ``list_files``, ``write_file``, confined to
the workspace (:mod:`~eval_skills.agents.workspace_tools`). Each turn is one request; the model's tool calls
are run in order and their results sent back; a reply without tool calls is the final response. After
``max_turns`` turns (default 30) without one, the run is an error.

The key is read from the variable named by ``api_key_env`` (default ``OPENAI_API_KEY``); it is required for
the default endpoint and optional with a ``base_url`` (local servers take none). 429 and 5xx replies are
retried with exponential backoff by the SDK (``max_retries``); each request waits at most
``request_timeout`` seconds, and the whole run at most the request's timeout. The raw stdout of a run is the
endpoint's replies, one JSON object per line. The key never reaches the run's record: an endpoint that quotes it
back (in an error, in a reply) is shown ``***``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats.agentskills import SKILL_MD, SkillDoc, parse_frontmatter, skill_prompt_block
from ..formats.workspace import FinalEvent, ToolCallEvent, UsageEvent
from ..llm import check_endpoint, describe_api_error, find_key, make_client
from ..masking import mask, secret_values
from .base import Agent, AgentRequest, Execution
from .output import RawOutput
from .parsers.common import Transcript, as_int, is_count
from .workspace_tools import WorkspaceTools

__all__ = ["SYSTEM_PROMPT", "OpenAIAgent"]

SYSTEM_PROMPT = (
    "You are an agent working in a folder, the workspace. Use the tools to look at and change files there; "
    "paths are relative to the workspace. When the task is done, reply with your final answer and no tool call.")
SKILLS_PROMPT = (
    "Skills are folders of instructions for particular tasks. When a task matches a skill's description, call "
    "load_skill with the skill's name first and follow its instructions.")


class OpenAIAgent(Agent):
    name = "openai"
    has_stderr = False  # no program runs: an error says what the endpoint did, with no stderr to add
    skills_subdir = ".agents/skills"

    def __init__(self, *, model: str | None = None, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 max_turns: int = 30, request_timeout: float = 120.0, max_retries: int = 4,
                 temperature: float | None = None, env: Mapping[str, str] | None = None) -> None:
        super().__init__(env=env)
        if max_turns < 1:
            raise InputError(f"max turns must be at least 1, not {max_turns}", field="max turns")
        self.model = model
        self.base_url = base_url or None
        self.api_key_env = api_key_env or "OPENAI_API_KEY"
        self.max_turns = max_turns
        self.request_timeout = request_timeout
        self.max_retries = max_retries
        self.temperature = temperature

    def user_skill_dirs(self, env: Mapping[str, str] | None = None) -> list[Path]:
        return []  # the loop knows only the skills installed in the workspace

    def _key(self) -> str | None:
        return find_key((self.api_key_env,), self.child_env())[0]

    def secrets(self) -> tuple[str, ...]:
        return secret_values({**os.environ, **self.child_env()}, (self._key(),))

    def check(self) -> None:
        if not self.model:
            raise InputError("the openai agent needs a model", field="--model", hint="for example --model gpt-4o")
        key = self._key()
        if key is None and self.base_url is None:
            raise InputError(f"the openai agent needs a key: {self.api_key_env} is not set", field="--api-key-env",
                             hint="set it, name another variable with --api-key-env, or give --base-url")
        check_endpoint("openai", key=key, base_url=self.base_url, what="the openai agent", field="--base-url",
                       key_name=self.api_key_env if key else None, model=self.model)

    def preview(self, request: AgentRequest) -> dict[str, Any]:
        """As :meth:`Agent.preview`, with the ``endpoint`` it calls and the variable its key is read from."""
        return {**super().preview(request), "endpoint": self.base_url or "https://api.openai.com/v1",
                "api_key_env": self.api_key_env}

    async def execute(self, request: AgentRequest, workspace: Path, installed: list[str]) -> Execution:
        raw = RawOutput()
        t = Transcript()
        ex = Execution(raw_stdout=raw, transcript=t.events)
        model = request.model or self.model
        if not model:
            ex.error = "no model: give one to the openai agent"
            return ex
        docs = [_skill_doc(workspace / self.skills_subdir / name, name, ex.warnings) for name in installed]
        tools = WorkspaceTools(workspace, {d.name: d.body for d in docs}, self.skills_subdir)
        system = SYSTEM_PROMPT + (f"\n\n{SKILLS_PROMPT}\n\n{skill_prompt_block(docs)}" if docs else "")
        messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                          {"role": "user", "content": request.prompt}]
        max_turns = request.max_turns or self.max_turns
        key = self._key()
        secrets = self.secrets()
        client = make_client("openai", key=key, base_url=self.base_url, timeout=self.request_timeout,
                             max_retries=self.max_retries)
        try:
            async with asyncio.timeout(request.timeout):
                ex.response = await self._loop(client, model, messages, tools, t, raw, max_turns, secrets)
            if ex.response is None:
                ex.error = f"no final response after {max_turns} turn{'s' if max_turns != 1 else ''}"
        except TimeoutError:
            ex.timed_out = True
        except Exception as exc:  # the endpoint's failure (after the SDK's retries) is this run's error
            ex.error = _describe(exc, secrets)
        finally:
            await client.close()
            raw.close()
        ex.transcript = t.events
        ex.usage = t.total_usage()
        return ex

    async def _loop(self, client: Any, model: str, messages: list[dict[str, Any]], tools: WorkspaceTools,
                    t: Transcript, raw: RawOutput, max_turns: int, secrets: tuple[str, ...]) -> str | None:
        extra = {"temperature": self.temperature} if self.temperature is not None else {}
        for _ in range(max_turns):
            reply = await client.chat.completions.create(model=model, messages=messages, tools=tools.specs(), **extra)
            raw.write(mask(reply.model_dump_json(), secrets).encode() + b"\n")
            if reply.usage is not None and (usage := _usage(reply.usage)) is not None:
                t.add_usage(usage)
            if not reply.choices or reply.choices[0].message is None:
                raise BadReply("the endpoint's reply has no message")
            message = reply.choices[0].message
            content = mask(message.content, secrets) if isinstance(message.content, str) else None
            calls = message.tool_calls or []
            if not calls:
                if content and content.strip():
                    t.events.append(FinalEvent(text=content))
                    return content
                raise BadReply("the endpoint's reply has neither text nor tool calls")
            t.message(content or "")
            asked = [_asked(c) for c in calls]
            messages.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                for call_id, name, arguments in asked]})
            for call_id, name, arguments in asked:
                outcome = await asyncio.to_thread(tools.call, name, arguments)
                # each call is its own event, even when the model gives two the same id
                t.events.append(ToolCallEvent(id=call_id, name=name, input=outcome.arguments, result=outcome.text,
                                              is_error=outcome.is_error))
                if outcome.skill is not None:
                    t.skill(outcome.skill, "load_skill", call_id)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": outcome.text})
        return None


def _asked(call: Any) -> tuple[Any, str, str | None]:
    """A tool call's id, name and arguments as the model gave them; a call without a function name (a custom
    tool, a null name) has the name "" and gets "there is no tool" back, and the loop goes on."""
    function = getattr(call, "function", None) or getattr(call, "custom", None)
    name = getattr(function, "name", None)
    arguments = getattr(function, "arguments", None)
    return (getattr(call, "id", None), name if isinstance(name, str) else "",
            arguments if isinstance(arguments, str) else None)


class BadReply(Exception):
    """A reply the loop cannot go on from."""


def _skill_doc(folder: Path, name: str, warnings: list[str]) -> SkillDoc:
    """The installed skill's name (its folder's), description and body; a frontmatter that cannot be read is a
    warning, and the whole file is the body."""
    text = (folder / SKILL_MD).read_text(encoding="utf-8", errors="replace")
    try:
        meta, body = parse_frontmatter(text, file=str(folder / SKILL_MD))
    except InputError as exc:
        warnings.append(f"skill {name}: {exc}")
        meta, body = {}, text
    description = meta.get("description")
    return SkillDoc(folder=folder, name=name, description=description.strip() if isinstance(description, str) else "",
                    frontmatter=meta, body=body)


def _usage(usage: Any) -> UsageEvent | None:
    """The reply's usage; None when it holds no token count (a server that sends ``"usage": {}``)."""
    prompt, completion = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    total = getattr(usage, "total_tokens", None)
    if not (is_count(prompt) or is_count(completion) or is_count(total)):
        return None
    prompt, completion = as_int(prompt), as_int(completion)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = min(as_int(getattr(details, "cached_tokens", 0) or 0), prompt)
    total = as_int(total) or prompt + completion
    return UsageEvent(input_tokens=prompt - cached, output_tokens=completion, cache_read_tokens=cached,
                      total_tokens=total)


def _describe(exc: BaseException, secrets: tuple[str, ...]) -> str:
    return mask(str(exc), secrets) if isinstance(exc, BadReply) else describe_api_error(exc, "the endpoint", secrets)
