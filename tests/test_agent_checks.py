"""The checks on what the agent did (tool_sequence, tool_args, tool_count, skill_before, no_tool_errors,
file_created, file_contains) on the transcripts of every agent backend: the real CLIs' recorded output (Claude
Code, Codex, OpenCode: the model invoked the skill, had the CLI write notes.txt, then answered), constructed
recordings with failed calls, the command backend running the stand-in agent, and the built-in OpenAI loop
against a local server. Event numbers in the evidence are the transcript's, counted by hand from the recordings."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_scenarios import SKILL, SKILLS_SUBDIR
from fakes import FAKE_AGENT
from fakes.openai_server import FakeOpenAI, completion, tool_call
from paired_data import agent_args, paired, write_skill
from test_agents import make_skill

from eval_skills.agents import AgentRequest, ParseContext, RawOutput, create_agent, create_parser
from eval_skills.errors import InputError
from eval_skills.paired.assertion_check import check_assertions
from eval_skills.paired.plan import load_plan
from eval_skills.paired.selftune import selftune_check
from eval_skills.scoring.assertions import AgentFile, Check, CheckResult, Trace, run_check
from eval_skills.scoring.file_checks import matches_glob

DATA = Path(__file__).parent / "data" / "agents"
REAL = {"claude": "claude-stream-json-skill-write.real-cli-2.1.197.jsonl",
        "codex": "codex-exec-json-skill-write.real-cli-0.171.0.jsonl",
        "opencode": "opencode-run-json-skill-write.real-cli-1.18.33.jsonl"}
# per CLI: the call that invoked the skill, the call that wrote notes.txt, the JSONPath of the written path in
# its input, and the events they are (claude and codex: 1 call, 2 skill, 3 call; opencode: a usage line between)
NAMES = {"claude": ("Skill", "Write", "$.file_path", 3), "codex": ("command_execution", "command_execution",
                                                                  "$.command", 3),
         "opencode": ("skill", "write", "$.filePath", 4)}


def recorded(cli: str, name: str, skills: tuple[str, ...] = (SKILL,)) -> Trace:
    data = (DATA / name).read_bytes()
    parser = create_parser(cli, ParseContext(skills, SKILLS_SUBDIR[cli], Path("/tmp/run/ws")))
    raw = RawOutput()
    raw.write(data)
    for line in data.split(b"\n"):
        parser.feed(line)
    return Trace(events=[e.model_dump(mode="json") for e in parser.finish(raw).transcript])


def check(spec: dict[str, Any]) -> Check:
    return selftune_check(spec, file="evals.json", field="$.evals[0].selftune_assertions[0]").check


def result(spec: dict[str, Any], trace: Trace) -> CheckResult:
    return run_check(check(spec), "", trace=trace)


@pytest.mark.parametrize("cli", sorted(REAL))
def test_the_real_clis_runs_read_in_order(cli: str) -> None:
    trace = recorded(cli, REAL[cli])
    invoke, write, path, at = NAMES[cli]
    ordered = result({"type": "tool_sequence", "value": [invoke, write], "strict": True}, trace)
    assert ordered.passed and ordered.evidence == f"{invoke} -> {write} with no other call between: events 1, {at}"
    if invoke != write:
        backwards = result({"type": "tool_sequence", "value": [write, invoke]}, trace)
        assert not backwards.passed
        assert backwards.evidence == (f"{write} at event {at}, then no {invoke} after it; tool calls (name@event): "
                                      f"{invoke}@1, {write}@{at}")
    args = result({"type": "tool_args", "tool": write, "path": path, "pattern": r"notes\.txt"}, trace)
    assert args.passed and args.evidence.startswith(f"event {at} ({write}): {path} = ")
    exact = result({"type": "tool_args", "tool": write, "path": path, "expected": "elsewhere.txt"}, trace)
    assert not exact.passed and "none matching equal to 'elsewhere.txt'" in exact.evidence
    assert result({"type": "tool_count", "min": 2, "max": 2}, trace).evidence == \
        f"2 tool call(s) (events 1, {at}); wanted at least 2 and at most 2"
    assert not result({"type": "tool_count", "tool": write, "max": 0}, trace).passed
    before = result({"type": "skill_before", "tool": write, "skill": SKILL}, trace)
    assert before.passed and before.evidence == (f"skill {SKILL!r} at event 2 (invoked by event 1); first call of "
                                                 f"{write} at event {1 if invoke == write else at}")
    assert result({"type": "no_tool_errors"}, trace).evidence == "none of 2 tool call(s) ended in an error"
    assert not result({"type": "skill_before", "tool": write, "skill": "other"}, trace).passed


def test_the_same_check_across_clis_with_a_list_of_names() -> None:
    spec = {"type": "tool_sequence", "value": [["Skill", "skill"], ["Write", "write"]]}
    assert result(spec, recorded("claude", REAL["claude"])).passed
    assert result(spec, recorded("opencode", REAL["opencode"])).passed
    missed = result(spec, recorded("codex", REAL["codex"]))
    assert not missed.passed and missed.evidence.startswith("no call of Skill|skill;")


def test_failed_calls_and_a_skill_read_after_a_refusal() -> None:
    refused = recorded("opencode", "opencode-run-json-refused-skill.constructed.jsonl", ("csv-summary",))
    errors = result({"type": "no_tool_errors"}, refused)
    assert not errors.passed
    assert errors.evidence == ("1 of 2 tool call(s) ended in an error (at most 0 allowed): event 1 (skill): "
                               "'Error: The user has specified a rule which prevents you ...")
    assert result({"type": "no_tool_errors", "max": 1}, refused).passed
    assert result({"type": "no_tool_errors", "tool": "read"}, refused).passed
    # the skill came from the read at event 2; the refused skill call at event 1 came before it
    late = result({"type": "skill_before", "tool": "skill"}, refused)
    assert not late.passed and late.evidence == ("skill 'csv-summary' at event 3 (invoked by event 2); first call of "
                                                 "skill at event 1")
    assert result({"type": "skill_before", "tool": "read"}, refused).passed


def test_codex_reading_two_skills_then_changing_a_file() -> None:
    trace = recorded("codex", "codex-exec-json-recovered.constructed.jsonl", ("csv-summary", "csv-charts"))
    charts = result({"type": "skill_before", "tool": "file_change", "skill": "csv-charts"}, trace)
    assert charts.passed and charts.evidence == ("skill 'csv-charts' at event 4 (invoked by event 2); first call of "
                                                 "file_change at event 7")
    loose = result({"type": "tool_sequence", "value": ["command_execution", "file_change"]}, trace)
    assert loose.passed and loose.evidence.endswith("events 2, 7")
    strict = result({"type": "tool_sequence", "value": ["command_execution", "file_change"], "strict": True}, trace)
    assert strict.passed and strict.evidence.endswith("events 5, 7")  # the second command is next to it
    changes = result({"type": "tool_args", "tool": "file_change", "path": "$.changes[*].path",
                      "pattern": "summary\\.md$"}, trace)
    assert changes.passed and changes.evidence == "event 7 (file_change): $.changes[*].path = " \
        "'/home/user/run-7/summary.md' matches 'summary\\\\.md$'"
    assert result({"type": "tool_count", "tool": "command_execution", "min": 2, "max": 2}, trace).passed
    assert not result({"type": "no_tool_errors"}, trace).passed


def test_no_skill_at_all() -> None:
    trace = recorded("claude", "claude-stream-json-tool.jsonl")
    said = result({"type": "skill_before", "tool": "Bash"}, trace)
    assert not said.passed and said.evidence == "no skill was invoked; first call of Bash at event 1"
    strict = result({"type": "tool_sequence", "value": ["Bash", "Bash"], "strict": True}, trace)
    assert not strict.passed and strict.evidence.startswith("Bash at event 1, then no Bash after it")


def test_the_command_backend_running_the_stand_in_agent(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".agents" / "skills" / SKILL).mkdir(parents=True)
    (workspace / ".agents" / "skills" / SKILL / "SKILL.md").write_text(f"---\nname: {SKILL}\n---\nbody\n")
    (workspace / "given.txt").write_text("fixture\n")
    script = {"skill": SKILL, "answer": "done",
              "tool_calls": [{"name": "Bash", "input": {"command": "ls"}, "result": "boom", "is_error": True}],
              "files": {"out/report.md": "Total: 42 EUR\n", "given.txt": "fixture, changed\n"}}
    agent = create_agent("command", output="events", env={"FAKE_AGENT_JSON": json.dumps(script)},
                         command=f"{sys.executable} {FAKE_AGENT} --prompt-file {{prompt_file}}")
    out = asyncio.run(agent.run(AgentRequest("Check it", workspace, timeout=60)))
    assert out.status == "ok", out.error
    files = [AgentFile(f.path, f.kind, (workspace / f.path).read_bytes()) for f in out.files]
    trace = Trace(events=[e.model_dump(mode="json") for e in out.transcript], files=files)
    names = [e.get("name") for e in trace.events if e["type"] == "tool_call"]
    assert names == ["Read", "Bash", "write_file", "write_file"]  # the Read and its result share an id: one call
    assert result({"type": "tool_sequence", "value": ["Read", "Bash", "write_file"], "strict": True}, trace).passed
    assert result({"type": "skill_before", "tool": "write_file", "skill": SKILL}, trace).passed
    between = result({"type": "tool_sequence", "value": ["Read", "write_file"], "strict": True}, trace)
    assert not between.passed and between.evidence.startswith("in order (events 2, 5) but with other calls between;")
    assert run_check(check({"type": "tool_called", "value": "Bash"}), "", trace=trace).evidence == \
        "call 2 of 4; 1 call(s) to 'Bash'"  # tool_called reads the trace's calls too
    failed = result({"type": "no_tool_errors"}, trace)
    assert not failed.passed and "event 4 (Bash): 'boom'" in failed.evidence
    assert result({"type": "file_created", "path": "out/*.md"}, trace).evidence == \
        "1 created file(s) match 'out/*.md': out/report.md (14 bytes)"
    changed = result({"type": "file_created", "path": "given.txt"}, trace)
    assert not changed.passed and "(given.txt only changed)" in changed.evidence
    assert result({"type": "file_contains", "path": "given.txt", "text": "changed"}, trace).passed
    regex = result({"type": "file_contains", "path": "**/*.md", "pattern": r"Total: \d+ EUR"}, trace)
    assert regex.passed and regex.evidence == "out/report.md matches 'Total: \\\\d+ EUR': 'Total: 42 EUR' at line 1, " \
        "column 1"


def test_the_openai_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the total is 42")
    skill = make_skill(tmp_path, "csv-summary")
    with FakeOpenAI(key="sk-test") as api:
        api.script(completion(None, [tool_call("load_skill", {"name": "csv-summary"}, "c1")]),
                   completion(None, [tool_call("read_file", {"path": "notes.txt"}, "c2"),
                                     tool_call("write_file", {"path": "out/report.md", "content": "# 42"}, "c3"),
                                     tool_call("read_file", {"path": "../secret"}, "c4")]),
                   completion("The total is 42."))
        agent = create_agent("openai", base_url=api.url, model="m", api_key_env="TEST_OPENAI_KEY")
        out = asyncio.run(agent.run(AgentRequest("Summarise notes.txt", workspace, skills=[skill], timeout=30)))
    assert out.status == "ok", out.error
    trace = Trace(events=[e.model_dump(mode="json") for e in out.transcript],
                  files=[AgentFile(f.path, f.kind, (workspace / f.path).read_bytes()) for f in out.files])
    assert result({"type": "tool_sequence", "value": ["load_skill", "read_file", "write_file"], "strict": True},
                  trace).passed
    args = result({"type": "tool_args", "tool": "write_file", "path": "$.path", "expected": "out/report.md"}, trace)
    assert args.passed and args.evidence == "event 6 (write_file): $.path = 'out/report.md'"
    assert result({"type": "tool_count", "tool": "read_file", "min": 2}, trace).passed
    assert result({"type": "skill_before", "tool": "write_file", "skill": "csv-summary"}, trace).passed
    refused = result({"type": "no_tool_errors"}, trace)
    assert not refused.passed and refused.evidence.startswith("1 of 4 tool call(s) ended in an error")
    assert result({"type": "file_contains", "path": "out/report.md", "text": "# 42"}, trace).passed
    assert not result({"type": "file_created", "path": "notes.txt"}, trace).passed


def test_files_kept_or_not() -> None:
    trace = Trace(files=[AgentFile("a/b/c.txt", "created", b"deep"), AgentFile("img.png", "created", b"\xff\xd8"),
                         AgentFile("big.log", "created", None)])
    assert result({"type": "file_created", "path": "**/c.txt"}, trace).passed
    assert result({"type": "file_created", "path": "a/*/c.txt"}, trace).passed
    assert not result({"type": "file_created", "path": "a/*.txt"}, trace).passed  # * stays in its folder
    assert result({"type": "file_contains", "path": "img.png", "text": "x"}, trace).evidence == \
        "img.png: not text (2 bytes)"
    assert result({"type": "file_contains", "path": "big.log", "text": "x"}, trace).evidence == \
        "big.log: its content was not kept"
    none = result({"type": "file_contains", "path": "*.md", "text": "x"}, trace)
    assert none.evidence == "no file the agent created or changed matches '*.md'; created a/b/c.txt, img.png, big.log"
    assert result({"type": "file_created", "path": "x"}, Trace()).evidence == "the run recorded no files"
    assert run_check(check({"type": "tool_count", "max": 1}), "answer").evidence.startswith(
        "the run recorded no transcript")


@pytest.mark.parametrize(("path", "pattern", "matched"), [
    ("notes.txt", "notes.txt", True), ("notes.txt", "**/notes.txt", True), ("a/b/notes.txt", "**/notes.txt", True),
    ("a/notes.txt", "*.txt", False), ("a/notes.txt", "a/**", True), ("a", "a/**", True), (".hidden", "*", True),
    ("r1.md", "r?.md", True), ("r10.md", "r?.md", False)])
def test_globs(path: str, pattern: str, matched: bool) -> None:
    assert matches_glob(path, pattern) is matched


@pytest.mark.parametrize(("spec", "said"), [
    ({"type": "tool_sequence", "value": []}, "tool_sequence: value must be a non-empty list of tool names, got []"),
    ({"type": "tool_sequence", "value": ["A"], "strict": "yes"}, "tool_sequence: strict must be true or false"),
    ({"type": "tool_sequence", "tools": ["A"], "stict": True},
     ".stict: tool_sequence has no field 'stict' (it takes: description, strict, tools, value)"),
    ({"type": "tool_args", "tool": "W"}, "tool_args needs path (a JSONPath into the call's input) or pattern"),
    ({"type": "tool_args", "tool": "W", "path": "$["}, "invalid JSONPath '$['"),
    ({"type": "tool_args", "tool": "W", "pattern": "("}, "invalid regular expression '('"),
    ({"type": "tool_args", "tool": "W", "pattern": "x", "expected": 1}, "tool_args: expected needs a path"),
    ({"type": "tool_args", "tool": "W", "path": "$.a", "expected": 1, "pattern": "x"}, "not both"),
    ({"type": "tool_count", "tool": "W"}, "tool_count needs min, max or both"),
    ({"type": "tool_count", "min": 3, "max": 1}, "tool_count: min (3) is above max (1)"),
    ({"type": "tool_count", "min": -1}, "tool_count: min must be a whole number of at least 0"),
    ({"type": "tool_count", "max": True}, "tool_count: max must be a whole number of at least 0"),
    ({"type": "skill_before"}, "tool must be a tool name or a non-empty list of names, got None"),
    ({"type": "skill_before", "tool": "W", "skill": " "}, "skill_before: skill must be a skill's name"),
    ({"type": "no_tool_errors", "max": "1"}, "no_tool_errors: max must be a whole number"),
    ({"type": "file_created", "path": "/etc/passwd"}, "is absolute; give it relative to the run's folder"),
    ({"type": "file_created", "path": "out/../../x"}, "leaves the run's folder ('..')"),
    ({"type": "file_created", "path": "..\\x"}, "leaves the run's folder ('..')"),
    ({"type": "file_contains", "path": "a.txt"}, "file_contains needs text (a substring) or pattern (a regex)"),
    ({"type": "file_contains", "path": "a.txt", "value": "b.txt", "text": "x"}, "give value or path, not both"),
])
def test_invalid_checks_are_refused_naming_the_field(spec: dict[str, Any], said: str) -> None:
    with pytest.raises(InputError) as raised:
        check(spec)
    line = str(raised.value)
    assert line.startswith("evals.json: $.evals[0].selftune_assertions[0]") and said in line, line
    assert "\n" not in line


# ---- a paired run through the stand-in agent ------------------------------------------------------------

AGENT_CHECKS = [
    {"type": "tool_sequence", "value": ["Read", "Bash", "write_file"]},
    {"type": "tool_args", "tool": "Bash", "path": "$.command", "pattern": "^wc "},
    {"type": "tool_count", "tool": "write_file", "min": 1, "max": 1},
    {"type": "skill_before", "tool": "write_file"},
    {"type": "no_tool_errors"},
    {"type": "file_created", "path": "out/*.md"},
    {"type": "file_contains", "path": "**/report.md", "pattern": "VAT [0-9]+ EUR"},
]


def test_a_paired_run_grades_what_the_agent_did(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "invoice-check", "version 2")
    case = {"id": 1, "prompt": "Check the invoice", "assertions": [], "selftune_assertions": AGENT_CHECKS}
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "invoice-check", "evals": [case]}))
    script = tmp_path / "agent.json"  # with the skill: Read SKILL.md, Bash, then writes the report; without: Bash
    script.write_text(json.dumps({
        "skill": "invoice-check", "answer": "plain", "log": str(tmp_path / "log.jsonl"),
        "tool_calls": [{"name": "Bash", "input": {"command": "wc -l invoice.txt"}, "result": "1"}],
        "skill_answers": [{"when": "version", "skilled_answer": "done", "files": {"out/report.md": "VAT 7 EUR\n"}}]}))
    out = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", cwd=tmp_path,
                 script_file=script)
    assert out.returncode == 0, out.stderr
    iteration = tmp_path / "invoice-check-workspace" / "iteration-1" / "eval-1"
    graded = {arm: json.loads((iteration / arm / "run-1" / "grading.json").read_text())["expectations"]
              for arm in ("with_skill", "without_skill")}
    assert [e["passed"] for e in graded["with_skill"]] == [True] * 7, graded["with_skill"]
    assert [e["passed"] for e in graded["without_skill"]] == [False, True, False, False, True, False, False]
    with_skill = {e["text"]: e["evidence"] for e in graded["with_skill"]}
    assert with_skill['tool_sequence ["Read", "Bash", "write_file"]'] == "Read -> Bash -> write_file in order: " \
        "events 2, 4, 5"
    assert with_skill['file_contains "**/report.md" pattern "VAT [0-9]+ EUR"'] == \
        "out/report.md matches 'VAT [0-9]+ EUR': 'VAT 7 EUR' at line 1, column 1"
    without = {e["text"]: e["evidence"] for e in graded["without_skill"]}
    assert without['skill_before "write_file"'] == "no skill was invoked; write_file never called"
    assert without['file_created "out/*.md"'] == "no file the agent created matches 'out/*.md'; it created or " \
        "changed no file"

    bad = {**case, "selftune_assertions": [*AGENT_CHECKS, {"type": "file_contains", "path": "../../etc/passwd",
                                                           "text": "root"}]}
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "invoice-check", "evals": [bad]}))
    (tmp_path / "log.jsonl").unlink()
    refused = paired("--skill-path", skill, *agent_args(script), "--no-compare", "--no-store", cwd=tmp_path,
                     script_file=script)
    assert refused.returncode == 2 and not (tmp_path / "log.jsonl").exists()  # refused before any run
    assert refused.stderr.strip().splitlines()[-1].endswith(
        "evals.json: $.evals[0].selftune_assertions[7]: file_contains: path '../../etc/passwd' leaves the run's "
        "folder ('..')")


def test_checking_the_assertions_before_any_run(tmp_path: Path) -> None:
    """The checks on what the agent did are graded as a run that did nothing: one that passes there (a tool_count
    with only min 0) checks nothing; the ones that only forbid are left out; none can contradict the expected
    output (which is text)."""
    skill = write_skill(tmp_path / "invoice-check", "version 2")
    checks = [{"type": "contains", "value": "VAT"}, {"type": "not_contains", "value": "legacy"},
              {"type": "tool_called", "value": "Read"}, {"type": "no_tool_errors"},
              {"type": "tool_count", "tool": "Bash", "max": 3}, {"type": "tool_count", "tool": "Bash", "min": 0},
              {"type": "file_created", "path": "notes.txt"}, {"type": "skill_before", "tool": "Write"}]
    case = {"id": 1, "prompt": "p", "expected_output": "The VAT is 7 EUR", "assertions": [],
            "selftune_assertions": checks}
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "invoice-check", "evals": [case]}))
    findings = asyncio.run(check_assertions(load_plan(skill), None))
    assert [(f.assertion, f.kind) for f in findings] == [('not_contains "legacy"', "checks_nothing"),
                                                         ('tool_count "Bash" min 0', "checks_nothing")]
    assert findings[1].evidence == "0 call(s) of Bash; wanted at least 0"
