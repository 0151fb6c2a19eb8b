"""``docker``: the same contract in a container of ``--sandbox-image`` (the agent CLI inside the image).

``docker run --rm -i --init --read-only`` with a private ``/tmp`` (tmpfs), the workspace, the private home and the
``--sandbox-bind`` paths mounted at their own paths, the installed skills and the prompt file read-only, the
network of the host or none, and the host's user and group (files it writes stay yours). Variables are passed
by name (``-e NAME``): their values never appear on a command line. The program is looked up inside the image.
Once the run is over the container is removed by name, whatever happened to the ``docker`` client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence

from ..errors import InputError
from .base import RunPaths, Sandbox, allowed_environment

__all__ = ["DockerSandbox"]

CHECK_TIMEOUT = 15.0
_DOCKER_VARIABLES = ("DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY")


class DockerSandbox(Sandbox):
    kind = "docker"
    program = "docker"
    host_programs = False

    def check(self) -> None:
        if not self.settings.image:
            raise InputError("--sandbox docker needs the image the agent runs in", field="--sandbox-image",
                             hint="give --sandbox-image IMAGE (the agent CLI installed in it)")
        found = shutil.which(self.program)
        if found is None:
            raise InputError("docker is not installed", field="--sandbox", hint="install Docker or use --sandbox bwrap")
        try:
            done = subprocess.run([found, "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                                  timeout=CHECK_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InputError(f"docker does not answer: {exc}", field="--sandbox") from None
        if done.returncode != 0:
            lines = [ln for ln in done.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
            raise InputError(f"no Docker daemon answers ({lines[-1].strip() if lines else 'docker info failed'})",
                             field="--sandbox", hint="start the Docker daemon or use --sandbox bwrap")

    def environment(self, env: Mapping[str, str], names: Iterable[str], run: RunPaths) -> dict[str, str]:
        inside = super().environment(env, names, run)
        inside.pop("PATH", None)  # the image's own
        return inside

    def command(self, argv: Sequence[str], run: RunPaths, env: Mapping[str, str]) -> list[str]:
        cmd = [self.program, "run", "--rm", "-i", "--init", "--read-only", "--name", run.name,
               "--network", "none" if self.settings.network == "none" else "host",
               "--user", f"{os.getuid()}:{os.getgid()}", "--tmpfs", "/tmp:rw,exec,mode=1777",
               "-v", f"{run.workspace}:{run.workspace}", "-v", f"{run.home}:{run.home}"]
        for path in run.read_only:
            cmd += ["-v", f"{path}:{path}:ro"]
        for source, inside in run.home_binds:
            cmd += ["-v", f"{source}:{inside}:ro"]
        for bind in self.settings.binds:
            cmd += ["-v", f"{bind.path}:{bind.path}{':ro' if bind.read_only else ''}"]
        for name in sorted(env):
            cmd += ["-e", name]  # the value comes from the docker client's environment
        return [*cmd, "-w", str(run.workspace), self.settings.image or "", *argv]

    def process_environment(self, env: Mapping[str, str], inside: Mapping[str, str]) -> dict[str, str]:
        """The docker client's own environment: what it needs to reach the daemon, plus the values ``-e``
        passes into the container."""
        return {**allowed_environment(env, _DOCKER_VARIABLES), "PATH": env.get("PATH", os.defpath), **inside}

    async def stop(self, run: RunPaths) -> None:
        with contextlib.suppress(OSError):
            proc = await asyncio.create_subprocess_exec(
                self.program, "rm", "-f", run.name, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), CHECK_TIMEOUT)
