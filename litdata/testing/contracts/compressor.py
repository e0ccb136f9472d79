"""``CompressorContract``: what every compressor, built-in or not, must do."""

from __future__ import annotations

import os
import pickle
import tracemalloc
from typing import ClassVar

import pytest

__all__ = ["CompressorContract"]


class CompressorContract:
    """What every compressor must do.

    Attributes:
        compressor_class: The class under test, constructed as ``cls(level)``.
        levels: Valid levels to test (``None`` is always tested).
        bad_levels: Levels the constructor must refuse with ``ValueError``.
        bomb_bytes: The plain size of the decompression bomb (zeros, compressed by the codec
            itself), read back with a bound of ``bomb_bound`` bytes.
        bomb_peak: The most memory (as ``tracemalloc`` sees it) refusing the bomb may take.
    """

    compressor_class: ClassVar[type]
    levels: ClassVar[list[int]] = []
    bad_levels: ClassVar[list[int]] = []
    bomb_bytes: ClassVar[int] = 64 << 20
    bomb_bound: ClassVar[int] = 1 << 20
    bomb_peak: ClassVar[int] = 16 << 20

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
                assert compressor.decompress(data, len(payload)) == payload

    def test_the_bound_is_a_ceiling(self) -> None:
        compressor = self.compressor_class(None)
        for payload in self.payloads:
            assert compressor.decompress(compressor.compress(payload), len(payload) + 1000) == (
                payload
            )

    def test_refuses_one_byte_over_the_bound(self) -> None:
        compressor = self.compressor_class(None)
        for payload in self.payloads[1:]:
            with pytest.raises(ValueError):  # noqa: PT011  # each codec says it its own way
                compressor.decompress(compressor.compress(payload), len(payload) - 1)

    def test_refuses_a_bomb_without_inflating_it(self) -> None:
        compressor = self.compressor_class(None)
        bomb = compressor.compress(bytes(self.bomb_bytes))
        tracemalloc.start()
        try:
            with pytest.raises(ValueError):  # noqa: PT011
                compressor.decompress(bomb, self.bomb_bound)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < self.bomb_peak, f"refusing the bomb took {peak:,} bytes"

    def test_compresses_repetitive_data(self) -> None:
        payload = self.payloads[2]
        assert len(self.compressor_class(None).compress(payload)) < len(payload) // 10

    def test_declares_its_name(self) -> None:
        assert isinstance(getattr(self.compressor_class, "name", None), str)

    def test_pickles(self) -> None:
        compressor = pickle.loads(pickle.dumps(self.compressor_class(None)))
        assert compressor.decompress(compressor.compress(b"x" * 100), 100) == b"x" * 100

    def test_refuses_bad_levels(self) -> None:
        for level in self.bad_levels:
            with pytest.raises(ValueError, match=str(level)):
                self.compressor_class(level)

    def test_refuses_garbage(self) -> None:
        with pytest.raises(Exception):  # noqa: B017, PT011  # each codec raises its own error
            self.compressor_class(None).decompress(b"\x00garbage that is no frame" * 3, 1000)
