"""The PyTree item encoding (LitData's default ``PyTreeLoader``).

An item is ``[u32 size per leaf][payload per leaf]``, one serializer per leaf. The first
sample fixes the structure and the serializers; later samples must match.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from litdata.core.chunks.layout import read_offsets_in_range
from litdata.core.errors import (
    ChunkCorruptError,
    DatasetFormatError,
    LitdataError,
    PluginValidationError,
    SampleDecodeError,
    SampleError,
)
from litdata.core.formats import ReadOptions, SerializerChoice
from litdata.core.guards import check_count
from litdata.core.index import ChunkColumns, ChunkEntry, DatasetIndex
from litdata.core.protocols import Serializer
from litdata.engine.items.serializer_set import fixed_size_of
from litdata.engine.items.treespec import (
    TreeSpec,
    compile_flattener,
    compile_unflattener,
    flatten,
    leaf_paths,
    spec_from_json,
    spec_to_json,
)
from litdata.engine.items.widening import widened
from litdata.engine.native.chunk_file import ChunkFile
from litdata.engine.native.encrypted import decrypting, reader_encryptor

__all__ = ["PyTreeDecoder", "PyTreeEncoder", "PyTreeLoader"]


class PyTreeEncoder:
    """Encodes samples of one dataset; the first sample fixes structure and serializers.

    Args:
        serializers: The serializers to probe.
    """

    def __init__(self, serializers: SerializerChoice) -> None:
        self._serializers = serializers
        self._spec: TreeSpec | None = None
        self._flatten: Callable[[Any], list[Any]] | None = None
        self._paths: list[str] = []
        self._keys: list[str] = []
        self._serialize: list[Callable[[Any], tuple[Any, str | None]]] = []
        self._names: tuple[str | None, ...] = ()  # as the serializers return them
        self._formats: tuple[str, ...] = ()  # the data_format names
        self._header: struct.Struct | None = None
        self._fixed_header: bytes | None = None
        self._fixed_sizes: list[int] = []
        self._widened: dict[tuple[str, str], str | None] = {}  # (field's name, leaf's) -> name
        self.providers: dict[str, str] = {}

    @property
    def data_format(self) -> tuple[str, ...]:
        """The ``data_format`` names, one per leaf (empty before the first sample)."""
        return self._formats

    @property
    def data_spec(self) -> str | None:
        """The ``data_spec`` JSON (``None`` before the first sample)."""
        return spec_to_json(self._spec) if self._spec is not None else None

    def _first(self, sample: Any) -> list[Any]:
        leaves, spec = flatten(sample)
        paths = leaf_paths(spec)
        chosen = []
        for path, leaf in zip(paths, leaves, strict=True):
            found = self._serializers.infer(leaf)
            if found is None:
                raise SampleError(
                    f"{path} is a {type(leaf).__module__}.{type(leaf).__qualname__}, which no "
                    f"serializer accepts. Convert it to a supported type (int, float, str, "
                    f"bytes, numpy array, tensor, PIL image...) or install/pass a serializer "
                    f"for it."
                )
            chosen.append(found)
        results = []
        try:
            for leaf, (_, serializer) in zip(leaves, chosen, strict=True):
                results.append(serializer.serialize(leaf))
        except Exception as error:
            index = len(results)
            raise SampleError(
                f"{paths[index]}: the {chosen[index][0]!r} serializer failed on this "
                f"{type(leaves[index]).__qualname__}: {error}"
            ) from error
        for index, (key, result) in enumerate(zip((k for k, _ in chosen), results, strict=True)):
            if not (
                isinstance(result, tuple)
                and len(result) == 2  # noqa: PLR2004  # (payload, name)
                and isinstance(result[0], bytes | bytearray | memoryview)
                and (result[1] is None or isinstance(result[1], str))
            ):
                raise PluginValidationError(
                    f"{paths[index]}: the {key!r} serializer ({self._serializers.origin(key)}) "
                    f"returned {type(result).__name__} {str(result)[:60]!r} from serialize; it "
                    f"must return (bytes, data_format name or None). Fix the plugin "
                    f"(litdata.testing.SerializerContract checks it)."
                )
        for index, ((key, serializer), (payload, _)) in enumerate(
            zip(chosen, results, strict=True)
        ):
            size = fixed_size_of(serializer)
            if size is not None and size != len(payload):
                raise SampleError(
                    f"{paths[index]}: the {key!r} serializer declares a fixed size of {size} "
                    f"bytes but produced {len(payload)}; the serializer is broken."
                )
            provider = self._serializers.provider(key)
            if provider:
                self.providers[key] = provider
        self._spec = spec
        self._paths = paths
        self._keys = [key for key, _ in chosen]
        self._serialize = [serializer.serialize for _, serializer in chosen]
        self._names = tuple(name for _, name in results)
        self._formats = tuple(
            name or key for (key, _), (_, name) in zip(chosen, results, strict=True)
        )
        self._header = struct.Struct(f"<{len(leaves)}I")
        declared = [fixed_size_of(serializer) for _, serializer in chosen]
        if all(size is not None for size in declared):
            self._fixed_sizes = [size or 0 for size in declared]
            self._fixed_header = self._header.pack(*self._fixed_sizes)
        self._flatten = compile_flattener(spec)
        return results

    def _diagnose(self, leaves: list[Any]) -> SampleError:
        """Find the leaf that breaks the first sample's pattern and describe it."""
        for index, (leaf, serialize) in enumerate(zip(leaves, self._serialize, strict=True)):
            key = self._keys[index]
            try:
                payload, name = serialize(leaf)
            except Exception as error:
                return self._fail(index, leaf, f"the {key!r} serializer failed: {error}")
            widens = self._widened.get((self._formats[index], name or key))
            if name != self._names[index] and widens is None:
                return self._fail(index, leaf, f"it serializes as {name or key!r}")
            if self._fixed_sizes and len(payload) != self._fixed_sizes[index]:
                return self._fail(
                    index,
                    leaf,
                    f"its payload has {len(payload)} bytes, not the declared "
                    f"fixed size {self._fixed_sizes[index]}",
                )
        return SampleError("The sample differs from the first sample.")

    def _fail(self, index: int, leaf: Any, problem: str) -> SampleError:
        kind = type(leaf).__qualname__
        got = "" if f"got {kind}" in problem else f" (got a {kind})"  # said once, not twice
        return SampleError(
            f"{self._paths[index]}: {problem}{got}. Every sample "
            f"must store the same kind of value in each place as the first sample, which "
            f"recorded {self._formats[index]!r} here."
        )

    def _widen(self, names: tuple[str | None, ...]) -> bool:
        """Record each field whose leaf's name differs under a name decoding both, if any.

        Returns:
            Whether every differing field widened (the JPEG and PNG files of one field are
            recorded as ``image``); nothing changes when one does not.
        """
        formats = list(self._formats)
        for index, (name, first) in enumerate(zip(names, self._names, strict=True)):
            if name == first:
                continue
            pair = (formats[index], name or self._keys[index])
            if pair not in self._widened:
                self._widened[pair] = widened(*pair, self._serializers)
            name_for_both = self._widened[pair]
            if name_for_both is None:
                return False
            formats[index] = name_for_both
        self._formats = tuple(formats)
        return True

    def encode(self, sample: Any) -> tuple[list[bytes], int, int | None]:
        """Encode ``sample`` as item parts.

        Returns:
            The parts of the item's bytes (to be concatenated), their total size, and the
            item's ``dim`` (always ``None`` for PyTree items).

        Raises:
            SampleError: The sample's structure or a leaf's type differs from the first
                sample's, or no serializer accepts a leaf; the message names the leaf.
        """
        if self._flatten is None:
            results = self._first(sample)
        else:
            leaves = self._flatten(sample)
            try:
                results = [call(leaf) for call, leaf in zip(self._serialize, leaves, strict=True)]
            except Exception as error:
                raise self._diagnose(leaves) from error
        payloads, names = zip(*results, strict=True)
        if names != self._names and not self._widen(names):
            raise self._diagnose(self._flatten(sample))  # type: ignore[misc]
        sizes = [*map(len, payloads)]
        if self._fixed_header is None:
            header = self._header.pack(*sizes)  # type: ignore[union-attr]
        elif sizes == self._fixed_sizes:
            header = self._fixed_header
        else:
            raise self._diagnose(self._flatten(sample))  # type: ignore[misc]
        return [header, *payloads], len(header) + sum(sizes), None


