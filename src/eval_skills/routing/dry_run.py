"""``routing --dry-run``: every check a routing test makes first, then its plan, with nothing run or written.

:func:`dry_run_plan` makes the checks :func:`~eval_skills.routing.run.run_routing` makes before it writes (the
workspace, the store), and describes the test: the ``routing-<n>`` folder it would write, the queries, the skills
every run installs (the skill and its distractors) and where, the runs, the agent's full command line (secrets
masked). No folder is created, no store opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..agents import Agent, AgentRequest
from ..formats.routing_results import routing_dir
from ..formats.workspace import next_number
from ..store import Store
from .execute import RunSettings
from .plan import RoutingPlan, check_workspace

__all__ = ["dry_run_plan"]

PROMPT = "<the query>"


def dry_run_plan(plan: RoutingPlan, agent: Agent, settings: RunSettings, workspace: Path,
                 store_path: Path | None) -> dict[str, Any]:
    """The test's plan as plain JSON, once every check passed (InputError otherwise); nothing is written."""
    check_workspace(workspace, plan)
    if store_path is not None:
        Store.check(store_path)  # a file that is no store fails here, as the run would, writing nothing
    number = next_number(workspace, "routing")
    preview = agent.preview(AgentRequest(PROMPT, Path("."), timeout=settings.timeout_s, max_turns=settings.max_turns,
                                         model=settings.model))
    subdir = preview["skills_dir"]
    skills = [{"name": doc.name, "from": str(doc.folder), "installed_at": f"<run folder>/{subdir}/{doc.name}",
               "role": "skill" if i == 0 else "distractor"}
              for i, doc in enumerate([plan.skill, *plan.distractors])]
    return {
        "dry_run": True, "skill": plan.skill.name, "skill_path": str(plan.skill.folder),
        "routing_file": str(plan.routing_file), "results_folder": str(routing_dir(workspace, number)),
        "queries": [{"query": q.query, "should_trigger": q.should_trigger, "invocation_type": q.invocation_type}
                    for q in plan.queries],
        "should_trigger": sum(q.should_trigger for q in plan.queries), "skills": skills,
        "runs_per_query": plan.runs, "agent_runs": plan.total, "concurrency": settings.concurrency,
        "agent": preview, "store": None if store_path is None else str(store_path),
        "warnings": [*(f"{plan.skill.path}: {w}" for w in plan.skill.warnings), *plan.notes],
    }
