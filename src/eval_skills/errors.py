"""The exception tree of eval-skills.

::

    EvalSkillsError                 anything this package raises on purpose
    ├── InputError                  bad input from the user: exit code 2, nothing written
    │   ├── UnknownBenchmarkError   a benchmark id that is neither built in nor a file
    │   └── UnknownScorerError      an evaluator type no scorer is registered for
    ├── SkillError                  the skill under test misbehaved: a task result, never a crash
    │   ├── SkillTimeout            no answer in time (status ``timeout``)
    │   ├── SkillCrashed            the process died or exited before answering
    │   ├── SkillProtocolError      an answer that is not the protocol (non-JSON, no reply line, ...)
    │   ├── SkillRpcError           a JSON-RPC ``error`` reply: the skill said no, never retried
    │   └── SkillHttpError          an HTTP status >= 400 or a connection failure
    ├── ScorerError                 a scorer (usually a custom one) raised: a task error, not a crash
    ├── JudgeError                  a judge gave no valid verdict (crash, timeout, unparseable reply):
    │                               recorded as a judge error, never as a failed assertion
    └── HarnessError                a fault of our own (a broken store, ...): stops the run
        └── HarnessResourceError    out of file descriptors, processes or memory: retried, then stops the run

Only the CLI turns these into messages and exit codes.
"""

from __future__ import annotations

__all__ = [
    "EvalSkillsError",
    "HarnessError",
    "HarnessResourceError",
    "InputError",
    "JudgeError",
    "ScorerError",
    "SkillCrashed",
    "SkillError",
    "SkillHttpError",
    "SkillProtocolError",
    "SkillRpcError",
    "SkillTimeout",
    "UnknownBenchmarkError",
    "UnknownScorerError",
]


class EvalSkillsError(Exception):
    """Base of every error raised on purpose by eval-skills."""


class InputError(EvalSkillsError):
    """A user's file, flag or value is wrong.

    The message is one line: where (``file`` and JSON ``field`` path), what is wrong and what to do.
    """

    def __init__(self, problem: str, *, file: str | None = None, field: str | None = None,
                 hint: str | None = None) -> None:
        self.problem = problem
        self.file = file
        self.field = field
        self.hint = hint
        super().__init__(self.line())

    def line(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {self.problem}" if where else self.problem
        return f"{text} ({self.hint})" if self.hint else text


class UnknownBenchmarkError(InputError):
    """A ``--benchmark`` value that names no built-in benchmark and no file."""


class UnknownScorerError(InputError):
    """An evaluator type for which no scorer is registered."""


class SkillError(EvalSkillsError):
    """The skill under test failed one call. Recorded as the task's ``error`` with this message."""

    retryable = True
    status = "error"
    latency_ms: float | None = None  # set by adapters that know how long the skill itself had the call
    output: object = None  # what the skill answered before failing (kept in the result for debugging)


class SkillTimeout(SkillError):
    status = "timeout"


class SkillCrashed(SkillError):
    pass


class SkillProtocolError(SkillError):
    pass


class SkillRpcError(SkillError):
    """The skill answered with a JSON-RPC error: a deliberate answer, so retrying cannot help."""

    retryable = False

    def __init__(self, message: str, *, code: int | None = None, data: object = None) -> None:
        self.code = code
        self.data = data
        super().__init__(message)


class SkillHttpError(SkillError):
    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class ScorerError(EvalSkillsError):
    """A scorer raised while scoring one task; the task is recorded as an error."""


class JudgeError(EvalSkillsError):
    """A judge gave no valid verdict for one request: its own outcome, never a failed assertion."""


class HarnessError(EvalSkillsError):
    """A fault of eval-skills itself or its environment (store, output folder)."""


class HarnessResourceError(HarnessError):
    """The harness ran out of file descriptors, processes or memory: never the skill's fault."""