class PyTreeDecoder:
    """Decodes the items of a dataset written with the PyTree layout.

    Args:
        index: The dataset's index (its ``data_format``, ``data_spec`` and ``encryption``).
        options: The reader's serializers and key.
    """

    def __init__(self, index: DatasetIndex, options: ReadOptions) -> None:
        config = index.config
        self._spec = spec_from_json(config.data_spec)
        if self._spec.num_leaves != len(config.data_format):
            raise DatasetFormatError(
                f"{options.where}: index.json is inconsistent: data_spec has "
                f"{self._spec.num_leaves} leaves but data_format lists "
                f"{len(config.data_format)} serializers."
            )
        self._formats = config.data_format
        self._where = options.where
        self._serializers = [options.serializers.for_format(name) for name in self._formats]
        self._providers = options.serializers
        encryptor = reader_encryptor(config.encryption, options.encryption, options.where)
        decrypt = decrypting(encryptor, options.where) if encryptor is not None else None
        level = encryptor.level if encryptor is not None else None
        self._chunk_decrypt = decrypt if level == "chunk" else None
        self._item_decrypt = decrypt if level == "sample" else None
        self.decode: Callable[[memoryview], Any] = _compile_decode(
            [_leaf_decoder(serializer) for serializer in self._serializers], self._spec
        )
        """Rebuild the sample stored in an item's plain bytes (raises ``ChunkCorruptError``
        when its leaf sizes do not add up to its length)."""

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """Items stored in a chunk: its ``chunk_size``, which its bytes must be able to hold.

        Raises:
            DatasetFormatError: The chunk's header alone (4 bytes per item) would not fit in
                its ``chunk_bytes``.
        """
        return check_count(
            entry.chunk_size,
            where=f"The index of {self._where}",
            field=f"the chunk_size of {entry.filename}",
            most=entry.chunk_bytes // 4 - 2,
        )

    def item_counts(self, chunks: ChunkColumns) -> Any:
        """``items_in_chunk`` of every chunk: ``chunks.sizes`` itself, once checked."""
        sizes = chunks.sizes
        bad = np.flatnonzero(sizes > chunks.nbytes // 4 - 2)
        if len(bad):
            self.items_in_chunk(chunks[int(bad[0])])  # raises, naming the chunk
        return sizes

    def open(self, path: str, entry: ChunkEntry) -> ChunkFile:
        """Map the chunk file (or decrypt a chunk-level encrypted one into memory)."""
        return ChunkFile.open(path, entry, self._chunk_decrypt)

    def read(self, chunk: ChunkFile, position: int) -> Any:
        """Decode the item at ``position`` of ``chunk``.

        Raises:
            ChunkCorruptError: The item's bytes are inconsistent; the message names the file
                and the item.
            SampleDecodeError: A serializer failed on its leaf; the message names it, its
                distribution, the file and the item.
        """
        try:
            if self._item_decrypt is None:
                return self.decode(chunk.item(position))
            return self.decode(memoryview(self._item_decrypt(chunk.item(position))))
        except ChunkCorruptError as error:
            raise ChunkCorruptError(f"Chunk {chunk.path}, item {position}: {error}") from None
        except Exception as error:
            raise self._blame(chunk, position, error) from error

    def item_span(
        self, entry: ChunkEntry, position: int, header: Callable[[int, int], bytes]
    ) -> tuple[int, int]:
        """Where item ``position`` lies in the chunk file, from the chunk's offsets.

        Raises:
            ChunkCorruptError: The offsets are inconsistent with the index entry.
        """
        if self._chunk_decrypt is not None:
            raise TypeError("a chunk-level encrypted chunk cannot be read in ranges")
        return read_offsets_in_range(
            header,
            position,
            num_items=entry.chunk_size,
            file_size=entry.chunk_bytes,
            where=f"Chunk {entry.filename}, item {position}",
        )

    def decode_item(self, data: memoryview, where: str) -> Any:
        """Decode (and decrypt, per sample) one item's bytes."""
        try:
            if self._item_decrypt is not None:
                data = memoryview(self._item_decrypt(data))
            return self.decode(data)
        except ChunkCorruptError as error:
            raise ChunkCorruptError(f"{where}: {error}") from None

    def _blame(self, chunk: ChunkFile, position: int, error: Exception) -> Exception:
        """Name the serializer whose leaf failed to decode (only ever on the error path)."""
        if isinstance(error, LitdataError):
            return error
        where = f"Chunk {chunk.path}, item {position}"
        item = chunk.item(position)
        if self._item_decrypt is not None:
            item = memoryview(self._item_decrypt(item))
        start = 4 * len(self._formats)
        if len(item) < start:
            return ChunkCorruptError(
                f"{where} has {len(item)} bytes, fewer than the {start} of its leaf sizes: the "
                f"chunk is corrupt or was written with a different data_format."
            )
        sizes = struct.unpack_from(f"<{len(self._formats)}I", item)
        for name, size, serializer in zip(self._formats, sizes, self._serializers, strict=True):
            try:
                _leaf_decoder(serializer)(item[start : start + size])
            except Exception as failure:  # the first leaf that fails is named
                return SampleDecodeError(
                    f"{where}: the {name!r} serializer ({self._providers.origin(name)}) failed "
                    f"to decode its leaf: {type(failure).__name__}: {failure}"
                )
            start += size
        return SampleDecodeError(f"{where}: decoding failed: {type(error).__name__}: {error}")


def _corrupt(expected: int, actual: int) -> None:
    raise ChunkCorruptError(
        f"An item's leaf sizes add up to {expected} bytes but the item has {actual}: the chunk is "
        f"corrupt or was written with a different data_format."
    )


def _leaf_decoder(serializer: Any) -> Callable[[memoryview], Any]:
    """How a leaf's payload reaches ``serializer``: a view of the chunk, or ``bytes``.

    ``bytes`` for a serializer written for LitData (a subclass of
    ``litdata.streaming.serializers.Serializer``), whose ``deserialize`` takes ``bytes`` there
    and may call ``data.decode()`` or ``json.loads(data)``, which a memoryview does not support.
    """
    if Serializer not in type(serializer).__mro__:
        return serializer.deserialize  # type: ignore[no-any-return]
    deserialize = serializer.deserialize

    def with_bytes(data: memoryview) -> Any:
        return deserialize(bytes(data))

    return with_bytes


def _compile_decode(
    deserialize: Sequence[Callable[[memoryview], Any]], spec: TreeSpec
) -> Callable[[memoryview], Any]:
    """Generate a decoder specialised for one dataset's leaves (no per-leaf loop).

    Sample decoding is the innermost loop of reading; unrolling it halves its cost.
    """
    count = len(deserialize)
    namespace: dict[str, Any] = {
        "_unpack": struct.Struct(f"<{count}I").unpack_from,
        "_corrupt": _corrupt,
        "_unflatten": compile_unflattener(spec),
    }
    namespace.update({f"_d{i}": function for i, function in enumerate(deserialize)})
    lines = ["def decode(item):", f"    p0 = {4 * count}"]
    if count:
        lines.append(f"    {''.join(f's{i}, ' for i in range(count))}= _unpack(item)")
    lines.extend(f"    p{i + 1} = p{i} + s{i}" for i in range(count))
    lines.append(f"    if p{count} != len(item): _corrupt(p{count}, len(item))")
    values = [f"_d{i}(item[p{i}:p{i + 1}])" for i in range(count)]
    if spec.kind == "builtins.dict" and all(child.is_leaf for child in spec.children):
        namespace.update({f"_k{i}": key for i, key in enumerate(spec.context)})
        entries = ", ".join(f"_k{i}: {value}" for i, value in enumerate(values))
        lines.append(f"    return {{{entries}}}")
    elif spec.is_leaf:
        lines.append(f"    return {values[0]}")
    else:
        lines.append(f"    return _unflatten([{', '.join(values)}])")
    exec("\n".join(lines), namespace)  # noqa: S102  # the source is built above, from no user text
    return namespace["decode"]  # type: ignore[no-any-return]


class PyTreeLoader:
    """Any sample structure; one serializer per leaf (the default)."""

    name: ClassVar[str] = "PyTreeLoader"
    sample_items: ClassVar[bool] = True

    def encoder(self, serializers: SerializerChoice) -> PyTreeEncoder:
        """A PyTree encoder."""
        return PyTreeEncoder(serializers)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> PyTreeDecoder:
        """A PyTree decoder for ``index``."""
        return PyTreeDecoder(index, options)

    def state_dict(self) -> dict[str, Any]:
        """No parameters."""
        return {}

    def __repr__(self) -> str:
        return "PyTreeLoader()"
