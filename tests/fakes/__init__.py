"""Fake agent and judge programs for tests (see the docstring at the top of each), and helpers that build
an eval-skills agent or judge running them.

    from fakes import fake_agent, fake_judge
    agent = fake_agent({"skill": "my-skill", "skilled_answer": "uses the skill"})
    result = await agent.run(AgentRequest("a prompt", workspace, skills=[skill_folder], timeout=10))
    judge = fake_judge(mode="malformed-once")
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from eval_skills.agents import Agent, create_agent
from eval_skills.judges import Judge, create_judge

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")
FAKE_JUDGE = Path(__file__).with_name("fake_judge.py")

__all__ = ["FAKE_AGENT", "FAKE_JUDGE", "PYTHON_BINDS", "SANDBOX_BIND_ARGS", "fake_agent", "fake_judge"]


def _python_binds() -> list[str]:
    """What a sandboxed run needs bound to start this Python (the stand-in agents are Python programs): the
    virtualenv (``sys.prefix``) and the base interpreter it was made from, when they lie where a sandbox hides
    (the temporary folder, the home folder), read-only."""
    hidden = [Path("/tmp"), Path(tempfile.gettempdir()).resolve(), Path(os.path.expanduser("~")).resolve()]
    found: list[Path] = []
    for path in (Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent):
        path = path.resolve()
        if path not in found and any(path != h and path.is_relative_to(h) for h in hidden if h != Path("/")):
            found.append(path)
    return [f"{path}:ro" for path in found]


PYTHON_BINDS = _python_binds()  # [] for a virtualenv elsewhere (/work, /opt): nothing to add
SANDBOX_BIND_ARGS = [arg for bind in PYTHON_BINDS for arg in ("--sandbox-bind", bind)]


def fake_agent(script: dict[str, Any] | None = None, **options: Any) -> Agent:
    """A ``command`` agent running fake_agent.py with ``script``; ``options`` go to ``create_agent``
    (``skills_subdir``, ``env``, ``output``, ``command``). With a ``skills_subdir`` other than the default,
    the script's ``skills_dir`` follows it unless given."""
    script = dict(script or {})
    if "skills_subdir" in options:
        script.setdefault("skills_dir", options["skills_subdir"])
    options.setdefault("output", "text" if script.get("output") == "text" else "events")
    options.setdefault("command", [sys.executable, str(FAKE_AGENT), "--prompt-file", "{prompt_file}",
                                   "--model", "{model}"])
    options["env"] = {"FAKE_AGENT_JSON": json.dumps(script), **options.get("env", {})}
    return create_agent("command", **options)


def fake_judge(mode: str = "", log: Path | None = None, **options: Any) -> Judge:
    """A ``command`` judge running fake_judge.py in ``mode`` (see its docstring), logging calls to ``log``;
    ``options`` go to ``create_judge`` (``timeout``, ``model``, ``cache``)."""
    env = {"FAKE_JUDGE_MODE": mode, **({"FAKE_JUDGE_LOG": str(log)} if log else {}), **options.pop("env", {})}
    return create_judge("command", command=[sys.executable, str(FAKE_JUDGE)], env=env, **options)
