"""Shared fixtures: real files in tmp_path, real processes, real object stores; no mocks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.clusters import dask_client, ray_cluster  # noqa: F401  # session fixtures
from support.links import link, link_server  # noqa: F401  # link fixtures
from support.servers import (  # noqa: F401  # session fixtures
    azurite_server,
    gcs_server,
    moto_server,
    s3_server,
    seaweedfs_server,
)

from litdata.core.registry import kinds
from litdata.testing import rediscover

#: Test files whose tests share one compute cluster: each runs whole in one xdist worker, so
#: that the cluster starts once.
CLUSTER_FILES = (
    "tests/plugins/executors/test_dask_executor.py",
    "tests/plugins/executors/test_ray_executor.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n``, distribute tests one by one, except each cluster file, kept whole."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ClusterFilesTogether(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in CLUSTER_FILES else nodeid

    return ClusterFilesTogether(config, log)


@pytest.fixture(autouse=True)
def _private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own chunk cache; nothing is written under the home directory."""
    monkeypatch.setenv("LITDATA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def fresh_plugins() -> Iterator[None]:
    """Rediscover plugins before and after a test that installs or registers some."""
    rediscover()
    with _isolated():
        yield
    rediscover()


class _isolated:  # used as a context manager, reads like one
    def __enter__(self) -> None:
        self._contexts = [registry.isolated() for registry in kinds.ALL.values()]
        for context in self._contexts:
            context.__enter__()

    def __exit__(self, *exc: object) -> None:
        for context in reversed(self._contexts):
            context.__exit__(*exc)
