"""Writes what the original eval-skills' ``create`` and ``init`` commands write: the same files and keys.

``create_skill(folder, name, template)`` makes ``<folder>/<name>/`` with ``skill.json``,
``adapter.config.json`` and ``tests/basic.eval.json`` (and ``skill.py`` for ``python_script``), for the
templates ``python_script``, ``http_request`` and ``mcp_tool``. ``init_project(folder)`` writes the
``eval-skills.config.yaml`` of ``init`` and its ``skills``, ``benchmarks`` and ``reports`` folders.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

INIT_CONFIG = """# eval-skills configuration
concurrency: 4
timeoutMs: 30000
outputDir: ./reports
defaultFormats:
  - json
  - markdown
# llm:
#   model: gpt-4o
#   temperature: 0
"""

# A JSON-RPC skeleton with the behaviour of the one ``create --from-template python_script`` writes: one
# request read from stdin, ``params`` read with a ``{}`` default (so ``"params": null`` breaks it), and
# ``{"result": "Processed: <query>"}`` as the answer.
PYTHON_SKELETON = '''#!/usr/bin/env python3
"""{name}: a JSON-RPC subprocess skill"""
import json
import sys


def invoke(params):
    return {{"result": "Processed: " + params.get("query", "")}}


def healthcheck(params):
    return {{"status": "healthy"}}


def main():
    request = json.loads(sys.stdin.read())
    handler = {{"invoke": invoke, "healthcheck": healthcheck}}.get(request.get("method", ""))
    params = request.get("params", {{}})
    req_id = request.get("id", 1)
    if handler is None:
        reply = {{"jsonrpc": "2.0", "error": {{"code": -32601, "message": "Unknown method"}}, "id": req_id}}
    else:
        try:
            reply = {{"jsonrpc": "2.0", "result": handler(params), "id": req_id}}
        except Exception as exc:
            reply = {{"jsonrpc": "2.0", "error": {{"code": -32000, "message": str(exc)}}, "id": req_id}}
    print(json.dumps(reply))


if __name__ == "__main__":
    main()
'''


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def create_skill(folder: Path, name: str, template: str = "python_script", *,
                 base_url: str = "http://localhost:3000") -> Path:
    """The skill folder ``create --name <name> --from-template <template> --output-dir <folder>`` writes.
    ``base_url`` replaces the template's ``http://localhost:3000`` (tests serve on a free port)."""
    skill_dir = folder / name
    adapter_type = {"http_request": "http", "python_script": "subprocess", "mcp_tool": "mcp"}[template]
    entrypoint = {"http_request": f"{base_url}/invoke", "python_script": "python3 skill.py",
                  "mcp_tool": f"mcp://localhost:8080/tools/{name}"}[template]
    _write(skill_dir / "skill.json", {
        "id": re.sub(r"[^a-z0-9_-]", "_", name.lower()),
        "name": name,
        "version": "0.1.0",
        "description": f"A {template} skill: {name}",
        "tags": [],
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}},
        "adapterType": adapter_type,
        "entrypoint": entrypoint,
        "metadata": {"author": "", "license": "MIT"},
    })
    adapter_config = {
        "http_request": {"type": "http", "baseUrl": base_url, "authType": "none", "timeoutMs": 15000, "retries": 1},
        "python_script": {"type": "subprocess", "command": "python3", "args": ["skill.py"], "timeoutMs": 30000},
        "mcp_tool": {"type": "mcp", "timeoutMs": 30000},
    }[template]
    _write(skill_dir / "adapter.config.json", adapter_config)
    _write(skill_dir / "tests" / "basic.eval.json", {
        "id": f"{name}-basic",
        "name": f"{name} Basic Test",
        "version": "1.0.0",
        "domain": "general",
        "scoringMethod": "mean",
        "metadata": {},
        "tasks": [{
            "id": f"{name}_test_001",
            "description": f"Basic test for {name}",
            "inputData": {"query": "test input"},
            "expectedOutput": {"type": "contains", "keywords": ["result"]},
            "evaluator": {"type": "contains"},
            "timeoutMs": 30000,
        }],
    })
    if template == "python_script":
        _write(skill_dir / "skill.py", PYTHON_SKELETON.format(name=name))
    return skill_dir


def init_project(folder: Path) -> Path:
    """What ``init --dir <folder>`` writes: the config file and three folders."""
    _write(folder / "eval-skills.config.yaml", INIT_CONFIG)
    for sub in ("skills", "benchmarks", "reports"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return folder


def create_from_openapi(folder: Path, name: str, *, server_url: str, path: str = "/weather", method: str = "get",
                        api_version: str = "v1", operation_id: str = "getWeather") -> Path:
    """The skill folder ``create --name <name> --from-openapi spec.yaml`` writes for a spec whose first path
    is ``path`` with the operation ``method``, served at ``server_url`` (``info.version`` is copied as the
    skill's version, whatever it is)."""
    skill_dir = folder / name
    _write(skill_dir / "skill.json", {
        "id": re.sub(r"[^a-z0-9_-]", "_", name.lower()),
        "name": name,
        "version": api_version,
        "description": "Get the weather",
        "tags": ["openapi"],
        "inputSchema": {"type": "object", "properties": {}, "description": "Input parameters"},
        "outputSchema": {"type": "object", "properties": {}, "description": "Output response"},
        "adapterType": "http",
        "entrypoint": f"{server_url}{path}",
        "metadata": {"author": "", "license": "MIT",
                     "openapi": {"specPath": "spec.yaml", "operationId": operation_id, "method": method.upper()}},
    })
    _write(skill_dir / "adapter.config.json", {"type": "http", "baseUrl": server_url, "method": method.upper(),
                                               "timeoutMs": 30000, "headers": {"Content-Type": "application/json"}})
    _write(skill_dir / "tests" / "basic.eval.json", {
        "id": f"{name}-openapi-test",
        "name": f"{name} OpenAPI Test",
        "version": "1.0.0",
        "domain": "api",
        "tasks": [{
            "id": f"{name}_test_001",
            "description": f"Test for {operation_id}",
            "inputData": {},
            "expectedOutput": {"type": "json_schema", "schema": {"type": "object"}},
            "evaluator": {"type": "json_schema"},
            "timeoutMs": 30000,
        }],
    })
    return skill_dir
