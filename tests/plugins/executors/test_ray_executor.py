"""The ray executor on a local Ray instance with 2 CPUs (one per session, see clusters.py)."""

from __future__ import annotations

import pytest
from support.cluster_cases import ClusterCases

from litdata.testing import ExecutorContract

pytest.importorskip("ray")


class TestRayExecutor(ExecutorContract):
    @pytest.fixture
    def executor(self, ray_cluster):
        from litdata.plugins.executors.ray import RayExecutor

        return RayExecutor()


class TestOnRay(ClusterCases):
    @pytest.fixture
    def engine(self, ray_cluster):
        return "ray", {}
