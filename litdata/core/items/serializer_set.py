"""Choosing serializers: by probing leaves on write, by ``data_format`` name on read.

On write, serializers passed by the user are probed first (in their order), then the
registry's, highest ``priority`` first; the first whose ``can_serialize`` accepts a leaf wins.
On read, a ``data_format`` name ``base[:sub]`` resolves to ``base``, or to ``sub`` when only
that is a serializer name (``graph:pickle`` → ``pickle``); the serializer is set up with the
full name.
"""

from __future__ import annotations

import copy
import logging
import warnings
from collections.abc import Mapping
from typing import Any

from litdata.core.errors import LitdataWarning, PluginError, UnknownPluginError
from litdata.core.protocols import PickleAware, Serializer
from litdata.core.registry import registries

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
        self._probe: list[tuple[str, Serializer]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_probe"] = None  # rebuilt lazily in the new process
        return state

    def _probe_order(self) -> list[tuple[str, Serializer]]:
        if self._probe is None:
            plugins: list[tuple[int, str, Serializer]] = []
            for name in registries.serializers.names():
                if name in self._user:
                    continue
                try:
                    serializer = registries.serializers.create(name)
                except PluginError as error:
                    if name not in _warned:
                        _warned.add(name)
                        warnings.warn(
                            f"Skipping serializer {name!r}: {error}", LitdataWarning, stacklevel=4
                        )
                    continue
                priority = getattr(serializer, "priority", DEFAULT_PRIORITY)
                plugins.append((-priority, name, serializer))
            self._probe = list(self._user.items()) + [(n, s) for _, n, s in sorted(plugins)]
        return self._probe

    def infer(self, leaf: Any) -> tuple[str, Serializer] | None:
        """The first serializer (name, instance) that accepts ``leaf``, or ``None``."""
        for name, serializer in self._probe_order():
            if serializer.can_serialize(leaf):
                return name, serializer
        return None

    def provider(self, name: str) -> str | None:
        """The distribution providing the serializer ``name`` when it is not litdata's own."""
        return None if name in self._user else registries.serializers.provider(name)

    def for_format(self, data_format: str) -> Serializer:
        """A serializer set up to decode leaves recorded as ``data_format``.

        Raises:
            UnknownPluginError: No serializer decodes that name; the message says what to
                install or pass.
        """
        known = set(self._user) | set(registries.serializers.names())
        key = format_key(data_format, known)
        if key in self._user:
            serializer = copy.deepcopy(self._user[key])
        elif key in known:
            serializer = registries.serializers.create(key)
        else:
            error = registries.serializers.unknown(key, provider=self._providers.get(key))
            raise UnknownPluginError(
                f"The dataset stores leaves as {data_format!r}, which no installed serializer "
                f"decodes. {error} If it is your own serializer, pass it to the dataset as "
                f"serializers={{{key!r}: YourSerializer()}}."
            ) from None
        if isinstance(serializer, PickleAware):
            serializer.allow_pickle = self._allow_pickle
        serializer.setup(data_format)
        return serializer
