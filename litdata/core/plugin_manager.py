"""The process-wide pluggy ``PluginManager("litdata")``, built lazily on first use."""

from __future__ import annotations

import functools
import logging

import pluggy

from litdata.core import config, hookspecs

__all__ = ["get_plugin_manager", "reset_plugin_manager"]

logger = logging.getLogger(__name__)

_BUILTIN_HOOKS = "litdata.plugins.hooks"


@functools.cache
def get_plugin_manager() -> pluggy.PluginManager:
    """Return the plugin manager, loading hook plugins from the ``litdata`` entry-point group.

    ``LITDATA_DISABLE_PLUGIN_AUTOLOAD=1`` loads only litdata's own hooks;
    ``LITDATA_BLOCK_PLUGINS=a,b`` skips the named entry points.
    """
    manager = pluggy.PluginManager("litdata")
    manager.add_hookspecs(hookspecs)
    for name in config.blocked_plugins():
        manager.set_blocked(name)
    if config.plugin_autoload():
        manager.load_setuptools_entrypoints("litdata")
    if not manager.has_plugin("builtin"):
        # Autoload may be off (or the package not installed): the defaults still apply.
        import importlib

        manager.register(importlib.import_module(_BUILTIN_HOOKS), name="builtin")
    manager.check_pending()
    logger.debug("litdata hook plugins: %s", [name for name, _ in manager.list_name_plugin()])
    return manager


def reset_plugin_manager() -> None:
    """Forget the plugin manager so the next use rebuilds it (after installing a plugin)."""
    get_plugin_manager.cache_clear()
