"""Sample structure: flatten a sample into leaves and a spec, rebuild it, and store the spec.

The spec is stored in ``index.json`` as ``data_spec``, in the JSON layout of PyTorch's
``treespec_dumps`` (protocol 1), so LitData reads our datasets and we read theirs. Containers
are ``tuple``, ``list``, ``dict``, ``collections.OrderedDict``, ``collections.defaultdict``,
``collections.deque`` and namedtuples, matched by exact type; everything else is a leaf.
Namedtuples are stored under a registered name (``register_namedtuple``), as LitData does.
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from litdata.core.dataset_file import decode_json
from litdata.core.errors import DatasetFormatError, SampleError

__all__ = [
    "LEAF",
    "TreeSpec",
    "compile_flattener",
    "compile_unflattener",
    "flatten",
    "leaf_paths",
    "register_namedtuple",
    "spec_from_json",
    "spec_to_json",
]

_TUPLE = "builtins.tuple"
_LIST = "builtins.list"
_DICT = "builtins.dict"
_ODICT = "collections.OrderedDict"
_DDICT = "collections.defaultdict"
_DEQUE = "collections.deque"
_NAMEDTUPLE = "collections.namedtuple"

_NAMEDTUPLES: dict[str, type] = {}
#: Containers that cannot stand where the first sample had a leaf (a list can: ``json``).
_BRANCHES = frozenset({dict, tuple, OrderedDict, defaultdict, deque})


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """The shape of a sample: a container kind, its context and its children (a leaf has none).

    Attributes:
        kind: The serialized container type name (``"builtins.dict"``...), ``None`` for a leaf.
        context: Dict keys (tuple), deque ``maxlen``, namedtuple class, or
            ``(default_factory, keys)`` for a defaultdict; ``None`` otherwise.
        children: The specs of the children, in flattening order.
    """

    kind: str | None
    context: Any = None
    children: tuple[TreeSpec, ...] = ()
    num_leaves: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        count = 1 if self.kind is None else sum(child.num_leaves for child in self.children)
        object.__setattr__(self, "num_leaves", count)

    @property
    def is_leaf(self) -> bool:
        """Whether this spec is a single leaf."""
        return self.kind is None


LEAF = TreeSpec(None)


def register_namedtuple(cls: type, name: str | None = None) -> str:
    """Make a namedtuple class known under a stable name, so datasets can store and rebuild it.

    Args:
        cls: The namedtuple class.
        name: The name stored in ``data_spec``; defaults to ``"<module>.<qualname>"``.

    Returns:
        The name the class is stored under.
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise TypeError(f"register_namedtuple expects a namedtuple class, got {cls!r}")
    name = name or f"{cls.__module__}.{cls.__qualname__}"
    _NAMEDTUPLES[name] = cls
    return name


def _namedtuple_name(cls: type) -> str:
    for name, known in _NAMEDTUPLES.items():
        if known is cls:
            return name
    torch_pytree = sys.modules.get("torch.utils._pytree")
    if torch_pytree is not None:
        node_def = getattr(torch_pytree, "SUPPORTED_SERIALIZED_TYPES", {}).get(cls)
        torch_name = getattr(node_def, "serialized_type_name", None)
        if isinstance(torch_name, str) and torch_name != "<unknown>":
            return torch_name
    return register_namedtuple(cls)


def _resolve_namedtuple(name: str) -> type:
    if name in _NAMEDTUPLES:
        return _NAMEDTUPLES[name]
    torch_pytree = sys.modules.get("torch.utils._pytree")
    if torch_pytree is not None:
        cls = getattr(torch_pytree, "SERIALIZED_TYPE_TO_PYTHON_TYPE", {}).get(name)
        if isinstance(cls, type):
            return cls
    module_name, _, attr = name.rpartition(".")
    module = sys.modules.get(module_name)  # only modules already imported: reading runs no code
    cls = getattr(module, attr, None) if module is not None else None
    if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return cls
    raise DatasetFormatError(
        f"The dataset's samples contain the container type {name!r}, which is not known here. "
        f"If it is a namedtuple, import the module that defines it, or call "
        f"litdata.register_namedtuple(YourClass, name={name!r}) before reading."
    )


