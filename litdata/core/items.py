"""The PyTree item encoding (LitData's default ``PyTreeLoader``).

An item is ``[u32 size per leaf][payload per leaf]``, one serializer per leaf. The first
sample fixes the structure and the serializers; later samples must match.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from litdata.core.chunk_file import ChunkFile
from litdata.core.errors import ChunkCorruptError, DatasetFormatError, SampleError
from litdata.core.index import ChunkEntry
from litdata.core.protocols import Serializer
from litdata.core.pytree import (
    TreeSpec,
    compile_flattener,
    compile_unflattener,
    flatten,
    leaf_paths,
    spec_from_json,
    spec_to_json,
)
from litdata.core.serialization import SerializerSet, fixed_size_of

__all__ = ["PyTreeDecoder", "PyTreeEncoder"]


class PyTreeEncoder:
    """Encodes samples of one dataset; the first sample fixes structure and serializers.

    Args:
        serializers: The serializers to probe.
    """

    def __init__(self, serializers: SerializerSet) -> None:
        self._serializers = serializers
        self._spec: TreeSpec | None = None
        self._flatten: Callable[[Any], list[Any]] | None = None
        self._leaves: list[tuple[Serializer, str, str]] = []  # serializer, key, data_format
        self._header: struct.Struct | None = None
        self._fixed_header: bytes | None = None
        self._fixed_sizes: tuple[int, ...] = ()
        self.providers: dict[str, str] = {}

    @property
    def data_format(self) -> tuple[str, ...]:
        """The ``data_format`` names, one per leaf (empty before the first sample)."""
        return tuple(fmt for _, _, fmt in self._leaves)

    @property
    def data_spec(self) -> str | None:
        """The ``data_spec`` JSON (``None`` before the first sample)."""
        return spec_to_json(self._spec) if self._spec is not None else None

    def _first(self, sample: Any) -> list[Any]:
        leaves, spec = flatten(sample)
        paths = leaf_paths(spec)
        for path, leaf in zip(paths, leaves, strict=True):
            found = self._serializers.infer(leaf)
            if found is None:
                raise SampleError(
                    f"{path} is a {type(leaf).__module__}.{type(leaf).__qualname__}, which no "
                    f"serializer accepts. Convert it to a supported type (int, float, str, "
                    f"bytes, numpy array, tensor, PIL image...) or install/pass a serializer "
                    f"for it."
                )
            key, serializer = found
            provider = self._serializers.provider(key)
            if provider:
                self.providers[key] = provider
            self._leaves.append((serializer, key, ""))
        self._spec = spec
        self._paths = paths
        self._flatten = compile_flattener(spec)
        self._header = struct.Struct(f"<{len(leaves)}I")
        return leaves

    def _fail(self, index: int, leaf: Any, problem: str) -> SampleError:
        return SampleError(
            f"{self._paths[index]}: {problem} (got a {type(leaf).__qualname__}). Every sample "
            f"must store the same kind of value in each place as the first sample, which "
            f"recorded {self._leaves[index][2]!r} here."
        )

    def encode(self, sample: Any) -> tuple[bytes, int | None]:
        """Return the item bytes of ``sample`` and its ``dim`` (always ``None`` here).

        Raises:
            SampleError: The sample's structure or a leaf's type differs from the first
                sample's, or no serializer accepts a leaf; the message names the leaf.
        """
        first = self._flatten is None
        leaves = self._first(sample) if first else self._flatten(sample)  # type: ignore[misc]
        payloads = []
        for index, (leaf, (serializer, key, fmt)) in enumerate(
            zip(leaves, self._leaves, strict=True)
        ):
            try:
                payload, name = serializer.serialize(leaf)
            except Exception as error:
                if first:
                    raise SampleError(
                        f"{self._paths[index]}: the {key!r} serializer failed on this "
                        f"{type(leaf).__qualname__}: {error}"
                    ) from error
                raise self._fail(index, leaf, f"the {key!r} serializer failed: {error}") from error
            name = name or key
            if first:
                self._leaves[index] = (serializer, key, name)
            elif name != fmt:
                raise self._fail(index, leaf, f"it serializes as {name!r}")
            payloads.append(payload)
        if first:
            self._check_fixed_sizes(payloads)
        sizes = [len(payload) for payload in payloads]
        if self._fixed_header is not None and tuple(sizes) == self._fixed_sizes:
            return b"".join((self._fixed_header, *payloads)), None
        if self._fixed_header is not None:
            bad = next(
                i for i, (a, b) in enumerate(zip(sizes, self._fixed_sizes, strict=True)) if a != b
            )
            raise self._fail(
                bad,
                leaves[bad],
                f"its payload has {sizes[bad]} bytes, not the "
                f"declared fixed size {self._fixed_sizes[bad]}",
            )
        return b"".join((self._header.pack(*sizes), *payloads)), None  # type: ignore[union-attr]

    def _check_fixed_sizes(self, payloads: Sequence[bytes | bytearray | memoryview]) -> None:
        declared = [fixed_size_of(serializer) for serializer, _, _ in self._leaves]
        for index, (size, payload) in enumerate(zip(declared, payloads, strict=True)):
            if size is not None and size != len(payload):
                key = self._leaves[index][1]
                raise SampleError(
                    f"{self._paths[index]}: the {key!r} serializer declares a fixed size of "
                    f"{size} bytes but produced {len(payload)}; the serializer is broken."
                )
        if all(size is not None for size in declared):
            self._fixed_sizes = tuple(declared)  # type: ignore[arg-type]
            self._fixed_header = self._header.pack(*self._fixed_sizes)  # type: ignore[union-attr]


class PyTreeDecoder:
    """Decodes the items of a dataset written with the PyTree layout.

    Args:
        data_format: The ``data_format`` names from ``index.json``.
        data_spec: The ``data_spec`` JSON from ``index.json``.
        serializers: Where to find the serializers.
    """

    def __init__(
        self, data_format: Sequence[str], data_spec: str | None, serializers: SerializerSet
    ) -> None:
        self._spec = spec_from_json(data_spec)
        if self._spec.num_leaves != len(data_format):
            raise DatasetFormatError(
                f"index.json is inconsistent: data_spec has {self._spec.num_leaves} leaves but "
                f"data_format lists {len(data_format)} serializers."
            )
        instances = [serializers.for_format(name) for name in data_format]
        self._deserialize = [serializer.deserialize for serializer in instances]
        self._count = len(instances)
        self._header = struct.Struct(f"<{self._count}I")
        self._unflatten = compile_unflattener(self._spec)

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """Items stored in a chunk: its ``chunk_size``."""
        return entry.chunk_size

    def read(self, chunk: ChunkFile, position: int) -> Any:
        """Decode the item at ``position`` of ``chunk``."""
        return self.decode(chunk.item(position))

    def decode(self, item: memoryview) -> Any:
        """Rebuild the sample stored in ``item`` (the item's bytes)."""
        position = 4 * self._count
        leaves = []
        for size, deserialize in zip(
            self._header.unpack_from(item), self._deserialize, strict=True
        ):
            end = position + size
            leaves.append(deserialize(item[position:end]))
            position = end
        if position != len(item):
            raise ChunkCorruptError(
                f"An item's leaf sizes add up to {position} bytes but the item has {len(item)}: "
                f"the chunk is corrupt or was written with a different data_format."
            )
        return self._unflatten(leaves)
