"""``SizedIterator``: an epoch's iterator that also answers ``len()``, as LitData's does."""

from __future__ import annotations

from collections.abc import Iterator, Sized
from typing import Any

__all__ = ["SizedIterator"]


class SizedIterator(Iterator[Any]):
    """Iterates ``items``; its length is ``len(sized)`` (the epoch's, as planned)."""

    def __init__(self, items: Iterator[Any], sized: Sized) -> None:
        self._items = items
        self._sized = sized

    def __next__(self) -> Any:
        return next(self._items)

    def __len__(self) -> int:
        return len(self._sized)

    def close(self) -> None:
        """Stop the epoch early: ``items`` ends now (its readers close), as a generator does."""
        close = getattr(self._items, "close", None)
        if close is not None:
            close()
