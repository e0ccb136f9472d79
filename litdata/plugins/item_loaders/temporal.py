"""``TemporalArrayLoader``: records of arrays sharing a leading frame axis (LitData's layout).

A record is a flat dict of numpy arrays or tensors ``(T, ...)``; only ``T`` may differ between
records. It is stored as ``[u32 T]`` then, per field group, ``T`` rows of the group's aligned
structured dtype (``np.dtype([...], align=True)``, padding included). Groups are those given
when writing, then every other field alone, in the record's field order. ``index.json``
records the schema (``config.temporal_schema``) and, per chunk, each record's frame count and
start (``temporal_frames``, ``temporal_offsets``); the leaf is recorded as one ``bytes``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from litdata.core.chunks.layout import header_size
from litdata.core.errors import DatasetFormatError, SampleError
from litdata.core.formats import ReadOptions, SerializerChoice
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.engine.items.treespec import LEAF, spec_to_json
from litdata.engine.native.chunk_file import ChunkFile
from litdata.plugins.item_loaders.pytree import PyTreeDecoder

__all__ = [
    "SCHEMA_KEY",
    "TemporalArrayLoader",
    "TemporalDecoder",
    "TemporalEncoder",
    "group_dtypes",
]

#: The ``config`` key of the schema in ``index.json``.
SCHEMA_KEY = "temporal_schema"
_FRAMES = struct.Struct("<I")
#: LitData records the whole record as one leaf of this name; the layout decodes it.
_LEAF_FORMAT = "bytes"  # not a plugin name: a fixed label of the layout
#: The schema key saying a field was a tensor.
_TENSOR_KEY = "tensor"  # not a plugin name


def _field(array: np.ndarray, tensor: bool) -> dict[str, Any]:
    """A field's schema entry."""
    return {"dtype": array.dtype.str, "shape": list(array.shape[1:]), _TENSOR_KEY: tensor}


_VERSION = 1


def _as_array(name: str, value: Any) -> tuple[np.ndarray, bool]:
    """The numpy view of a field, and whether it was a tensor."""
    if isinstance(value, np.ndarray):
        return value, False
    if type(value).__module__.startswith("torch") and hasattr(value, "numpy"):
        return value.detach().cpu().numpy(), True
    raise SampleError(
        f"TemporalArrayLoader: field {name!r} is a {type(value).__qualname__}; every field must "
        f"be a numpy array or a tensor with frames on axis 0"
    )


def group_dtypes(schema: Mapping[str, Any]) -> list[np.dtype]:
    """The aligned row dtype of each group of ``schema``."""
    fields = schema["fields"]
    return [
        np.dtype(
            [
                (name, np.dtype(fields[name]["dtype"]), tuple(fields[name]["shape"]))
                for name in group
            ],
            align=True,
        )
        for group in schema["groups"]
    ]


class TemporalEncoder:
    """Encodes records for a writer; the first record fixes the schema.

    Args:
        field_groups: Fields stored together (each list one group).
    """

    def __init__(self, field_groups: Sequence[Sequence[str]]) -> None:
        self._field_groups = [list(group) for group in field_groups]
        self._schema: dict[str, Any] | None = None
        self._dtypes: list[np.dtype] = []
        self._frames: list[int] = []
        self.providers: dict[str, str] = {}

    @property
    def data_format(self) -> tuple[str, ...]:
        """One ``bytes`` leaf, as LitData records it."""
        return (_LEAF_FORMAT,)

    @property
    def data_spec(self) -> str | None:
        """A single leaf."""
        return spec_to_json(LEAF)

    def config_extra(self) -> dict[str, Any]:
        """``{"temporal_schema": ...}`` once a record fixed it."""
        return {} if self._schema is None else {SCHEMA_KEY: self._schema}

    def chunk_extra(self, sizes: Sequence[int]) -> dict[str, Any]:
        """Frame counts and starts of the records of the chunk being written (then forgotten)."""
        starts, position = [], header_size(len(sizes))
        for size in sizes:
            starts.append(position)
            position += size
        frames, self._frames = self._frames[: len(sizes)], self._frames[len(sizes) :]
        return {"temporal_frames": frames, "temporal_offsets": starts}

    def _fix_schema(self, arrays: dict[str, tuple[np.ndarray, bool]]) -> dict[str, Any]:
        names = list(arrays)
        grouped = [name for group in self._field_groups for name in group]
        unknown = sorted(set(grouped) - set(names))
        if unknown or len(grouped) != len(set(grouped)):
            raise SampleError(
                f"TemporalArrayLoader(field_groups={self._field_groups}): groups must name each "
                f"of the record's fields {names} at most once; {unknown or 'duplicates'} do not"
            )
        fields = {name: _field(array, tensor) for name, (array, tensor) in arrays.items()}
        groups = self._field_groups + [[name] for name in names if name not in grouped]
        schema = {"field_order": names, "fields": fields, "groups": groups, "version": _VERSION}
        self._dtypes = group_dtypes(schema)
        return schema

    def encode(self, sample: Any) -> tuple[list[bytes], int, int | None]:
        """``[u32 T]`` and the record's group rows.

        Raises:
            SampleError: The record is not a dict of arrays with a common frame axis, or its
                fields differ from the first record's.
        """
        if not isinstance(sample, Mapping) or not sample:
            raise SampleError(
                f"TemporalArrayLoader stores dicts of arrays, got {type(sample).__qualname__}"
            )
        arrays = {str(name): _as_array(str(name), value) for name, value in sample.items()}
        schema = self._schema
        if schema is None:
            schema = self._schema = self._fix_schema(arrays)
        frames = {array.shape[0] if array.ndim else -1 for array, _ in arrays.values()}
        if len(frames) != 1 or -1 in frames:
            raise SampleError(f"TemporalArrayLoader: fields disagree on frames (axis 0): {frames}")
        for name, (array, tensor) in arrays.items():
            expected = schema["fields"].get(name)
            if expected is None or list(arrays) != schema["field_order"]:
                raise SampleError(
                    f"TemporalArrayLoader: the record's fields {list(arrays)} differ from the "
                    f"first record's {schema['field_order']}"
                )
            found = _field(array, tensor)
            if found != expected:
                raise SampleError(f"TemporalArrayLoader: field {name!r} is {found}, not {expected}")
        (count,) = frames
        parts = [_FRAMES.pack(count)]
        for group, dtype in zip(schema["groups"], self._dtypes, strict=True):
            rows = np.zeros(count, dtype)
            for name in group:
                rows[name] = arrays[name][0]
            parts.append(rows.tobytes())
        self._frames.append(count)
        return parts, sum(map(len, parts)), None


