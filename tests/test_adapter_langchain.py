"""The LangChain adapter with real langchain-core tools and Runnables, and without LangChain installed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from eval_skills.adapters import create_adapter
from eval_skills.errors import InputError
from eval_skills.formats.benchmark import Benchmark
from eval_skills.formats.skill import load_skill
from eval_skills.results import TaskResult, Usage
from eval_skills.tool_skills.evaluation import evaluate
from eval_skills.tool_skills.plan import build_plan
from eval_skills.tool_skills.preflight import dry_run_notes
from eval_skills.tool_skills.runner import RunSettings

pytest.importorskip("langchain_core")

CHAINS = '''
import asyncio, time
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import ToolException, tool
from pydantic import BaseModel

@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    if text == "fail":
        raise ToolException("cannot count that")
    if text == "hang":
        time.sleep(60)
    return len(text.split())

@tool
async def shout(text: str) -> str:
    """Shout a text."""
    await asyncio.sleep(0.01)
    return text.upper()

class Answer(BaseModel):
    answer: str
    confidence: float

def _model(data):
    return AIMessage(content="the answer is " + data["q"],
                     usage_metadata={"input_tokens": 12, "output_tokens": 5, "total_tokens": 17})

fake_model = RunnableLambda(_model)
structured = RunnableLambda(lambda data: Answer(answer=data["q"], confidence=0.5))

def plain_function(data):
    return data
'''


def chain_skill(folder: Path, entrypoint: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chains.py").write_text(textwrap.dedent(CHAINS))
    (folder / "skill.json").write_text(json.dumps({
        "id": folder.name, "name": "Chain", "version": "1.0.0", "adapterType": "langchain",
        "entrypoint": entrypoint}))
    return folder


def run(folders: list[Path], tasks: list[dict[str, Any]]) -> dict[tuple[str, str], TaskResult]:
    benchmark = Benchmark.model_validate({"id": "b", "tasks": tasks})
    plan = build_plan([load_skill(f) for f in folders], benchmark, runs=1, default_evaluator="exact")
    outcome = asyncio.run(evaluate(plan, RunSettings(concurrency=4, timeout_ms=5000)))
    return {(r.skill_id, r.task_id): r for r in outcome.results}


def test_tools_and_runnables_are_called_with_ainvoke(tmp_path):
    count = chain_skill(tmp_path / "count", "chains:word_count")
    shout = chain_skill(tmp_path / "shout", "chains:shout")
    model = chain_skill(tmp_path / "model", "chains:fake_model")
    structured = chain_skill(tmp_path / "structured", "chains:structured")
    results = run([count, shout, model, structured], [
        {"id": "a", "inputData": {"text": "three little words", "q": "x"}, "expectedOutput": {"value": "3"}},
        {"id": "fail", "inputData": {"text": "fail", "q": "y"}, "expectedOutput": {"value": "1"}},
        {"id": "hang", "inputData": {"text": "hang", "q": "z"}, "expectedOutput": {"value": "1"}, "timeoutMs": 500},
    ])
    assert results[("count", "a")].status == "pass" and results[("count", "a")].output == 3
    assert results[("count", "fail")].status == "error"
    assert results[("count", "fail")].error.startswith("raised ToolException: cannot count that")
    assert results[("count", "hang")].status == "timeout"
    assert results[("shout", "a")].output == "THREE LITTLE WORDS"
    assert results[("model", "a")].output == "the answer is x"
    assert results[("model", "a")].usage == Usage(12, 5, 17)
    assert results[("structured", "a")].output == {"answer": "x", "confidence": 0.5}


def test_dry_run_notes_name_the_tool_and_check_inputs_against_its_schema(tmp_path):
    folder = chain_skill(tmp_path / "count", "chains:word_count")
    benchmark = Benchmark.model_validate({"id": "b", "tasks": [
        {"id": "ok", "inputData": {"text": "a b"}, "expectedOutput": {"value": "2"}},
        {"id": "wrong", "inputData": {"words": "a b"}, "expectedOutput": {"value": "2"}}]})
    plan = build_plan([load_skill(folder)], benchmark, runs=1, default_evaluator="exact")
    notes = asyncio.run(dry_run_notes(plan, {"count": create_adapter(load_skill(folder))}))["count"]
    assert notes == ["calls chains:word_count (the tool 'word_count', called with ainvoke)",
                     "the inputData of 1 of 2 tasks do not fit its input schema:",
                     "  task wrong: $: 'text' is a required property"]


def test_a_plain_function_is_refused_with_a_hint(tmp_path):
    folder = chain_skill(tmp_path / "plain", "chains:plain_function")

    async def main() -> None:
        adapter = create_adapter(load_skill(folder))
        try:
            await adapter.preflight()
        finally:
            await adapter.close()

    with pytest.raises(InputError) as info:
        asyncio.run(main())
    assert info.value.field == "$.entrypoint"
    assert "chains:plain_function is not a LangChain tool or Runnable (it is a function)" in info.value.problem
    assert info.value.hint == 'for a plain function use adapterType "custom"'


def test_without_langchain_the_skill_is_refused_saying_what_to_install(tmp_path):
    folder = chain_skill(tmp_path / "count", "chains:word_count")
    hide = ("import sys; sys.modules['langchain_core'] = None; from eval_skills.cli import main; "
            f"main(['eval', '--skills', {str(folder)!r}, '--output-dir', 'r', '--store', 's.db'])")
    out = subprocess.run([sys.executable, "-c", hide], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"error: {folder / 'skill.json'}: $.adapterType: adapterType 'langchain' needs LangChain (langchain-core), "
        "which is not installed (install it: pip install 'eval-skills[langchain]')"]
    assert not (tmp_path / "r").exists() and not (tmp_path / "s.db").exists()
