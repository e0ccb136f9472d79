"""``Registry[T]``: plugins of one kind, by name, from explicit registration or entry points.

Lookup order: ``register()`` calls, then the entry-point group ``litdata.<kind>`` (which is
also where litdata's own built-ins are declared). Listing names imports nothing; a plugin's
module is imported the first time the plugin is used, and validated then.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from litdata.core.errors import (
    DuplicatePluginError,
    PluginLoadError,
    PluginValidationError,
    UnknownPluginError,
)
from litdata.core.protocols import protocol_members
from litdata.core.registry import entry_points
from litdata.core.registry.entry_points import Declared

__all__ = ["PluginInfo", "Registry"]

T = TypeVar("T")

_OWN_DISTRIBUTION = "litdata"


@dataclass(frozen=True)
class PluginInfo:
    """Where a plugin comes from.

    Attributes:
        kind: The plugin kind (``"serializers"``, ``"compression"``...).
        name: The registry key.
        target: ``"module:attr"`` of the implementation (``module.qualname`` when registered
            in-process).
        distribution: The distribution that declares it; ``None`` for ``register()`` calls.
        version: That distribution's version.
    """

    kind: str
    name: str
    target: str
    distribution: str | None
    version: str | None

    @property
    def builtin(self) -> bool:
        """Whether litdata itself provides the plugin."""
        return self.distribution == _OWN_DISTRIBUTION

    @property
    def origin(self) -> str:
        """A short description of the provider, e.g. ``litdata-plugin-x 0.1.0``."""
        if self.distribution is None or self.version is None:
            return "registered in-process"
        return entry_points.describe(self.distribution, self.version)


def _target_of(obj: Any) -> str:
    module = getattr(obj, "__module__", type(obj).__module__)
    return f"{module}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"


class Registry(Generic[T]):
    """The plugins of one kind.

    Args:
        kind: The kind, also the entry-point group suffix (``litdata.<kind>``).
        noun: How one plugin of this kind is called in messages (``"compressor"``).
        protocol: The protocol every plugin class must satisfy.
    """

    def __init__(self, kind: str, noun: str, protocol: type[T]) -> None:
        self.kind = kind
        self.noun = noun
        self.group = f"litdata.{kind}"
        self.protocol = protocol
        self._registered: dict[str, type[T]] = {}
        self._loaded: dict[str, type[T]] = {}
        self._entry_points: dict[str, list[Declared]] | None = None
        self._lock = threading.RLock()

    # -- discovery ---------------------------------------------------------------------------
    def _discovered(self) -> dict[str, list[Declared]]:
        with self._lock:
            if self._entry_points is None:
                found: dict[str, list[Declared]] = {}
                for declared in entry_points.installed():
                    if declared.entry_point.group == self.group and entry_points.allowed(declared):
                        found.setdefault(declared.entry_point.name, []).append(declared)
                self._entry_points = found
            return self._entry_points

    def refresh(self) -> None:
        """Forget discovered entry points and loaded classes (after installing a plugin)."""
        with self._lock:
            self._entry_points = None
            self._loaded.clear()
            importlib.invalidate_caches()
            entry_points.forget()

    def names(self) -> list[str]:
        """Every known name, sorted. Imports no plugin."""
        return sorted(set(self._registered) | set(self._discovered()))

    def __contains__(self, name: object) -> bool:
        return name in self._registered or name in self._discovered()

    def _declared(self, name: str) -> Declared:
        candidates = self._discovered()[name]
        if len(candidates) > 1:
            origins = " and ".join(candidate.origin for candidate in candidates)
            raise DuplicatePluginError(
                f"Two plugins claim the {self.noun} name {name!r}: {origins}. Uninstall one "
                f"of them, or choose one with litdata.plugins.register({self.kind!r}, "
                f"{name!r}, TheClass, replace=True)."
            )
        return candidates[0]

    def info(self, name: str) -> PluginInfo:
        """Describe the plugin registered as ``name`` (without importing it)."""
        if name in self._registered:
            return PluginInfo(self.kind, name, _target_of(self._registered[name]), None, None)
        if name not in self._discovered():
            raise self.unknown(name)
        declared = self._declared(name)
        return PluginInfo(
            self.kind, name, declared.entry_point.value, declared.distribution, declared.version
        )

    def infos(self) -> list[PluginInfo]:
        """Describe every plugin of this kind, sorted by name."""
        return [self.info(name) for name in self.names()]

    def provider(self, name: str) -> str | None:
        """Who provides ``name`` when it is a third-party plugin: ``"distribution version"``.

        This is what a dataset's index records for the plugins it needs, so that a reader
        without them can say what to install. ``None`` for litdata's own plugins and for
        ``register()`` calls.
        """
        info = self.info(name)
        return None if info.builtin or info.distribution is None else info.origin

    # -- registration --------------------------------------------------------------------------
    def register(self, name: str, plugin: type[T], *, replace: bool = False) -> None:
        """Register a plugin class in this process; it wins over entry points.

        Raises:
            DuplicatePluginError: ``name`` is already registered and ``replace`` is false.
            PluginValidationError: The class does not satisfy the protocol.
        """
        with self._lock:
            if name in self._registered and not replace:
                raise DuplicatePluginError(
                    f"A {self.noun} named {name!r} is already registered "
                    f"({_target_of(self._registered[name])}); pass replace=True to override it."
                )
            self._validate(name, plugin, f"{_target_of(plugin)} (registered in-process)")
            self._registered[name] = plugin
            self._loaded.pop(name, None)

    def unregister(self, name: str) -> None:
        """Remove an in-process registration (entry points stay visible)."""
        with self._lock:
            self._registered.pop(name, None)
            self._loaded.pop(name, None)

    @contextmanager
    def isolated(self) -> Iterator[Registry[T]]:
        """Undo every ``register()`` made inside the block (for tests)."""
        with self._lock:
            saved = dict(self._registered)
        try:
            yield self
        finally:
            with self._lock:
                self._registered = saved
                self._loaded.clear()

    # -- loading -----------------------------------------------------------------------------
    def load(self, name: str, *, provider: str | None = None) -> type[T]:
        """Return the validated plugin class registered as ``name``, importing it if needed.

        Args:
            name: The plugin's name.
            provider: Who provided it where it was last used (a dataset index's record), to
                say what to install when it is missing.

        Raises:
            UnknownPluginError: No plugin has that name.
            PluginLoadError: Its module failed to import.
            PluginValidationError: It does not satisfy the protocol.
            DuplicatePluginError: Two distributions claim the name.
        """
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        with self._lock:
            if name in self._registered:
                return self._registered[name]
            if name not in self._discovered():
                raise self.unknown(name, provider=provider)
            declared = self._declared(name)
            origin = declared.origin
            try:
                plugin = declared.entry_point.load()
            except Exception as error:
                raise PluginLoadError(
                    f"The {self.noun} plugin {name!r} ({origin}) failed to load: {error}"
                ) from error
            self._validate(name, plugin, origin)
            self._loaded[name] = plugin
            return cast("type[T]", plugin)

    def create(self, name: str, *args: Any, provider: str | None = None, **kwargs: Any) -> T:
        """Instantiate the plugin registered as ``name`` with the given arguments.

        Args:
            name: The plugin's name.
            *args: Passed to the plugin class.
            provider: As for :meth:`load` (not passed to the plugin).
            **kwargs: Passed to the plugin class.
        """
        return self.load(name, provider=provider)(*args, **kwargs)

    def _validate(self, name: str, plugin: Any, origin: str) -> None:
        if not isinstance(plugin, type):
            raise PluginValidationError(
                f"The {self.noun} plugin {name!r} ({origin}) must be a class, got {plugin!r}."
            )
        annotations = getattr(self.protocol, "__annotations__", {})
        required = [
            member
            for member in protocol_members(self.protocol)
            if member not in annotations or str(annotations[member]).startswith("ClassVar")
        ]
        missing = [member for member in required if not hasattr(plugin, member)]
        if missing:
            raise PluginValidationError(
                f"The {self.noun} plugin {name!r} ({origin}) does not satisfy the "
                f"{self.protocol.__name__} protocol: it lacks {', '.join(missing)}."
            )
        declared = getattr(plugin, "name", None)
        if declared != name:
            raise PluginValidationError(
                f"The {self.noun} plugin {name!r} ({origin}) declares name={declared!r}; a "
                f"plugin's `name` must equal the name it is registered under."
            )

    def unknown(self, name: str, *, provider: str | None = None) -> UnknownPluginError:
        """Build the error for a missing plugin: the known names, the closest, what to install.

        Args:
            name: The name that was asked for.
            provider: Who provides it, ``"distribution version"`` as a dataset's index records
                it (see :meth:`provider`), or just the distribution's name.
        """
        known = self.names()
        message = f"No {self.noun} named {name!r} is installed."
        if known:
            message += f" Known {self.kind}: {', '.join(known)}."
        close = difflib.get_close_matches(name, known, n=1)
        if close:
            message += f" Did you mean {close[0]!r}?"
        if provider:
            distribution = entry_points.distribution_of(provider)
            message += f" It is provided by {provider}: pip install {distribution}"
        else:
            message += (
                " If it comes from a plugin, install the distribution that provides it "
                "(see `litdata plugins` for what is installed)."
            )
        return UnknownPluginError(message)
