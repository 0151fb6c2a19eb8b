"""eval-skills: evaluate AI agent skills (tool skills and instruction skills).

The public API is listed in ``__all__`` and imported lazily, so ``import eval_skills`` stays cheap::

    import asyncio
    from eval_skills import RunSettings, build_plan, evaluate, load_skills, resolve_benchmark

    plan = build_plan(load_skills(["examples/skills/calculator"]), resolve_benchmark("coding-easy"),
                      runs=1, default_evaluator="exact")
    with plan:  # closing it stops what planning started (custom scorer workers)
        outcome = asyncio.run(evaluate(plan, RunSettings(concurrency=4)))
    print(outcome.reports[0]["summary"])
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False  # typing is not imported: ``eval-skills --version`` loads this package and little else
if TYPE_CHECKING:
    from typing import Any

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # errors
    "EvalSkillsError": "errors", "InputError": "errors", "UnknownBenchmarkError": "errors",
    "UnknownScorerError": "errors", "SkillError": "errors", "SkillTimeout": "errors", "SkillCrashed": "errors",
    "SkillProtocolError": "errors", "SkillRpcError": "errors", "SkillHttpError": "errors",
    "ScorerError": "errors", "HarnessError": "errors", "HarnessResourceError": "errors", "JudgeError": "errors",
    # formats
    "Skill": "formats.skill", "SkillManifest": "formats.skill", "AdapterConfig": "formats.skill",
    "load_skill": "formats.skill", "load_skills": "formats.skill",
    "Benchmark": "formats.benchmark", "Task": "formats.benchmark", "resolve_benchmark": "formats.benchmark",
    "load_tasks_file": "formats.benchmark", "builtin_benchmark_ids": "formats.benchmark",
    # records
    "TaskResult": "results", "Invocation": "results", "Usage": "results", "Score": "results",
    # adapters
    "Adapter": "adapters", "FakeAdapter": "adapters", "create_adapter": "adapters",
    # agents and judges
    "Agent": "agents", "AgentRequest": "agents", "AgentResult": "agents", "create_agent": "agents",
    "Judge": "judges", "Judgement": "judges", "create_judge": "judges", "GradeRequest": "judges",
    "CompareRequest": "judges", "ScoreRequest": "judges",
    # scoring
    "scorer": "scoring.scorers", "get_scorer": "scoring.scorers", "SCORERS": "scoring.scorers",
    "Check": "scoring.assertions", "CheckResult": "scoring.assertions", "run_check": "scoring.assertions",
    "run_checks": "scoring.assertions",
    # engine
    "Plan": "tool_skills.plan", "build_plan": "tool_skills.plan",
    "RunSettings": "tool_skills.runner", "execute": "tool_skills.runner",
    "evaluate": "tool_skills.evaluation", "EvaluationOutcome": "tool_skills.evaluation",
    "RunFailed": "tool_skills.evaluation",
    "Store": "store", "write_reports": "reports", "load_report_file": "reports",
    "check_fixtures": "fixture_checks.check",
    # commands as functions
    "create_skill": "scaffold", "init_project": "scaffold",
    "find_skills": "tool_skills.discovery", "scan_skills": "tool_skills.discovery",
    "Strategy": "formats.strategy", "load_strategy": "formats.strategy", "select_skills": "tool_skills.selection",
    "diff_reports": "reports.diff", "import_gaia": "catalog", "import_toolbench": "catalog",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'eval_skills' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
