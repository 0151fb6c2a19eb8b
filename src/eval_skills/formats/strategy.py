"""The selection strategy file (YAML or JSON) of ``eval-skills select`` and ``run``::

    filters:
      minCompletionRate: 0.8
      maxErrorRate: 0.1
      maxLatencyP95Ms: 5000
      adapterTypes: [http, subprocess]
      requiredTags: [production-ready]
    sortBy: compositeScore        # completionRate, latency (P95) or tokenCost
    order: desc                   # default: best first (desc for scores, asc for latency and tokenCost)
    topK: 5                       # 0 (as the original eval-skills reads it) or absent: no limit

Every key is optional, and a key left empty (``filters:`` with its lines commented out) is as if absent.
Unknown keys and wrong types are refused with the file and the key: values are not converted, so ``topK: "5"``
or ``topK: true`` is an error rather than a silent 5 or 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InputError
from ._load import validate
from .skill import AdapterType

__all__ = ["SORT_KEYS", "Filters", "Strategy", "load_strategy"]

SORT_KEYS = ("compositeScore", "completionRate", "latency", "tokenCost")


def _drop_nulls(data: Any) -> Any:
    """An empty YAML key (``sortBy:``) reads as null: treat it as left out."""
    return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


class Filters(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    minCompletionRate: float | None = Field(default=None, ge=0, le=1)
    maxErrorRate: float | None = Field(default=None, ge=0, le=1)
    maxLatencyP95Ms: float | None = Field(default=None, gt=0)
    adapterTypes: list[AdapterType] | None = None
    requiredTags: list[str] | None = None


class Strategy(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    filters: Filters = Field(default_factory=Filters)
    sortBy: Literal["compositeScore", "completionRate", "latency", "tokenCost"] = "compositeScore"
    order: Literal["asc", "desc"] | None = None
    topK: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _empty_keys(cls, data: Any) -> Any:
        data = _drop_nulls(data)
        if isinstance(data, dict) and data.get("topK") == 0 and type(data["topK"]) is int:
            data = {k: v for k, v in data.items() if k != "topK"}  # the original's "0 = no limit"
        return data

    @property
    def descending(self) -> bool:
        if self.order is not None:
            return self.order == "desc"
        return self.sortBy in ("compositeScore", "completionRate")


def load_strategy(path: Path) -> Strategy:
    """Read a strategy file (YAML, of which JSON is a part). InputError naming the file and key."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("strategy file not found", file=str(path), hint="check --strategy") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read ({exc})", file=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"invalid YAML{where}", file=str(path)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping (filters, sortBy, order, topK)", file=str(path), field="$")
    return validate(Strategy, data, str(path))
