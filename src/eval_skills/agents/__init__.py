"""Agents run one prompt in one workspace and record everything: one module per backend behind :class:`Agent`.

    agent = create_agent("command", command="my-agent --cwd {workdir} --prompt-file {prompt_file}",
                         output="events")
    agent.use_sandbox(create_sandbox("bwrap"))      # optional: eval_skills.sandbox confines each run
    agent.check()                                   # InputError when it (or its sandbox) cannot run here
    skill = read_bundle(skill_folder)               # read once: every run gets these bytes
    result = await agent.run(AgentRequest("Summarise notes.txt", workspace, skills=[skill], timeout=300))
    result.status, result.response, result.transcript, result.files, result.usage, result.isolation

Callers never import a backend module: :func:`create_agent` finds it in :data:`AGENTS`.
"""

from __future__ import annotations

from typing import Any

from ..registry import Registry
from .base import (
    Agent,
    AgentRequest,
    AgentResult,
    AgentStatus,
    Execution,
    FileChange,
    Prepared,
    SkillSource,
    TokenUsage,
)
from .bundle import SkillBundle, read_bundle
from .output import PARSERS, OutputParser, ParseContext, ParsedOutput, RawOutput, create_parser

__all__ = [
    "AGENTS",
    "PARSERS",
    "Agent",
    "AgentRequest",
    "AgentResult",
    "AgentStatus",
    "Execution",
    "FileChange",
    "OutputParser",
    "ParseContext",
    "ParsedOutput",
    "Prepared",
    "RawOutput",
    "SkillBundle",
    "SkillSource",
    "TokenUsage",
    "create_agent",
    "create_parser",
    "read_bundle",
]

# backend name -> "module:Class" (relative to this package), imported only when used
AGENTS: Registry[Agent] = Registry(__name__, "agent", {
    "command": ".command:CommandAgent",
    "claude": ".claude:ClaudeAgent",
    "codex": ".codex:CodexAgent",
    "opencode": ".opencode:OpenCodeAgent",
    "openai": ".openai_loop:OpenAIAgent",
})


def create_agent(name: str, **options: Any) -> Agent:
    """The backend registered as ``name`` (``AGENTS.register(name, "module:Class")`` adds one), built with
    ``options``: its constructor's keyword arguments."""
    return AGENTS.create(name, **options)
