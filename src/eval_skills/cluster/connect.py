"""The driver's side of a Ray run: the connection, the size of one task, the nodes, checks on every node.

``ray.init`` on an address where nothing answers waits for a cluster for ever, so :func:`check_address` opens a
TCP connection to it first (a few seconds at most) and says in one line when nothing is there. With no address
(no ``--ray-address``, no ``RAY_ADDRESS``) a local Ray is started for the run and stopped after it.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..errors import InputError

__all__ = ["INSTALL_HINT", "RayCluster", "TaskShape", "check_address", "import_ray", "parse_resources"]

INSTALL_HINT = "pip install 'eval-skills[ray]'"
CONNECT_TIMEOUT_S = 5.0  # how long check_address waits for the cluster's port to answer
CHECK_TIMEOUT_S = 300.0  # how long the check on every node may take (a node may start its worker first)
STOP_WAIT_S = 30.0  # how long cancelled tasks get to stop their agents before the driver goes on
TASK_OPTIONS = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}


def import_ray() -> Any:
    """The ``ray`` module, or an InputError saying what to install."""
    try:
        import ray
    except ImportError:
        raise InputError("needs Ray, which is not installed here", field="--executor ray",
                         hint=INSTALL_HINT) from None
    return ray


@dataclass(frozen=True)
class TaskShape:
    """What one task asks of a node (``--ray-resources``): Ray's resource names to amounts."""

    resources: Mapping[str, float] = field(default_factory=lambda: {"CPU": 1.0})

    def options(self) -> dict[str, Any]:
        """Keyword arguments of ``.options()`` for a task of this size."""
        options: dict[str, Any] = {"num_cpus": 1.0}
        custom: dict[str, float] = {}
        for name, amount in self.resources.items():
            if name in TASK_OPTIONS:
                options[TASK_OPTIONS[name]] = amount
            else:
                custom[name] = amount
        if custom:
            options["resources"] = custom
        return options

    def fits(self, node: Mapping[str, float]) -> int:
        """How many tasks of this size a node with these resources runs at once."""
        wanted = {"CPU": 1.0, **self.resources}
        counts = [math.floor(node.get(name, 0.0) / amount + 1e-9) for name, amount in wanted.items() if amount > 0]
        return min(counts) if counts else 0


def parse_resources(text: str | None) -> TaskShape:
    """``--ray-resources``: a JSON object of resource names to non-negative numbers, e.g. ``{"CPU": 1, "agent": 1}``
    (``CPU`` is 1 unless given)."""
    if text is None:
        return TaskShape()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"is not JSON ({exc.msg})", field="--ray-resources",
                         hint='give an object such as \'{"CPU": 1, "agent": 1}\'') from None
    if not isinstance(data, dict) or not data:
        raise InputError("is not a JSON object of resource amounts", field="--ray-resources",
                         hint='give an object such as \'{"CPU": 1, "agent": 1}\'')
    for name, amount in data.items():
        if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount) \
                or amount < 0:
            raise InputError(f"the amount of {name!r} is not a non-negative number: {amount!r}",
                             field="--ray-resources")
    if not any(amount > 0 for amount in data.values()) and data.get("CPU", 1) == 0:
        raise InputError("asks for nothing: every run would start at once", field="--ray-resources",
                         hint="ask for at least one resource, e.g. {\"agent\": 1}")
    return TaskShape({str(k): float(v) for k, v in data.items()})


