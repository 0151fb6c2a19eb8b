"""Stand-ins for the agent CLIs ``claude``, ``codex`` and ``opencode``, for tests (no model, no network).

The executables ``tests/fakes/claude``, ``tests/fakes/codex`` and ``tests/fakes/opencode`` call :func:`main` with
their name; tests put ``tests/fakes`` first on ``PATH``. Each checks its command line the way the real CLI
would (the flags eval-skills passes; a wrong one, or a flag Codex is given twice, is exit 2 with a message on
stderr), reads the prompt from
stdin, and prints the CLI's own output format (see tests/data/agents/README.md) from a JSON script read from
the file named by ``FAKE_CLI_CONFIG``, else the text of ``FAKE_CLI_JSON``; every key is optional:

    skill            name of the skill it knows, looked for at the CLI's project folder in its cwd
                     (claude .claude/skills, codex .agents/skills, opencode .opencode/skills)
    trigger          regex (case-insensitive) on the prompt: the skill is used only when it matches
    answer           the response without the skill (default "plain answer to: {prompt}")
    skilled_answer   the response with it (default: answer); "{prompt}" is replaced in both
    files            {"relative/path": "content"} written into the cwd, each reported as the CLI's write tool
    usage            {"input": n, "output": n, "cache_read": n, "cache_write": n, "cost": usd}
    mode             "ok" (default); "crash" (traceback, exit 1, after the first lines); "hang" (sleeps);
                     "refuse-skill" (the skill call fails); "error" (the CLI reports a failure: claude an
                     is_error result, codex turn.failed, opencode an error event); claude only: "no-result"
                     (the stream stops before the result line), "split" (the answer's API message comes as
                     two lines with the same id and usage, and the stream stops before the result line)
    version          what ``--version`` prints (default "0.0.0-fake (<cli>)")
    stderr           text written to stderr
    replay           a file of that CLI's output (a sample): printed line for line instead of what the script
                     describes (the command line is still checked, the prompt still read)
    exit             the exit status after printing (default 0)
    log              a file to which each run appends one JSON line: argv, prompt, cwd, model, skill_installed,
                     skill_used, claudecode (whether CLAUDECODE was in its environment)

``claude -p --output-format json`` prints the result object, or with ``--verbose`` a JSON array of every
message, as Claude Code does.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

SKILL_DIRS = {"claude": ".claude/skills", "codex": ".agents/skills", "opencode": ".opencode/skills"}


def fail(message: str, code: int = 2) -> None:
    print(message, file=sys.stderr, flush=True)
    sys.exit(code)


def option(argv: list[str], flag: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def check_claude(argv: list[str]) -> str:
    if "-p" not in argv and "--print" not in argv:
        fail("this fake only runs non-interactively: pass -p")
    output = option(argv, "--output-format") or "text"
    if output not in ("stream-json", "json"):
        fail(f"unsupported --output-format {output}")
    if output == "stream-json" and "--verbose" not in argv:
        fail("Error: When using --print, --output-format=stream-json requires --verbose", 1)
    return output


def check_codex(argv: list[str]) -> str:
    flags = [arg.split("=", 1)[0] for arg in argv if arg.startswith("-") and arg != "-"]
    for flag in flags:
        if flags.count(flag) > 1 and flag not in ("-c", "--config"):  # clap refuses a repeated flag
            fail(f"error: the argument '{flag}' cannot be used multiple times", 2)
    if argv[:1] != ["exec"] or "--json" not in argv:
        fail("this fake only runs `codex exec --json`")
    if "--skip-git-repo-check" not in argv and not Path(".git").exists():
        fail("Not inside a trusted directory and --skip-git-repo-check was not specified.", 1)
    if argv[-1] != "-":
        fail("this fake reads the prompt from stdin: end the command line with -")
    return "jsonl"


def check_opencode(argv: list[str]) -> str:
    if argv[:1] != ["run"] or option(argv, "--format") != "json":
        fail("this fake only runs `opencode run --format json`")
    return "jsonl"


class Out:
    """Prints one CLI's lines; for Claude's json format, collects them and prints them at the end."""

    def __init__(self, collect: bool) -> None:
        self.collect = collect
        self.lines: list[dict] = []

    def __call__(self, obj: dict) -> None:
        if self.collect:
            self.lines.append(obj)
        else:
            print(json.dumps(obj), flush=True)


def run_claude(out: Out, s: dict, prompt: str, used: bool, answer: str, argv: list[str]) -> None:
    out({"type": "system", "subtype": "init", "cwd": os.getcwd(), "model": option(argv, "--model") or "fake",
         "tools": ["Read", "Write", "Skill"], "skills": [s["skill"]] if s.get("skill") else []})
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 20, "output_tokens": 5}
    n = 0

    def assistant(*blocks: dict, msg_id: str | None = None) -> None:
        nonlocal n
        n += 1
        out({"type": "assistant", "message": {"id": msg_id or f"msg_{n}", "role": "assistant", "content": list(blocks),
                                              "usage": usage}, "parent_tool_use_id": None})

    def result(call_id: str, text: str, is_error: bool = False) -> None:
        out({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}]}})

    if used:
        assistant({"type": "tool_use", "id": "toolu_skill", "name": "Skill", "input": {"skill": s["skill"]}})
        if s.get("mode") == "refuse-skill":
            result("toolu_skill", "<tool_use_error>Skill cannot be used</tool_use_error>", True)
        else:
            result("toolu_skill", f"Launching skill: {s['skill']}")
            base = f"Base directory for this skill: {os.getcwd()}/.claude/skills/{s['skill']}"
            out({"type": "user", "isSynthetic": True,
                 "message": {"role": "user", "content": [{"type": "text", "text": base}]}})
    if s.get("mode") == "crash":
        raise RuntimeError("the fake claude crashed on purpose")
    for i, (name, content) in enumerate(s.get("files", {}).items()):
        write(name, content, prompt)
        assistant({"type": "tool_use", "id": f"toolu_w{i}", "name": "Write",
                   "input": {"file_path": str(Path.cwd() / name), "content": content}})
        result(f"toolu_w{i}", f"File created successfully at: {name}")
    if s.get("mode") == "split":  # one API message over three lines, each with the same provisional usage
        for block in ({"type": "text", "text": "Working."}, {"type": "text", "text": answer}):
            assistant(block, msg_id="msg_split")
    else:
        assistant({"type": "text", "text": answer})
    if s.get("mode") in ("no-result", "split"):
        return
    u = s.get("usage", {})
    error = s.get("mode") == "error"
    out({"type": "result", "subtype": "success", "is_error": error, "num_turns": n,
         "result": "API Error: overloaded" if error else answer, "total_cost_usd": u.get("cost", 0.01),
         "usage": {"input_tokens": u.get("input", 3), "cache_creation_input_tokens": u.get("cache_write", 10),
                   "cache_read_input_tokens": u.get("cache_read", 20), "output_tokens": u.get("output", 5)},
         "permission_denials": []})


def run_codex(out: Out, s: dict, prompt: str, used: bool, answer: str, argv: list[str]) -> None:
    out({"type": "thread.started", "thread_id": "fake-thread"})
    out({"type": "turn.started"})
    if used:
        command = f"/bin/bash -lc \"sed -n '1,200p' .agents/skills/{s['skill']}/SKILL.md\""
        out({"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": command,
                                              "aggregated_output": "", "exit_code": None, "status": "in_progress"}})
        text = Path(f".agents/skills/{s['skill']}/SKILL.md").read_text()
        out({"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": command,
                                                "aggregated_output": text, "exit_code": 0, "status": "completed"}})
    if s.get("mode") == "crash":
        raise RuntimeError("the fake codex crashed on purpose")
    for i, (name, content) in enumerate(s.get("files", {}).items()):
        write(name, content, prompt)
        out({"type": "item.completed", "item": {"id": f"item_w{i}", "type": "file_change", "status": "completed",
                                                "changes": [{"path": name, "kind": "add"}]}})
    out({"type": "item.completed", "item": {"id": "item_9", "type": "agent_message", "text": answer}})
    u = s.get("usage", {})
    if s.get("mode") == "error":
        out({"type": "turn.failed", "error": {"message": "stream disconnected before completion"}})
        return
    out({"type": "turn.completed", "usage": {"input_tokens": u.get("input", 100) + u.get("cache_read", 20),
                                             "cached_input_tokens": u.get("cache_read", 20),
                                             "output_tokens": u.get("output", 5)}})


def run_opencode(out: Out, s: dict, prompt: str, used: bool, answer: str, argv: list[str]) -> None:
    def event(kind: str, **part: object) -> None:
        out({"type": kind, "timestamp": int(time.time() * 1000), "sessionID": "ses_fake", "part": part})

    u = s.get("usage", {})
    tokens = {"input": u.get("input", 50), "output": u.get("output", 5), "reasoning": 0,
              "cache": {"read": u.get("cache_read", 0), "write": u.get("cache_write", 0)}}
    event("step_start", type="step-start")
    if used:
        failed = s.get("mode") == "refuse-skill"
        state = {"status": "error", "input": {"name": s["skill"]}, "error": "permission denied"} if failed else {
            "status": "completed", "input": {"name": s["skill"]}, "output": "<skill_content>...</skill_content>",
            "title": f"Loaded skill: {s['skill']}"}
        event("tool_use", type="tool", callID="call_skill", tool="skill", state=state)
    if s.get("mode") == "crash":
        raise RuntimeError("the fake opencode crashed on purpose")
    for i, (name, content) in enumerate(s.get("files", {}).items()):
        write(name, content, prompt)
        event("tool_use", type="tool", callID=f"call_w{i}", tool="write",
              state={"status": "completed", "input": {"filePath": name, "content": content}, "output": ""})
    event("step_finish", type="step-finish", reason="tool-calls", cost=u.get("cost", 0.001), tokens=tokens)
    event("step_start", type="step-start")
    event("text", type="text", text=answer)
    event("step_finish", type="step-finish", reason="stop", cost=u.get("cost", 0.001), tokens=tokens)
    if s.get("mode") == "error":
        out({"type": "error", "error": {"name": "APIError", "data": {"message": "provider overloaded"}}})


def write(name: str, content: str, prompt: str) -> None:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content.replace("{prompt}", prompt))


def main(cli: str) -> int:
    argv = sys.argv[1:]
    if argv == ["--version"]:  # as the real CLIs answer it: one line, nothing else read or written
        config = os.environ.get("FAKE_CLI_CONFIG")
        s = json.loads(Path(config).read_text() if config else os.environ.get("FAKE_CLI_JSON") or "{}")
        print(s.get("version", f"0.0.0-fake ({cli})"), flush=True)
        return 0
    output = {"claude": check_claude, "codex": check_codex, "opencode": check_opencode}[cli](argv)
    prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
    config = os.environ.get("FAKE_CLI_CONFIG")
    s = json.loads(Path(config).read_text() if config else os.environ.get("FAKE_CLI_JSON") or "{}")
    skill = s.get("skill")
    installed = bool(skill) and (Path(SKILL_DIRS[cli]) / str(skill) / "SKILL.md").is_file()
    used = installed and (not s.get("trigger") or re.search(s["trigger"], prompt, re.IGNORECASE) is not None)
    answer = (s.get("skilled_answer", s.get("answer")) if used else s.get("answer")) or "plain answer to: {prompt}"
    answer = answer.replace("{prompt}", prompt)
    if s.get("log"):
        with open(s["log"], "a") as log:
            log.write(json.dumps({"argv": argv, "prompt": prompt, "cwd": os.getcwd(), "skill_installed": installed,
                                  "skill_used": used, "model": option(argv, "--model"),
                                  "claudecode": "CLAUDECODE" in os.environ}) + "\n")
    if s.get("stderr"):
        print(s["stderr"], file=sys.stderr, flush=True)
    if s.get("mode") == "hang":
        time.sleep(600)
    if s.get("replay"):
        sys.stdout.write(Path(s["replay"]).read_text())
        return int(s.get("exit", 0))
    out = Out(collect=output == "json")
    {"claude": run_claude, "codex": run_codex, "opencode": run_opencode}[cli](out, s, prompt, used, answer, argv)
    if out.collect:
        print(json.dumps(out.lines if "--verbose" in argv else out.lines[-1]), flush=True)
    return int(s.get("exit", 0))
