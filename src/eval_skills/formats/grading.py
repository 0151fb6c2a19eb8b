"""``grading.json`` of a run, and the grading versions of an iteration (``grading_versions.json``).

An iteration is graded once by ``eval-skills paired`` (version 1) and again by each ``eval-skills regrade``
(versions 2, 3, ...). Every version N is kept in files named ``.vN`` (a run's ``grading.vN.json``, the
iteration's ``benchmark.vN.json`` and ``benchmark.vN.md``); the names without a version (``grading.json``,
``benchmark.json``, ``benchmark.md``) hold the latest finished version, which is what skill-creator's tools read.
``grading_versions.json`` lists the versions, each with what made it: the assertions, the judge, its model and
prompt version.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["GRADING_VERSIONS_FILE", "Expectation", "Grading", "GradingSummary", "GradingVersion", "GradingVersions",
           "versioned_name"]

GRADING_VERSIONS_FILE = "grading_versions.json"


def versioned_name(name: str, version: int) -> str:
    """``grading.json`` of version 2 is ``grading.v2.json``."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.v{version}.{ext}" if dot else f"{name}.v{version}"


class Expectation(BaseModel):
    """One graded assertion. ``passed`` is None when it could not be graded (a judge error: see ``error``),
    which counts neither as a pass nor as a failure."""

    model_config = ConfigDict(extra="allow")

    text: str
    passed: bool | None
    evidence: str = ""


class GradingSummary(BaseModel):
    """``summary`` of ``grading.json``. skill-creator's files may leave out ``failed`` (it is then
    ``total - passed``) and ``pass_rate`` (absent when nothing was graded)."""

    model_config = ConfigDict(extra="allow")

    passed: int
    failed: int
    total: int
    pass_rate: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _failed(cls, data: Any) -> Any:
        if isinstance(data, dict) and "failed" not in data and isinstance(data.get("total"), int) \
                and isinstance(data.get("passed"), int):
            data = {**data, "failed": max(0, data["total"] - data["passed"])}
        return data


class Grading(BaseModel):
    """``grading.json``."""

    model_config = ConfigDict(extra="allow")

    expectations: list[Expectation]
    summary: GradingSummary
    error: str | None = None  # why an error run has no grades (the agent failed or timed out)


class GradingVersion(BaseModel):
    """One grading of an iteration's runs. ``judge``: ``{backend, model, grade_prompt, compare_prompt}`` (None:
    no judge); ``assertions``: per case key, the texts graded, in ``grading.json`` order; ``grading``: the digest
    of those assertions and the judge (two versions with one digest graded by one rule); ``status``: ``running``
    until every finished run has its grade in this version."""

    model_config = ConfigDict(extra="allow")

    version: int
    made_by: Literal["paired", "regrade"] = "paired"
    created_at: str | None = None
    finished_at: str | None = None
    status: Literal["running", "interrupted", "finished"] = "finished"
    evals_path: str | None = None
    judge: dict[str, Any] | None = None
    assertions: dict[str, list[str]] = Field(default_factory=dict)
    expected_outputs: dict[str, str] = Field(default_factory=dict)  # per case key, as the judge was shown it
    grading: str | None = None
    based_on: int | None = None  # the version whose verdicts were reused where nothing changed
    reused: int = 0  # judge verdicts taken from an earlier version
    asked: int = 0  # judge verdicts asked for


class GradingVersions(BaseModel):
    """``grading_versions.json``: every version, oldest first; ``current`` is the one the unversioned files
    hold."""

    model_config = ConfigDict(extra="allow")

    current: int = 1
    versions: list[GradingVersion] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ordered(self) -> GradingVersions:
        self.versions.sort(key=lambda v: v.version)
        return self

    def get(self, version: int) -> GradingVersion | None:
        return next((v for v in self.versions if v.version == version), None)

    @property
    def latest(self) -> GradingVersion | None:
        return self.versions[-1] if self.versions else None
