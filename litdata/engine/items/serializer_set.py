"""Choosing serializers: by probing leaves on write, by ``data_format`` name on read.

On write, the first serializer whose ``can_serialize`` accepts a leaf wins, probed in this
order: those the user passes (``serializers=``, in their order); third-party serializers that
declare the leaf's type (or a base of it) in their ``types``, the most specific type first;
then litdata's own, highest ``priority`` first. A third-party serializer may only declare
types no other installed serializer declares (a clash is an error naming both distributions),
so installing a plugin never changes how leaves of a type litdata already handles are
written; to use one for such leaves, pass it as ``serializers=`` to that dataset.

On read, a ``data_format`` name ``base[:sub]`` resolves to ``base``, or to ``sub`` when only
that is a serializer name (``graph:pickle`` → ``pickle``); the serializer is set up with the
full name.
"""

from __future__ import annotations

import copy
import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from litdata.core.errors import (
    DuplicatePluginError,
    LitdataWarning,
    PluginError,
    UnknownPluginError,
)
from litdata.core.protocols import PickleAware, Serializer
from litdata.core.registry import kinds
from litdata.engine.boundary.options import resolve_plugin

__all__ = ["SerializerSet", "fixed_size_of", "format_key"]

logger = logging.getLogger(__name__)

DEFAULT_PRIORITY = 50
_warned: set[str] = set()


def fixed_size_of(serializer: Any) -> int | None:
    """The fixed payload size a serializer declares (``fixed_size``, or LitData's ``size``)."""
    size = getattr(serializer, "fixed_size", None)
    if size is None:
        size = getattr(serializer, "size", None)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def format_key(data_format: str, known: Any) -> str:
    """The serializer name that decodes ``data_format``.

    ``base:sub`` resolves to ``base`` when a serializer has that name, else to ``sub`` when
    one has that name (``graph:pickle`` decodes with ``pickle`` when no ``graph`` serializer
    is installed). LitData tries ``sub`` first, which lets any serializer named like a file
    extension (``png``) hijack ``image:png``; trying ``base`` first cannot.
    """
    base, _, sub = data_format.partition(":")
    if base in known or not sub or sub not in known:
        return base
    return sub


Named = tuple[str, Serializer]


def type_name(kind: type) -> str:
    """The qualified name serializers declare a type by (``"fractions.Fraction"``)."""
    return f"{kind.__module__}.{kind.__qualname__}"


@dataclass
class _Probe:
    """The installed serializers, arranged for inference."""

    builtins: list[Named] = field(default_factory=list)
    claims: dict[str, list[Named]] = field(default_factory=dict)
    by_type: dict[type, list[Named]] = field(default_factory=dict)

    def third_party(self, kind: type) -> list[Named]:
        """Third-party serializers declaring ``kind`` or a base of it, most specific first."""
        found = self.by_type.get(kind)
        if found is None:
            found = [
                named for base in kind.__mro__ for named in self.claims.get(type_name(base), ())
            ]
            self.by_type[kind] = found
        return found


def _load_installed(skip: Mapping[str, Serializer]) -> _Probe:
    """Load every installed serializer (but ``skip``'s names) and check who claims what.

    Raises:
        DuplicatePluginError: A third-party serializer declares a type another installed
            serializer declares.
    """
    probe = _Probe()
    owners: dict[str, str] = {}  # declared type -> serializer name
    third_party: list[tuple[int, str, Serializer]] = []
    builtins: list[tuple[int, str, Serializer]] = []
    for name in kinds.serializers.names():
        if name in skip:
            continue
        try:
            serializer = resolve_plugin("serializers", name)
        except PluginError as error:
            if name not in _warned:
                _warned.add(name)
                warnings.warn(
                    f"Skipping serializer {name!r}: {error}", LitdataWarning, stacklevel=5
                )
            continue
        rank = -getattr(serializer, "priority", DEFAULT_PRIORITY)
        if kinds.serializers.info(name).builtin:
            builtins.append((rank, name, serializer))
            for declared in serializer.types:
                owners.setdefault(declared, name)
        else:
            third_party.append((rank, name, serializer))
    for _, name, serializer in sorted(third_party):
        for declared in serializer.types:
            if declared in owners:
                raise _clash(declared, name, owners[declared])
            owners[declared] = name
            probe.claims.setdefault(declared, []).append((name, serializer))
    probe.builtins = [(name, serializer) for _, name, serializer in sorted(builtins)]
    return probe


