"""``CompressorContract``: what every compressor, built-in or not, must do."""

from __future__ import annotations

import os
import pickle
from typing import ClassVar

import pytest

__all__ = ["CompressorContract"]


class CompressorContract:
    """What every compressor must do.

    Attributes:
        compressor_class: The class under test, constructed as ``cls(level)``.
        levels: Valid levels to test (``None`` is always tested).
        bad_levels: Levels the constructor must refuse with ``ValueError``.
    """

    compressor_class: ClassVar[type]
    levels: ClassVar[list[int]] = []
    bad_levels: ClassVar[list[int]] = []

    payloads: ClassVar[list[bytes]] = [
        b"",
        b"a",
        b"litdata " * 10_000,
        os.urandom(100_000),
    ]

    @pytest.mark.parametrize("view", [False, True], ids=["bytes", "memoryview"])
    def test_round_trip(self, view: bool) -> None:
        for level in [None, *self.levels]:
            compressor = self.compressor_class(level)
            for payload in self.payloads:
                packed = compressor.compress(memoryview(payload) if view else payload)
                data = memoryview(packed) if view else packed
                assert compressor.decompress(data) == payload

    def test_compresses_repetitive_data(self) -> None:
        payload = self.payloads[2]
        assert len(self.compressor_class(None).compress(payload)) < len(payload) // 10

    def test_declares_its_name(self) -> None:
        assert isinstance(getattr(self.compressor_class, "name", None), str)

    def test_pickles(self) -> None:
        compressor = pickle.loads(pickle.dumps(self.compressor_class(None)))
        assert compressor.decompress(compressor.compress(b"x" * 100)) == b"x" * 100

    def test_refuses_bad_levels(self) -> None:
        for level in self.bad_levels:
            with pytest.raises(ValueError, match=str(level)):
                self.compressor_class(level)

    def test_refuses_garbage(self) -> None:
        with pytest.raises(Exception):  # noqa: B017, PT011  # each codec raises its own error
            self.compressor_class(None).decompress(b"\x00garbage that is no frame" * 3)
