"""SKILL.md frontmatter, evals.json and routing.json: the Agent Skills rules, with errors naming file and field."""

import json
from pathlib import Path

import pytest

from eval_skills.errors import InputError
from eval_skills.formats.agentskills import (
    frontmatter_problems,
    load_evals,
    load_routing,
    load_skill_md,
    skill_prompt_block,
)
from eval_skills.formats.workspace import next_number, run_id


def skill(tmp_path: Path, name: str, frontmatter: str, body: str = "Do the thing.") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n{body}\n", encoding="utf-8")
    return folder


def test_valid_skill_with_flow_list_and_claude_fields(tmp_path):
    folder = skill(tmp_path, "pdf-tools", "name: pdf-tools\ndescription: Reads PDFs.\n"
                   "allowed-tools: [Read, Bash]\ndisable-model-invocation: false")
    doc = load_skill_md(folder)
    assert (doc.name, doc.description, doc.body) == ("pdf-tools", "Reads PDFs.", "Do the thing.")
    assert doc.frontmatter["allowed-tools"] == ["Read", "Bash"]
    assert doc.warnings == ["fields outside the Agent Skills specification: disable-model-invocation"]


@pytest.mark.parametrize(("name", "problem"), [
    ("PDF", "must be lowercase"),
    ("-pdf", "hyphen"),
    ("pd--f", "hyphen"),
    ("pdf_tools", "only letters, digits and hyphens"),
    ("x" * 65, "at most 64"),
])
def test_bad_names(tmp_path, name, problem):
    errors, _ = frontmatter_problems({"name": name, "description": "d"}, None)
    assert any(problem in e for e in errors), errors


def test_name_must_equal_folder_and_error_names_the_field(tmp_path):
    folder = skill(tmp_path, "folder-name", "name: other-name\ndescription: d")
    with pytest.raises(InputError) as info:
        load_skill_md(folder)
    assert info.value.field == "frontmatter.name" and "folder name 'folder-name'" in info.value.line()
    assert str(folder / "SKILL.md") in info.value.line()


def test_missing_description_and_no_frontmatter(tmp_path):
    with pytest.raises(InputError, match="description"):
        load_skill_md(skill(tmp_path, "a", "name: a"))
    plain = tmp_path / "b"
    plain.mkdir()
    (plain / "SKILL.md").write_text("# no frontmatter\n")
    with pytest.raises(InputError, match="frontmatter"):
        load_skill_md(plain)


def test_prompt_block_escapes_and_is_empty_without_skills(tmp_path):
    doc = load_skill_md(skill(tmp_path, "a", "name: a\ndescription: 'Use for <b> & c'"))
    block = skill_prompt_block([doc])
    assert "<name>a</name>" in block and "Use for &lt;b&gt; &amp; c" in block
    assert skill_prompt_block([]) == ""


def test_evals_accepts_expectations_and_checks_files(tmp_path):
    folder = skill(tmp_path, "s", "name: s\ndescription: d")
    (folder / "evals" / "files").mkdir(parents=True)
    (folder / "evals" / "files" / "in.txt").write_text("x")
    path = folder / "evals" / "evals.json"
    path.write_text(json.dumps({"skill_name": "s", "evals": [
        {"id": 1, "prompt": "p", "files": ["evals/files/in.txt"], "expectations": ["a", "b"]},
        {"id": "two", "prompt": "q", "assertions": ["c"]}]}))
    evals = load_evals(path, folder)
    assert [c.assertions for c in evals.evals] == [["a", "b"], ["c"]]
    path.write_text(json.dumps({"evals": [{"id": 1, "prompt": "p", "files": ["../outside.txt"]}]}))
    with pytest.raises(InputError) as info:
        load_evals(path, folder)
    assert info.value.field == "$.evals[0].files[0]" and "leaves the skill folder" in info.value.line()
    path.write_text(json.dumps({"evals": []}))
    with pytest.raises(InputError, match="no cases"):
        load_evals(path, folder)
    path.write_text(json.dumps({"evals": [{"id": 1, "prompt": "p"}, {"id": "1", "prompt": "q"}]}))
    with pytest.raises(InputError, match="appears twice"):
        load_evals(path, folder)


def test_routing_requires_should_trigger(tmp_path):
    path = tmp_path / "routing.json"
    path.write_text(json.dumps([{"query": "make a pdf", "should_trigger": True, "invocation_type": "explicit"},
                                {"query": "weather?", "should_trigger": False}]))
    assert [q.should_trigger for q in load_routing(path)] == [True, False]
    path.write_text(json.dumps([{"query": "make a pdf"}]))
    with pytest.raises(InputError) as info:
        load_routing(path)
    assert info.value.field == "$[0].should_trigger"
    path.write_text("[]")
    with pytest.raises(InputError, match="no queries"):
        load_routing(path)


def test_layout_helpers(tmp_path):
    assert run_id("3", "with_skill", 1) == "eval-3-with_skill-run-1"
    assert next_number(tmp_path, "iteration") == 1
    (tmp_path / "iteration-1").mkdir()
    (tmp_path / "iteration-7").mkdir()
    assert next_number(tmp_path, "iteration") == 8
