"""The built-in item loaders pass the contract every item loader must pass."""

from __future__ import annotations

import numpy as np

from litdata.plugins.item_loaders.pytree import PyTreeLoader
from litdata.plugins.item_loaders.temporal import TemporalArrayLoader
from litdata.plugins.item_loaders.tokens import TokensLoader
from litdata.testing import ItemLoaderContract


class TestPyTreeLoader(ItemLoaderContract):
    loader_class = PyTreeLoader
    samples = [{"id": i, "name": f"s{i}", "values": [i, i + 1]} for i in range(10)]


class TestTokensLoader(ItemLoaderContract):
    loader_class = TokensLoader
    read_options = {"block_size": 4}
    samples = [np.arange(8, dtype=np.int32) + 8 * i for i in range(3)]
    expected = [np.arange(4, dtype=np.int32) + 4 * i for i in range(6)]
    chunk_size = 8


class TestTemporalArrayLoader(ItemLoaderContract):
    loader_class = TemporalArrayLoader
    samples = [
        {"x": np.arange(2 * n, dtype=np.float32).reshape(n, 2), "ok": np.ones(n, dtype=bool)}
        for n in (1, 3, 2)
    ]
