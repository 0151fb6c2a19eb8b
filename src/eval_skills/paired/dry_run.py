"""``paired --dry-run``: every check an iteration makes first, then its plan, with nothing run or written.

:func:`dry_run_plan` checks what :func:`~eval_skills.paired.pipeline.run_paired` checks before it writes anything
(the judge, the fixture names, the workspace, the iteration, the store), and describes the iteration it would run: its
number and folder, the cases, the arms and the skills each installs, the runs, the agent's full command line
(secrets masked) and where its skills go, the judge, the store. No folder is created, no store opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..agents import Agent, AgentRequest
from ..judges import Judge
from ..store import Store
from .pipeline import PairedSettings, check_iteration
from .plan import PairedPlan
from .resume import judge_identity

__all__ = ["dry_run_plan"]

PROMPT = "<the case's prompt>"


def dry_run_plan(plan: PairedPlan, settings: PairedSettings, agent: Agent, judge: Judge | None,
                 store_path: Path | None) -> dict[str, Any]:
    """The iteration's plan as plain JSON, once every check passed (InputError otherwise); nothing is written."""
    number, folder, _ = check_iteration(plan, settings, judge)
    if store_path is not None:
        Store.check(store_path)  # a file that is no store fails here, as the run would, writing nothing
    request = AgentRequest(PROMPT, Path("."), timeout=settings.timeout, max_turns=settings.max_turns,
                           model=settings.model)
    preview = agent.preview(request)
    subdir = preview["skills_dir"]
    cases = [{"id": case.key, "name": case.name, "prompt": case.case.prompt, "files": sorted(case.files),
              "assertions": len(case.assertions), "checks": len(case.checks)} for case in plan.cases]
    arms = [{"arm": arm, "skills": [{"name": bundle.name, "from": bundle.source,
                                     "installed_at": f"<run folder>/{subdir}/{bundle.name}"}
                                    for bundle in plan.bundles[arm]]} for arm in plan.arms]
    return {
        "dry_run": True, "skill": plan.skill.name, "skill_path": str(plan.skill_path),
        "evals": str(plan.evals_path), "iteration": number, "iteration_folder": str(folder),
        "resume": settings.resume, "workspace": str(settings.workspace), "cases": cases, "arms": arms,
        "runs_per_case_and_arm": plan.runs, "agent_runs": plan.total, "concurrency": settings.concurrency,
        "budget_tokens": settings.budget_tokens, "seed": plan.seed, "agent": preview,
        "judge": judge_identity(judge), "compare": settings.compare,
        "store": None if store_path is None else str(store_path), "warnings": [*plan.warnings, *settings.notes],
    }
