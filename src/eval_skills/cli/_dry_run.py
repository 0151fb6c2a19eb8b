"""Printing the plans of ``paired --dry-run`` and ``routing --dry-run``: plain lines, or the plan as JSON."""

from __future__ import annotations

import shlex
from typing import Any

import click

from ._github import echo_json

__all__ = ["print_paired_plan", "print_routing_plan"]


def _echo_json(plan: dict[str, Any]) -> None:
    echo_json(True, plan)


def _agent_lines(agent: dict[str, Any]) -> list[str]:
    lines = [f"agent: {agent['agent']}, model {agent.get('model') or 'its default'}, "
             f"max turns {agent.get('max_turns') or 'its default'}, timeout {agent['timeout_s']:g} s per run"]
    if agent.get("command"):
        stdin = "; the prompt on its stdin" if agent.get("stdin") else ""
        lines.append(f"  command (in each run's folder{stdin}): {shlex.join(agent['command'])}")
    for name, value in (agent.get("env") or {}).items():
        lines.append(f"  environment: {name}={value}")
    if agent.get("endpoint"):
        lines.append(f"  endpoint: {agent['endpoint']} (key from ${agent['api_key_env']})")
    folders = ", ".join(agent.get("user_skill_dirs") or []) or "none"
    lines.append(f"  skills go to <run folder>/{agent['skills_dir']}; it also loads user-level skills from: {folders}")
    return lines


def _plural(count: int, what: str) -> str:
    return f"{count} {what}" + ("" if count == 1 else "s")


def _print_plan(kind: str, plan: dict[str, Any], body: list[str], runs: str, tail: list[str], *,
                as_json: bool) -> None:
    """One printer for both plans: the warnings (stderr), the command's own lines, the runs, the agent, what
    follows it, and the store."""
    if as_json:
        _echo_json(plan)
        return
    for warning in plan["warnings"]:
        click.echo(f"warning: {warning}", err=True)
    lines = [f"dry run of {kind}: nothing was run or written", *body, runs, *_agent_lines(plan["agent"]), *tail,
             f"store: {plan['store'] or 'none'}"]
    click.echo("\n".join(lines))


def print_paired_plan(plan: dict[str, Any], *, as_json: bool) -> None:
    verb = "resume" if plan["resume"] else "write"
    body = [f"skill: {plan['skill']} ({plan['skill_path']}); evals: {plan['evals']}",
            f"iteration {plan['iteration']}: would {verb} {plan['iteration_folder']}",
            f"cases ({len(plan['cases'])}):"]
    for case in plan["cases"]:
        name = f" ({case['name']})" if case["name"] else ""
        files = f", files: {', '.join(case['files'])}" if case["files"] else ""
        body.append(f"  {case['id']}{name}: {_plural(case['assertions'], 'assertion')}, "
                    f"{_plural(case['checks'], 'check')}{files}")
    body.append("arms:")
    for arm in plan["arms"]:
        skills = "; ".join(f"{s['name']} from {s['from']} at {s['installed_at']}" for s in arm["skills"]) or "no skill"
        body.append(f"  {arm['arm']}: {skills}")
    runs = (f"runs: {plan['runs_per_case_and_arm']} per case and arm; {plan['agent_runs']} agent runs in all, "
            f"{plan['concurrency']} at once" + (f", at most {plan['budget_tokens']} tokens" if plan["budget_tokens"]
                                                else ""))
    judge = plan["judge"]
    tail = [f"judge: {judge['backend']}, model {judge['model'] or 'its default'}" if judge else "judge: none",
            f"blind A/B comparison: {'yes' if plan['compare'] else 'no'}"]
    _print_plan("paired", plan, body, runs, tail, as_json=as_json)


def print_routing_plan(plan: dict[str, Any], *, as_json: bool) -> None:
    queries = plan["queries"]
    body = [f"skill: {plan['skill']} ({plan['skill_path']}); queries: {plan['routing_file']}",
            f"results: would write {plan['results_folder']}",
            f"queries ({len(queries)}, {plan['should_trigger']} should trigger):"]
    body += [f"  {'+' if q['should_trigger'] else '-'} {q['query']}" for q in queries]
    body.append("skills in every run:")
    body += [f"  {s['name']} ({s['role']}) from {s['from']} at {s['installed_at']}" for s in plan["skills"]]
    runs = (f"runs: {plan['runs_per_query']} per query; {plan['agent_runs']} agent runs in all, "
            f"{plan['concurrency']} at once")
    _print_plan("routing", plan, body, runs, [], as_json=as_json)
