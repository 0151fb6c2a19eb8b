"""A local Ray cluster for tests: a head and worker nodes on this machine, started and stopped by the tests.

Ray rewrites ``127.0.0.1`` to the machine's outward address, so every node is given that address explicitly; its
temporary folder is short (``/tmp/ray-es-<pid>``): the sockets in it must fit 107 bytes. Worker nodes start one
at a time (a node has 30 s to register, and two at once missed that on a loaded machine).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

ray = pytest.importorskip("ray")
from ray._common.utils import get_ray_address_file  # noqa: E402
from ray._private.services import get_node_ip_address  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

IP = get_node_ip_address()  # what Ray turns 127.0.0.1 into: every node and driver uses it
NODE = {"num_cpus": 2, "node_ip_address": IP, "include_dashboard": False}


@contextmanager
def local_cluster(workers: int = 2) -> Iterator[Any]:
    temp = f"/tmp/ray-es-{os.getpid()}"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    # the test cluster writes the head's address to Ray's default temporary folder (``/tmp/ray``), which only
    # exists on a machine where Ray ran before
    os.makedirs(os.path.dirname(get_ray_address_file(None)), exist_ok=True)
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "temp_dir": temp})
    try:
        for _ in range(workers):
            cluster.add_node(**NODE)
            cluster.wait_for_nodes()
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