class TemporalDecoder(PyTreeDecoder):
    """Reads records back as dicts of arrays (tensors where the writer had tensors)."""

    def __init__(self, index: DatasetIndex, options: ReadOptions) -> None:
        super().__init__(index, options)
        schema = index.config.extra.get(SCHEMA_KEY)
        if not isinstance(schema, Mapping) or schema.get("version") != _VERSION:
            raise DatasetFormatError(
                f"{options.where}: index.json has no {SCHEMA_KEY} version {_VERSION}, which "
                f"TemporalArrayLoader datasets record"
            )
        self._schema = schema
        self._dtypes = group_dtypes(schema)
        self.decode = self._record

    def _record(self, data: memoryview) -> dict[str, Any]:
        import torch

        (count,) = _FRAMES.unpack_from(data)
        position, fields = _FRAMES.size, self._schema["fields"]
        values: dict[str, Any] = {}
        for group, dtype in zip(self._schema["groups"], self._dtypes, strict=True):
            rows = np.frombuffer(data, dtype, count=count, offset=position)
            position += count * dtype.itemsize
            for name in group:
                array = np.array(rows[name])  # an owned, contiguous copy
                values[name] = torch.from_numpy(array) if fields[name][_TENSOR_KEY] else array
        return {name: values[name] for name in self._schema["field_order"]}

    def frame_counts(self, entry: ChunkEntry) -> list[int]:
        """The frame count of each record of a chunk, from its index entry."""
        return list(entry.extra.get("temporal_frames", ()))

    def window(
        self, chunk: ChunkFile, position: int, start: int, frames: int, fields: Sequence[str] | None
    ) -> dict[str, Any]:
        """Frames ``[start, start + frames)`` of the chosen fields of record ``position``.

        Only the window's rows of the groups holding those fields are decoded.

        Raises:
            KeyError: A field is not in the records.
            IndexError: The window does not fit in the record.
        """
        import torch

        names = list(self._schema["field_order"] if fields is None else fields)
        schema_fields = self._schema["fields"]
        for name in names:
            if name not in schema_fields:
                raise KeyError(name)
        data = chunk.item(position)
        if self._item_decrypt is not None:
            data = memoryview(self._item_decrypt(data))
        (count,) = _FRAMES.unpack_from(data)
        if start < 0 or frames < 0 or start + frames > count:
            raise IndexError(
                f"Window [{start}, {start + frames}) is outside the record of {count} frames."
            )
        values: dict[str, Any] = {}
        offset = _FRAMES.size
        for group, dtype in zip(self._schema["groups"], self._dtypes, strict=True):
            wanted = [name for name in group if name in names]
            if wanted:
                where = offset + start * dtype.itemsize
                rows = np.frombuffer(data, dtype, count=frames, offset=where)
                for name in wanted:
                    array = np.array(rows[name])
                    tensor = schema_fields[name][_TENSOR_KEY]
                    values[name] = torch.from_numpy(array) if tensor else array
            offset += count * dtype.itemsize
        return {name: values[name] for name in names}


class TemporalArrayLoader:
    """Records of arrays sharing a leading frame axis ``T`` (tracks, time series, clips).

    Each record is a flat dict of numpy arrays or tensors ``(T, ...)``; names, dtypes,
    trailing shapes and array/tensor kinds must agree across records, ``T`` may vary. Fields
    in one group are stored interleaved frame by frame; every field not grouped is its own
    group. Records read back whole, as dicts (tensors stay tensors).

    Args:
        field_groups: Fields stored together, used when writing (e.g.
            ``[["score", "valid"]]``); reading takes the groups from the index.
    """

    name: ClassVar[str] = "TemporalArrayLoader"
    sample_items: ClassVar[bool] = False

    def __init__(self, field_groups: Sequence[Sequence[str]] | None = None) -> None:
        if field_groups is not None and (
            isinstance(field_groups, str)
            or any(isinstance(group, str) or not group for group in field_groups)
        ):
            raise ValueError(
                f"field_groups must be a list of non-empty lists of field names, got "
                f"{field_groups!r}"
            )
        self.field_groups = [list(group) for group in field_groups or []]

    def encoder(self, serializers: SerializerChoice) -> TemporalEncoder:
        """A record encoder (serializers are not used: the layout is fixed)."""
        return TemporalEncoder(self.field_groups)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> TemporalDecoder:
        """A record decoder for ``index``."""
        return TemporalDecoder(index, options)

    def state_dict(self) -> dict[str, Any]:
        """No parameters that matter when reading."""
        return {}

    def __repr__(self) -> str:
        return f"TemporalArrayLoader(field_groups={self.field_groups})"
