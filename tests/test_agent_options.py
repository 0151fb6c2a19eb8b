"""The shared agent and judge options build the backend they name, and refuse what cannot run before any run."""

import sys

import pytest

from eval_skills.cli._agent_options import build_agent, build_judge
from eval_skills.errors import InputError

AGENT = {"agent": None, "agent_bin": None, "agent_cmd": None, "agent_output": None, "skills_subdir": None,
         "model": None, "base_url": None, "api_key_env": "OPENAI_API_KEY", "max_turns": 30}
JUDGE = {"judge": None, "judge_model": None, "judge_cmd": None, "no_judge_cache": False}


def test_agent_cmd_means_the_command_backend():
    agent = build_agent({**AGENT, "agent_cmd": f"{sys.executable} -c pass {{prompt_file}}", "agent_output": "events"})
    assert (agent.name, agent.output, agent.skills_subdir) == ("command", "events", ".agents/skills")


def test_unknown_agent_and_missing_program_are_input_errors():
    with pytest.raises(InputError, match="unknown agent 'nope'"):
        build_agent({**AGENT, "agent": "nope"})
    with pytest.raises(InputError, match="needs --agent-cmd"):
        build_agent({**AGENT, "agent": "command"})
    with pytest.raises(InputError, match="not found"):
        build_agent({**AGENT, "agent_cmd": "no-such-agent-program-xyz {prompt}"})


def test_judge_from_options_then_config():
    judge = build_judge({**JUDGE, "judge_cmd": f"{sys.executable} -c pass"}, {"model": "m1"}, cache=object())
    assert (judge.backend, judge.model, judge.cache is not None) == ("command", "m1", True)
    judge = build_judge({**JUDGE, "judge_cmd": f"{sys.executable} -c pass", "no_judge_cache": True}, cache=object())
    assert judge.cache is None
    with pytest.raises(InputError, match="unknown judge 'nope'"):
        build_judge({**JUDGE}, {"provider": "nope"})
