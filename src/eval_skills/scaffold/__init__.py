"""Scaffolding: a new project (``init``) and new skills from templates (``create``).

Each tool-skill template writes ``skill.json``, ``adapter.config.json``, ``tests/basic.eval.json`` and the
skill's program, and passes its own test as generated. ``agent_skill`` writes an Agent Skills folder
(``SKILL.md`` and ``evals/``). A skill is written to a hidden folder beside its target, then renamed into
place, so an existing folder is never overwritten and a failure leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path
from string import Template
from typing import Any

from ..errors import InputError
from .agent_skill import agent_skill_files, check_agent_skill_name

__all__ = ["PROJECT_FOLDERS", "TEMPLATES", "create_skill", "init_project", "project_config_text"]

PROJECT_FOLDERS = ("skills", "benchmarks", "reports")
FILES = Path(__file__).with_name("files")


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _source(template: str, **values: str) -> str:
    return Template((FILES / template).read_text(encoding="utf-8")).substitute(values)


def _manifest(name: str, description: str, adapter: str, entrypoint: str, tags: list[str],
              metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": name, "name": name, "version": "0.1.0", "description": description, "tags": tags,
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]},
        "adapterType": adapter, "entrypoint": entrypoint, "metadata": metadata or {},
    }


def _basic_test(name: str) -> str:
    return _json({
        "id": f"{name}-basic", "name": f"{name}: basic test", "version": "1.0.0", "domain": "general",
        "scoringMethod": "mean", "maxLatencyMs": 30000,
        "tasks": [{"id": "echo_hello", "description": "The skill answers with the text it was given",
                   "inputData": {"text": "hello"}, "expectedOutput": {"type": "exact", "value": "hello"},
                   "evaluator": {"type": "exact"}, "timeoutMs": 30000, "tags": ["smoke"]}],
    })


def _port(name: str) -> int:
    """A port from 20000 to 29999 chosen by the name, so two generated skills rarely share one."""
    return 20000 + zlib.crc32(name.encode()) % 10000


def _python_script(name: str, description: str) -> dict[str, str]:
    return {
        "skill.json": _json(_manifest(name, description, "subprocess", "python3 skill.py", ["python"])),
        "adapter.config.json": _json({"persistent": True, "command": "python3", "args": ["skill.py"],
                                      "timeoutMs": 30000}),
        "skill.py": _source("python_script_skill.py.txt", name=name),
    }


def _http_request(name: str, description: str) -> dict[str, str]:
    port = _port(name)
    return {
        "skill.json": _json(_manifest(name, description, "http", "/invoke", ["http"])),
        "adapter.config.json": _json({"baseUrl": f"http://127.0.0.1:{port}",
                                      "start": ["python3", "server.py", "--port", str(port)],
                                      "healthPath": "/health", "startTimeoutMs": 15000, "timeoutMs": 30000}),
        "server.py": _source("http_request_server.py.txt", name=name, port=str(port)),
    }


def _mcp_tool(name: str, description: str) -> dict[str, str]:
    return {
        "skill.json": _json(_manifest(name, description, "mcp", "python3 server.py", ["mcp"],
                                      {"toolName": name})),
        "adapter.config.json": _json({"timeoutMs": 30000}),
        "server.py": _source("mcp_tool_server.py.txt", name=name, quoted_name=json.dumps(name),
                             quoted_description=json.dumps(description, ensure_ascii=False)),
    }


def _tool_skill(make: Callable[[str, str], dict[str, str]]) -> Callable[[str, str], dict[str, str]]:
    def files(name: str, description: str) -> dict[str, str]:
        return {**make(name, description), "tests/basic.eval.json": _basic_test(name)}

    return files


TEMPLATES: dict[str, Callable[[str, str], dict[str, str]]] = {
    "http_request": _tool_skill(_http_request),
    "python_script": _tool_skill(_python_script),
    "mcp_tool": _tool_skill(_mcp_tool),
    "agent_skill": agent_skill_files,
}


def _check_name(name: str, template: str, description: str) -> None:
    import re

    if template == "agent_skill":
        check_agent_skill_name(name, description)
    elif not re.fullmatch(r"[a-z0-9_][a-z0-9_-]*", name):
        raise InputError(f"skill name {name!r} is not a valid skill id", field="--name",
                         hint="use lowercase letters, digits, _ and -, not starting with -")


def _refuse_a_file(folder: Path, option: str) -> None:
    """InputError naming ``folder``, or the folder on its way, when it is a file."""
    for place in (folder, *folder.parents):
        if place.exists():
            if not place.is_dir():
                raise InputError("is a file, not a folder", file=str(place), hint=f"choose another {option}")
            return


def create_skill(name: str, template: str, output_dir: Path, description: str | None = None) -> Path:
    """Write a new skill ``output_dir/name`` from ``template``; returns its folder. InputError (nothing
    written) for an unknown template, an invalid name, or a folder that exists."""
    if template not in TEMPLATES:
        raise InputError(f"unknown template {template!r}", field="--from-template",
                         hint=f"use one of: {', '.join(TEMPLATES)}")
    text = (description or "").strip() or f"TODO: say what {name} does and when to use it"
    _check_name(name, template, text)
    files = TEMPLATES[template](name, text)
    output_dir = Path(output_dir)
    target = output_dir / name
    if target.exists() or target.is_symlink():
        raise InputError("already exists; an existing folder is never overwritten", file=str(target),
                         hint="choose another --name or --output-dir")
    _refuse_a_file(output_dir, "--output-dir")
    output_dir.mkdir(parents=True, exist_ok=True)
    staging = output_dir / f".{name}.{os.getpid()}.tmp"
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        os.rename(staging, target)  # fails if the folder appeared meanwhile: never overwrites
    except OSError as exc:
        raise InputError(f"cannot write the skill ({exc.strerror or exc})", file=str(target)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def project_config_text() -> str:
    """``eval-skills.config.yaml`` with every setting commented out at its default."""
    from ..config import Config

    lines = ["# eval-skills configuration. Command-line flags win over this file, which wins over",
             "# ~/.eval-skills/config.yaml (eval-skills config set KEY VALUE), which wins over the defaults.",
             "# Uncomment a line to change a setting.", ""]
    notes = {"concurrency": "tasks run at once", "timeoutMs": "per-task timeout in ms",
             "retries": "retries for errors and timeouts", "runs": "repeat every task N times",
             "evaluator": "scorer for tasks that name none", "format": "report formats: json markdown html csv junit",
             "outputDir": "where reports are written", "store": "the SQLite results store",
             "benchmark": "the benchmark eval and run use", "benchmarksDir": "folder of your own benchmarks",
             "minCompletion": "completion rate --exit-on-fail and run's selection require",
             "scorerTimeoutMs": "how long a scorer may take for one task, in ms",
             "llm": "the model judge: provider, model, temperature, baseUrl"}
    for key, value in Config().model_dump().items():
        shown = json.dumps(value) if not isinstance(value, str) else value
        lines.append(f"# {key}: {shown}".ljust(36) + f"  # {notes.get(key, '')}".rstrip())
    return "\n".join(lines) + "\n"


def init_project(folder: Path, *, force: bool = False) -> list[Path]:
    """Write the config file and the project folders in ``folder``; returns what was created or replaced."""
    from ..config import PROJECT_CONFIG

    folder = Path(folder)
    _refuse_a_file(folder, "--dir")
    config = folder / PROJECT_CONFIG
    if config.exists() and not force:
        raise InputError("already exists", file=str(config), hint="pass --force to replace it")
    for name in PROJECT_FOLDERS:
        if (folder / name).exists() and not (folder / name).is_dir():
            raise InputError("is in the way of a folder", file=str(folder / name))
    created: list[Path] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        config.write_text(project_config_text(), encoding="utf-8")
        created.append(config)
        for name in PROJECT_FOLDERS:
            if not (folder / name).is_dir():
                (folder / name).mkdir()
                created.append(folder / name)
    except OSError as exc:
        raise InputError(f"cannot write the project ({exc.strerror or exc})", file=str(folder)) from None
    return created
