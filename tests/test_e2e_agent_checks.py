"""The checks on what the agent did, through the real Claude Code, Codex and OpenCode CLIs against a scripted
model on 127.0.0.1 that makes its tool calls in an order: it invokes the skill, has the CLI write notes.txt, then
total.txt, then answers. Without the skill it answers at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_clis import CLIS, MODELS, require_cli
from e2e_scenarios import NEW, NEW_MARK, NOTES, PLAIN, SKILL, eval_skills, invoice_skill
from fakes.model_server import (
    Answer,
    ModelServer,
    When,
    made,
    prompt_has,
    skill_call,
    skill_listed,
    skill_loaded,
    tooled,
    write_call,
)

pytestmark = pytest.mark.e2e

TOTAL = "total: 42 EUR"
# per CLI: the tool that invoked the skill, the one that wrote a file, the JSONPath of what it wrote to
TOOLS = {"claude": ("Skill", "Write", "$.file_path"), "codex": ("command_execution", "command_execution", "$.command"),
         "opencode": ("skill", "write", "$.filePath")}


def script(server: ModelServer, cli: str) -> None:
    invoke = skill_call(cli, SKILL)

    def wrote(path: str, content: str) -> When:
        return When(lambda call: call.made(write_call(cli, path, content, call.workdir)), f"wrote {path}")

    def write(path: str, content: str):  # noqa: ANN202
        return lambda call: Answer(tools=(write_call(cli, path, content, call.workdir),))

    server.rule(tooled() & skill_listed(SKILL) & prompt_has("invoice.txt") & ~made(invoke), Answer(tools=(invoke,)),
                name="invoke")
    server.rule(tooled() & skill_loaded(NEW_MARK) & ~wrote("notes.txt", NOTES), write("notes.txt", NOTES),
                name="notes")
    server.rule(tooled() & skill_loaded(NEW_MARK) & ~wrote("total.txt", TOTAL), write("total.txt", TOTAL),
                name="total")
    server.rule(tooled() & skill_loaded(NEW_MARK), Answer(NEW), name="answer")
    server.rule(tooled(), Answer(PLAIN), name="plain")


@pytest.mark.parametrize("cli", CLIS)
def test_the_order_of_the_agents_tool_calls(cli: str, tmp_path: Path) -> None:
    require_cli(cli)
    skill, _ = invoice_skill(tmp_path)
    invoker, writer, path = TOOLS[cli]
    checks = [
        {"type": "tool_sequence", "value": [invoker, writer, writer], "strict": True},
        {"type": "tool_args", "tool": writer, "path": path, "pattern": r"total\.txt"},
        {"type": "tool_count", "min": 3, "max": 3},
        {"type": "skill_before", "tool": writer, "skill": SKILL},
        {"type": "no_tool_errors"},
        {"type": "file_created", "path": "total.txt"},
        {"type": "file_contains", "path": "*.txt", "text": "VAT checked"},
    ]
    case = {"id": 1, "prompt": "Check the invoice in invoice.txt", "files": ["evals/files/invoice.txt"],
            "assertions": [], "selftune_assertions": checks}
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": SKILL, "evals": [case]}))
    with ModelServer() as model:
        script(model, cli)
        out = eval_skills("paired", "--skill-path", skill, "--model", MODELS[cli], "--timeout", 240, "--no-compare",
                          "--no-store", cli=cli, server=model, cwd=tmp_path, home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    case_dir = tmp_path / f"{SKILL}-workspace" / "iteration-1" / "eval-1"
    graded = {arm: json.loads((case_dir / arm / "run-1" / "grading.json").read_text())["expectations"]
              for arm in ("with_skill", "without_skill")}
    assert [e["passed"] for e in graded["with_skill"]] == [True] * 7, graded["with_skill"]
    assert [e["passed"] for e in graded["without_skill"]] == [False, False, False, False, True, False, False]
    evidence = [e["evidence"] for e in graded["with_skill"]]
    assert evidence[0].startswith(f"{invoker} -> {writer} -> {writer} with no other call between: events 1, ")
    assert evidence[5] == f"1 created file(s) match 'total.txt': total.txt ({len(TOTAL)} bytes)"
    assert evidence[6].startswith("notes.txt holds 'VAT checked' at line 1, column 1")
    assert graded["without_skill"][2]["evidence"] == "0 tool call(s); wanted at least 3 and at most 3"
    # the CLI's own --version, asked once and recorded with each run (package.json pins the versions)
    pinned = json.loads((Path(__file__).parents[1] / "package.json").read_text())["dependencies"]
    version = {"claude": pinned["@anthropic-ai/claude-code"], "codex": pinned["@openai/codex"],
               "opencode": pinned["opencode-ai"]}[cli]
    recorded = {json.loads((case_dir / arm / "run-1" / "timing.json").read_text())["agent_version"]
                for arm in ("with_skill", "without_skill")}
    assert len(recorded) == 1 and version in recorded.pop()
