"""Fixture checks of instruction skills: tasks.json loading, scoring maths, validation problems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval_skills.errors import InputError
from eval_skills.fixture_checks.check import check_fixtures, default_min_score
from eval_skills.formats.fixtures import (
    InstructionSkill,
    discover_skills,
    grounding_sources,
    load_tasks,
    unsafe_id_reason,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "fixtures"


def make_skill(skills_dir: Path, name: str, tasks: list[dict[str, Any]] | dict[str, Any] | None, *,
               skill_md: str | None = None, examples: dict[str, str] | None = None,
               files: dict[str, str | bytes] | None = None) -> Path:
    """A skill folder. By default SKILL.md holds every must_include (grounded) and every task has a
    passing worked example."""
    root = skills_dir / name
    (root / "evals" / "examples").mkdir(parents=True)
    task_list = tasks["tasks"] if isinstance(tasks, dict) else (tasks or [])
    if skill_md is None:
        words = [w for t in task_list for w in t.get("must_include", [])]
        skill_md = f"---\nname: {name}\ndescription: test\n---\n" + "\n".join(words)
    elif not skill_md.startswith("---"):  # a body alone: the frontmatter every command requires is added
        skill_md = f"---\nname: {name}\ndescription: test\n---\n" + skill_md
    (root / "SKILL.md").write_text(skill_md, encoding="utf-8")
    if tasks is not None:
        (root / "evals" / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    if examples is None:
        examples = {t["id"]: " ".join(t.get("must_include", [])) for t in task_list}
    for task_id, text in examples.items():
        (root / "evals" / "examples" / f"{task_id}.md").write_text(text, encoding="utf-8")
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def write_answer(answers: Path, skill: str, task: str, text: str | bytes) -> None:
    path = answers / skill / f"{task}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def task(task_id: str, include: list[str] | None = None, exclude: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": task_id, "prompt": f"do {task_id}"}
    if include is not None:
        out["must_include"] = include
    if exclude is not None:
        out["must_not_include"] = exclude
    return out


# -- scoring ---------------------------------------------------------------------------------------


def test_scoring_maths_per_task_skill_and_overall(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "alpha", [task("t1", ["A", "B"]), task("t2", ["C", "D", "E"], ["X"]),
                                 task("t3", ["F"])])
    make_skill(skills, "beta", [task("u1", ["G"], ["Y"])])
    write_answer(answers, "alpha", "t1", "A and B")  # 2/2
    write_answer(answers, "alpha", "t2", "C only, and X")  # C passes, D E fail, X present: 1/4
    # t3 missing: 0
    write_answer(answers, "beta", "u1", "G")  # 2/2
    report = check_fixtures(skills, answers_dir=answers)
    alpha, beta = report.skills
    assert [t.score for t in alpha.tasks] == [1.0, 0.25, 0.0]
    assert [t.passed for t in alpha.tasks] == [True, False, False]
    assert alpha.score == pytest.approx((1 + 0.25 + 0) / 3)
    assert (alpha.passed, alpha.total) == (1, 3)
    assert beta.score == 1.0
    # overall is the mean over tasks, not over skills
    assert report.overall.score == pytest.approx((1 + 0.25 + 0 + 1) / 4)
    assert (report.overall.passed, report.overall.total) == (2, 4)
    checks = alpha.tasks[1].checks
    assert [(c.kind, c.value, c.passed) for c in checks] == [
        ("must_include", "C", True), ("must_include", "D", False), ("must_include", "E", False),
        ("must_not_include", "X", False)]
    assert report.min_score == 0.0 and report.ok  # report only with answers


def test_matching_is_a_case_sensitive_substring(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("t", ["PaymentIntent"], ["charge"])])
    write_answer(answers, "s", "t", "paymentintent; Charge")
    result = check_fixtures(skills, answers_dir=answers).skills[0].tasks[0]
    assert [c.passed for c in result.checks] == [False, True]


def test_missing_answer_scores_zero_and_is_listed(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("present", ["a"]), task("absent", ["a", "b"])])
    write_answer(answers, "s", "present", "a")
    report = check_fixtures(skills, answers_dir=answers, min_score=0.5)
    absent = report.skills[0].tasks[1]
    assert (absent.score, absent.passed, absent.missing) == (0.0, False, True)
    assert absent.file.endswith("absent.md")
    assert all(not c.passed and "no file" in c.evidence for c in absent.checks)
    failures = list(report.failures())
    assert [(f.task, f.check) for f in failures] == [("absent", None)]
    assert report.overall.score == 0.5 and report.ok


def test_answers_folder_without_the_skill_folder_is_all_missing(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("t", ["a"])])
    answers.mkdir()
    report = check_fixtures(skills, answers_dir=answers)
    assert report.skills[0].tasks[0].missing and report.overall.score == 0.0


def test_non_utf8_answer_is_an_input_error_naming_the_file(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("t", ["a"])])
    write_answer(answers, "s", "t", b"caf\xe9 latin-1")
    with pytest.raises(InputError, match="not valid UTF-8") as info:
        check_fixtures(skills, answers_dir=answers)
    assert info.value.file == str(answers / "s" / "t.md")


def test_utf8_bom_and_non_ascii_answers_are_read(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("t", ["Größe"])])
    write_answer(answers, "s", "t", "\ufeffGröße: 3".encode())
    assert check_fixtures(skills, answers_dir=answers).overall.score == 1.0


def test_min_score_defaults_and_bounds(tmp_path: Path) -> None:
    assert default_min_score(with_answers=False) == 1.0
    assert default_min_score(with_answers=True) == 0.0
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["a"])])
    assert check_fixtures(skills).min_score == 1.0
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InputError, match="from 0 to 1"):
            check_fixtures(skills, min_score=bad)


def test_threshold_is_inclusive_despite_float_rounding(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task(f"t{i}", ["ok"]) for i in range(10)])
    for i in range(7):
        write_answer(answers, "s", f"t{i}", "ok")
    assert check_fixtures(skills, answers_dir=answers, min_score=0.7).ok
    assert not check_fixtures(skills, answers_dir=answers, min_score=0.71).ok


# -- skill selection and discovery -----------------------------------------------------------------


def test_unknown_skill_is_an_input_error_naming_it(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "known", [task("t", ["a"])])
    with pytest.raises(InputError, match="unknown skill 'nope'") as info:
        check_fixtures(skills, skills=["known", "nope"])
    assert info.value.hint == "known skills: known"


def test_skill_selection_keeps_order_and_deduplicates(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    for name in ("a", "b", "c"):
        make_skill(skills, name, [task("t", ["x"])])
    report = check_fixtures(skills, skills=["c", "a", "c"])
    assert [s.skill for s in report.skills] == ["c", "a"]


def test_discovery_needs_skill_md_and_skips_hidden_folders(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "real", [task("t", ["x"])])
    (skills / "notes").mkdir()
    make_skill(skills, ".hidden", [task("t", ["x"])])
    assert [s.name for s in discover_skills(skills)] == ["real"]


def test_missing_or_empty_skills_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="skills folder not found"):
        check_fixtures(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no skills found"):
        check_fixtures(tmp_path / "empty")


def test_missing_answers_folder_is_an_input_error(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["a"])])
    with pytest.raises(InputError, match="answers folder not found"):
        check_fixtures(skills, answers_dir=tmp_path / "typo")


# -- tasks.json ------------------------------------------------------------------------------------


def test_tasks_json_may_be_an_object_with_tasks(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", {"tasks": [task("t", ["a"], ["b"])]})
    report = check_fixtures(skills)
    assert report.ok and report.skills[0].tasks[0].id == "t"


@pytest.mark.parametrize("bad_id", ["../escape", "a/b", "a\\b", ".hidden", "a..b", "", "  "])
def test_unsafe_task_id_is_an_input_error_naming_the_task(tmp_path: Path, bad_id: str) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("fine", ["a"]), task(bad_id, ["a"])], examples={})
    with pytest.raises(InputError) as info:
        check_fixtures(skills)
    assert repr(bad_id) in info.value.problem
    assert info.value.field == "$[1].id"
    assert info.value.file == str(skills / "s" / "evals" / "tasks.json")


def test_safe_ids() -> None:
    for ok in ("create-payment-intent", "t_1", "v1.2", "Ünïcode"):
        assert unsafe_id_reason(ok) is None


def test_duplicate_task_id_is_an_input_error(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", {"tasks": [task("t", ["a"]), task("u", ["a"]), task("t", ["b"])]})
    with pytest.raises(InputError, match="'t' is used twice \\(tasks 0 and 2\\)") as info:
        check_fixtures(skills)
    assert info.value.field == "$.tasks[2].id"


def test_bad_task_fields_name_the_field_and_the_task(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": "t", "prompt": "p", "must_include": ["a", 3]}]), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_tasks(path)
    assert info.value.field == "$[0].must_include[1]" and "(task 't')" in info.value.problem
    path.write_text(json.dumps([{"id": "t", "prompt": "p", "must_includ": ["a"]}]), encoding="utf-8")
    with pytest.raises(InputError, match="unknown field"):
        load_tasks(path)
    path.write_text(json.dumps([{"id": "t", "prompt": "p", "must_include": [""]}]), encoding="utf-8")
    with pytest.raises(InputError, match="at least 1 character"):
        load_tasks(path)
    path.write_text(json.dumps({"items": []}), encoding="utf-8")
    with pytest.raises(InputError, match='"tasks" array'):
        load_tasks(path)
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON"):
        load_tasks(path)
    assert load_tasks(tmp_path / "absent.json") is None


# -- validation problems (worked examples mode) ----------------------------------------------------


def test_worked_examples_that_pass_everything_are_ok(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["alpha", "beta"], ["gamma"])])
    report = check_fixtures(skills)
    assert report.mode == "examples" and report.ok and report.problems == []
    assert report.overall.score == 1.0


def test_failing_worked_example_fails_at_the_default_threshold(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["alpha"], ["gamma"]), task("u", ["beta"])],
               examples={"t": "alpha gamma", "u": "beta"})
    report = check_fixtures(skills)
    assert not report.ok and report.overall.score == 0.75
    [failure] = list(report.failures())
    assert (failure.skill, failure.task) == ("s", "t")
    assert failure.check is not None
    assert (failure.check.kind, failure.check.value) == ("must_not_include", "gamma")
    assert check_fixtures(skills, min_score=0.7).ok  # the threshold can be lowered


def test_missing_example_is_a_problem_whatever_the_score(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["a"]), task("u", ["b"])], examples={"t": "a"})
    report = check_fixtures(skills, min_score=0.0)
    assert report.score_ok and not report.ok
    [problem] = report.problems
    assert (problem.skill, problem.task, problem.kind) == ("s", "u", "missing_example")
    assert report.skills[0].tasks[1].missing


def test_task_with_no_checks_is_reported_and_not_scored(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("empty"), task("lists", [], []), task("real", ["a"])])
    report = check_fixtures(skills)
    assert [(p.task, p.kind) for p in report.problems] == [("empty", "no_checks"), ("lists", "no_checks")]
    tasks = report.skills[0].tasks
    assert [t.score for t in tasks] == [None, None, 1.0]
    assert report.overall.total == 1 and report.overall.score == 1.0
    assert not report.ok  # a problem fails the validation run


def test_no_checks_in_answers_mode_is_listed_but_does_not_gate(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("empty"), task("real", ["a"])])
    write_answer(answers, "s", "real", "a")
    report = check_fixtures(skills, answers_dir=answers, min_score=1.0)
    assert [p.kind for p in report.problems] == ["no_checks"] and report.ok


def test_nothing_scored_is_a_failure(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", None)
    answers.mkdir()
    report = check_fixtures(skills, answers_dir=answers)
    assert report.overall.total == 0 and not report.ok
    assert [p.kind for p in report.problems] == ["no_tasks"]
    assert report.skills[0].score is None


def test_ungrounded_must_include_is_reported(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["grounded", "invented_api"], ["not_checked_for_grounding"])],
               skill_md="---\nname: s\ndescription: test\n---\nUse grounded.")
    report = check_fixtures(skills)
    assert [(p.task, p.kind, p.value) for p in report.problems] == [("t", "not_grounded", "invented_api")]
    assert report.overall.score == 1.0 and not report.ok


def test_grounding_is_case_sensitive(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    make_skill(skills, "s", [task("t", ["PaymentIntent"])], skill_md="use paymentintent")
    assert [p.value for p in check_fixtures(skills).problems] == ["PaymentIntent"]


def test_grounding_sources_skill_rules_and_references(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    words = ["in_skill_md", "in_rules_dir", "in_nested_rule", "in_reference", "in_parent_md", "in_parent_mdc"]
    make_skill(skills, "s", [task("t", words)], skill_md="in_skill_md", files={
        "rules/main.md": "in_rules_dir",
        "rules/deeper/extra.txt": "in_nested_rule",
        "references/api/notes.md": "in_reference",
        "references/logo.png": b"\x89PNG\r\n\x1a\n\x00\xff in_binary",
        "references/.cache": "in_hidden",
    })
    parent_rules = tmp_path / "rules"
    parent_rules.mkdir()
    (parent_rules / "s.md").write_text("in_parent_md", encoding="utf-8")
    (parent_rules / "s.mdc").write_text("---\nglobs: []\n---\nin_parent_mdc", encoding="utf-8")
    (parent_rules / "other.md").write_text("in_other_skills_rule", encoding="utf-8")
    report = check_fixtures(skills)
    assert report.problems == [] and report.ok
    names = [p.path.name for p in grounding_sources(InstructionSkill("s", skills / "s"), skills)]
    assert names == ["SKILL.md", "main.md", "extra.txt", "s.md", "s.mdc", "notes.md"]


@pytest.mark.parametrize("where", ["rules/other.md", "binary", "hidden"])
def test_things_that_are_not_grounding_sources(tmp_path: Path, where: str) -> None:
    skills = tmp_path / "skills"
    cases: dict[str, dict[str, str | bytes]] = {
        "binary": {"references/blob.bin": b"\xff\xfe word"},
        "hidden": {"references/.notes.md": "word"},
        "rules/other.md": {},
    }
    files = cases[where]
    make_skill(skills, "s", [task("t", ["word"])], skill_md="nothing", files=files)
    if where == "rules/other.md":
        (tmp_path / "rules").mkdir()
        (tmp_path / "rules" / "other.md").write_text("word", encoding="utf-8")
    assert [p.kind for p in check_fixtures(skills).problems] == ["not_grounded"]


def test_grounding_is_not_checked_when_scoring_answers(tmp_path: Path) -> None:
    skills, answers = tmp_path / "skills", tmp_path / "answers"
    make_skill(skills, "s", [task("t", ["invented"])], skill_md="nothing", examples={})
    write_answer(answers, "s", "t", "invented")
    report = check_fixtures(skills, answers_dir=answers, min_score=1.0)
    assert report.problems == [] and report.ok


# -- the shipped example ---------------------------------------------------------------------------


def test_shipped_example_examples_pass_validation() -> None:
    report = check_fixtures(EXAMPLES / "skills")
    assert report.ok and report.problems == [] and report.overall.total == 6


def test_shipped_example_answers_score() -> None:
    report = check_fixtures(EXAMPLES / "skills", answers_dir=EXAMPLES / "answers")
    scores = {s.skill: s.score for s in report.skills}
    assert scores["stripe-payments"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert scores["b2b-pricing"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    missing = [(s.skill, t.id) for s in report.skills for t in s.tasks if t.missing]
    assert missing == [("b2b-pricing", "net-terms")]
    assert report.overall.score == pytest.approx((1 + 0.5 + 1 + 1 + 2 / 3 + 0) / 6)
