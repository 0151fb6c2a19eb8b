"""What one agent run used: tokens by kind, cost, how they were measured, and the same per model."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..formats.workspace import UsageEvent

__all__ = ["Measurement", "TokenUsage"]

Measurement = Literal["measured", "partial", "estimated"]


@dataclass(slots=True)
class TokenUsage:
    """Tokens and cost of one run. ``input_tokens`` excludes cache reads and writes; ``total_tokens`` is
    what the agent reported as its total, else the sum of the four counts. ``measurement`` is ``measured``
    (the agent reported it), ``partial`` (the agent reported figures that are not its final count: its output
    ended before the line that gives them, so they are lower bounds) or ``estimated`` (the agent reported
    nothing: about 4 characters per token of the prompt and the response, no cost). ``models`` holds the same
    counts per model when the agent said which model used what (Claude Code's ``modelUsage``: the main model
    and the helper models it calls on the side); the totals are then their sums, the figures the cost covers."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None
    measurement: Measurement = "measured"
    models: dict[str, TokenUsage] = field(default_factory=dict)

    @classmethod
    def from_events(cls, events: Iterable[UsageEvent]) -> TokenUsage | None:
        """The sum of the usage events that report a number (None when there is none); events naming a
        ``model`` are also summed per model."""
        usage: TokenUsage | None = None
        for event in events:
            if not event.reported:
                continue
            usage = usage or cls()
            usage._add(event)
            if event.model:
                usage.models.setdefault(event.model, cls())._add(event)
        return usage

    def _add(self, event: UsageEvent) -> None:
        parts = (event.input_tokens, event.output_tokens, event.cache_read_tokens, event.cache_write_tokens)
        self.input_tokens += parts[0]
        self.output_tokens += parts[1]
        self.cache_read_tokens += parts[2]
        self.cache_write_tokens += parts[3]
        self.total_tokens += event.total_tokens if event.total_tokens is not None else sum(parts)
        if event.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + event.cost_usd

    @classmethod
    def estimate(cls, prompt: str, response: str | None) -> TokenUsage:
        tokens_in, tokens_out = math.ceil(len(prompt) / 4), math.ceil(len(response or "") / 4)
        return cls(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out,
                   measurement="estimated")

    def counts(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens, "cache_write_tokens": self.cache_write_tokens,
                "total_tokens": self.total_tokens, "cost_usd": self.cost_usd}

    def to_json(self) -> dict[str, Any]:
        """The counts, the measurement and, when the agent gave them, ``models``: the counts per model."""
        data = {**self.counts(), "measurement": self.measurement}
        if self.models:
            data["models"] = {name: usage.counts() for name, usage in self.models.items()}
        return data
