"""``command``: any program as an agent, from a command template.

The template is split into words like a shell would (no shell runs), then the placeholders are replaced
inside each word, so a value always stays within its word, whatever it holds (quotes, spaces,
``$(...)``): ``{prompt}`` (the prompt text), ``{prompt_file}`` (a file holding the prompt, outside the
workspace), ``{workdir}`` (the workspace, absolute), ``{model}`` and ``{max_turns}`` (empty when not
set). Another ``{name}`` is refused as a mistyped placeholder; other braces (``${VAR}``, JSON) are
left alone. The program runs in the workspace; a relative program path is taken
from the current folder of the caller. Skills are installed under ``skills_subdir`` (default
``.agents/skills``); stdout is read by the parser named by ``output`` (``text``, ``events``, and the
formats of the agent CLIs that register one).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import InputError, SkillCrashed
from ..procs import resolve_argv
from .base import AgentRequest
from .output import PARSERS, OutputParser, ParseContext, create_parser
from .process import Launch, ProcessAgent

__all__ = ["PLACEHOLDERS", "CommandAgent"]

PLACEHOLDERS = ("prompt", "prompt_file", "workdir", "model", "max_turns")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_NAMED_BRACES = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")  # {name}, not a shell's ${name}


class CommandAgent(ProcessAgent):
    name = "command"

    def __init__(self, command: str | Sequence[str], *, output: str = "text", skills_subdir: str = ".agents/skills",
                 env: Mapping[str, str] | None = None) -> None:
        super().__init__(skills_subdir=skills_subdir, env=env)
        if isinstance(command, str):
            try:
                words = shlex.split(command)
            except ValueError as exc:
                raise InputError(f"cannot split the agent command: {exc}", field="agent command",
                                 hint="check its quotes") from None
        else:
            words = [str(word) for word in command]
        if not words:
            raise InputError("the agent command is empty", field="agent command",
                             hint="for example: my-agent --cwd {workdir} --prompt-file {prompt_file}")
        unknown = [m.group(0) for word in words for m in _NAMED_BRACES.finditer(word) if m.group(1) not in PLACEHOLDERS]
        if unknown:
            raise InputError(f"unknown placeholder {unknown[0]}", field="agent command",
                             hint="the placeholders are " + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS))
        self.words = words
        PARSERS.get(output)  # an unknown format fails here, before any run
        self.output = output

    def check(self) -> None:
        if not self.sandbox.host_programs:  # the program is inside the sandbox's image
            self.sandbox.check()
            return
        try:
            argv = resolve_argv(self.words, cwd=Path.cwd(), env=self.child_env())
        except SkillCrashed as exc:
            raise InputError(str(exc), field="agent command") from None
        self.check_sandbox(argv[0])

    def uses_prompt_file(self) -> bool:
        return any("{prompt_file}" in word for word in self.words)

    def launch(self, request: AgentRequest, workspace: Path, prompt_file: Path) -> Launch:
        values = {"prompt": request.prompt, "prompt_file": str(prompt_file), "workdir": str(workspace),
                  "model": request.model or "",
                  "max_turns": str(request.max_turns) if request.max_turns is not None else ""}
        return Launch([_PLACEHOLDER.sub(lambda m: values[m.group(1)], word) for word in self.words])

    def output_parser(self, context: ParseContext) -> OutputParser:
        return create_parser(self.output, context)
