"""Loading skill.json, adapter.config.json, benchmarks and task files: errors name file and field."""

import json
from pathlib import Path

import pytest

from eval_skills.errors import InputError, UnknownBenchmarkError
from eval_skills.formats.benchmark import builtin_benchmark_ids, load_tasks_file, resolve_benchmark
from eval_skills.formats.skill import load_skill, load_skills

GOOD = {"id": "calc", "name": "Calc", "version": "1.2.3", "adapterType": "subprocess",
        "entrypoint": "python3 skill.py"}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def error_line(fn, *args) -> str:
    with pytest.raises(InputError) as info:
        fn(*args)
    return info.value.line()


def test_skill_from_file_or_folder_keeps_its_folder(tmp_path):
    f = write(tmp_path / "calc" / "skill.json", GOOD)
    assert load_skill(f).root == (tmp_path / "calc").resolve()
    assert load_skill(tmp_path / "calc").root == (tmp_path / "calc").resolve()


def test_malformed_skill_json_names_file_and_line(tmp_path):
    f = write(tmp_path / "s" / "skill.json", '{"id": "x",')
    line = error_line(load_skill, f)
    assert str(f) in line and "invalid JSON at line 1" in line


@pytest.mark.parametrize("field,value,path", [
    ("id", "Bad Id", "$.id"),
    ("version", "1.0 beta", "$.version"),
    ("adapterType", "grpc", "$.adapterType"),
    ("tags", "math", "$.tags"),
    ("entrypoint", "   ", "$.entrypoint"),
])
def test_wrong_field_in_skill_json_names_the_field(tmp_path, field, value, path):
    f = write(tmp_path / "s" / "skill.json", {**GOOD, field: value})
    line = error_line(load_skill, f)
    assert line.startswith(f"{f}: {path}: ")


def test_missing_required_field(tmp_path):
    data = dict(GOOD)
    del data["entrypoint"]
    line = error_line(load_skill, write(tmp_path / "s" / "skill.json", data))
    assert "$.entrypoint: required field is missing" in line


def test_adapter_config_is_read_and_unknown_keys_refused(tmp_path):
    write(tmp_path / "s" / "skill.json", GOOD)
    write(tmp_path / "s" / "adapter.config.json", {"persistent": True, "timeoutMs": 500, "env": {"A": "1"}})
    skill = load_skill(tmp_path / "s")
    assert skill.adapter.persistent and skill.adapter.timeoutMs == 500 and skill.adapter.env == {"A": "1"}
    write(tmp_path / "s" / "adapter.config.json", {"persistant": True})
    line = error_line(load_skill, tmp_path / "s")
    assert "adapter.config.json: $.persistant: unknown field" in line


def test_folder_is_searched_and_duplicate_ids_refused(tmp_path):
    write(tmp_path / "skills" / "a" / "skill.json", {**GOOD, "id": "a"})
    write(tmp_path / "skills" / "b" / "skill.json", {**GOOD, "id": "b"})
    assert [s.id for s in load_skills([tmp_path / "skills"])] == ["a", "b"]
    write(tmp_path / "skills" / "c" / "skill.json", {**GOOD, "id": "a"})
    assert "skill id 'a' is also used" in error_line(load_skills, [tmp_path / "skills"])
    assert "no such file or folder" in error_line(load_skills, [tmp_path / "nope"])


def test_builtin_benchmarks_are_found_by_id_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert {"coding-easy", "skill-quality", "web-search-basic"} <= set(builtin_benchmark_ids())
    coding = resolve_benchmark("coding-easy")
    assert len(coding.tasks) == 20
    assert {t.expectedOutput.value for t in coding.tasks} >= {"120", "1", "3628800", "25.0", "", "true", "false"}
    assert len(resolve_benchmark("skill-quality").tasks) == 5
    web = resolve_benchmark("web-search-basic")
    assert len(web.tasks) == 8 and sum(t.evaluator.type == "json_schema" for t in web.tasks) == 1


def test_unknown_benchmark_lists_the_builtins(tmp_path):
    with pytest.raises(UnknownBenchmarkError) as info:
        resolve_benchmark("nope", [tmp_path])
    assert "coding-easy" in info.value.line()


def test_benchmarks_dir_is_searched_by_id(tmp_path):
    write(tmp_path / "mine.json", {"id": "mine", "tasks": [{"id": "a"}]})
    assert resolve_benchmark("mine", [tmp_path]).id == "mine"


def test_benchmark_field_errors(tmp_path):
    f = write(tmp_path / "b.json", {"id": "b", "tasks": [{"id": "a"}, {"id": "b", "timeoutMs": "soon"}]})
    assert f"{f}: $.tasks[1].timeoutMs:" in error_line(resolve_benchmark, str(f))
    f = write(tmp_path / "c.json", {"id": "c", "tasks": []})
    assert "no tasks" in error_line(resolve_benchmark, str(f))
    f = write(tmp_path / "d.json", {"id": "d", "tasks": [{"id": "a"}, {"id": "a"}]})
    assert "appears twice" in error_line(resolve_benchmark, str(f))


def test_tasks_file_accepts_array_or_benchmark(tmp_path):
    arr = write(tmp_path / "t.json", [{"id": "a", "inputData": {"q": 1}}])
    assert load_tasks_file(arr).id == "custom"
    obj = write(tmp_path / "u.json", {"id": "named", "tasks": [{"id": "a"}]})
    assert load_tasks_file(obj).id == "custom"
    bad = write(tmp_path / "v.json", [{"id": "a"}, {"description": "no id"}])
    assert f"{bad}: $[1].id: required field is missing" in error_line(load_tasks_file, bad)


def test_a_field_path_quotes_keys_that_are_not_plain_so_the_error_stays_one_line():
    from eval_skills.formats._load import json_path

    assert json_path(("tasks", 3, "id")) == "$.tasks[3].id"
    assert json_path(("input-data", "größe")) == "$.input-data.größe"
    assert json_path(("\n",)) == '$["\\n"]'
    assert json_path(("a b", 0, 'q"x', "x.y")) == '$["a b"][0]["q\\"x"]["x.y"]'
    assert json_path(("\u2028",)) == '$["\\u2028"]'
