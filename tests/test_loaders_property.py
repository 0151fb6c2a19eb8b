"""Property tests: any bytes into any loader give a model or an InputError naming the file, never another
exception; any bytes from a skill give a reply, a log line or a protocol error, never another exception."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from eval_skills.adapters.subprocess import _as_reply
from eval_skills.config import load_config
from eval_skills.errors import InputError, SkillProtocolError
from eval_skills.formats._load import load_model
from eval_skills.formats.agentskills import load_evals, load_routing, load_skill_md
from eval_skills.formats.benchmark import load_benchmark_file, load_tasks_file
from eval_skills.formats.fixtures import load_tasks, read_answer
from eval_skills.formats.skill import load_skill
from eval_skills.formats.untrusted import MAX_DEPTH, NotJSON, loads_untrusted
from eval_skills.formats.workspace import Feedback, Grading, Timing
from eval_skills.procs import read_line
from eval_skills.reports import load_report_file

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60"))  # more for a longer search: PROPERTY_EXAMPLES=1000
PROFILE = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20)

# Near-misses of each file's shape make the models' own checks run, not only the JSON parser.
skill_like = st.fixed_dictionaries({}, optional={
    "id": st.text(max_size=12) | st.integers(), "name": st.text(max_size=8), "version": st.sampled_from(
        ["1.0.0", "1", "x"]), "adapterType": st.sampled_from(["subprocess", "http", "other"]),
    "entrypoint": st.text(max_size=12), "inputSchema": json_values, "metadata": json_values})
task_like = st.fixed_dictionaries({"id": st.text(max_size=8)}, optional={
    "inputData": json_values, "expectedOutput": st.dictionaries(st.sampled_from(
        ["type", "value", "keywords", "schema", "pattern", "customScorerPath", "flags"]), json_values, max_size=3),
    "evaluator": st.dictionaries(st.sampled_from(["type", "caseSensitive", "flags", "passThreshold"]), json_values,
                                 max_size=3), "timeoutMs": json_values})
benchmark_like = st.fixed_dictionaries({"tasks": st.lists(task_like, max_size=3)}, optional={
    "id": st.text(max_size=8), "maxLatencyMs": json_values})


def _deep(depth: int) -> bytes:
    return b'{"tasks":' + b"[" * depth + b"]" * depth + b"}"


def documents(shaped: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[bytes]:
    options = [
        st.binary(max_size=200),
        st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.integers(MAX_DEPTH - 2, 3000).map(_deep),
        st.sampled_from([b"\xef\xbb\xbf{}", b"NaN", b'{"id": "\\ud800"}', b"[" * 5000, b"1" * 5000, b"",
                         b'{"tasks": [{"id": "a", "timeoutMs": Infinity}]}']),
    ]
    if shaped is not None:
        options.append(shaped.map(lambda v: json.dumps(v).encode()))
        options.append(shaped.map(lambda v: b"\xef\xbb\xbf" + json.dumps(v).encode()))
    return st.one_of(*options)


def check_loader(data: bytes, name: str, load: Callable[[Path], Any], folder_name: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / folder_name if folder_name else root
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_bytes(data)
        try:
            load(path)
        except InputError as exc:
            assert exc.file is not None and (str(path) in exc.file or str(folder) in exc.file), exc.line()
            assert "\n" not in exc.line()


@PROFILE
@given(documents(skill_like))
def test_skill_json(data: bytes) -> None:
    check_loader(data, "skill.json", load_skill)


@PROFILE
@given(documents(skill_like))
def test_a_skill_file_named_otherwise(data: bytes) -> None:
    check_loader(data, "calculator.json", load_skill)


@PROFILE
@given(documents(st.dictionaries(st.sampled_from(["persistent", "timeoutMs", "start", "env", "command"]),
                                 json_values)))
def test_adapter_config_json(data: bytes) -> None:
    def load(path: Path) -> Any:
        (path.parent / "skill.json").write_text(json.dumps({
            "id": "s", "name": "S", "version": "1.0.0", "adapterType": "subprocess", "entrypoint": "x"}))
        return load_skill(path.parent)

    check_loader(data, "adapter.config.json", load)


@PROFILE
@given(documents(benchmark_like))
def test_benchmark_json(data: bytes) -> None:
    check_loader(data, "benchmark.json", load_benchmark_file)


@PROFILE
@given(documents(st.lists(task_like, max_size=3) | benchmark_like))
def test_task_files(data: bytes) -> None:
    check_loader(data, "tasks.json", load_tasks_file)


@PROFILE
@given(documents(st.dictionaries(st.sampled_from(["runs", "format", "concurrency", "llm"]), json_values)))
def test_config_yaml(data: bytes) -> None:
    check_loader(data, "config.yaml", lambda path: load_config(path, cwd=path.parent))


@PROFILE
@given(documents(st.lists(st.fixed_dictionaries({"skillId": json_values, "taskResults": json_values}), max_size=2)))
def test_report_files(data: bytes) -> None:
    check_loader(data, "eval-result.json", load_report_file)


@PROFILE
@given(documents(st.lists(st.fixed_dictionaries({"id": st.text(max_size=8)}, optional={
    "prompt": json_values, "must_include": json_values}), max_size=3)))
def test_fixture_tasks_json(data: bytes) -> None:
    check_loader(data, "tasks.json", load_tasks)


@PROFILE
@given(documents())
def test_answers(data: bytes) -> None:
    check_loader(data, "answer.md", read_answer)


@PROFILE
@given(documents().map(lambda body: b"---\nname: s\ndescription: d\n" + body[:100] + b"\n---\nbody\n")
       | documents())
def test_skill_md(data: bytes) -> None:
    check_loader(data, "SKILL.md", lambda path: load_skill_md(path.parent), folder_name="s")


paths = st.text(max_size=12) | st.sampled_from(["a\x00b", "../x", "/etc/passwd", ".", "", "a/../../b"])


@PROFILE
@given(documents(st.fixed_dictionaries({"skill_name": json_values, "evals": st.lists(st.fixed_dictionaries(
    {"id": json_values, "prompt": json_values}, optional={"files": st.lists(paths, max_size=2)}), max_size=2)})))
@example(b'{"skill_name": "s", "evals": [{"id": "a", "prompt": "p", "files": ["a\\u0000b"]}]}')
def test_evals_json(data: bytes) -> None:
    check_loader(data, "evals.json", lambda path: load_evals(path, path.parent))


@PROFILE
@given(documents(st.lists(st.fixed_dictionaries({"query": json_values, "should_trigger": json_values}), max_size=2)))
def test_routing_json(data: bytes) -> None:
    check_loader(data, "routing.json", load_routing)


@PROFILE
@given(documents(json_values), st.sampled_from([Timing, Grading, Feedback]))
def test_workspace_files(data: bytes, model: type) -> None:
    check_loader(data, "file.json", lambda path: load_model(model, path))


# -- what a skill sends --------------------------------------------------------------------------------------

reply_like = st.fixed_dictionaries({"jsonrpc": st.just("2.0")}, optional={
    "id": json_values, "result": json_values, "error": json_values, "usage": json_values})


def skill_output() -> st.SearchStrategy[bytes]:
    line = st.one_of(st.binary(max_size=80), reply_like.map(lambda v: json.dumps(v).encode()),
                     st.integers(MAX_DEPTH - 2, 2000).map(
                         lambda d: b'{"id": 1, "result": ' + b"[" * d + b"]" * d + b"}"),
                     st.sampled_from([b'{"id": 1, "result": NaN}', b'{"id": 1, "result": "\\udc00"}', b"{" * 50000]))
    return st.lists(line, max_size=6).map(lambda lines: b"\n".join(lines))


@PROFILE
@given(skill_output())
def test_the_json_rpc_line_reader(data: bytes) -> None:
    async def read_all() -> list[Any]:
        reader = asyncio.StreamReader(limit=64)
        reader.feed_data(data)
        reader.feed_eof()
        seen: list[Any] = []
        while True:
            try:
                line = await read_line(reader, 4096)
            except SkillProtocolError as exc:  # a line too long: the program is stopped
                seen.append(exc)
                return seen
            if not line:
                return seen
            try:
                reply = _as_reply(line)
            except SkillProtocolError as exc:  # JSON we will not take: its task's protocol error
                seen.append(exc)
                continue
            assert reply is None or (isinstance(reply, dict) and ("result" in reply or "error" in reply))
            if reply is not None:
                json.dumps(reply, ensure_ascii=False, allow_nan=False).encode("utf-8")  # storable as it is
            seen.append(reply)

    asyncio.run(read_all())


@PROFILE
@given(st.binary(max_size=300) | skill_output())
def test_untrusted_json_is_a_value_or_not_json(data: bytes) -> None:
    try:
        value = loads_untrusted(data)
    except NotJSON:
        return
    json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


schema_like = json_values | st.fixed_dictionaries({}, optional={
    "$schema": st.sampled_from(["http://json-schema.org/draft-07/schema#", "nope", 3]),
    "$ref": st.sampled_from(["#", "#/definitions/x", "#/$defs/y", "http://example.com/s", "\x00"]),
    "$id": st.sampled_from(["http://a/b", "rel", 5]), "type": st.sampled_from(["object", "strin", 1]),
    "pattern": st.sampled_from(["(x", "^a+$", "(?P<n>"]), "definitions": st.dictionaries(st.just("x"), json_values)})


@PROFILE
@given(st.lists(st.fixed_dictionaries({"id": st.text(min_size=1, max_size=6)}, optional={
    "expectedOutput": st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["exact", "contains", "regex", "json_schema", "custom", "nope"]),
        "value": json_values, "keywords": json_values, "schema": schema_like, "pattern": json_values,
        "customScorerPath": paths, "flags": json_values}),
    "evaluator": st.fixed_dictionaries({"type": st.sampled_from(["exact", "contains", "regex", "json_schema"])},
                                       optional={"caseSensitive": json_values, "flags": json_values,
                                                 "passThreshold": json_values})}), min_size=1, max_size=3),
       schema_like)
def test_planning_any_tasks_is_a_plan_or_an_input_error(tasks: list[dict], input_schema: Any) -> None:
    from eval_skills.formats.benchmark import Benchmark, Task
    from eval_skills.formats.skill import AdapterConfig, Skill, SkillManifest
    from eval_skills.tool_skills.plan import build_plan

    try:
        manifest = SkillManifest.model_validate({"id": "s", "name": "S", "version": "1.0.0",
                                                 "adapterType": "subprocess", "entrypoint": "x",
                                                 "inputSchema": input_schema})
        benchmark = Benchmark.model_validate({"id": "b", "tasks": [Task.model_validate(t) for t in tasks]})
    except Exception:  # noqa: BLE001 - not a loadable file: the loaders' tests cover that
        return
    with tempfile.TemporaryDirectory() as tmp:
        skill = Skill(manifest=manifest, path=Path(tmp) / "skill.json", adapter=AdapterConfig())
        try:
            build_plan([skill], benchmark, runs=1, default_evaluator="exact", base_dir=Path(tmp),
                       scorer_timeout_s=2.0).close()
        except InputError as exc:
            assert "\n" not in exc.line()
