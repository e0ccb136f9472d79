"""``from litdata.streaming.item_loader import TokensLoader`` (LitData's import path)."""

from typing import Any

from litdata.core.items.loaders import ItemLoader as BaseItemLoader
from litdata.core.items.loaders import PyTreeLoader, TokensLoader

__all__ = ["BaseItemLoader", "ParquetLoader", "PyTreeLoader", "TokensLoader"]  # noqa: F822


def __getattr__(name: str) -> Any:
    """``ParquetLoader``, imported when first asked for (it belongs to the Parquet format)."""
    if name == "ParquetLoader":
        import litdata

        return litdata.ParquetLoader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
