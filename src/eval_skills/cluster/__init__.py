"""Running work on a Ray cluster: the driver's side (:mod:`.connect`) and the node's side (:mod:`.node`).

- :mod:`.connect` imports Ray only when it is asked for (``pip install 'eval-skills[ray]'``), checks an address
  answers before ``ray.init`` (which waits for ever on a dead one), starts a local Ray when no address is given,
  turns ``--ray-resources`` into task options, counts how many tasks of that size the cluster takes at once, runs
  a check on every node that can take one, and cancels tasks and waits for them to end.
- :mod:`.node` runs an asynchronous body inside a Ray task: in an event loop of its own, while the task's thread
  wakes every 50 ms, so a ``ray.cancel`` is seen at once; the body is then cancelled, and whatever the task
  started (also what left its process group or lost its parent) is killed before the task ends.

The backends built on it: :class:`~eval_skills.paired.ray_executor.RayExecutor` (agent runs) and
:mod:`eval_skills.tool_skills.ray_shards` (tool-skill evaluations in shards).
"""

from __future__ import annotations

from .connect import (
    INSTALL_HINT,
    RayCluster,
    TaskShape,
    check_address,
    import_ray,
    parse_resources,
)
from .node import POLL_S, kill_everything_below, run_async, stream_async

__all__ = ["INSTALL_HINT", "POLL_S", "RayCluster", "TaskShape", "check_address", "import_ray",
           "kill_everything_below", "parse_resources", "run_async", "stream_async"]
