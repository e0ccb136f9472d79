"""Readers: turn each ``optimize``/``map`` input into what ``fn`` gets (LitData's ``reader=``).

A reader sees the whole input list first (``remap_items``, to regroup it for the workers) and
then each input in the worker that processes it (``read``); ``fn`` is called with what
``read`` returns, and an input whose ``read`` returns ``None`` is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["BaseReader", "ReadThenCall", "with_reader"]


class BaseReader:
    """Subclass it and define :meth:`read` (and :meth:`remap_items` to regroup inputs)."""

    def remap_items(self, items: list[Any], num_workers: int) -> list[Any]:
        """The inputs the workers get, from the user's (unchanged by default)."""
        return items

    def read(self, item: Any) -> Any:
        """What ``fn`` gets for ``item`` (``None``: skip it).

        Raises:
            NotImplementedError: The subclass did not define it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define read(item).")


@dataclass(frozen=True)
class ReadThenCall:
    """``fn(reader.read(item), ...)``, skipping inputs the reader returns ``None`` for."""

    reader: Any
    fn: Callable[..., Any]

    def __call__(self, item: Any, *args: Any, **kwargs: Any) -> Any:
        """Read ``item`` and call ``fn`` with it."""
        value = self.reader.read(item)
        return None if value is None else self.fn(value, *args, **kwargs)


def with_reader(
    reader: Any, items: list[Any], fn: Callable[..., Any], num_workers: int | None
) -> tuple[list[Any], Callable[..., Any]]:
    """The inputs and the function the workers get when a ``reader`` is given.

    Raises:
        ValueError: A ``reader`` without ``read``.
    """
    if reader is None:
        return items, fn
    if not callable(getattr(reader, "read", None)):
        raise ValueError(f"reader must have a read(item) method; got {type(reader).__name__}.")
    remap = getattr(reader, "remap_items", None)
    if callable(remap):
        items = list(remap(items, num_workers or 1))
    return items, ReadThenCall(reader, fn)
