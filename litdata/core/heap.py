"""Giving the heap's freed memory back to the system (``release_freed``)."""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

__all__ = ["release_freed"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim`` (glibc), or ``None`` where it has none (musl, macOS)."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim  # type: ignore[no-any-return]


def release_freed() -> bool:
    """Return the memory ``malloc`` keeps free to the system; whether any was returned.

    Planning a worker's share of a million-chunk epoch allocates and frees tens of MB of
    arrays (a permutation, sums, checks of the mapped index). glibc keeps freed heap memory
    for later allocations, so without this every DataLoader worker would hold those pages as
    its own for its whole life (private memory, counted in its PSS). A no-op (``False``)
    where the C library has no ``malloc_trim``.
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
