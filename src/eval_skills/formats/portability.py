"""``portability-<n>.json``: a skill's lift on several agents side by side (``paired --agent A --agent B``), written
beside the agents' workspaces (``<skill>-workspace/agents/``) by :mod:`eval_skills.paired.portability`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["AgentLift", "Interaction", "Portability"]


class AgentLift(BaseModel):
    """One agent's verdict: its delta, interval and p-value, and whether the skill ``helps``, ``hurts`` or
    is ``unclear`` (``unknown`` without an interval)."""

    model_config = ConfigDict(extra="allow")

    agent: str
    model: str | None = None
    iteration: str = ""
    direction: str = "unknown"
    verdict: str | None = None
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    cases: int | None = None


class Interaction(BaseModel):
    """The agent x arm interaction of two agents: per case the first agent's delta minus the second's."""

    model_config = ConfigDict(extra="allow")

    agents: list[str]
    cases: int = 0
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None


class Portability(BaseModel):
    model_config = ConfigDict(extra="allow")

    agents: list[AgentLift]
    interaction: list[Interaction] = []
    verdict: str = ""
