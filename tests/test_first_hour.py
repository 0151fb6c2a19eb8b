"""What a new user meets first, through the command line: why tasks failed, which timeout a task really gets,
tables that fit the terminal, errors that say what to do, and one rule for exit codes."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

from clirun import CALCULATOR, ROOT, run

from eval_skills.store import Store

AGENT_SKILL = ROOT / "examples" / "agent-skills" / "release-notes"
FIXTURE_SKILLS = ROOT / "examples" / "fixtures" / "skills"


def calculator(tmp_path: Path, **changes: object) -> Path:
    folder = tmp_path / "calc"
    shutil.copytree(CALCULATOR, folder)
    manifest = json.loads((folder / "skill.json").read_text())
    manifest.update(changes)
    (folder / "skill.json").write_text(json.dumps(manifest))
    return folder


def tasks_file(tmp_path: Path, tasks: list[dict]) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def wrong_tasks(n: int) -> list[dict]:
    return [{"id": f"t{i:02d}", "inputData": {"expression": f"{i} + 1"},
             "expectedOutput": {"type": "exact", "value": "wrong"}} for i in range(n)]


def on_terminal(*args: object, cwd: Path, columns: int = 100) -> str:
    """``eval-skills ARGS`` with stdout on a pseudo-terminal; what it printed there."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, stdout=follower,
                            stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


# ---- eval: the failing tasks, the timeouts, the composite ---------------------------------------------------


def test_eval_lists_failing_tasks_capped_with_where_the_rest_are(tmp_path: Path) -> None:
    tasks = tasks_file(tmp_path, wrong_tasks(12) + [{"id": "ok", "inputData": {"expression": "1 + 1"},
                                                      "expectedOutput": {"type": "exact", "value": "2"}}])
    out = run("eval", "--skills", CALCULATOR, "--tasks", tasks, "--no-store", "--output-dir", tmp_path / "r",
              cwd=tmp_path, env={"COLUMNS": "100"})
    assert out.exit_code == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("12 of 13 tasks did not pass:")
    listed = lines[start + 1:start + 11]
    assert [line.split(":")[0].strip() for line in listed] == [f"calculator / t{i:02d}" for i in range(10)]
    assert listed[0].split(": ", 2)[1] == "fail" and listed[0].split(": ", 2)[2]  # status, then the reason
    report = next((tmp_path / "r").glob("*.json"))
    assert lines[start + 11] == f"  ... and 2 more: all of them in {report.relative_to(tmp_path)} " \
                                "(each task's status and error)" or str(report) in lines[start + 11]
    assert "calculator / ok" not in out.stdout
    header = next(line for line in lines if line.startswith("skill "))
    assert header.split()[-1] == "composite"


def test_a_tasks_own_timeout_over_the_flag_is_said_in_the_dry_run_and_once_on_stderr(tmp_path: Path) -> None:
    tasks = tasks_file(tmp_path, [{"id": "own", "inputData": {"expression": "1 + 1"}, "timeoutMs": 2000,
                                   "expectedOutput": {"type": "exact", "value": "2"}},
                                  {"id": "flag", "inputData": {"expression": "2 + 2"},
                                   "expectedOutput": {"type": "exact", "value": "4"}}])
    dry = run("-v", "eval", "--skills", CALCULATOR, "--tasks", tasks, "--timeout", "3000", "--dry-run",
              "--no-store", cwd=tmp_path)
    assert dry.exit_code == 0, dry.stderr
    assert ("timeout per task for calculator: 2000 ms (1 task, their own timeoutMs); "
            "3000 ms (1 task, --timeout or the config file)") in dry.stdout
    assert "1 of 2 tasks set their own timeoutMs (2000 ms), which wins over --timeout 3000" in dry.stdout
    assert "task own of calculator: timeout 2000 ms" in dry.stderr
    assert "task flag of calculator: timeout 3000 ms" in dry.stderr
    doc = json.loads(run("eval", "--skills", CALCULATOR, "--tasks", tasks, "--timeout", "3000", "--dry-run",
                         "--no-store", "--json", cwd=tmp_path).stdout)
    assert doc["taskTimeoutsMs"] == {"calculator": {"own": 2000, "flag": 3000}}
    real = run("eval", "--skills", CALCULATOR, "--tasks", tasks, "--timeout", "3000", "--no-store",
               "--output-dir", tmp_path / "r", cwd=tmp_path)
    assert real.exit_code == 0, real.stderr
    assert real.stderr.count("note: 1 of 2 tasks set their own timeoutMs (2000 ms), which wins over "
                             "--timeout 3000") == 1
    quiet = run("eval", "--skills", CALCULATOR, "--tasks", tasks, "--no-store", "--output-dir", tmp_path / "r",
                cwd=tmp_path)
    assert "timeoutMs" not in quiet.stderr  # no --timeout chosen: nothing overridden, nothing said


