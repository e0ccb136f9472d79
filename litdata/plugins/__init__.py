"""litdata's plugins: registering, finding and resolving them; and its own, built in.

A plugin is a class of one kind (``storage``, ``serializers``, ``compression``, ``encryption``,
``shuffle``, ``formats``, ``executors``, ``item_loaders``), found by name. A distribution
declares its plugins as entry points in the group ``litdata.<kind>`` (litdata's own are
declared there exactly like a third party's); in a running process, :func:`register` adds one::

    import litdata.plugins

    litdata.plugins.register("compression", "mycodec", MyCodec)
    codec = litdata.plugins.resolve("compression", "mycodec:3")  # MyCodec(3), checked

``LITDATA_BLOCK_PLUGINS`` (names, ``group:name`` or distributions, comma-separated) and
``LITDATA_DISABLE_PLUGIN_AUTOLOAD`` keep third-party plugins out, of every kind and of the
hooks alike. ``litdata plugins`` lists what is installed.
"""

from __future__ import annotations

from typing import Any

from litdata.core.registry import entry_points
from litdata.core.registry import kinds as _kinds
from litdata.core.registry.hookspecs import hookimpl
from litdata.core.registry.manager import reset_plugin_manager
from litdata.core.registry.registry import PluginInfo, Registry

__all__ = [
    "PluginInfo",
    "Registry",
    "hookimpl",
    "kinds",
    "refresh",
    "register",
    "registry",
    "resolve",
    "unregister",
]


def kinds() -> list[str]:
    """The plugin kinds, sorted: ``compression``, ``encryption``, ``executors``..."""
    return sorted(_kinds.ALL)


def registry(kind: str) -> Registry[Any]:
    """The registry of ``kind``: its names, where each comes from, loading them.

    Raises:
        KeyError: ``kind`` is not a plugin kind (the message lists them).
    """
    try:
        return _kinds.ALL[kind]
    except KeyError:
        raise KeyError(f"No plugin kind {kind!r}; the kinds are {', '.join(kinds())}.") from None


def register(kind: str, name: str, plugin: type, *, replace: bool = False) -> None:
    """Register ``plugin`` (a class) as the ``kind`` plugin ``name`` in this process.

    It wins over entry points of that name. Spawned DataLoader workers do not inherit it: a
    plugin meant for them is declared as an entry point.

    Raises:
        DuplicatePluginError: ``name`` is registered already and ``replace`` is false.
        PluginValidationError: The class does not satisfy the kind's protocol.
    """
    registry(kind).register(name, plugin, replace=replace)


def unregister(kind: str, name: str) -> None:
    """Undo :func:`register` (entry points of that name stay visible)."""
    registry(kind).unregister(name)


def refresh() -> None:
    """Find plugins again: after ``pip install`` of a plugin in a running process."""
    entry_points.forget()
    for each in _kinds.ALL.values():
        each.refresh()
    reset_plugin_manager()


def resolve(kind: str, spec_or_instance: Any, /, *args: Any, **options: Any) -> Any:
    """The ``kind`` plugin a spec selects (``"zstd:7"``, ``"window:size=4"``), built and checked.

    What litdata itself does with every setting that names a plugin; see
    :func:`litdata.engine.boundary.options.resolve_plugin`.
    """
    from litdata.engine.boundary.options import resolve_plugin  # the engine: only when resolving

    return resolve_plugin(kind, spec_or_instance, *args, **options)
