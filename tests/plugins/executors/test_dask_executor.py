"""The dask executor on a LocalCluster of 2 worker processes (one per session, see clusters.py)."""

from __future__ import annotations

import pytest
from support import fns
from support.cluster_cases import ClusterCases

import litdata as ld
from litdata.testing import ExecutorContract

pytest.importorskip("distributed")


class TestDaskExecutor(ExecutorContract):
    @pytest.fixture
    def executor(self, dask_client):
        from litdata.plugins.executors.dask import DaskExecutor

        return DaskExecutor(client=dask_client)


class TestOnDask(ClusterCases):
    @pytest.fixture
    def engine(self, dask_client):
        return "dask", {"address": dask_client.scheduler.address}


def test_num_nodes_waits_for_machines(dask_client, tmp_path):
    options = {"address": dask_client.scheduler.address, "wait_seconds": 0.5}
    with pytest.raises(ValueError, match=r"num_nodes=2: the Dask cluster has 1 machine"):
        ld.optimize(
            fns.record,
            range(10),
            tmp_path / "ds",
            chunk_size=4,
            num_nodes=2,
            executor="dask",
            executor_options=options,
            verbose=False,
        )
    assert not (tmp_path / "ds" / ".litdata.lock").exists()