def check_address(address: str | None, *, source: str = "--ray-address") -> None:
    """Raise InputError unless something answers at ``address`` (``host:port`` or ``ray://host:port``);
    ``auto`` and ``local`` are left to Ray. ``source`` names where the address came from."""
    if address is None or address in ("auto", "local"):
        return
    rest = address.removeprefix("ray://")
    host, sep, port_text = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InputError(f"{address!r} is not a Ray address", field=source,
                         hint="give host:port of the head node (its GCS port, 6379 by default) or ray://host:port")
    try:
        with socket.create_connection((host, int(port_text)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(f"no Ray cluster answers at {address} ({reason})", field=source,
                         hint="start one with 'ray start --head', or give neither --ray-address nor RAY_ADDRESS "
                              "to start a local Ray for the run") from None


def _node_label(node: Mapping[str, Any]) -> str:
    name = node.get("NodeName") or node.get("NodeManagerAddress") or "?"
    return f"{name} ({str(node.get('NodeID', ''))[:8]})"


class RayCluster:
    """A connection to a cluster for one run. ``address`` None: ``RAY_ADDRESS``, else a local Ray started now
    (with ``local_cpus`` CPUs, default all) and stopped by :meth:`close`."""

    def __init__(self, address: str | None = None, *, shape: TaskShape | None = None,
                 local_cpus: int | None = None) -> None:
        source = "--ray-address"
        if address is None and os.environ.get("RAY_ADDRESS"):
            address, source = os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
        check_address(address, source=source)
        self.ray = import_ray()
        self.shape = shape or TaskShape()
        self.address = address
        self.started = False  # a local Ray started for this run
        self.connected = False  # this run connected (and disconnects at the end)
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if self.ray.is_initialized():  # a caller that connected already (a script, a test)
            return
        quiet = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
        try:
            if address is None:
                self.ray.init(num_cpus=local_cpus, **quiet)
                self.started = True
            else:
                self.ray.init(address=address, **{k: v for k, v in quiet.items() if k != "include_dashboard"})
            self.connected = True
        except ConnectionError as exc:
            raise InputError(f"cannot connect to the Ray cluster: {exc}", field=source) from None
        self._remotes: dict[Callable[..., Any], Any] = {}

    def remote(self, fn: Callable[..., Any], **options: Any) -> Any:
        """``fn`` as a Ray remote function (made once per function)."""
        remotes = self.__dict__.setdefault("_remotes", {})
        if fn not in remotes:
            remotes[fn] = self.ray.remote(fn)
        return remotes[fn].options(**options) if options else remotes[fn]

    def nodes(self) -> list[dict[str, Any]]:
        """The nodes alive now that can take a task of :attr:`shape`."""
        return [n for n in self.ray.nodes() if n.get("Alive") and self.shape.fits(n.get("Resources") or {}) > 0]

    def capacity(self) -> int:
        """How many tasks of :attr:`shape` the cluster runs at once; InputError when no node takes one."""
        slots = sum(self.shape.fits(n.get("Resources") or {}) for n in self.nodes())
        if slots == 0:
            shown = json.dumps(dict(self.shape.resources))
            have = "; ".join(f"{_node_label(n)}: {json.dumps(n.get('Resources') or {})}"
                             for n in self.ray.nodes() if n.get("Alive")) or "no node is alive"
            raise InputError(f"no node of the cluster has what one run asks for ({shown}); {have}",
                             field="--ray-resources", hint="lower --ray-resources, or start nodes that have it")
        return slots

    def on_every_node(self, fn: Callable[..., Any], *args: Any) -> list[tuple[str, Any]]:
        """Run ``fn(*args)`` once on every node that can take a task; ``(node label, its result)`` each."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = self.nodes()
        refs = [self.remote(fn, num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(*args) for n in nodes]
        try:
            values = self.ray.get(refs, timeout=CHECK_TIMEOUT_S)
        except self.ray.exceptions.GetTimeoutError:
            raise InputError(f"the check on the cluster's nodes did not finish within {CHECK_TIMEOUT_S:g} s",
                             field="--executor ray", hint="see 'ray status' for nodes that are busy") from None
        except self.ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise InputError(f"a node could not run eval-skills: {first}", field="--executor ray",
                             hint=f"install eval-skills {__version__} and Ray on every node (docs/ray.md)") from None
        return [(_node_label(n), value) for n, value in zip(nodes, values, strict=True)]

    def check_nodes(self, fn: Callable[..., Any], *args: Any) -> int:
        """Run the check ``fn(*args)`` (it returns ``(eval-skills version, problem or None)``) on every node
        that can take a task: InputError naming the first node that cannot. The number of nodes checked."""
        results = self.on_every_node(fn, *args)
        for label, (version, problem) in results:
            if version != __version__:
                raise InputError(f"Ray node {label} has eval-skills {version}, this machine {__version__}",
                                 field="--executor ray", hint="install the same version on every node")
            if problem:
                raise InputError(f"on Ray node {label}: {problem}", field="--executor ray",
                                 hint="install what is missing on that node, or give it no resources for runs")
        return len(results)

    def stop_tasks(self, refs: Iterable[Any], wait_s: float = STOP_WAIT_S) -> None:
        """Cancel the tasks of ``refs`` and wait (at most ``wait_s``) for them to end: a cancelled task kills its
        agents' process trees before it ends; one whose driver is gone is killed with its worker, and a detached
        child of its agent would live on."""
        refs = list(refs)
        for ref in refs:
            try:
                self.ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 - finished already, or its node is gone
                continue
        end = time.monotonic() + wait_s
        pending = refs
        while pending and time.monotonic() < end:
            _, pending = self.ray.wait(pending, num_returns=len(pending), timeout=0.1, fetch_local=False)

    def close(self) -> None:
        """Disconnect (which stops the local Ray this run started)."""
        if self.connected and self.ray.is_initialized():
            self.ray.shutdown()
