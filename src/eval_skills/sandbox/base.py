"""The sandbox interface: what an agent run may see and change, decided around its program.

A :class:`Sandbox` is given a run's :class:`RunPaths` (its workspace, a private home folder, the paths it may
read but not change: its installed skills, its prompt file; each backend gives the run a private, empty ``/tmp``
of its own) and the agent's command line, and
returns the command line that runs it confined. :meth:`Sandbox.environment` builds the child's environment:
the caller's whole environment for ``none``; for the others an allow-list (:data:`BASE_VARIABLES`, the proxy and
certificate settings, the agent's own key variables, and the names the user adds), with ``HOME`` and ``TMPDIR``
pointing at the private folders. :meth:`Sandbox.describe` says what isolation a run had, by names, never values.

Backends: ``none`` (:mod:`.none`), ``bwrap`` (:mod:`.bwrap`), ``docker`` (:mod:`.docker`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..errors import InputError

__all__ = ["BASE_VARIABLES", "Bind", "RunPaths", "Sandbox", "SandboxSettings", "allowed_environment"]

# what every confined program gets, when set: its PATH, its locale, its terminal, and how it reaches the network
BASE_VARIABLES = ("PATH", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "COLORTERM", "NO_COLOR",
                  "http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                  "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
_LOCALE = re.compile(r"LC_[A-Z_]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Network = Literal["host", "none"]


@dataclass(frozen=True, slots=True)
class Bind:
    """A host path the run also sees, at the same path: writable unless ``read_only``."""

    path: Path
    read_only: bool = False

    @classmethod
    def parse(cls, text: str) -> Bind:
        """``PATH`` or ``PATH:ro`` (``PATH:rw`` is writable too); the path must exist."""
        path, read_only = text, False
        for suffix, flag in ((":ro", True), (":rw", False)):
            if text.endswith(suffix):
                path, read_only = text[: -len(suffix)], flag
        if not path:
            raise InputError(f"{text!r} names no path", field="--sandbox-bind", hint="give PATH or PATH:ro")
        resolved = Path(path).expanduser().resolve()
        if not resolved.exists():
            raise InputError("does not exist", file=path, field="--sandbox-bind")
        return cls(resolved, read_only)

    def __str__(self) -> str:
        return f"{self.path}:ro" if self.read_only else str(self.path)


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The user's sandbox options: ``kind`` (none, bwrap, docker), the variables ``env`` adds to the allow-list,
    the paths ``binds`` adds, the ``network`` (host or none) and, for docker, the ``image``."""

    kind: str = "none"
    env: tuple[str, ...] = ()
    binds: tuple[Bind, ...] = ()
    network: Network = "host"
    image: str | None = None

    def __post_init__(self) -> None:
        for name in self.env:
            if not _NAME.fullmatch(name):
                raise InputError(f"{name!r} is not a variable name", field="--sandbox-env",
                                 hint="give the name only (its value is taken from your environment)")
        if self.network not in ("host", "none"):
            raise InputError(f"unknown network {self.network!r}", field="--sandbox-network", hint="host or none")


@dataclass(frozen=True, slots=True)
class RunPaths:
    """One run's places: ``workspace`` (writable, the current folder), ``home`` (private, writable, empty but
    for the agent's credentials), ``read_only`` (inside the workspace or beside it: seen, never changed),
    ``name``, unique to the run (a container's name), and ``home_binds``: host folders the run sees read-only
    inside its home, as ``(host path, path in the home)`` (an agent's cache of packages); ``hidden``: folders
    of the host the run must not see (where the other runs live)."""

    workspace: Path
    home: Path
    read_only: tuple[Path, ...] = ()
    name: str = ""
    home_binds: tuple[tuple[Path, Path], ...] = ()
    hidden: tuple[Path, ...] = ()


def allowed_environment(env: Mapping[str, str], names: Iterable[str]) -> dict[str, str]:
    """The variables of ``env`` named in ``names`` or :data:`BASE_VARIABLES`, or a locale's ``LC_*``."""
    wanted = set(BASE_VARIABLES) | set(names)
    return {name: value for name, value in env.items() if name in wanted or _LOCALE.fullmatch(name)}


class Sandbox(ABC):
    """One way of confining agent runs. ``private_home``: the runs get a private home folder and an
    allow-listed environment (False only for ``none``)."""

    kind: ClassVar[str] = ""
    private_home: ClassVar[bool] = True
    host_programs: ClassVar[bool] = True  # the program is found on this machine (False: inside an image)

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings(kind=self.kind)

    @abstractmethod
    def check(self) -> None:
        """Raise InputError when this sandbox cannot run here (its program missing, refused by the kernel)."""

    @abstractmethod
    def command(self, argv: Sequence[str], run: RunPaths, env: Mapping[str, str]) -> list[str]:
        """The command line that runs ``argv`` confined to ``run`` with the environment ``env``."""

    def environment(self, env: Mapping[str, str], names: Iterable[str], run: RunPaths) -> dict[str, str]:
        """The confined program's environment: the allow-list of ``env`` (``names`` are the agent's own
        variables), with ``HOME`` and ``TMPDIR`` set to the run's private folders as the program sees them."""
        allowed = allowed_environment(env, [*names, *self.settings.env])
        return {**allowed, "HOME": str(self.home_inside(run)), "TMPDIR": "/tmp"}

    def process_environment(self, env: Mapping[str, str], inside: Mapping[str, str]) -> dict[str, str]:
        """The environment of the process started (bwrap passes its own on; a client may need others)."""
        return dict(inside)

    def home_inside(self, run: RunPaths) -> Path:
        """Where the program sees its home folder."""
        return run.home

    def exposes(self, path: Path) -> bool:
        """Whether a path of the user's home folder is visible to the runs (through a bind)."""
        return any(path == bind.path or path.is_relative_to(bind.path) for bind in self.settings.binds)

    async def stop(self, run: RunPaths) -> None:  # noqa: B027 - optional hook
        """Called once the run is over (killed or not): stop whatever runs it outside our process tree."""

    def describe(self, variables: Iterable[str], home_files: Iterable[str]) -> dict[str, Any]:
        """What isolation the runs have, for their records: names only, never values."""
        return {"sandbox": self.kind, "home": "private", "home_files": sorted(home_files),
                "environment": "allow-list", "variables": sorted(set(variables)),
                "network": self.settings.network, "binds": [str(b) for b in self.settings.binds],
                **({"image": self.settings.image} if self.settings.image else {})}

