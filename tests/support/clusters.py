"""Real compute clusters on this machine for tests: a Dask LocalCluster and a local Ray instance.

Each is started once per test session (per xdist worker: ``conftest.py`` has each engine's test
file run whole in one worker) and shared by the tests. The Dask cluster
runs in a subprocess of its own, so its worker processes are not children of the test process
(tests that count their children, or ``multiprocessing.active_children()``, see none of them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["dask_client", "ray_cluster"]

TESTS = Path(__file__).resolve().parents[1]
DASK_HOST = """
import sys
from distributed import LocalCluster
if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()  # until the test session closes it
"""


def _python_path() -> str:
    """``PYTHONPATH`` with the tests folder, so cluster workers import ``fns``."""
    return os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))


@pytest.fixture(scope="session")
def dask_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A ``distributed.Client`` of a 2-worker ``LocalCluster`` (processes) for this session."""
    distributed = pytest.importorskip("distributed")
    log = tmp_path_factory.mktemp("dask") / "cluster.log"
    with log.open("wb") as errors:
        host = subprocess.Popen(
            [sys.executable, "-c", DASK_HOST],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**os.environ, "PYTHONPATH": _python_path()},
            start_new_session=True,
        )
    assert host.stdout is not None
    assert host.stdin is not None
    address = host.stdout.readline().decode().strip()
    if not address:
        host.wait(10)
        raise RuntimeError(f"the Dask cluster did not start:\n{log.read_text()[-2000:]}")
    client = distributed.Client(address)
    client.wait_for_workers(2, timeout=60)
    try:
        yield client
    finally:
        client.close()
        host.stdin.close()
        host.stdout.close()
        try:
            host.wait(30)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """This process connected to a local Ray instance with 2 CPUs, for this session."""
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": _python_path()}},
    )
    try:
        yield ray
    finally:
        ray.shutdown()
