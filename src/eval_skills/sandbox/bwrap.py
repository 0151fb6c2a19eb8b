"""``bwrap``: bubblewrap (Debian's ``bubblewrap`` package). The workspace and a private ``/tmp`` (a tmpfs: in
memory, gone with the run) are the only writable places, the rest of the system is read-only, the user's home
folder is an empty read-only folder and the run's home is a private one holding only what the agent needs to
authenticate and start.

The program runs in its own PID, IPC and UTS namespaces (``--unshare-net`` too with ``--sandbox-network none``)
and a new session; when it exits, or when the harness kills bwrap, everything it started inside dies with it.
The installed skills and the prompt file are bound read-only over their writable places, and every
``--sandbox-bind`` path is bound at its own path. A ``TMPDIR`` or scratch folder (where the other runs live:
:attr:`RunPaths.hidden`) outside ``/tmp`` and ``/dev`` is hidden too.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from ..errors import InputError
from .base import RunPaths, Sandbox

__all__ = ["BwrapSandbox", "bwrap_probe"]

PROBE_TIMEOUT = 10.0
NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts")


@cache
def bwrap_probe(program: str, no_network: bool) -> str | None:
    """None when ``program`` can create a sandbox here, else what went wrong (once per process)."""
    true = shutil.which("true") or "/bin/true"
    argv = [program, "--die-with-parent", "--new-session", *NAMESPACES, *(["--unshare-net"] if no_network else []),
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", true]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"


class BwrapSandbox(Sandbox):
    kind = "bwrap"
    program = "bwrap"

    def check(self) -> None:
        found = shutil.which(self.program)
        if found is None:
            raise InputError("bubblewrap (bwrap) is not installed", field="--sandbox",
                             hint="install it (apt-get install bubblewrap) or run with --sandbox none")
        problem = bwrap_probe(found, self.settings.network == "none")
        if problem is not None:
            raise InputError(f"bwrap cannot create a sandbox here: {problem}", field="--sandbox",
                             hint="the kernel refuses the namespaces bwrap needs (unprivileged user namespaces "
                                  "disabled?); enable them or run with --sandbox none")
        self._program = found

    def command(self, argv: Sequence[str], run: RunPaths, env: Mapping[str, str]) -> list[str]:
        program = getattr(self, "_program", None) or shutil.which(self.program) or self.program
        home = Path.home()
        cmd = [program, "--die-with-parent", "--new-session", *NAMESPACES]
        if self.settings.network == "none":
            cmd.append("--unshare-net")
        cmd += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        # the folders other runs live in (TMPDIR, the run's hidden ones), unless /tmp or /dev hide them already
        for folder in dict.fromkeys(Path(f).resolve() for f in (Path(tempfile.gettempdir()), *run.hidden)):
            if folder != Path("/") and not folder.is_relative_to("/tmp") and not folder.is_relative_to("/dev"):
                cmd += ["--tmpfs", str(folder)]
        hide_home = home != Path("/") and home.is_dir()
        if hide_home:
            cmd += ["--tmpfs", str(home)]
        cmd += ["--bind", str(run.home), str(run.home), "--bind", str(run.workspace), str(run.workspace)]
        for path in run.read_only:
            cmd += ["--ro-bind", str(path), str(path)]
        for source, inside in run.home_binds:
            cmd += ["--ro-bind", str(source), str(inside)]
        for bind in self.settings.binds:
            cmd += ["--ro-bind" if bind.read_only else "--bind", str(bind.path), str(bind.path)]
        if hide_home:
            cmd += ["--remount-ro", str(home)]
        return [*cmd, "--chdir", str(run.workspace), "--", *argv]