def _resolve_factory(module_name: str, name: str) -> Callable[[], Any] | None:
    if module_name == "builtins" and name == "None":
        return None
    module = sys.modules.get(module_name)
    factory = getattr(module, name, None) if module is not None else None
    if not callable(factory):
        raise DatasetFormatError(
            f"The dataset's samples contain a defaultdict whose default_factory "
            f"{module_name}.{name} is not available; import {module_name!r} before reading."
        )
    return factory  # type: ignore[no-any-return]  # a callable resolved by name


def _node(obj: Any) -> tuple[str, Any, list[Any]] | None:
    """Return (kind, context, children) when ``obj`` is a container, else ``None``."""
    kind = type(obj)
    if kind is dict:
        return _DICT, tuple(obj), list(obj.values())
    if kind is list:
        return _LIST, None, obj
    if kind is tuple:
        return _TUPLE, None, list(obj)
    if kind is OrderedDict:
        return _ODICT, tuple(obj), list(obj.values())
    if kind is defaultdict:
        return _DDICT, (obj.default_factory, tuple(obj)), list(obj.values())
    if kind is deque:
        return _DEQUE, obj.maxlen, list(obj)
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return _NAMEDTUPLE, kind, list(obj)
    return None


def _json_able(obj: Any) -> bool:
    kind = type(obj)
    if obj is None or kind in (bool, int, float, str):
        return True
    if kind is list:
        return all(_json_able(item) for item in obj)
    if kind is dict:
        return all(type(key) is str and _json_able(value) for key, value in obj.items())
    return False


def flatten(sample: Any) -> tuple[list[Any], TreeSpec]:
    """Split a sample into its leaves (depth first, dicts in insertion order) and its spec.

    As in LitData 0.2.7x, a list of plain values (numbers, strings, ``None``, and lists and
    dicts of them) reached from a dict sample through dicts only is one leaf (stored as
    ``json``), so its length may vary from sample to sample.
    """
    leaves: list[Any] = []

    def visit(obj: Any, in_dicts: bool) -> TreeSpec:
        node = _node(obj)
        if node is None or (in_dicts and node[0] == _LIST and _json_able(obj)):
            leaves.append(obj)
            return LEAF
        kind, context, children = node
        inner = in_dicts and kind == _DICT
        return TreeSpec(kind, context, tuple(visit(child, inner) for child in children))

    spec = visit(sample, type(sample) is dict)
    return leaves, spec


def _rebuild(spec: TreeSpec, children: list[Any]) -> Any:
    kind, context = spec.kind, spec.context
    if kind == _DICT:
        return dict(zip(context, children, strict=True))
    if kind == _LIST:
        return children
    if kind == _TUPLE:
        return tuple(children)
    if kind == _ODICT:
        return OrderedDict(zip(context, children, strict=True))
    if kind == _DDICT:
        return defaultdict(context[0], zip(context[1], children, strict=True))
    if kind == _DEQUE:
        return deque(children, maxlen=context)
    return context(*children)  # namedtuple


def compile_unflattener(spec: TreeSpec) -> Callable[[list[Any]], Any]:
    """Return a fast function that rebuilds a sample of shape ``spec`` from its leaves."""
    if spec.is_leaf:
        return lambda leaves: leaves[0]
    if all(child.is_leaf for child in spec.children):
        if spec.kind == _DICT:
            keys = spec.context
            return lambda leaves: dict(zip(keys, leaves, strict=True))
        if spec.kind == _TUPLE:
            return tuple
        if spec.kind == _LIST:
            return list

    def build(node: TreeSpec, it: Iterator[Any]) -> Any:
        if node.is_leaf:
            return next(it)
        return _rebuild(node, [build(child, it) for child in node.children])

    return lambda leaves: build(spec, iter(leaves))


