"""The three judge requests and their verdicts, as JSON objects.

- ``grade``: ``{"kind": "grade", "prompt", "expected_output", "response", "transcript", "outputs": {path: text},
  "assertions": [text, ...]}`` -> ``{"expectations": [{"text", "passed", "evidence"}]}``, one per assertion,
  in order;
- ``compare``: ``{"kind": "compare", "prompt", "expected_output", "A": {"response", "outputs"}, "B": {...}}``
  -> ``{"winner": "A" | "B" | "TIE", "reasoning"}``;
- ``score``: ``{"kind": "score", "rubric", "input", "output", "expected"}`` -> ``{"score": 0..1, "reason"}``;
- ``improve`` (``routing --optimize``): ``{"kind": "improve", "skill_name", "skill_body", "current_description",
  "missed": [{"query", "trigger_rate", "triggers", "runs"}], "false_triggers": [...], "candidates":
  [{"description", "precision", "recall", "f1", "passed", "total"}], "max_chars", "refused": [reason, ...]}``
  -> ``{"description", "reasoning"}``: a new description from the train queries' failures only.

:func:`parse_verdict` reads a judge's reply text (a JSON object, alone or in a ```` ```json ```` block or
among other text, braces in the prose included) and checks it against its request; a reply that does not fit,
or holds different verdicts, raises :class:`~eval_skills.errors.JudgeError` saying why.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from ..errors import JudgeError
from ..formats.untrusted import NotJSON, UnusableJSON, loads_untrusted
from ..formats.workspace import Expectation, TranscriptEvent

__all__ = [
    "ArmOutput",
    "CompareRequest",
    "CompareVerdict",
    "GradeExpectation",
    "GradeRequest",
    "GradeVerdict",
    "ImproveCandidate",
    "ImproveQuery",
    "ImproveRequest",
    "ImproveVerdict",
    "JudgeRequest",
    "ScoreRequest",
    "ScoreVerdict",
    "Verdict",
    "parse_verdict",
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GradeRequest(_Request):
    kind: Literal["grade"] = "grade"
    prompt: str
    expected_output: str = ""
    response: str
    transcript: list[TranscriptEvent] = Field(default_factory=list)
    outputs: dict[str, str] = Field(default_factory=dict)
    assertions: list[str] = Field(min_length=1)


class ArmOutput(_Request):
    response: str
    outputs: dict[str, str] = Field(default_factory=dict)


class CompareRequest(_Request):
    kind: Literal["compare"] = "compare"
    prompt: str
    expected_output: str = ""
    A: ArmOutput
    B: ArmOutput


class ScoreRequest(_Request):
    kind: Literal["score"] = "score"
    rubric: str
    task: str | None = None  # the task's text (a benchmark task's ``prompt``), when it has one
    input: Any = None
    output: Any = None
    expected: Any = None


class ImproveQuery(_Request):
    """A train query the current description got wrong, with its trigger rate over its runs."""

    query: str
    trigger_rate: float | None = None
    triggers: int = 0
    runs: int = 0


class ImproveCandidate(_Request):
    """A description tried before, with its figures on the train queries only."""

    description: str
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    passed: int = 0
    total: int = 0


class ImproveRequest(_Request):
    kind: Literal["improve"] = "improve"
    skill_name: str
    skill_body: str = ""
    current_description: str
    missed: list[ImproveQuery] = Field(default_factory=list)  # should trigger, did not
    false_triggers: list[ImproveQuery] = Field(default_factory=list)  # should not trigger, did
    candidates: list[ImproveCandidate] = Field(default_factory=list)
    max_chars: int = 1024
    refused: list[str] = Field(default_factory=list)  # why the replies asked for before were not taken


JudgeRequest = Annotated[GradeRequest | CompareRequest | ScoreRequest | ImproveRequest, Field(discriminator="kind")]


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")


class GradeExpectation(_Verdict):
    text: str = ""  # replaced by the assertion's own text, so a reply may leave it out (as it may the evidence)
    passed: StrictBool
    evidence: str = ""


class GradeVerdict(_Verdict):
    expectations: list[GradeExpectation]

    def as_expectations(self) -> list[Expectation]:
        """The entries of ``grading.json``."""
        return [Expectation(text=e.text, passed=e.passed, evidence=e.evidence) for e in self.expectations]


class CompareVerdict(_Verdict):
    winner: Literal["A", "B", "TIE"]
    reasoning: str = ""

    @field_validator("winner", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class ScoreVerdict(_Verdict):
    score: float = Field(ge=0, le=1)
    reason: str = ""

    @field_validator("score", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError("must be a number from 0 to 1")
        return value


class ImproveVerdict(_Verdict):
    description: str = Field(min_length=1)
    reasoning: str = ""


Verdict = GradeVerdict | CompareVerdict | ScoreVerdict | ImproveVerdict
_VERDICTS: dict[str, type[_Verdict]] = {"grade": GradeVerdict, "compare": CompareVerdict, "score": ScoreVerdict,
                                        "improve": ImproveVerdict}
SCAN_LIMIT = 200  # "{" positions tried when the reply is not one JSON object


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects in a reply: the whole text when it is one, else every top-level ``{...}`` that decodes,
    in order (so one in a ```` ```json ```` block, or among prose that has braces of its own). Each is read like
    every reply from outside: lone surrogates replaced; one nested too deeply is a JudgeError."""
    try:
        data = _read(text)
    except NotJSON:
        pass
    else:
        return [data] if isinstance(data, dict) else []
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    start = text.find("{")
    for _ in range(SCAN_LIMIT):
        if start < 0:
            break
        try:
            _, end = decoder.raw_decode(text, start)
            data = _read(text[start:end])
        except (ValueError, RecursionError):  # NotJSON is one
            start = text.find("{", start + 1)
            continue
        if isinstance(data, dict):
            found.append(data)
        start = text.find("{", end)  # objects inside this one are its fields, not candidates
    return found


