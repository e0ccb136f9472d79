"""``graph``: PyG graphs and ``Graph`` wrappers in LitData's "LDGR" v3 pack.

Layout: ``b"LDGR"``, ``u8 3``, ``u16 n``, then ``n`` fields of ``[u16 name size][name]
[u8 kind][u32 size][payload]`` (big-endian sizes). Kind 0 is a tensor in the ``tensor``
serializer's layout; kind 1 a pickle. The last field, ``_meta``, pickles the graph's mapping
with tensors replaced by a placeholder, the key path of each tensor and its field name, and
whether it is a ``Data`` or a ``HeteroData``. Opaque graphs (``Graph(data=<NetworkX graph>)``)
are pickled whole as ``graph:pickle``.
"""

from __future__ import annotations

import pickle
import struct
import sys
from collections.abc import Iterator
from typing import Any, ClassVar

from litdata.engine.items.wrappers import GRAPH_FIELDS, Graph
from litdata.plugins.serializers._dtypes import torch_dtype_index
from litdata.plugins.serializers.pickle import PickleSerializer
from litdata.plugins.serializers.tensors import TensorSerializer

__all__ = ["GraphSerializer", "is_pyg"]

_MAGIC = b"LDGR"
_VERSION = 3
_PLACEHOLDER = "__ldgr_t__"
_TENSOR, _PICKLE = 0, 1
_MAX = 0xFFFF
Path = tuple[Any, ...]


def is_pyg(item: Any) -> bool:
    """Whether ``item`` is a PyG ``Data``/``HeteroData``/``Batch`` (without importing PyG)."""
    return type(item).__module__.startswith("torch_geometric.data") and hasattr(item, "to_dict")


def _is_hetero(item: Any) -> bool:
    return any(base.__name__ == "HeteroData" for base in type(item).__mro__)


