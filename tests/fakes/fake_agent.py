"""A scriptable stand-in for an agent CLI, for tests (no model, no network).

Run it as a ``command`` agent, in the workspace (its current folder)::

    create_agent("command", output="events", env={"FAKE_AGENT_JSON": json.dumps(script)},
                 command=f"{sys.executable} {FAKE_AGENT} --prompt-file {{prompt_file}} --model {{model}}")

Arguments: ``--prompt-file PATH`` or ``--prompt TEXT`` (else stdin), ``--model M`` (logged), ``--config PATH``.
The script is JSON from ``--config``, else the file named by ``FAKE_AGENT_CONFIG``, else the text of
``FAKE_AGENT_JSON``; every key is optional:

    skill            name of the skill it knows (looked for at <skills_dir>/<skill>/SKILL.md in its cwd)
    skills_dir       default ".agents/skills"
    trigger          regex (case-insensitive) on the prompt: the skill is used only when it matches;
                     without one, an installed skill is always used
    also             ["other-skill", ...]: skills it reads first, each when installed (the trigger applies)
    answer           the response when the skill is not used (default "plain answer to: {prompt}")
    skilled_answer   the response when it is (default: answer). "{prompt}" is replaced in both
    skill_answers    [{"when": text, ...keys above}]: when the skill is used, the first entry whose text appears
                     in the installed SKILL.md overrides the keys above (tells two versions of a skill apart)
    alternate_answer with counter_file: every second run with the same prompt and the same installed SKILL.md
                     answers this instead (the count is kept in counter_file, under a lock)
    tool_calls       [{"name": ..., "input": ..., "result": ..., "is_error": ...}, ...]: tool_call events printed
                     after the skill's reads and before the files' writes (events output only)
    files            {"relative/path": "content"} written into the cwd ("{prompt}" replaced), each with a
                     write_file tool_call event
    delete           ["relative/path", ...] removed from the cwd
    usage            a usage event's fields ({"input_tokens": 10, ...}); none printed when absent
    output           "events" (default: the JSON-lines events format) or "text" (only the answer)
    mode             "ok" (default); "crash" (raises after the first events: traceback, exit 1);
                     "exit" (everything printed, then exit with exit_code, default 3); "hang" (first
                     events, then sleeps for ever; with spawn_child a child process sleeps too);
                     "silent" (prints nothing, exit 0); "no-final" (no final line);
                     "garbage" (non-JSON and invalid event lines between the good ones)
    stderr           text written to stderr
    delay            seconds to sleep before answering
    wait_for         a file: before answering, wait until it exists (at most 120 s), so a test holds runs
                     open until it has seen what it waits for (an event, not a clock)
    pid_file         where "hang" writes its pid and its child's, one per line (and where detach_child's goes)
    detach_child     true: start a child that leaves the process group (its own session, as `setsid cmd &`
                     does) and sleeps; it is left running when the agent ends or hangs
    log              a file to which each run appends one JSON line: prompt, cwd, model, skill_installed,
                     skill_used, skills_present (the folders in skills_dir), arrival, listing (the files in
                     its cwd when it started, skills left out)
    state_dir        a folder where it counts how many times it has seen each prompt: the n-th run of a
                     prompt (counted across processes, in the order they start) has arrival n
    cases            [{"match": regex, "runs": [n, ...]?, ...keys above}]: the first case whose regex finds
                     the prompt (and, when "runs" is given, whose list holds the arrival; needs state_dir)
                     overrides the keys above

When the skill is used, it prints a ``tool_call`` ``Read`` of the SKILL.md (with the text it really read)
and a ``skill`` event pointing at that call, before its answer.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def listing(skills_dir: str) -> list[str]:
    found = []
    for folder, dirs, files in os.walk("."):
        rel = os.path.relpath(folder, ".")
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) != os.path.normpath(skills_dir)]
        found += [os.path.normpath(os.path.join(rel, f)) for f in files]
    return sorted(found)


def count_run(counter_file: str, key: str) -> int:
    """How many runs (this one included) had this key, counted in a JSON file under an exclusive lock."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    with open(counter_file, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        counts = json.loads(handle.read() or "{}")
        counts[digest] = counts.get(digest, 0) + 1
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(counts))
        return int(counts[digest])


def load_script(args: argparse.Namespace) -> dict:
    if args.config:
        return json.loads(Path(args.config).read_text())
    if os.environ.get("FAKE_AGENT_CONFIG"):
        return json.loads(Path(os.environ["FAKE_AGENT_CONFIG"]).read_text())
    return json.loads(os.environ.get("FAKE_AGENT_JSON") or "{}")


