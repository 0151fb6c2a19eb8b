"""``codex``: OpenAI Codex CLI, ``codex exec`` with JSON-lines output.

Command line (the prompt on stdin, read because of the final ``-``)::

    codex exec --json --skip-git-repo-check --sandbox workspace-write [--model M] -

``workspace-write`` lets the agent write in its workspace (and nowhere else) and run commands in Codex's
sandbox; give ``--sandbox ...``, ``--full-auto`` or ``--dangerously-bypass-approvals-and-sandbox`` among the
extra arguments to choose otherwise. Codex has no turn limit: a requested one is not applied.

Skills are installed at ``<workspace>/.agents/skills/<name>/``. Codex also loads skills from
``~/.agents/skills``, ``~/.codex/skills`` (``$CODEX_HOME/skills``), ``/etc/codex/skills``, its bundled
system skills, and ``.agents/skills`` in every parent folder of the workspace up to the repository root.

Codex refuses to create its helper programs (the sandbox's) under the temporary folder, and then every command
it runs in its sandbox fails: a ``CODEX_HOME`` inside ``TMPDIR`` (``/tmp``) is refused before anything runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import InputError
from .preset import CliAgent

__all__ = ["CodexAgent"]


class CodexAgent(CliAgent):
    name = "codex"
    skills_subdir = ".agents/skills"
    last_args = ("-",)  # read the prompt from stdin

    def check(self) -> None:
        super().check()
        env = self.child_env()
        home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or Path.home()) / ".codex").resolve()
        tmp = Path(env.get("TMPDIR") or tempfile.gettempdir()).resolve()
        if home.is_relative_to(tmp):
            raise InputError(f"Codex's home {home} is inside the temporary folder {tmp}: Codex then refuses to set up "
                             "its sandbox helper and every command it runs fails", field="CODEX_HOME",
                             hint="set CODEX_HOME (or TMPDIR) so that the home is outside the temporary folder")

    def arguments(self, model: str | None, max_turns: int | None, workspace: Path) -> list[str]:
        args = ["exec", *[flag for flag in ("--json", "--skip-git-repo-check") if not self.given(flag)]]
        if not self.given("--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo"):
            args += ["--sandbox", "workspace-write"]
        if model and not self.given("--model", "-m"):
            args += ["--model", model]
        return args

    def user_skill_dirs(self) -> list[Path]:
        codex_home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return [Path.home() / ".agents" / "skills", codex_home / "skills", Path("/etc/codex/skills")]