def _read(text: str) -> Any:
    try:
        return loads_untrusted(text)
    except UnusableJSON as exc:
        raise JudgeError(f"the reply is not usable JSON: {exc}") from None


def _not_json(text: str) -> JudgeError:
    shown = " ".join(text.split())
    return JudgeError("the reply is not a JSON object: " + repr(shown[:200] + ("..." if len(shown) > 200 else "")))


def _fit(request: GradeRequest | CompareRequest | ScoreRequest | ImproveRequest, data: dict[str, Any]) -> Verdict:
    try:
        verdict: Verdict = _VERDICTS[request.kind].model_validate(data)  # type: ignore[assignment]
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "reply"
        raise JudgeError(f"the reply does not fit a {request.kind} verdict: {where}: {error['msg']}") from None
    if isinstance(request, GradeRequest) and isinstance(verdict, GradeVerdict):
        got, wanted = len(verdict.expectations), len(request.assertions)
        if got != wanted:
            raise JudgeError(f"the reply grades {got} assertions, the request has {wanted}")
        for entry, assertion in zip(verdict.expectations, request.assertions, strict=True):
            entry.text = assertion
    return verdict


def parse_verdict(request: GradeRequest | CompareRequest | ScoreRequest | ImproveRequest, text: str) -> Verdict:
    """The verdict in ``text`` for ``request``; JudgeError when it is missing, malformed, incomplete or ambiguous.

    The reply may be the JSON object alone, or hold it among other text (a fenced block, prose around it, even
    prose with braces): the objects that fit a verdict are taken, and when they disagree (an example beside the
    answer, two answers) the reply is ambiguous. A grade verdict must have one entry per assertion; entries are
    taken in order and keep the assertion's own text (a judge's paraphrase is not kept)."""
    candidates = _json_objects(text)
    if not candidates:
        raise _not_json(text)
    verdicts: list[Verdict] = []
    problem: JudgeError | None = None
    for data in candidates:
        try:
            verdict = _fit(request, data)
        except JudgeError as exc:
            problem = problem or exc
            continue
        if verdict not in verdicts:
            verdicts.append(verdict)
    if len(verdicts) > 1:
        raise JudgeError(f"the reply holds {len(verdicts)} different verdicts: reply with one JSON object only")
    if not verdicts:
        assert problem is not None
        raise problem
    return verdicts[0]