def arrival(prompt: str, state_dir: str | None) -> int | None:
    """1 + the number of earlier runs of this prompt, claimed by creating a numbered file (atomic)."""
    if not state_dir:
        return None
    key = hashlib.sha256(prompt.encode()).hexdigest()[:16]
    Path(state_dir).mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        try:
            os.close(os.open(Path(state_dir) / f"{key}-{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return n
        except FileExistsError:
            n += 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file")
    parser.add_argument("--prompt")
    parser.add_argument("--model", default="")
    parser.add_argument("--config")
    args = parser.parse_args()
    prompt = (Path(args.prompt_file).read_text() if args.prompt_file else
              args.prompt if args.prompt is not None else sys.stdin.read())
    script = load_script(args)
    seen = arrival(prompt, script.get("state_dir"))
    for case in script.get("cases", []):
        if re.search(case["match"], prompt, re.IGNORECASE) and ("runs" not in case or seen in case["runs"]):
            script = {**script, **case}
            break

    skill = script.get("skill")
    skill_md = Path(script.get("skills_dir", ".agents/skills")) / str(skill) / "SKILL.md"
    installed = bool(skill) and skill_md.is_file()
    trigger = script.get("trigger")
    used = installed and (trigger is None or re.search(trigger, prompt, re.IGNORECASE) is not None)
    skill_text = skill_md.read_text() if installed else ""
    if used:
        for version in script.get("skill_answers", []):
            if version["when"] in skill_text:
                script = {**script, **version}
                break
    answer = script.get("answer", "plain answer to: {prompt}")
    answer = script.get("skilled_answer", answer) if used else answer
    alternate = script.get("alternate_answer") is not None and script.get("counter_file")
    if alternate and count_run(script["counter_file"], prompt + "|" + skill_text) % 2 == 0:
        answer = script["alternate_answer"]
    answer = answer.replace("{prompt}", prompt)
    mode = script.get("mode", "ok")
    events = script.get("output", "events") == "events"

    if script.get("log"):
        with open(script["log"], "a") as log:
            skills_dir = Path(script.get("skills_dir", ".agents/skills"))
            present = sorted(p.name for p in skills_dir.iterdir()) if skills_dir.is_dir() else []
            log.write(json.dumps({"prompt": prompt, "cwd": os.getcwd(), "model": args.model,
                                  "skill_installed": installed, "skill_used": used, "skills_present": present,
                                  "arrival": seen, "listing": listing(str(skills_dir))}) + "\n")
    if script.get("stderr"):
        print(script["stderr"], file=sys.stderr, flush=True)
    if mode == "silent":
        return 0
    time.sleep(float(script.get("delay", 0)))
    if script.get("wait_for"):
        gate, until = Path(script["wait_for"]), time.monotonic() + 120
        while not gate.exists() and time.monotonic() < until:
            time.sleep(0.02)
    if events:
        emit({"type": "message", "role": "assistant", "text": "Looking at the task."})
    if mode == "crash":
        raise RuntimeError("the fake agent crashed on purpose")
    sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
    pids = [os.getpid()]
    if script.get("spawn_child") and mode == "hang":
        pids.append(subprocess.Popen(sleeper).pid)
    if script.get("detach_child"):
        pids.append(subprocess.Popen(sleeper, start_new_session=True, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)
    if script.get("pid_file"):
        Path(script["pid_file"]).write_text("".join(f"{pid}\n" for pid in pids))
    if mode == "hang":
        time.sleep(600)
    matched = trigger is None or re.search(trigger, prompt, re.IGNORECASE) is not None
    others = [str(name) for name in script.get("also", [])] if matched else []
    for n, name in enumerate([*others, *([skill] if used else [])], start=1):
        path = Path(script.get("skills_dir", ".agents/skills")) / name / "SKILL.md"
        if not events or not path.is_file():
            continue
        emit({"type": "tool_call", "id": f"call_{n}", "name": "Read", "input": {"file_path": str(path)}})
        emit({"type": "tool_call", "id": f"call_{n}", "name": "Read", "result": path.read_text()[:200]})
        emit({"type": "skill", "skill": name, "detected_by": "reported by the agent", "tool_call_id": f"call_{n}"})
    for call in script.get("tool_calls", []) if events else []:
        emit({"type": "tool_call", **call})
    for name, content in script.get("files", {}).items():
        path = Path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content.replace("{prompt}", prompt))
        if events:
            emit({"type": "tool_call", "name": "write_file", "input": {"path": name}, "result": "ok"})
    for name in script.get("delete", []):
        Path(name).unlink()
    if mode == "garbage":
        print("this line is not JSON", flush=True)
        emit({"type": "tool_call", "input": "a tool call without a name"})
        emit({"type": "dance"})
        print("[1, 2, 3]", flush=True)
    if events and "usage" in script:
        emit({"type": "usage", **script["usage"]})
    if not events:
        print(answer, flush=True)
    elif mode != "no-final":
        emit({"type": "final", "text": answer})
    return int(script.get("exit_code", 3)) if mode == "exit" else 0


if __name__ == "__main__":
    sys.exit(main())
