"""Fixtures of the realistic link: a ``LinkProxy`` in front of the session's moto server.

``link_server`` (session) starts one proxy per test session in front of ``s3_server``, open (no
limits) between tests. ``link`` (function) gives a test that proxy at ``DEFAULT_LINK`` with an
empty log; ``link.use(settings)`` changes the settings for the rest of the test; afterwards the
proxy is open again and its log empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from support.link_proxy import DEFAULT_LINK, OPEN_LINK, LinkProxy, LinkSettings, Logged
from support.servers import ObjectStore

__all__ = ["Link", "link", "link_server"]


@dataclass
class Link:
    """The link as a test sees it: moto behind a ``LinkProxy``.

    Attributes:
        proxy: The proxy (its ``log``, ``stats()``, ``settings``).
        store: The moto server behind it (reach it directly through ``store.storage_options``).
    """

    proxy: LinkProxy
    store: ObjectStore

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT`` of the proxy."""
        return self.proxy.endpoint

    @property
    def storage_options(self) -> dict[str, Any]:
        """What to pass as ``storage_options`` to reach moto through the link."""
        return {**self.store.storage_options, "endpoint_url": self.proxy.endpoint}

    @property
    def log(self) -> list[Logged]:
        """The requests that went through the link in this test."""
        return self.proxy.log

    def new_bucket(self) -> str:
        """A fresh bucket, created on moto directly (not through the link, not in the log)."""
        return self.store.new_bucket()

    def url(self, bucket: str, path: str = "") -> str:
        """The ``s3://`` URL of ``path`` in ``bucket``."""
        return self.store.url(bucket, path)

    def use(self, settings: LinkSettings) -> None:
        """Apply ``settings`` from now on, for the rest of this test."""
        self.proxy.settings = settings


@pytest.fixture(scope="session")
def link_server(moto_server: ObjectStore) -> Iterator[LinkProxy]:
    """One link proxy in front of the session's moto server, open between tests."""
    with LinkProxy(moto_server.endpoint, OPEN_LINK) as proxy:
        yield proxy


@pytest.fixture
def link(link_server: LinkProxy, moto_server: ObjectStore) -> Iterator[Link]:
    """The session's link at ``DEFAULT_LINK`` with an empty log, open again afterwards."""
    with link_server.using(DEFAULT_LINK):
        yield Link(link_server, moto_server)
    link_server.reset_log()
