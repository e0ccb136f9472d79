"""``ByteBudget``: how many bytes of ranged parts a process holds in memory at once.

A part of a parallel download (:mod:`litdata.engine.cache.parts`) is read whole into memory,
checked and written where it belongs in the chunk's file. Parts are sized from the link
(up to 64 MiB each) and up to the node's connection budget fly at once, so without a bound a
process could hold a gigabyte of parts. Every part holds its size of the process's budget
(``LITDATA_PART_MEMORY_MB``, 128 by default) from before its request until it is written;
parts are cut to at most half the budget, so that two always fly.
"""

from __future__ import annotations

import contextlib
import heapq
import threading
from collections.abc import Iterator

from litdata.core import config
from litdata.engine.throttle import line_key

__all__ = ["ByteBudget", "part_budget"]


class ByteBudget:
    """A count of bytes shared by threads: each holds some while it works, or waits.

    Args:
        total: The bytes held at most, all holders together.
    """

    def __init__(self, total: int) -> None:
        self.total = max(1, total)
        self._held = 0
        self._condition = threading.Condition()
        self._queue: list[tuple[int, int, int]] = []  # the waiters' line keys (a heap)

    @property
    def held(self) -> int:
        """The bytes held now."""
        return self._held

    @contextlib.contextmanager
    def holding(self, size: int, key: tuple[int, int, int] | None = None) -> Iterator[None]:
        """Hold ``size`` bytes (the whole budget at most) while the block runs, in line.

        Waiters are let in by ``key`` (``litdata.engine.throttle.line_key``: the chunk the
        reader needs first, then its parts in order), not by who asked first: otherwise the
        parts of a chunk needed later could take the memory, and so the link, from the one
        the reader waits for. Without a key, a waiter queues after all keys given so far.
        """
        size = min(max(0, size), self.total)
        key = line_key(None) if key is None else key
        with self._condition:
            heapq.heappush(self._queue, key)
            while self._queue[0] != key or self._held + size > self.total:
                self._condition.wait()
            heapq.heappop(self._queue)
            self._held += size
            self._condition.notify_all()  # the next in line may fit too
        try:
            yield
        finally:
            with self._condition:
                self._held -= size
                self._condition.notify_all()


_BUDGETS: dict[int, ByteBudget] = {}
_GUARD = threading.Lock()


def part_budget() -> ByteBudget:
    """This process's budget for parts in memory (``LITDATA_PART_MEMORY_MB``, 128 default)."""
    total = config.integer("LITDATA_PART_MEMORY_MB", 128, minimum=1) << 20
    with _GUARD:
        found = _BUDGETS.get(total)
        if found is None:
            found = _BUDGETS[total] = ByteBudget(total)
        return found
