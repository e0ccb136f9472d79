import numpy as np
import pytest

import litdata as ld


@pytest.fixture(scope="module")
def numbers(tmp_path_factory):
    """1,000 samples ``{"id": i, "x": float32[4]}`` in chunks of 64 (the last one short)."""
    path = tmp_path_factory.mktemp("numbers")
    ld.write_dataset(
        ({"id": i, "x": np.full(4, i, np.float32)} for i in range(1000)), path, chunk_size=64
    )
    return path
