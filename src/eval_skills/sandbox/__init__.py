"""What an agent run can see and change: one module per backend behind :class:`Sandbox`.

    sandbox = create_sandbox(SandboxSettings("bwrap", env=("MY_TOKEN",), binds=(Bind.parse("/opt/tools:ro"),)))
    sandbox.check()                  # InputError (exit 2) when it cannot run here
    argv = sandbox.command(argv, RunPaths(workspace, home), env)

Backends: ``none`` (no confinement), ``bwrap`` (bubblewrap), ``docker`` (a container of ``--sandbox-image``).
"""

from __future__ import annotations

from ..errors import InputError
from .base import BASE_VARIABLES, Bind, RunPaths, Sandbox, SandboxSettings, allowed_environment

__all__ = ["BASE_VARIABLES", "SANDBOXES", "Bind", "RunPaths", "Sandbox", "SandboxSettings", "allowed_environment",
           "create_sandbox"]

SANDBOXES = ("none", "bwrap", "docker")


def create_sandbox(settings: SandboxSettings | str | None = None) -> Sandbox:
    """The backend of ``settings.kind`` (a name is taken as default settings of that kind)."""
    if settings is None or isinstance(settings, str):
        settings = SandboxSettings(kind=settings or "none")
    if settings.kind == "none":
        from .none import NoSandbox

        if settings.env or settings.binds or settings.network != "host" or settings.image:
            raise InputError("--sandbox-env, --sandbox-bind, --sandbox-network and --sandbox-image need a sandbox",
                             field="--sandbox", hint="add --sandbox bwrap (or docker)")
        return NoSandbox(settings)
    if settings.kind == "bwrap":
        from .bwrap import BwrapSandbox

        if settings.image:
            raise InputError("applies only to --sandbox docker", field="--sandbox-image")
        return BwrapSandbox(settings)
    if settings.kind == "docker":
        from .docker import DockerSandbox

        return DockerSandbox(settings)
    raise InputError(f"unknown sandbox {settings.kind!r}", field="--sandbox",
                     hint="use one of: " + ", ".join(SANDBOXES))
