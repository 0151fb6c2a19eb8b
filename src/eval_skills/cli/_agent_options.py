"""The agent and judge options shared by the commands that run agents (``paired``, ``routing``) or ask a judge
(``paired``, ``eval`` for ``llm_judge`` tasks), and the functions that build an Agent or a Judge from them.

A backend's own settings are mapped in :data:`AGENT_OPTIONS` / :data:`JUDGE_OPTIONS`: a new backend adds a row
there, and every command that takes these options can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..errors import InputError

__all__ = ["AGENT_OPTIONS", "JUDGE_OPTIONS", "agent_options", "build_agent", "build_judge", "build_sandbox",
           "judge_options", "one_agent", "per_agent", "verdict_cache"]

F = Callable[..., Any]

# backend -> function(params) -> keyword arguments of its constructor
def _cli_agent(p: dict[str, Any]) -> dict[str, Any]:
    return {"bin": p.get("agent_bin"), "model": p.get("model"), "max_turns": p.get("max_turns"),
            "extra_args": list(p.get("agent_args") or ())}


def _model_judge(p: dict[str, Any]) -> dict[str, Any]:
    return {"model": p.get("judge_model"), "base_url": p.get("judge_base_url"),
            "temperature": p.get("judge_temperature")}


AGENT_OPTIONS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "command": lambda p: {"command": _required(p, "agent_cmd", "--agent-cmd", "the command agent"),
                          "output": p["agent_output"] or "text",
                          "skills_subdir": p["skills_subdir"] or ".agents/skills"},
    "claude": _cli_agent,
    "codex": _cli_agent,
    "opencode": _cli_agent,
    "openai": lambda p: {"model": p.get("model"), "base_url": p.get("base_url"),
                         "api_key_env": p.get("api_key_env") or "OPENAI_API_KEY",
                         "max_turns": p.get("max_turns") or 30},
}

JUDGE_OPTIONS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "command": lambda p: {"command": _required(p, "judge_cmd", "--judge-cmd", "the command judge"),
                          "model": p["judge_model"]},
    "openai": _model_judge,
    "anthropic": _model_judge,
}

# option -> (its flag, the backends it applies to): given to another backend, it is refused rather than ignored
AGENT_ONLY: dict[str, tuple[str, tuple[str, ...]]] = {
    "agent_cmd": ("--agent-cmd", ("command",)), "agent_output": ("--agent-output", ("command",)),
    "skills_subdir": ("--skills-subdir", ("command",)),
    "agent_bin": ("--agent-bin", ("claude", "codex", "opencode")),
    "agent_args": ("--agent-arg", ("claude", "codex", "opencode")), "base_url": ("--base-url", ("openai",))}
JUDGE_ONLY: dict[str, tuple[str, tuple[str, ...]]] = {"judge_cmd": ("--judge-cmd", ("command",))}


def _llm_settings(llm: dict[str, Any]) -> dict[str, Any]:
    """The config's ``llm`` settings, checked: only known keys, of the right types."""
    from ..config import check_llm, llm_settings  # pydantic: not for --help

    wrong = check_llm(llm)
    if wrong is not None:
        raise InputError(wrong[1], field=f"llm.{wrong[0]}",
                         hint="keys come from EVAL_SKILLS_LLM_KEY" if wrong[1].startswith("unknown") else None)
    return llm_settings(llm)


def _required(params: dict[str, Any], key: str, flag: str, what: str) -> Any:
    value = params.get(key)
    if value is not None and not value.strip():
        raise InputError("is empty", field=flag, hint=f"give {what}'s command line")
    if not value:
        raise InputError(f"{what} needs {flag}", field=flag)
    return value


