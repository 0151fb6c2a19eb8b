"""`eval-skills validate`: one line per problem of a skill folder, exit 1 when one is invalid, 2 for a path that
names no skill; with --strict it agrees with the reference validator skills-ref (from PyPI) on SKILL.md, except
where skills-ref's YAML library refuses valid YAML (flow-style lists)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirun import run

from eval_skills.formats.skill_folder import check_skill_folder

skills_ref = pytest.importorskip("skills_ref.validator", reason="skills-ref is in the test extra")


def skill(root: Path, name: str, frontmatter: str, *, files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n# {name}\n\nDo the thing.\n", encoding="utf-8")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


OK = "description: Does a thing. Use it when asked to."
# frontmatter -> (valid by default, valid with --strict); the folder is named "demo"
CASES = {
    "valid": ("name: demo\n" + OK, True, True),
    "every field": ("name: demo\n" + OK + "\nlicense: MIT\ncompatibility: Needs git\nallowed-tools: Bash Read\n"
                    "metadata:\n  author: me\n  version: '1.0'", True, True),
    "extra key": ("name: demo\n" + OK + "\nargument-hint: <file>", True, False),
    "folder name differs": ("name: other\n" + OK, False, False),
    "uppercase": ("name: Demo\n" + OK, False, False),
    "double hyphen": ("name: de--mo\n" + OK, False, False),
    "no description": ("name: demo", False, False),
    "blank description": ("name: demo\ndescription: ''", False, False),
    "long description": ("name: demo\ndescription: " + "x" * 1025, False, False),
    "long compatibility": ("name: demo\n" + OK + "\ncompatibility: " + "y" * 501, False, False),
    "no name": (OK, False, False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_strict_agrees_with_skills_ref(tmp_path: Path, case: str) -> None:
    frontmatter, valid, strict_valid = CASES[case]
    folder = skill(tmp_path, "demo", frontmatter)
    assert check_skill_folder(folder).valid is valid
    assert check_skill_folder(folder, strict=True).valid is strict_valid
    assert (not skills_ref.validate(folder)) is strict_valid


def test_flow_style_lists_are_valid_yaml_that_skills_ref_refuses(tmp_path: Path) -> None:
    folder = skill(tmp_path, "demo", "name: demo\n" + OK + "\nmetadata: {tags: [a, b]}")
    assert check_skill_folder(folder, strict=True).valid
    assert any("YAML" in problem for problem in skills_ref.validate(folder))


def test_every_problem_is_one_line_and_invalid_exits_1(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    skill(skills, "good", "name: good\n" + OK)
    skill(skills, "hinted", "name: hinted\n" + OK + "\nargument-hint: <x>\ndisable-model-invocation: true")
    skill(skills, "broken", "name: Broken\ndescription: ''", files={
        "evals/evals.json": json.dumps({"evals": [{"id": 1, "prompt": "p", "files": ["evals/nope.txt"]}]}),
        "evals/routing.json": json.dumps([{"query": "q"}]),
        "evals/tasks.json": json.dumps([{"id": "t1", "prompt": "p", "must_include": ["x"]},
                                        {"id": "t2", "prompt": "p"}]),
        "evals/examples/t1.md": "x", "evals/examples/old.md": "y"})
    result = run("validate", skills)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    b = skills / "broken"
    assert lines == [
        f"error: {b}/SKILL.md: frontmatter.name: 'Broken' must be lowercase",
        f"error: {b}/SKILL.md: frontmatter.name: 'Broken' must equal the skill's folder name 'broken'",
        f"error: {b}/SKILL.md: frontmatter.description: required, a non-empty string",
        f"error: {b}/evals/evals.json: $.evals[0].files[0]: fixture file 'evals/nope.txt' not found in {b} (name a "
        "file or a folder of the skill, relative to the folder holding SKILL.md)",
        f"error: {b}/evals/routing.json: $[0].should_trigger: required field is missing",
        f"warning: {b}/evals/tasks.json: task 't2': has no worked example evals/examples/t2.md",
        f"warning: {b}/evals/examples/old.md: is the example of no task in evals/tasks.json",
        f"warning: {skills}/hinted/SKILL.md: frontmatter: fields outside the Agent Skills specification: "
        "argument-hint, disable-model-invocation",
        "FAIL: 1 of 3 skill folders invalid (3 warnings)"]
    strict = run("validate", "--strict", skills / "hinted", skills / "good" / "SKILL.md")
    assert strict.exit_code == 1
    assert strict.stdout.splitlines()[0].startswith(f"error: {skills}/hinted/SKILL.md: frontmatter: fields outside")
    assert run("validate", skills / "good", skills / "hinted").exit_code == 0
    data = json.loads(run("validate", "--json", skills / "broken").stdout)
    assert data["ok"] is False and data["skills"][0]["name"] == "Broken"
    assert data["skills"][0]["problems"][0] == {"level": "error", "file": f"{b}/SKILL.md",
                                                "field": "frontmatter.name", "message": "'Broken' must be lowercase"}


def test_skills_are_found_in_hidden_folders_and_a_path_without_any_exits_2(tmp_path: Path) -> None:
    skill(tmp_path / "project" / ".claude" / "skills", "demo", "name: demo\n" + OK)
    (tmp_path / "project" / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "project" / "node_modules" / "x" / "SKILL.md").write_text("not a skill")
    ok = run("validate", tmp_path / "project")
    assert ok.exit_code == 0 and ok.stdout.strip() == "OK: 1 skill folder valid (0 warnings)"
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "empty", tmp_path / "missing"):
        result = run("validate", path)
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "no SKILL.md in this folder or below it" in run("validate", tmp_path / "empty").stderr
    assert run("validate").exit_code == 2  # no path


def test_fixtures_refuses_what_paired_and_routing_refuse(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    skill(skills, "demo", "name: demo-skill\n" + OK, files={
        "evals/tasks.json": json.dumps([{"id": "t", "prompt": "p", "must_include": ["thing"]}]),
        "evals/examples/t.md": "thing"})
    result = run("fixtures", "--skills-dir", skills)
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("SKILL.md: frontmatter.name: 'demo-skill' must equal the skill's folder "
                                          "name 'demo'")
    paired = run("paired", "--skill-path", skills / "demo", "--agent-cmd", "true")
    assert paired.exit_code == 2 and "must equal the skill's folder name 'demo'" in paired.stderr