# ---- tables -------------------------------------------------------------------------------------------------


def test_history_fits_80_columns_when_piped(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        for composite in (0.5, 0.75):
            eid = store.begin_evaluation(benchmark_id="coding-easy", benchmark_version="1", config={},
                                         tool_version="t")
            store.finish_evaluation(eid, status="finished", reports=[{
                "skillId": "a-skill-with-a-long-identifier", "skillVersion": "1.0.0-beta.1",
                "benchmarkId": "coding-easy", "summary": {"completionRate": composite, "compositeScore": composite},
                "latency": {"p95Ms": 1234.5}}])
    for columns, width in (("", 80), ("100", 100)):
        out = run("history", "--skill", "a-skill-with-a-long-identifier", "--store", tmp_path / "s.db",
                  cwd=tmp_path, env={"COLUMNS": columns})
        assert out.exit_code == 0, out.stderr
        assert max(len(line.rstrip()) for line in out.stdout.splitlines()) <= width
        assert "0.7500" in out.stdout and "▲ +0.2500" in out.stdout and "1234.5" in out.stdout


def test_find_and_run_keep_ids_whole(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    folder = calculator(tmp_path, id="calculator-with-a-long-identifier")
    shutil.move(folder, skills / "calculator-with-a-long-identifier")
    out = run("find", "--skills-dir", skills, "--store", tmp_path / "s.db", cwd=tmp_path, env={"COLUMNS": "100"})
    assert out.exit_code == 0, out.stderr
    assert "calculator-with-a-long-identifier" in out.stdout
    assert max(len(line.rstrip()) for line in out.stdout.splitlines()) <= 100
    ran = run("run", "--skills-dir", skills, "--no-store", "--output-dir", tmp_path / "r", "--min-completion", "0",
              cwd=tmp_path, env={"COLUMNS": "120"})
    assert ran.exit_code == 0, ran.stderr
    selection = ran.stdout.split("selected 1 skill(s)")[1]
    assert "calculator-with-a-long-identifier" in selection


def test_select_prints_a_table_on_a_terminal_and_json_when_piped_or_asked(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.move(calculator(tmp_path), skills / "calc")
    assert run("eval", "--skills", skills, "--store", tmp_path / "s.db", "--output-dir", tmp_path / "r",
               cwd=tmp_path).exit_code == 0
    shown = on_terminal("select", "--from", skills, "--store", tmp_path / "s.db", cwd=tmp_path)
    assert "selected 1 skill(s), by compositeScore" in shown and "calculator" in shown
    assert not shown.lstrip().startswith("{")
    asked = on_terminal("select", "--from", skills, "--store", tmp_path / "s.db", "--json", cwd=tmp_path)
    assert json.loads(asked)["selected"][0]["skillId"] == "calculator"
    piped = run("select", "--from", skills, "--store", tmp_path / "s.db", cwd=tmp_path)
    assert json.loads(piped.stdout)["selected"][0]["skillId"] == "calculator"


def test_run_says_on_stderr_that_nothing_was_selected_and_no_report_written(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.move(calculator(tmp_path), skills / "calc")
    tasks = tasks_file(tmp_path, wrong_tasks(2))
    out = run("run", "--skills-dir", skills, "--tasks", tasks, "--no-store", "--output-dir", tmp_path / "r",
              "--json", cwd=tmp_path)
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["reportFiles"] == []
    assert "no skill met the selection: no report written" in out.stderr


# ---- errors that say what to do ------------------------------------------------------------------------------


def test_a_mistyped_command_gets_did_you_mean(tmp_path: Path) -> None:
    out = run("evaluate", cwd=tmp_path)
    assert out.exit_code == 2
    assert out.stderr.strip() == ("error: No such command 'evaluate'. Did you mean 'eval' or 'validate'? "
                                  "(see 'eval-skills --help')")
    sub = run("report", "conver", cwd=tmp_path)
    assert sub.exit_code == 2 and "Did you mean 'convert'?" in sub.stderr


def test_an_unknown_key_is_named_first_with_the_key_it_meant(tmp_path: Path) -> None:
    folder = calculator(tmp_path)
    manifest = json.loads((folder / "skill.json").read_text())
    manifest["adapter"] = manifest.pop("adapterType")
    (folder / "skill.json").write_text(json.dumps(manifest))
    out = run("eval", "--skills", folder, "--dry-run", "--no-store", cwd=tmp_path)
    assert out.exit_code == 2
    assert out.stderr.strip() == (f"error: {folder / 'skill.json'}: $.adapter: unknown field; did you mean "
                                  "'adapterType'? (+1 more problems)")


def test_a_bad_version_says_what_to_write_not_the_pattern(tmp_path: Path) -> None:
    folder = calculator(tmp_path, version="1 0")
    out = run("eval", "--skills", folder, "--dry-run", "--no-store", cwd=tmp_path)
    assert out.exit_code == 2
    assert "$.version: expected a version like 1.2.0" in out.stderr and "^[" not in out.stderr


def test_eval_on_agent_skills_points_at_fixtures_paired_and_routing(tmp_path: Path) -> None:
    for folder in (AGENT_SKILL, FIXTURE_SKILLS):
        out = run("eval", "--skills", folder, cwd=tmp_path)
        assert out.exit_code == 2 and len(out.stderr.strip().splitlines()) == 1
        assert "no skill.json found" in out.stderr
        for command in ("eval-skills fixtures --skills-dir", "eval-skills paired --skill-path",
                        "eval-skills routing --skill-path"):
            assert command in out.stderr


def test_fixtures_on_one_skill_suggests_its_parent(tmp_path: Path) -> None:
    out = run("fixtures", "--skills-dir", FIXTURE_SKILLS / "b2b-pricing", cwd=tmp_path)
    assert out.exit_code == 2
    assert f"pass its parent, --skills-dir {FIXTURE_SKILLS}, and --skill b2b-pricing" in out.stderr
    assert run("fixtures", "--skills-dir", FIXTURE_SKILLS, "--skill", "b2b-pricing", cwd=tmp_path).exit_code == 0


def test_a_missing_entrypoint_script_stops_before_any_task(tmp_path: Path) -> None:
    folder = calculator(tmp_path, entrypoint="python3 nothere.py")
    config = json.loads((folder / "adapter.config.json").read_text())
    (folder / "adapter.config.json").write_text(json.dumps({**config, "args": ["gone.py"]}))
    out = run("eval", "--skills", folder, "--dry-run", "--no-store", cwd=tmp_path)
    assert out.exit_code == 2 and f"{folder.resolve() / 'adapter.config.json'}: $.args: the script 'gone.py'" \
        in out.stderr
    (folder / "adapter.config.json").unlink()
    out = run("eval", "--skills", folder, "--store", tmp_path / "s.db", "--output-dir", tmp_path / "r",
              cwd=tmp_path)
    assert out.exit_code == 2
    assert out.stderr.strip() == (f"error: {folder.resolve() / 'skill.json'}: $.entrypoint: the script "
                                  f"'nothere.py' it names is not in {folder.resolve()} (check the script's name; "
                                  "it is looked up in the skill's folder)")
    assert not (tmp_path / "r").exists() and not (tmp_path / "s.db").exists()
    (tmp_path / "m").mkdir()
    module = calculator(tmp_path / "m", entrypoint="python3 -m json.tool")  # no script named: not checked
    (module / "adapter.config.json").unlink()
    assert run("eval", "--skills", module, "--dry-run", "--no-store", cwd=tmp_path).exit_code == 0


def test_paired_help_shows_no_empty_range(tmp_path: Path) -> None:
    out = run("paired", "--help", cwd=tmp_path, env={"COLUMNS": "200"})
    assert out.exit_code == 0 and "None]" not in out.stdout and "--min-delta" in out.stdout


# ---- exit codes: one rule ------------------------------------------------------------------------------------


def test_nothing_matched_is_exit_0_for_listings_and_2_for_commands_that_act(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.move(calculator(tmp_path), skills / "calc")
    found = run("find", "--skills-dir", skills, "-q", "zebra", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert found.exit_code == 0 and found.stdout == "" and "no skills match" in found.stderr
    assert json.loads(run("find", "--skills-dir", skills, "-q", "zebra", "--json", "--store", tmp_path / "s.db",
                          cwd=tmp_path).stdout) == {"passed": True, "skills": []}
    ran = run("run", "--skills-dir", skills, "-q", "zebra", "--no-store", cwd=tmp_path)
    assert ran.exit_code == 2 and "no skills match" in ran.stderr
    assert run("eval", "--skills", skills, "--store", tmp_path / "s.db", "--output-dir", tmp_path / "r",
               cwd=tmp_path).exit_code == 0
    unknown = run("history", "--skill", "calculater", "--store", tmp_path / "s.db", cwd=tmp_path)
    assert unknown.exit_code == 2
    assert "no evaluation of a skill 'calculater' in this store (did you mean 'calculator'?" in unknown.stderr
    none_here = run("history", "--skill", "calculator", "--benchmark", "roman", "--store", tmp_path / "s.db",
                    cwd=tmp_path)
    assert none_here.exit_code == 0 and none_here.stdout == "" and "no evaluations of calculator" in none_here.stderr


# ---- the agent_skill template and the description check -------------------------------------------------------


def test_the_agent_skill_template_gives_a_first_paired_run_enough_cases_to_measure(tmp_path: Path) -> None:
    from paired_data import agent_args, judge_args, paired

    assert run("create", "--name", "demo-skill", "--from-template", "agent_skill", "--output-dir", tmp_path / "sk",
               "--description", "Answers demo requests. Use when the user asks for a demo of something.",
               cwd=tmp_path).exit_code == 0
    skill = tmp_path / "sk" / "demo-skill"
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    assert len(evals["evals"]) >= 6 and len({case["prompt"] for case in evals["evals"]}) == len(evals["evals"])
    script = tmp_path / "agent.json"  # an agent that follows the skill's last step when the skill is installed
    script.write_text(json.dumps({"skill": "demo-skill", "answer": "Here is an answer.",
                                  "skilled_answer": "Here is an answer.\n\nChecked with demo-skill"}))
    out = paired("--skill-path", skill, *agent_args(script), *judge_args(), "--no-store", "--json", cwd=tmp_path,
                 script_file=script)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    bench = json.loads((Path(doc["files"][0]) if doc.get("files") else
                        next((tmp_path / "sk" / "demo-skill-workspace").rglob("benchmark.json"))).read_text())
    assert bench["run_summary"]["with_skill"]["pass_rate"]["mean"] == 1.0
    assert bench["run_summary"]["without_skill"]["pass_rate"]["mean"] == 0.0
    assert "too little data" not in out.stdout + out.stderr
    text = paired("--skill-path", skill, *agent_args(script), *judge_args(), "--no-store", cwd=tmp_path,
                  script_file=script)
    assert text.returncode == 0, text.stderr
    delta_row = next(line for line in text.stdout.splitlines() if line.strip("│ ").startswith("delta"))
    assert "+100.0 pp" in delta_row and "+100.0 pp (95% interval" in text.stdout  # one unit: percentage points
    page = tmp_path / "page.html"
    shown = run("view", tmp_path / "sk" / "demo-skill-workspace", "--iteration", "2", "--static", page,
                cwd=tmp_path)
    assert shown.exit_code == 0, shown.stderr
    html = page.read_text()
    found = re.search(r'"tabs":\{"benchmark":("(?:[^"\\]|\\.)*")', html)  # the tab's HTML, in the page's JSON
    assert found is not None
    benchmark = json.loads(found.group(1))
    verdict = json.loads(next((tmp_path / "sk" / "demo-skill-workspace").glob("iteration-2/benchmark.json"))
                         .read_text())["verdict"]
    assert '<p class="verdict" id="verdict">' in benchmark and verdict.split(" (")[0] in benchmark
    assert "<dd>None</dd>" not in benchmark and "<dd>True</dd>" not in benchmark and "<dd>False</dd>" not in benchmark


def test_routing_static_flags_a_placeholder_description(tmp_path: Path) -> None:
    assert run("create", "--name", "demo-skill", "--from-template", "agent_skill", "--output-dir", tmp_path / "sk",
               cwd=tmp_path).exit_code == 0
    out = run("routing", "--skill-path", tmp_path / "sk" / "demo-skill", "--static", cwd=tmp_path)
    assert out.exit_code == 0, out.stderr
    assert "warning: description: still a placeholder ('TODO')" in out.stdout
    written = tmp_path / "sk" / "demo-skill" / "SKILL.md"
    written.write_text(written.read_text().replace("TODO: say what demo-skill does and when to use it",
                                                   "Answers demo requests. Use when a user asks for a demo."))
    assert "placeholder" not in run("routing", "--skill-path", tmp_path / "sk" / "demo-skill", "--static",
                                    cwd=tmp_path).stdout
