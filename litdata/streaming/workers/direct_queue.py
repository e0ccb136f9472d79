"""Queues between the training process and its worker processes, without feeder threads.

``multiprocessing.Queue`` hands each ``put`` to a feeder thread, which pickles and writes it
later. A DataLoader puts twice per batch (a request to a worker, the worker's result), so every
batch wakes a thread on each side, and that thread then competes for the GIL with the loop
that reads or makes the next batch. On a machine with few cores that toll costs more than the
batch's own work when batches are small.

``DirectQueue`` writes in the caller's thread instead: a request is a few bytes, and a result is a
small descriptor with the arena (``litdata.streaming.workers.arena.slots``) or a batch the training
process is about to read. A writer whose reader has gone (the training process died) drops the
message, as the feeder thread would. ``direct_context`` makes a multiprocessing context (fork,
spawn or forkserver: the one the user chose) whose ``Queue`` is a ``DirectQueue``.
"""

from __future__ import annotations

import queue
import time
from multiprocessing.context import BaseContext
from multiprocessing.queues import SimpleQueue
from multiprocessing.reduction import ForkingPickler
from typing import Any

__all__ = ["DirectQueue", "direct_context"]


class DirectQueue(SimpleQueue[Any]):
    """A process-safe queue whose ``put`` writes at once, with ``get(timeout=...)``.

    It offers what DataLoader's workers and iterator call on a ``multiprocessing.Queue``:
    ``put``, ``get`` with a timeout (raising ``queue.Empty``), ``close``,
    ``cancel_join_thread`` and ``join_thread``.
    """

    def put(self, obj: Any, block: bool = True, timeout: float | None = None) -> None:
        """Pickle ``obj`` (torch's reductions) and write it now (``block``, ``timeout``: unused)."""
        data = ForkingPickler.dumps(obj)
        try:
            with self._wlock:  # type: ignore[attr-defined]  # SimpleQueue's, never None on POSIX
                self._writer.send_bytes(data)  # type: ignore[attr-defined]
        except (BrokenPipeError, ConnectionResetError):
            pass  # nobody reads any more

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """The next object; raises ``queue.Empty`` when none came within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._rlock.acquire(block, timeout):  # type: ignore[attr-defined]
            raise queue.Empty
        try:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._reader.poll(left if block else 0.0):  # type: ignore[attr-defined]
                raise queue.Empty
            data = self._reader.recv_bytes()  # type: ignore[attr-defined]
        finally:
            self._rlock.release()  # type: ignore[attr-defined]
        return ForkingPickler.loads(data)

    def cancel_join_thread(self) -> None:
        """Nothing to do: no feeder thread."""

    def join_thread(self) -> None:
        """Nothing to do: no feeder thread."""


_contexts: dict[type[BaseContext], type[BaseContext]] = {}


def direct_context(base: BaseContext) -> BaseContext:
    """A context like ``base`` (same start method) whose queues are ``DirectQueue``."""
    kind = type(base)
    direct = _contexts.get(kind)
    if direct is None:

        def make_queue(self: BaseContext, maxsize: int = 0) -> DirectQueue:
            return DirectQueue(ctx=self.get_context())

        direct = _contexts[kind] = type(f"Direct{kind.__name__}", (kind,), {"Queue": make_queue})
    return direct()
