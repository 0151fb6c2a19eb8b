"""``--executor ray`` refused in one line (exit 2, nothing run) before any cluster is needed: Ray not installed, an
address where nothing answers, bad ``--ray-resources``, Ray options without ``--executor ray``. No cluster starts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from paired_data import agent_args, invoice_skill, judge_args

from eval_skills.cluster import TaskShape, parse_resources
from eval_skills.errors import InputError

CALCULATOR = Path(__file__).resolve().parents[1] / "examples" / "skills" / "calculator"


def cli(*args, cwd: Path, env=None):
    return subprocess.run([sys.executable, "-m", "eval_skills", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "EVAL_SKILLS_DEBUG": "", **(env or {})})


def one_line(out) -> str:
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as sock:  # bound, never listening: a connection is refused
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def skill(tmp_path):
    folder, _, script = invoice_skill(tmp_path)
    return ["--skill-path", folder, *agent_args(script), "--no-compare", "--no-store"]


def test_an_address_where_nothing_answers_is_one_line(tmp_path, skill):
    port = closed_port()
    line = one_line(cli("paired", *skill, "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", cwd=tmp_path))
    assert f"--ray-address: no Ray cluster answers at 127.0.0.1:{port}" in line and "ray start --head" in line
    line = one_line(cli("paired", *skill, "--executor", "ray", cwd=tmp_path,
                        env={"RAY_ADDRESS": f"127.0.0.1:{port}"}))
    assert line.startswith(f"error: RAY_ADDRESS: no Ray cluster answers at 127.0.0.1:{port}") or \
        f"RAY_ADDRESS: no Ray cluster answers at 127.0.0.1:{port}" in line
    line = one_line(cli("eval", "--skills", CALCULATOR, "--no-store", "--output-dir", tmp_path / "r",
                        "--executor", "ray", "--ray-address", "nowhere", cwd=tmp_path))
    assert "'nowhere' is not a Ray address" in line
    assert not (tmp_path / "invoice-check-workspace").exists() and not (tmp_path / "r").exists()


def test_without_ray_installed_it_says_what_to_install(tmp_path, skill):
    shadow = tmp_path / "shadow" / "ray"  # a ray that cannot be imported, first on the path
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "shadow"), os.environ.get("PYTHONPATH", "")])}
    line = one_line(cli("paired", *skill, "--executor", "ray", cwd=tmp_path, env={**env, "RAY_ADDRESS": ""}))
    assert "needs Ray, which is not installed here" in line and "pip install 'eval-skills[ray]'" in line
    assert not (tmp_path / "invoice-check-workspace").exists()
    out = cli("paired", *skill, *judge_args(), "--dry-run", cwd=tmp_path, env=env)  # the local executor: no Ray
    assert out.returncode == 0, out.stderr


def test_ray_options_need_the_ray_executor(tmp_path, skill):
    for option, value in [("--ray-address", "127.0.0.1:6379"), ("--ray-resources", '{"CPU": 1}'),
                          ("--ray-env", "HOME")]:
        line = one_line(cli("paired", *skill, option, value, cwd=tmp_path))
        assert f"{option}: applies only to --executor ray" in line
    line = one_line(cli("paired", *skill, "--executor", "ray", "--ray-resources", '{"CPU": -1}', cwd=tmp_path))
    assert "--ray-resources: the amount of 'CPU' is not a non-negative number: -1" in line


@pytest.mark.parametrize("text, problem", [
    ("[1]", "is not a JSON object of resource amounts"), ("{", "is not JSON"), ('{"agent": "1"}', "'agent'"),
    ('{"CPU": 0}', "asks for nothing"), ('{"GPU": true}', "'GPU'")])
def test_bad_resources_are_input_errors(text, problem):
    with pytest.raises(InputError, match=problem):
        parse_resources(text)


def test_a_task_shape_counts_the_runs_a_node_takes():
    shape = parse_resources(json.dumps({"CPU": 1, "agent": 1}))
    assert shape.fits({"CPU": 8.0, "agent": 3.0}) == 3 and shape.fits({"CPU": 8.0}) == 0
    assert shape.options() == {"num_cpus": 1.0, "resources": {"agent": 1.0}}
    assert TaskShape().fits({"CPU": 2.0}) == 2 and parse_resources('{"CPU": 0.5}').fits({"CPU": 2.0}) == 4
    assert parse_resources('{"CPU": 0, "agent": 1}').fits({"CPU": 0.0, "agent": 2.0}) == 2
