"""``--executor``, ``--ray-address``, ``--ray-resources`` and ``--ray-env``: where the runs of ``paired``,
``routing`` and ``eval`` happen (this machine, or tasks on a Ray cluster), and the connection to the cluster."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..errors import InputError

__all__ = ["concurrency_given", "connect_cluster", "eval_scheduler", "executor_options", "on_ray", "ray_executor"]

F = Callable[..., Any]


def executor_options(fn: F) -> F:
    options = [
        click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                     help="Where the runs happen: this machine, or tasks on a Ray cluster (pip install "
                          "'eval-skills[ray]'; see docs/ray.md)."),
        click.option("--ray-address", default=None, metavar="HOST:PORT",
                     help="The Ray cluster of --executor ray [default: RAY_ADDRESS, else a local Ray started for "
                          "the run]."),
        click.option("--ray-resources", default=None, metavar="JSON",
                     help='What one run asks of a node, e.g. \'{"CPU": 1, "agent": 1}\' [default: {"CPU": 1}]; '
                          "the cluster runs as many at once as its nodes have."),
        click.option("--ray-env", "ray_env", multiple=True, metavar="NAME",
                     help="A variable of this environment given to the runs on the nodes (repeat it for several)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def on_ray(params: dict[str, Any]) -> bool:
    """Whether the runs go to Ray; the Ray options are refused without ``--executor ray``."""
    if params.get("executor") == "ray":
        return True
    for key, flag in (("ray_address", "--ray-address"), ("ray_resources", "--ray-resources"),
                      ("ray_env", "--ray-env")):
        if params.get(key) not in (None, (), []):
            raise InputError("applies only to --executor ray", field=flag, hint="add --executor ray, or drop it")
    return False


def concurrency_given() -> bool:
    """Whether ``--concurrency`` was given (on Ray it then caps the runs at once; else the cluster decides)."""
    ctx = click.get_current_context(silent=True)
    source = ctx.get_parameter_source("concurrency") if ctx is not None else None
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def connect_cluster(params: dict[str, Any]) -> Any:
    """The Ray cluster of the options, connected (closed when the command ends); InputError when Ray is missing,
    the address answers nothing, or no node takes a run of ``--ray-resources``."""
    from ..cluster import RayCluster, parse_resources

    shape = parse_resources(params.get("ray_resources"))
    local_cpus = params.get("concurrency") if concurrency_given() else None
    cluster = RayCluster(params.get("ray_address"), shape=shape, local_cpus=local_cpus)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(cluster.close)
    cluster.capacity()  # no node takes a run: said now
    return cluster


def ray_executor(params: dict[str, Any], agent: Any, cluster: Any, *, max_file_bytes: int | None = None) -> Any:
    """The Ray executor for ``agent``, checked on every node before any run."""
    from ..paired.ray_executor import RayExecutor

    extra = {} if max_file_bytes is None else {"max_file_bytes": max_file_bytes}
    executor = RayExecutor(agent, cluster, slots=params["concurrency"] if concurrency_given() else None,
                           forward_env=tuple(params.get("ray_env") or ()), **extra)
    executor.check()
    return executor


def eval_scheduler(plan: Any, params: dict[str, Any]) -> Any:
    """Where the items run: None (here), or shards on a Ray cluster, checked on every node before any run."""
    if params.get("ray_env"):
        raise InputError("applies to agent runs (paired, routing): a skill gets its adapter.config.json passEnv",
                         field="--ray-env", hint="drop --ray-env")
    if not on_ray(params):
        if params.get("shard_tasks") is not None:
            raise InputError("applies only to --executor ray", field="--shard-tasks", hint="drop it")
        return None
    from ..tool_skills.ray_shards import RayShards

    shards = RayShards(connect_cluster(params), shard_tasks=params.get("shard_tasks"))
    shards.check(plan)
    return shards