def _describe(obj: Any) -> str:
    node = _node(obj)
    if node is None:
        return f"a leaf of type {type(obj).__name__}"
    kind, _, children = node
    if kind in (_DICT, _ODICT, _DDICT):
        return f"{kind.split('.')[-1]} with keys {list(obj)}"
    return f"{type(obj).__name__} of length {len(children)}"


def _expected(spec: TreeSpec) -> str:
    if spec.kind in (_DICT, _ODICT, _DDICT):
        return f"{spec.kind.split('.')[-1]} with keys {list(_keys(spec))}"
    if spec.kind == _NAMEDTUPLE:
        return f"{spec.context.__name__} of length {len(spec.children)}"
    return f"{(spec.kind or 'leaf').split('.')[-1]} of length {len(spec.children)}"


def compile_flattener(spec: TreeSpec) -> Callable[[Any], list[Any]]:
    """Return a fast function that extracts the leaves of a sample that must have shape ``spec``.

    Raises:
        SampleError: (from the returned function) when a sample's structure differs from
            ``spec``; the message names the first differing place.
    """
    if spec.is_leaf:

        def single(sample: Any) -> list[Any]:
            if _node(sample) is not None:
                raise SampleError(
                    f"sample: expected a single leaf like the first sample, got {_describe(sample)}"
                )
            return [sample]

        return single
    if spec.kind == _DICT and all(child.is_leaf for child in spec.children):
        keys = spec.context
        count = len(keys)

        def flat_dict(sample: Any) -> list[Any]:
            if type(sample) is dict and len(sample) == count:
                try:
                    leaves = [sample[key] for key in keys]
                except KeyError:
                    pass
                else:
                    if _BRANCHES.isdisjoint(map(type, leaves)):
                        return leaves
            return _mismatch(spec, sample)

        return flat_dict

    def general(sample: Any) -> list[Any]:
        leaves: list[Any] = []
        if not _extract(spec, sample, leaves):
            _mismatch(spec, sample)
        return leaves

    return general


def _keys(node: TreeSpec) -> tuple[Any, ...]:
    return node.context[1] if node.kind == _DDICT else node.context  # type: ignore[no-any-return]


def _children_like(node: TreeSpec, obj: Any) -> list[Any] | None:
    """Children of ``obj`` in the order of ``node``, or ``None`` when the container differs."""
    found = _node(obj)
    if found is None or found[0] != node.kind:
        return None
    kind, _, children = found
    if kind in (_DICT, _ODICT, _DDICT):
        keys = _keys(node)
        if len(obj) != len(keys) or any(key not in obj for key in keys):
            return None
        return [obj[key] for key in keys]
    if len(children) != len(node.children):
        return None
    if kind == _NAMEDTUPLE and type(obj) is not node.context:
        return None
    return children


def _is_leaf(obj: Any) -> bool:
    """Whether ``obj`` fits a leaf place: not a container, or a list (a ``json`` leaf)."""
    return type(obj) is list or _node(obj) is None


def _extract(node: TreeSpec, obj: Any, out: list[Any]) -> bool:
    if node.is_leaf:
        out.append(obj)
        return _is_leaf(obj)
    children = _children_like(node, obj)
    if children is None:
        return False
    return all(
        _extract(spec, child, out) for spec, child in zip(node.children, children, strict=True)
    )


def _mismatch(spec: TreeSpec, sample: Any) -> list[Any]:
    def walk(node: TreeSpec, obj: Any, path: str) -> str | None:
        if node.is_leaf:
            return None if _is_leaf(obj) else f"{path}: expected a leaf, got {_describe(obj)}"
        children = _children_like(node, obj)
        if children is None:
            return f"{path}: expected {_expected(node)}, got {_describe(obj)}"
        keyed = node.kind in (_DICT, _ODICT, _DDICT)
        for index, (child_spec, child) in enumerate(zip(node.children, children, strict=True)):
            label = repr(_keys(node)[index]) if keyed else str(index)
            problem = walk(child_spec, child, f"{path}[{label}]")
            if problem:
                return problem
        return None

    problem = walk(spec, sample, "sample") or "sample: structure differs from the first sample"
    raise SampleError(
        f"{problem}. Every sample of a dataset must have the structure of the first one."
    )


