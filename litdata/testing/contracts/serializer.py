"""``SerializerContract``: what every serializer, built-in or not, must do."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, ClassVar

import pytest

from litdata.engine.items.serializer_set import fixed_size_of, type_name
from litdata.engine.reader import DatasetReader
from litdata.processing.write import write_dataset
from litdata.testing.compare import assert_samples_equal

__all__ = ["SerializerContract"]


class SerializerContract:
    """What every serializer must do.

    Attributes:
        serializer_class: The class under test (constructed without arguments).
        samples: Values it must round-trip (and claim, unless ``claims`` is false).
        bad_inputs: Values its ``serialize`` must refuse with ``TypeError``/``ValueError``.
        claims: Whether ``can_serialize`` accepts ``samples`` (false for read-side formats).
        expected: The values ``deserialize`` returns for ``samples``, when they differ from
            them (e.g. an image file read back as a tensor); defaults to ``samples``. Compared
            after :meth:`comparable`.
    """

    serializer_class: ClassVar[type]
    samples: ClassVar[list[Any]] = []
    bad_inputs: ClassVar[list[Any]] = []
    claims: ClassVar[bool] = True
    expected: ClassVar[list[Any] | None] = None

    def comparable(self, value: Any) -> Any:
        """What of a deserialized value to compare with ``expected`` (the value itself).

        Override it for objects without value equality, e.g. to compare a decoded volume by
        its voxels: ``return (image.get_fdata(), image.affine)``.
        """
        return value

    def _expected(self) -> list[Any]:
        return self.expected if self.expected is not None else self.samples

    def _round_trip(self, serializer: Any, sample: Any, view: bool) -> Any:
        payload, name = serializer.serialize(sample)
        reader = self.serializer_class()
        reader.setup(name or serializer.name)
        data = memoryview(bytes(payload)) if view else bytes(payload)
        return self.comparable(reader.deserialize(data))

    def test_has_samples(self) -> None:
        assert self.samples, "set `samples` to values the serializer must round-trip"

    def test_declares_its_name(self) -> None:
        name = getattr(self.serializer_class, "name", None)
        assert isinstance(name, str), "a serializer needs a `name` class attribute"
        assert name, "`name` must not be empty"

    def test_declares_the_types_it_claims(self) -> None:
        declared = getattr(self.serializer_class, "types", None)
        assert isinstance(declared, tuple), "a serializer needs a `types` tuple of type names"
        assert all(isinstance(name, str) and "." in name for name in declared), declared
        if not self.claims:
            return
        for sample in self.samples:
            names = {type_name(kind) for kind in type(sample).__mro__}
            assert names & set(declared), (
                f"{type_name(type(sample))} is claimed by can_serialize but not declared in "
                f"`types` {declared}: inference would never ask this serializer about it"
            )

    @pytest.mark.parametrize("view", [False, True], ids=["bytes", "memoryview"])
    def test_round_trip(self, view: bool) -> None:
        serializer = self.serializer_class()
        for sample, expected in zip(self.samples, self._expected(), strict=True):
            assert_samples_equal(self._round_trip(serializer, sample, view), expected)

    def test_claims_its_samples(self) -> None:
        serializer = self.serializer_class()
        for sample in self.samples:
            assert serializer.can_serialize(sample) is self.claims, sample

    def test_fixed_size_is_honest(self) -> None:
        serializer = self.serializer_class()
        size = fixed_size_of(serializer)
        if size is None:
            pytest.skip("the serializer declares no fixed size")
        for sample in self.samples:
            assert len(serializer.serialize(sample)[0]) == size

    def test_pickles(self) -> None:
        serializer = pickle.loads(pickle.dumps(self.serializer_class()))
        for sample, expected in zip(self.samples, self._expected(), strict=True):
            assert_samples_equal(self._round_trip(serializer, sample, view=False), expected)

    def test_refuses_bad_input(self) -> None:
        serializer = self.serializer_class()
        for bad in self.bad_inputs:
            with pytest.raises((TypeError, ValueError, OverflowError)):
                serializer.serialize(bad)

    def test_in_a_dataset(self, tmp_path: Path) -> None:
        if not self.claims:
            pytest.skip("the serializer claims no value on write")
        name: str = getattr(self.serializer_class, "name", "value")
        # Each sample is its own leaf, so samples of different kinds fit in one dataset.
        sample = {f"value{index}": value for index, value in enumerate(self.samples)}
        serializers = {name: self.serializer_class()}
        write_dataset([sample, sample], tmp_path / "ds", chunk_size=1, serializers=serializers)
        reader = DatasetReader(tmp_path / "ds", serializers=serializers)
        expected = {f"value{index}": value for index, value in enumerate(self._expected())}
        assert len(reader) == 2
        for position in (0, 1):
            read = {key: self.comparable(value) for key, value in reader[position].items()}
            assert_samples_equal(read, expected)
