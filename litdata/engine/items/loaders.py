"""Which item loader reads or writes a dataset: given, recorded, or the default a hook names.

Each is created from the ``item_loaders`` registry.

Item loaders are plugins (``litdata.item_loaders``): the built-in ``PyTreeLoader``,
``TokensLoader`` and ``TemporalArrayLoader`` are registered there exactly like a third
party's. An index records the loader it was written with (``config.item_loader``, the loader's
``name``); a dataset must be read with that loader.
"""

from __future__ import annotations

from litdata.core.errors import DatasetFormatError
from litdata.core.formats import ItemLoader
from litdata.core.index import DatasetIndex
from litdata.core.registry import hooks
from litdata.engine.boundary.options import resolve_plugin

__all__ = ["default_item_loader", "loader_for"]


def default_item_loader() -> ItemLoader:
    """The item loader a writer uses when none is given (a hook's answer: PyTree items)."""
    loader: ItemLoader = resolve_plugin("item_loaders", hooks.default_item_loader(None))
    return loader


def loader_for(index: DatasetIndex, given: ItemLoader | None, where: str) -> ItemLoader:
    """The item loader to read ``index`` with, checking it against what the index records.

    Raises:
        DatasetFormatError: The given loader differs from the recorded one.
        UnknownPluginError: The recorded loader is not installed (the message says what to
            install).
    """
    recorded = index.config.item_loader
    if recorded is None:  # an old index: the default for it, or the one given
        recorded = given.name if given is not None else hooks.default_item_loader(index)
    if given is None:
        providers = index.plugins.get("item_loaders")
        created: ItemLoader = resolve_plugin("item_loaders", recorded, providers=providers)
        return created
    if given.name != recorded:
        raise DatasetFormatError(
            f"{where} was written with {recorded}, but it is opened with {given.name}. Use "
            f"item_loader={recorded}(...) (or none, for the loader the dataset records)."
        )
    return given