def _tensors(tree: dict[Any, Any], prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """The key path and value of every tensor in ``tree``, depth first in key order."""
    torch = sys.modules["torch"]
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _tensors(value, (*prefix, key))
        elif isinstance(value, torch.Tensor):
            yield (*prefix, key), value


def _field_name(path: Path) -> str:
    return ".".join(
        "__".join(map(str, key)) if isinstance(key, tuple) else str(key) for key in path
    )


def _placed(tree: dict[Any, Any], paths: list[Path]) -> dict[Any, Any]:
    """A copy of ``tree`` with the values at ``paths`` replaced by the placeholder."""
    copied = dict(tree)
    for path in paths:
        node = copied
        for key in path[:-1]:
            node[key] = node = dict(node[key])
        node[path[-1]] = _PLACEHOLDER
    return copied


def _pack(tree: dict[Any, Any], kind: str) -> bytes:
    found = list(_tensors(tree))
    paths = [path for path, _ in found]
    names = [_field_name(path) for path in paths]
    if len(set(names)) != len(names) or "_meta" in names:
        names = [f"t{index}" for index in range(len(names))]
    fields: list[tuple[str, int, bytes]] = []
    for name, (_, tensor) in zip(names, found, strict=True):
        if torch_dtype_index(tensor.dtype) is None or tensor.is_sparse:
            fields.append((name, _PICKLE, pickle.dumps(tensor)))
        else:
            fields.append((name, _TENSOR, TensorSerializer().serialize(tensor)[0]))
    meta = {"_cls": kind, "_tree": _placed(tree, paths), "_paths": paths, "_fields": names}
    fields.append(("_meta", _PICKLE, pickle.dumps(meta, protocol=4)))
    if len(fields) > _MAX:
        raise ValueError(f"a graph of {len(fields)} tensors does not fit LDGR's {_MAX} fields")
    parts = [_MAGIC, struct.pack(">BH", _VERSION, len(fields))]
    for name, field_kind, payload in fields:
        encoded = name.encode("utf-8")
        if len(encoded) > _MAX:
            raise ValueError(f"the graph field name {name[:40]!r}... is over {_MAX} bytes")
        parts += [struct.pack(">H", len(encoded)), encoded]
        parts += [struct.pack(">BI", field_kind, len(payload)), payload]
    return b"".join(parts)


class GraphSerializer:
    """``Graph`` wrappers and PyG graphs; read back as PyG graphs (``Graph`` without PyG).

    Args:
        allow_pickle: Let pickled payloads import code (``graph:pickle`` leaves of arbitrary
            objects); ``None`` follows ``LITDATA_ALLOW_PICKLE``.
    """

    name: ClassVar[str] = "graph"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Graph",
        "torch_geometric.data.data.Data",
        "torch_geometric.data.hetero_data.HeteroData",
    )
    priority: ClassVar[int] = 216

    def __init__(self, allow_pickle: bool | None = None) -> None:
        self.allow_pickle = allow_pickle
        self._opaque = False

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Graph`` wrappers and PyG graphs."""
        return isinstance(item, Graph) or is_pyg(item)

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The LDGR pack (``graph``), or an opaque graph pickled (``graph:pickle``)."""
        if isinstance(item, Graph):
            if item.is_opaque:
                if any(getattr(item, name, None) is not None for name in GRAPH_FIELDS):
                    item.to_mapping()  # raises: the other fields would be lost in the pickle
                return PickleSerializer().serialize(item.data)[0], "graph:pickle"
            import torch  # noqa: F401  (``_tensors`` looks tensors up by class)

            return _pack(item.to_mapping(), "data"), "graph"
        if not is_pyg(item):
            raise TypeError(f"expected a Graph or a PyG graph, got {type(item).__qualname__}")
        return _pack(item.to_dict(), "hetero" if _is_hetero(item) else "data"), "graph"

    def _loads(self, data: bytes | memoryview) -> Any:
        return PickleSerializer(self.allow_pickle).deserialize(data)

    def deserialize(self, data: bytes | memoryview) -> Any:
        """A PyG ``Data``/``HeteroData``, or a ``Graph`` when torch-geometric is missing."""
        if self._opaque:
            return self._loads(data)
        view = memoryview(data)
        if bytes(view[:4]) != _MAGIC or view[4] != _VERSION:
            raise ValueError(
                f"not an LDGR v{_VERSION} graph (starts with {bytes(view[:5])!r}); LitData's "
                f"older packs (v1, v2) are not read"
            )
        (count,) = struct.unpack_from(">H", view, 5)
        position, values = 7, dict[str, Any]()
        for _ in range(count):
            (size,) = struct.unpack_from(">H", view, position)
            name = str(view[position + 2 : position + 2 + size], "utf-8")
            kind, length = struct.unpack_from(">BI", view, position + 2 + size)
            position += 7 + size
            payload = view[position : position + length]
            position += length
            if kind == _PICKLE:
                values[name] = self._loads(payload)
            else:
                values[name] = TensorSerializer().deserialize(payload)
        meta = values.pop("_meta")
        tree = meta["_tree"]
        for path, name in zip(meta["_paths"], meta["_fields"], strict=True):
            node = tree
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = values[name]
        return _rebuild(tree, meta["_cls"])

    def setup(self, data_format: str) -> None:
        """``graph:pickle`` leaves hold a pickled object; ``graph`` ones an LDGR pack."""
        self._opaque = data_format.partition(":")[2] == "pickle"


def _rebuild(tree: dict[Any, Any], kind: str) -> Any:
    try:
        from torch_geometric.data import Data, HeteroData  # type: ignore[import-untyped]
    except ImportError:
        if kind == "hetero":
            return Graph(data=tree)
        fields = {key: tree.pop(key) for key in GRAPH_FIELDS if key in tree}
        return Graph(**fields, data=tree or None)
    return (HeteroData if kind == "hetero" else Data).from_dict(tree)
