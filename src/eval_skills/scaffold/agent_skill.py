"""The ``agent_skill`` template: an Agent Skills folder that ``eval-skills fixtures`` accepts as generated.

    <name>/SKILL.md                  frontmatter (name, description) and the instructions
    <name>/evals/evals.json          six paired-run cases (skill-creator's contract), enough for a first
                                     ``paired`` to measure a change rather than say "too little data"
    <name>/evals/routing.json        queries that should and should not trigger the skill
    <name>/evals/tasks.json          a fixture task with must_include / must_not_include checks
    <name>/evals/examples/<id>.md    its worked example, which passes them
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InputError
from ..formats.agentskills import frontmatter_problems

__all__ = ["agent_skill_files", "check_agent_skill_name"]

TASK_ID = "basic-request"


def check_agent_skill_name(name: str, description: str = "x") -> None:
    """The Agent Skills rules for ``name`` (lowercase letters, digits, single hyphens, at most 64) and
    ``description`` (at most 1024 characters)."""
    errors, _ = frontmatter_problems({"name": name, "description": description}, None)
    if errors:
        key, _, problem = errors[0].partition(": ")
        raise InputError(f"not valid in an Agent Skill: {problem}", field=f"--{key}",
                         hint="a name is lowercase letters, digits and single hyphens")


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _yaml_text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def agent_skill_files(name: str, description: str) -> dict[str, str]:
    marker = f"Checked with {name}"
    skill_md = "\n".join([
        "---", f"name: {name}", f"description: {_yaml_text(description)}", "---", "",
        f"# {name}", "",
        "Write here what an agent should do when this skill applies: the steps, the conventions and the",
        "pitfalls. Keep it short; put long material in references/ and link to it.", "",
        "## Steps", "",
        "1. Restate the request in one sentence.",
        "2. Answer it, following the conventions of this skill.",
        f"3. End the answer with the line `{marker}`.", "",
        "## Checks", "",
        "- `evals/tasks.json` lists prompts with strings an answer must (not) contain; every `must_include`",
        "  string must appear in this file, rules/ or references/. `evals/examples/` holds a worked example",
        "  per task. Run `eval-skills fixtures --skills-dir <folder holding this skill>`.",
        "- `evals/evals.json` and `evals/routing.json` drive paired and routing runs with a real agent.", "",
    ])
    requests = [
        "a small example request",
        "a request with two parts: a summary and a list",
        "a request that gives too little detail to answer well",
        "a request written in a hurry, with typos",
        "a request that asks for the shortest possible answer",
        "a request that mixes this skill's job with an unrelated question",
    ]
    evals = {"skill_name": name, "evals": [{
        "id": n, "prompt": f"Use the {name} skill on {request}.",
        "expected_output": f"An answer to {request} that follows the skill's steps and ends with '{marker}'.",
        "files": [],
        # a quoted phrase is what a judge (and the bundled stand-in judge) looks for in the answer
        "assertions": [f'The answer ends with the line "{marker}"'],
        "selftune_assertions": [{"type": "contains", "value": marker}],
    } for n, request in enumerate(requests, start=1)]}
    routing = [
        {"query": f"Please use {name} for this request", "should_trigger": True},
        {"query": "What is the capital of France?", "should_trigger": False},
    ]
    tasks = [{"id": TASK_ID, "prompt": f"Use the {name} skill on a small example request.",
              "must_include": [marker], "must_not_include": ["TODO"]}]
    example = "\n".join(["You asked for a small example request to be handled.", "",
                         "Here is the answer, following the skill's steps.", "", marker, ""])
    return {"SKILL.md": skill_md, "evals/evals.json": _json(evals), "evals/routing.json": _json(routing),
            "evals/tasks.json": _json(tasks), f"evals/examples/{TASK_ID}.md": example}