def agent_options(fn: F) -> F:
    """``--agent``, ``--agent-bin``, ``--agent-arg``, ``--agent-cmd``, ``--agent-output``, ``--skills-subdir``,
    ``--model``, ``--base-url``, ``--api-key-env``, ``--max-turns``, and the ``--sandbox*`` options."""
    options = [
        click.option("--agent", "agent", multiple=True,
                     help="Agent backend: claude, codex, opencode, openai or command "
                          "[default: command when --agent-cmd is given, else claude]. paired takes it more than "
                          "once to run the same cases on each agent."),
        click.option("--agent-bin", default=None, help="The agent CLI program (claude, codex, opencode) to run."),
        click.option("--agent-arg", "agent_args", multiple=True, metavar="ARG",
                     help="An extra argument for the agent CLI, e.g. --agent-arg=--dangerously-skip-permissions "
                          "(repeat it for several)."),
        click.option("--agent-cmd", default=None,
                     help="Command template of a command agent, e.g. 'my-agent --cwd {workdir} --prompt-file "
                          "{prompt_file}' (placeholders {prompt}, {prompt_file}, {workdir}, {model}, {max_turns})."),
        click.option("--agent-output", default=None,
                     help="How to read a command agent's stdout: text, events, claude, codex or opencode "
                          "[default: text]."),
        click.option("--skills-subdir", default=None,
                     help="Where a command agent finds project skills in its workspace [default: .agents/skills]."),
        click.option("--model", multiple=True, metavar="[AGENT=]MODEL",
                     help="Model name passed to the agent; with several --agent, AGENT=MODEL gives one agent its "
                          "model (a plain MODEL applies to every agent)."),
        click.option("--base-url", default=None, help="Base URL of an OpenAI-compatible endpoint (agent openai)."),
        click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
                     help="Environment variable holding the key of the openai agent."),
        click.option("--max-turns", type=click.IntRange(min=1), default=30, show_default=True,
                     help="Most turns an agent may take."),
        click.option("--sandbox", type=click.Choice(["none", "bwrap", "docker"]), default="none", show_default=True,
                     help="What each agent run can see: none (a private folder, your home and environment), bwrap "
                          "(only its workspace and a private /tmp writable, a private home, an allow-listed "
                          "environment) or docker (the same in a container of --sandbox-image)."),
        click.option("--sandbox-env", "sandbox_env", multiple=True, metavar="NAME",
                     help="A variable of your environment passed to sandboxed runs (repeat it for several)."),
        click.option("--sandbox-bind", "sandbox_bind", multiple=True, metavar="PATH[:ro]",
                     help="A path sandboxed runs also see, at its own path, writable unless :ro (repeat it)."),
        click.option("--sandbox-network", type=click.Choice(["host", "none"]), default="host", show_default=True,
                     help="The network of sandboxed runs: the host's (agents reach their model) or none."),
        click.option("--sandbox-image", default=None, metavar="IMAGE",
                     help="The image of --sandbox docker (the agent CLI installed in it)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def judge_options(fn: F) -> F:
    """``--judge``, ``--judge-model``, ``--judge-cmd``, ``--no-judge-cache``."""
    options = [
        click.option("--judge", "judge", default=None,
                     help="Judge backend: openai, anthropic or command [default: command when --judge-cmd is "
                          "given, else the config's llm.provider, else openai]."),
        click.option("--judge-model", default=None, help="Model of the judge [default: the config's llm.model]."),
        click.option("--judge-cmd", default=None,
                     help="A program that judges: the request JSON on stdin, the verdict JSON on stdout."),
        click.option("--no-judge-cache", is_flag=True, help="Ask the judge again even for a verdict in the store."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _backend(explicit: str | None, command: str | None, default: str) -> str:
    if explicit:
        return explicit
    return "command" if command is not None else default


def _refuse_foreign(params: dict[str, Any], name: str, owned: dict[str, tuple[str, tuple[str, ...]]],
                    what: str) -> None:
    """An option given for a backend other than ``name`` is an input error: ignoring it would run something
    else than the user asked for (``--agent claude --agent-cmd ...``)."""
    for key, (flag, backends) in owned.items():
        if params.get(key) not in (None, (), []) and name not in backends:
            raise InputError(f"applies only to {what} {', '.join(backends)}, not {name}", field=flag,
                             hint=f"drop {flag} or choose {what} {backends[0]}")


def per_agent(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The options as one set per ``--agent`` (each with its own ``agent`` and ``model``). With several agents,
    an option that belongs to some backends goes only to those, and is refused when none of them takes it."""
    names = list(dict.fromkeys(params.get("agent") or ()))
    if len(names) < len(params.get("agent") or ()):
        raise InputError("names the same agent twice", field="--agent", hint="give each agent once")
    if not names:
        names = [_backend(None, params.get("agent_cmd"), "claude")]
    models: dict[str | None, str] = {}
    for given in params.get("model") or ():
        agent, sep, model = given.partition("=")
        key = agent if sep and agent in names else None if not sep or len(names) == 1 else agent
        if key is not None and key not in names:
            raise InputError(f"names the agent {agent!r}, which is not among the --agent given", field="--model",
                             hint=f"use one of: {', '.join(names)}")
        chosen = model if sep and key is not None else given
        if key in models:
            raise InputError("gives one agent two models", field="--model", hint="give each agent one model")
        models[key] = chosen
    sets = []
    for name in names:
        one = {**params, "agent": name, "model": models.get(name, models.get(None))}
        if len(names) > 1:
            for key, (flag, backends) in AGENT_ONLY.items():
                if params.get(key) not in (None, (), []) and not set(backends) & set(names):
                    raise InputError(f"applies only to --agent {', '.join(backends)}, none of which is given",
                                     field=flag, hint=f"drop {flag}")
                if name not in backends:
                    one[key] = () if key == "agent_args" else None
        sets.append(one)
    return sets


def one_agent(params: dict[str, Any], command: str) -> dict[str, Any]:
    """The options of a command that runs one agent; InputError when several are given."""
    sets = per_agent(params)
    if len(sets) > 1:
        raise InputError(f"{command} runs one agent at a time", field="--agent",
                         hint="give --agent once (paired runs several)")
    return sets[0]


def build_agent(params: dict[str, Any], *, check: bool = True) -> Any:
    """The Agent the options describe, checked (``check()``): InputError before any run when it cannot run.
    ``check=False`` leaves the check to where the runs happen (the nodes of a Ray cluster).

    The command then adopts what its agents leave running outside their process group (``setsid cmd &``), so
    each run's end kills it (as ``eval`` does for skills)."""
    from ..agents import AGENTS, create_agent
    from ..procs import become_subreaper

    if isinstance(params.get("agent"), tuple | list) or isinstance(params.get("model"), tuple | list):
        params = one_agent(params, "this command")  # the options as given, not yet split per agent
    name = _backend(params.get("agent"), params.get("agent_cmd"), "claude")
    if name not in AGENTS or name not in AGENT_OPTIONS:
        known = ", ".join(sorted(set(AGENTS) & set(AGENT_OPTIONS)))
        raise InputError(f"unknown agent {name!r}", field="--agent", hint=f"use one of: {known}")
    _refuse_foreign(params, name, AGENT_ONLY, "--agent")
    agent = create_agent(name, **AGENT_OPTIONS[name](params))
    agent.use_sandbox(build_sandbox(params))
    if check:
        agent.check()
    become_subreaper()
    return agent


def build_sandbox(params: dict[str, Any]) -> Any:
    """The Sandbox the ``--sandbox*`` options describe (checked with the agent, before any run)."""
    from ..sandbox import Bind, SandboxSettings, create_sandbox

    settings = SandboxSettings(kind=params.get("sandbox") or "none", env=tuple(params.get("sandbox_env") or ()),
                               binds=tuple(Bind.parse(text) for text in params.get("sandbox_bind") or ()),
                               network=params.get("sandbox_network") or "host", image=params.get("sandbox_image"))
    return create_sandbox(settings)


def build_judge(params: dict[str, Any], llm: dict[str, Any] | None = None, cache: Any = None) -> Any:
    """The Judge the options (then the config's ``llm`` settings) describe, checked before any agent runs."""
    from ..judges import JUDGES, create_judge

    llm = _llm_settings(llm or {})
    name = _backend(params.get("judge"), params.get("judge_cmd"), str(llm.get("provider") or "openai"))
    own = llm.get("provider") in (None, name)  # the config's model and URL belong to its provider
    params = {**params, "judge_model": params.get("judge_model") or (llm.get("model") if own else None),
              "judge_base_url": llm.get("baseUrl") if own else None, "judge_temperature": llm.get("temperature")}
    if name not in JUDGES or name not in JUDGE_OPTIONS:
        known = ", ".join(sorted(set(JUDGES) & set(JUDGE_OPTIONS)))
        where = "--judge" if params.get("judge") or params.get("judge_cmd") is not None else "llm.provider"
        raise InputError(f"unknown judge {name!r}", field=where, hint=f"use one of: {known}")
    _refuse_foreign(params, name, JUDGE_ONLY, "--judge")
    judge = create_judge(name, **JUDGE_OPTIONS[name](params), cache=None if params.get("no_judge_cache") else cache)
    judge.check()
    return judge


def verdict_cache(params: dict[str, Any], store_path: Any) -> Any:
    """The judges' verdict cache in the results store at ``store_path`` (None: no store, or ``--no-judge-cache``),
    opened when a judge first uses it and closed when the command ends."""
    if store_path is None or params.get("no_judge_cache"):
        return None
    from ..store import VerdictStore

    cache = VerdictStore(store_path)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(cache.close)
    return cache