def _clash(declared: str, name: str, other: str) -> DuplicatePluginError:
    info = kinds.serializers.info
    return DuplicatePluginError(
        f"The serializers {name!r} ({info(name).origin}) and {other!r} ({info(other).origin}) "
        f"both declare leaves of type {declared}. A third-party serializer may only declare "
        f"types no other installed serializer declares, so that installing it never changes "
        f"how existing datasets' kinds of leaves are written. Uninstall one of them, or pass "
        f"serializers={{{name!r}: ...}} to the datasets that should use {name!r}."
    )


class SerializerSet:
    """The serializers one writer or reader uses: the user's, then the installed plugins.

    Args:
        user: Serializers passed by the user (``serializers=``), by name; probed first.
        allow_pickle: Let pickled leaves import code when decoding.
        providers: For reading, the distributions the dataset's index says provide its
            plugins (``{name: "dist version"}``), to name them when one is missing.
    """

    def __init__(
        self,
        user: Mapping[str, Serializer] | None = None,
        *,
        allow_pickle: bool = False,
        providers: Mapping[str, str] | None = None,
    ) -> None:
        self._user = dict(user or {})
        self._allow_pickle = allow_pickle
        self._providers = dict(providers or {})
        self._probe: _Probe | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_probe"] = None  # rebuilt lazily in the new process
        return state

    def _installed(self) -> _Probe:
        if self._probe is None:
            self._probe = _load_installed(self._user)
        return self._probe

    def infer(self, leaf: Any, ability: type | None = None) -> Named | None:
        """The first serializer (name, instance) that accepts ``leaf``, or ``None``.

        Args:
            leaf: A sample leaf.
            ability: Only consider serializers that are instances of this (runtime
                checkable) protocol, e.g. ``ElementSerializer``.

        Raises:
            DuplicatePluginError: Two installed serializers declare the same type.
        """
        installed = self._installed()
        for candidates in (
            self._user.items(),
            installed.third_party(type(leaf)),
            installed.builtins,
        ):
            for name, serializer in candidates:
                if ability is not None and not isinstance(serializer, ability):
                    continue
                if serializer.can_serialize(leaf):
                    return name, serializer
        return None

    def origin(self, name: str) -> str:
        """Who provides the serializer of ``name`` (a ``data_format`` entry), for messages."""
        key = format_key(name, set(self._user) | set(kinds.serializers.names()))
        if key in self._user:
            return "passed as serializers="
        return kinds.serializers.info(key).origin

    def provider(self, name: str) -> str | None:
        """The distribution providing the serializer ``name`` when it is not litdata's own."""
        return None if name in self._user else kinds.serializers.provider(name)

    def for_format(self, data_format: str) -> Serializer:
        """A serializer set up to decode leaves recorded as ``data_format``.

        Raises:
            UnknownPluginError: No serializer decodes that name; the message says what to
                install or pass.
        """
        known = set(self._user) | set(kinds.serializers.names())
        key = format_key(data_format, known)
        if key in self._user:
            serializer = copy.deepcopy(self._user[key])
        elif key in known:
            serializer = resolve_plugin("serializers", key)
        else:
            error = kinds.serializers.unknown(key, provider=self._providers.get(key))
            raise UnknownPluginError(
                f"The dataset stores leaves as {data_format!r}, which no installed serializer "
                f"decodes. {error} If it is your own serializer, pass it to the dataset as "
                f"serializers={{{key!r}: YourSerializer()}}."
            ) from None
        if isinstance(serializer, PickleAware):
            serializer.allow_pickle = self._allow_pickle
        serializer.setup(data_format)
        return serializer
