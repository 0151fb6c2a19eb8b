"""The shared agent and judge options build the backend they name, and refuse what cannot run before any run."""

import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAI

from eval_skills.cli._agent_options import agent_options, build_agent, build_judge, judge_options
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
    with pytest.raises(InputError, match="unknown judge 'nope'") as info:
        build_judge({**JUDGE}, {"provider": "nope"})
    assert info.value.field == "llm.provider"  # where the name came from
    with pytest.raises(InputError, match="unknown judge 'nope'") as info:
        build_judge({**JUDGE, "judge": "nope"}, {"provider": "openai"})
    assert info.value.field == "--judge"


# ---- the presets, the openai agent and the model judges ---------------------------------------------------

FAKES = Path(__file__).parent / "fakes"


def test_cli_presets_take_bin_model_turns_and_extra_args(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{FAKES}:/usr/bin:/bin")
    agent = build_agent({**AGENT, "agent": "claude", "model": "opus", "max_turns": 12,
                         "agent_args": ("--permission-mode", "plan")})
    assert (agent.name, agent.bin, agent.model, agent.max_turns, agent.extra_args) == (
        "claude", "claude", "opus", 12, ["--permission-mode", "plan"])
    assert build_agent({**AGENT}).name == "claude"  # the default agent
    codex = build_agent({**AGENT, "agent": "codex", "agent_bin": str(FAKES / "codex")})
    assert codex.bin == str(FAKES / "codex") and codex.skills_subdir == ".agents/skills"
    assert build_agent({**AGENT, "agent": "opencode"}).skills_subdir == ".opencode/skills"
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    with pytest.raises(InputError, match="cannot start 'codex': program not found on PATH"):
        build_agent({**AGENT, "agent": "codex"})


def test_openai_agent_from_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-1")
    with FakeOpenAI(key="sk-1") as api:
        agent = build_agent({**AGENT, "agent": "openai", "base_url": api.url, "model": "m", "api_key_env": "MY_KEY",
                             "max_turns": 4})
        assert (agent.name, agent.model, agent.base_url, agent.max_turns) == ("openai", "m", api.url, 4)
        assert api.requests[-1].path == "/v1/models"  # checked before any run
        with pytest.raises(InputError, match="refused the key in OTHER_KEY"):
            monkeypatch.setenv("OTHER_KEY", "sk-2")
            build_agent({**AGENT, "agent": "openai", "base_url": api.url, "model": "m", "api_key_env": "OTHER_KEY"})


def test_model_judges_from_options_and_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_SKILLS_LLM_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAI() as api:
        llm = {"provider": "openai", "model": "judge-m", "baseUrl": api.url, "temperature": 0}
        judge = build_judge({**JUDGE}, llm, cache=object())
        assert (judge.backend, judge.model, judge.base_url, judge.temperature) == ("openai", "judge-m", api.url, 0)
        assert api.requests[-1].path == "/v1/models"
        judge = build_judge({**JUDGE, "judge_model": "other"}, llm)
        assert judge.model == "other"
    with pytest.raises(InputError, match="the anthropic judge needs a model"):  # llm's model is openai's
        build_judge({**JUDGE, "judge": "anthropic"}, llm)
    with pytest.raises(InputError, match="the openai judge needs a key: set EVAL_SKILLS_LLM_KEY or OPENAI_API_KEY"):
        build_judge({**JUDGE, "judge_model": "m"})
    with pytest.raises(InputError, match="cannot reach"):
        build_judge({**JUDGE}, llm)  # the server is gone
    with pytest.raises(InputError, match="unknown setting llm.apiKey") as info:
        build_judge({**JUDGE}, {"model": "m", "apiKey": "sk-in-a-file"})
    assert "EVAL_SKILLS_LLM_KEY" in str(info.value) and "sk-in-a-file" not in str(info.value)
    with pytest.raises(InputError, match="must be a number"):
        build_judge({**JUDGE}, {"model": "m", "temperature": "cold"})


def test_llm_settings_are_checked_naming_the_file_and_empty_ones_are_absent(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_skills.config import load_config

    monkeypatch.setenv("HOME", str(tmp_path))
    config = tmp_path / "eval-skills.config.yaml"
    for text, error in (("llm:\n  model: 5\n", "llm.model must be a string"),
                        ("llm:\n  apiKey: sk-in-a-file\n", "unknown setting llm.apiKey")):
        config.write_text(text)
        with pytest.raises(InputError, match=error) as info:
            load_config(config)
        assert info.value.file == str(config)  # the line names the file that holds the setting
    config.write_text('llm:\n  provider: ""\n  model: m\n  baseUrl: ""\n')
    assert load_config(config).llm == {"model": "m"}  # an empty provider is no provider: the model is openai's
    with pytest.raises(InputError, match="the openai judge needs a key"):  # not "needs a model"
        build_judge({**JUDGE}, {"provider": "", "model": "m"})


def test_the_decorators_pass_every_option() -> None:
    seen: dict = {}

    @click.command()
    @agent_options
    @judge_options
    def command(**params: object) -> None:
        seen.update(params)

    result = CliRunner().invoke(command, ["--agent", "codex", "--agent-arg=--full-auto", "--agent-arg", "-c",
                                          "--agent-arg", "x=1", "--max-turns", "5", "--judge", "anthropic",
                                          "--judge-model", "j", "--no-judge-cache"])
    assert result.exit_code == 0, result.output
    assert seen["agent_args"] == ("--full-auto", "-c", "x=1") and seen["max_turns"] == 5
    assert (seen["judge"], seen["judge_model"], seen["no_judge_cache"]) == ("anthropic", "j", True)
    assert set(AGENT) | {"agent_args"} <= set(seen) and set(JUDGE) <= set(seen)


@pytest.mark.parametrize(("given", "flag"), [
    ({"agent": "claude", "agent_cmd": "my-agent {prompt}"}, "--agent-cmd"),
    ({"agent": "openai", "agent_output": "events"}, "--agent-output"),
    ({"agent": "codex", "skills_subdir": ".codex/skills"}, "--skills-subdir"),
    ({"agent_cmd": "my-agent {prompt}", "agent_bin": "claude"}, "--agent-bin"),
    ({"agent_cmd": "my-agent {prompt}", "agent_args": ("--verbose",)}, "--agent-arg"),
    ({"agent": "opencode", "base_url": "http://127.0.0.1:1/v1"}, "--base-url"),
])
def test_an_option_of_another_agent_backend_is_refused_not_ignored(given: dict, flag: str) -> None:
    with pytest.raises(InputError, match="applies only to --agent") as info:
        build_agent({**AGENT, **given})
    assert info.value.field == flag


def test_an_option_of_another_judge_backend_is_refused_and_empty_commands_are_not_defaults() -> None:
    with pytest.raises(InputError, match="applies only to --judge command, not openai"):
        build_judge({**JUDGE, "judge": "openai", "judge_cmd": "my-judge"})
    for blank in ("", "  "):  # an empty command is a mistake, never a silent switch to claude / openai
        with pytest.raises(InputError, match="is empty") as info:
            build_agent({**AGENT, "agent_cmd": blank})
        assert info.value.field == "--agent-cmd"
        with pytest.raises(InputError, match="is empty"):
            build_judge({**JUDGE, "judge_cmd": blank})


def test_a_mistyped_placeholder_is_refused_other_braces_are_kept() -> None:
    with pytest.raises(InputError, match=r"unknown placeholder \{promt_file\}"):
        build_agent({**AGENT, "agent_cmd": f"{sys.executable} agent.py --prompt-file {{promt_file}}"})
    agent = build_agent({**AGENT, "agent_cmd": f"{sys.executable} -c pass ${{HOME}} '{{\"a\": 1}}' {{prompt}}"})
    assert agent.words[3:5] == ["${HOME}", '{"a": 1}']
