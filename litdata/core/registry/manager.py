"""The process-wide pluggy ``PluginManager("litdata")``, built lazily on first use."""

from __future__ import annotations

import functools
import logging

import pluggy

from litdata.core.errors import PluginLoadError
from litdata.core.registry import entry_points, hookspecs

__all__ = ["get_plugin_manager", "hook_origin", "reset_plugin_manager"]

logger = logging.getLogger(__name__)

_HOOK_GROUP = "litdata"

# Which distribution provided each hook plugin loaded from an entry point, by plugin name.
_origins: dict[str, str] = {}


@functools.cache
def get_plugin_manager() -> pluggy.PluginManager:
    """Return the plugin manager, loading hook plugins from the ``litdata`` entry-point group.

    The registries' rules apply (:func:`~litdata.core.registry.entry_points.allowed`):
    ``LITDATA_DISABLE_PLUGIN_AUTOLOAD=1`` loads only litdata's own hooks (its defaults);
    ``LITDATA_BLOCK_PLUGINS=a,b`` skips the named third-party plugins.
    """
    manager = pluggy.PluginManager("litdata")
    manager.add_hookspecs(hookspecs)
    _load_entry_points(manager)
    manager.check_pending()
    logger.debug("litdata hook plugins: %s", [name for name, _ in manager.list_name_plugin()])
    return manager


def _load_entry_points(manager: pluggy.PluginManager) -> None:
    for declared in entry_points.installed():
        entry_point = declared.entry_point
        name = entry_point.name
        if entry_point.group != _HOOK_GROUP or manager.has_plugin(name):
            continue
        if not entry_points.allowed(declared):
            continue
        try:
            plugin = entry_point.load()
        except Exception as error:
            raise PluginLoadError(
                f"The hook plugin {name!r} ({declared.origin}) failed to load: {error}. "
                f"Skip it with LITDATA_BLOCK_PLUGINS={name}."
            ) from error
        manager.register(plugin, name=name)
        _origins[name] = declared.provider


def hook_origin(name: str) -> str:
    """The distribution (and version) that provided the hook plugin registered as ``name``."""
    return _origins.get(name, "registered in-process")


def reset_plugin_manager() -> None:
    """Forget the plugin manager so the next use rebuilds it (after installing a plugin)."""
    get_plugin_manager.cache_clear()
    _origins.clear()
    entry_points.forget()
