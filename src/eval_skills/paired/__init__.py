"""Paired runs: does a skill make the agent's work better?

Each case of a skill's ``evals/evals.json`` runs with the skill and without it (or with its previous version),
under the same conditions, every run graded, and the difference estimated with an interval and a p-value.
The modules read top-down, in the order the data flows:

- :mod:`.plan`: the skill, its cases and the baseline loaded and checked; the interleaved order of the runs;
- :mod:`.executor`: the executor interface (a run spec in, a run output out, in the order they finish);
  :mod:`.local` runs them on this machine, each in a fresh folder with the case's files at its root;
- :mod:`.record`: each run's files (``outputs/``, ``transcript.jsonl``, ``timing.json``, ``grading.json``),
  written as it finishes and read back on resume;
- :mod:`.grading`: the judge for plain-language assertions, the assertion engine for deterministic ones, and
  the blind A/B comparison;
- :mod:`.summary`: the benchmark's statistics; :mod:`.report`: benchmark.json, benchmark.md, feedback.json;
- :mod:`.pipeline`: :func:`run_paired`, the whole iteration.
"""

from __future__ import annotations

from .executor import Executor, OutputFile, RunOutput, RunSpec, SkillBundle, read_bundle
from .local import LocalExecutor, thread_pool
from .pipeline import PairedOutcome, PairedSettings, Progress, resolve_iteration, run_paired
from .plan import Case, PairedPlan, PlannedRun, ab_order, load_plan

__all__ = [
    "Case",
    "Executor",
    "LocalExecutor",
    "OutputFile",
    "PairedOutcome",
    "PairedPlan",
    "PairedSettings",
    "PlannedRun",
    "Progress",
    "RunOutput",
    "RunSpec",
    "SkillBundle",
    "ab_order",
    "load_plan",
    "read_bundle",
    "resolve_iteration",
    "run_paired",
    "thread_pool",
]
