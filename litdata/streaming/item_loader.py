"""``from litdata.streaming.item_loader import TokensLoader`` (LitData's import path)."""

from typing import Any

from litdata.core.items.loaders import ItemLoader as BaseItemLoader
from litdata.core.items.loaders import PyTreeLoader, TemporalArrayLoader, TokensLoader

__all__ = [
    "BaseItemLoader",
    "ParquetLoader",  # noqa: F822
    "PyTreeLoader",
    "TemporalArrayLoader",
    "TokensLoader",
]


def __getattr__(name: str) -> Any:
    """``ParquetLoader``, imported when first asked for (it belongs to the Parquet format)."""
    if name == "ParquetLoader":
        import litdata

        return litdata.ParquetLoader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