def leaf_paths(spec: TreeSpec) -> list[str]:
    """Human-readable paths of the leaves, e.g. ``["sample['image']", "sample['label']"]``."""
    paths: list[str] = []

    def walk(node: TreeSpec, path: str) -> None:
        if node.is_leaf:
            paths.append(path)
            return
        keyed = node.kind in (_DICT, _ODICT, _DDICT)
        for index, child in enumerate(node.children):
            walk(child, f"{path}[{_keys(node)[index]!r}]" if keyed else f"{path}[{index}]")

    walk(spec, "sample")
    return paths


def _to_schema(spec: TreeSpec) -> dict[str, Any]:
    if spec.is_leaf:
        return {"type": None, "context": None, "children_spec": []}
    kind = spec.kind
    context: Any
    if spec.kind in (_DICT, _ODICT):
        context = json.dumps(list(spec.context))
    elif spec.kind == _DDICT:
        factory, keys = spec.context
        context = {
            "default_factory_module": factory.__module__ if factory else "builtins",
            "default_factory_name": factory.__qualname__ if factory else "None",
            "dict_context": list(keys),
        }
    elif spec.kind == _DEQUE:
        context = json.dumps(spec.context)
    elif spec.kind == _NAMEDTUPLE:
        # LitData's pytree names a namedtuple node after the registered type itself.
        context = kind = _namedtuple_name(spec.context)
    else:
        context = "null"
    return {
        "type": kind,
        "context": context,
        "children_spec": [_to_schema(child) for child in spec.children],
    }


def spec_to_json(spec: TreeSpec) -> str:
    """Serialize a spec as ``data_spec`` (the JSON of PyTorch's ``treespec_dumps``, protocol 1)."""
    return json.dumps([1, _to_schema(spec)])


def _from_schema(schema: Any) -> TreeSpec:
    if not isinstance(schema, dict) or "type" not in schema or "children_spec" not in schema:
        raise DatasetFormatError(f"data_spec node is malformed: {schema!r}")
    kind = schema["type"]
    children = tuple(_from_schema(child) for child in schema["children_spec"])
    if kind is None:
        return LEAF
    raw: Any = schema.get("context")
    context: Any
    if kind in (_DICT, _ODICT):
        context = tuple(decode_json(raw, where="a dict node's keys in data_spec"))
    elif kind == _DDICT:
        factory = _resolve_factory(raw["default_factory_module"], raw["default_factory_name"])
        context = (factory, tuple(raw["dict_context"]))
    elif kind == _DEQUE:
        context = decode_json(raw, where="a deque node's context in data_spec")
    elif kind == _NAMEDTUPLE:
        context = _resolve_namedtuple(raw)
    elif kind in (_TUPLE, _LIST):
        context = None
    else:  # LitData names a namedtuple node after its registered type
        return TreeSpec(_NAMEDTUPLE, _resolve_namedtuple(kind), children)
    return TreeSpec(kind, context, children)


def spec_from_json(data_spec: str | None) -> TreeSpec:
    """Parse a ``data_spec`` string written by litdata, LitData or PyTorch's ``treespec_dumps``.

    Raises:
        DatasetFormatError: The string is not a protocol-1 treespec.
    """
    if data_spec is None:
        return LEAF
    try:
        protocol, schema = decode_json(data_spec, where=f"data_spec {data_spec[:200]!r}")
    except (ValueError, TypeError) as error:
        if isinstance(error, DatasetFormatError):
            raise
        raise DatasetFormatError(f"data_spec is not a pair: {data_spec[:200]!r}") from error
    if protocol != 1:
        raise DatasetFormatError(f"data_spec uses treespec protocol {protocol}; only 1 is known.")
    try:
        return _from_schema(schema)
    except RecursionError:
        raise DatasetFormatError(
            f"data_spec nests its structure deeper than Python can rebuild: "
            f"{data_spec[:200]!r}. The index is damaged or crafted; re-create the dataset."
        ) from None
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, DatasetFormatError):
            raise
        raise DatasetFormatError(f"data_spec is malformed: {error}") from error
