"""Deep equality for samples: numpy arrays, tensors and PIL images compared by value and type."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["assert_samples_equal"]


def _describe(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


def assert_samples_equal(actual: Any, expected: Any, path: str = "sample") -> None:
    """Assert that two samples hold the same values, leaf by leaf, with the same types.

    Raises:
        AssertionError: naming the first differing place.
    """
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{path}: {_describe(actual)} is not an ndarray"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"{path}: shape {actual.shape} != {expected.shape}"
        assert np.array_equal(actual, expected, equal_nan=actual.dtype.kind in "fc"), path
        return
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{path}: {_describe(actual)} is not a tensor"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, f"{path}: shape {actual.shape} != {expected.shape}"
        assert torch.equal(actual, expected), f"{path}: values differ"
        return
    image = sys.modules.get("PIL.Image")
    if image is not None and isinstance(expected, image.Image):
        assert isinstance(actual, image.Image), f"{path}: {_describe(actual)} is not an image"
        assert (actual.mode, actual.size) == (expected.mode, expected.size), path
        assert actual.tobytes() == expected.tobytes(), f"{path}: pixels differ"
        return
    assert type(actual) is type(expected), (
        f"{path}: {_describe(actual)} is not {_describe(expected)}"
    )
    if isinstance(expected, dict):
        assert list(actual) == list(expected), f"{path}: keys {list(actual)} != {list(expected)}"
        for key in expected:
            assert_samples_equal(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, list | tuple):
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for index, (left, right) in enumerate(zip(actual, expected, strict=True)):
            assert_samples_equal(left, right, f"{path}[{index}]")
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
