"""``from litdata.streaming.item_loader import TokensLoader`` (LitData's import path)."""

from litdata.core.items.loaders import ItemLoader as BaseItemLoader
from litdata.core.items.loaders import PyTreeLoader, TemporalArrayLoader, TokensLoader

__all__ = ["BaseItemLoader", "PyTreeLoader", "TemporalArrayLoader", "TokensLoader"]
