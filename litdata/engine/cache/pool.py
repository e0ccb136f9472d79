"""``DaemonPool``: a few daemon threads running submitted calls, each with its future.

A process never waits for them to exit: a DataLoader worker whose trainer died must be able
to exit in the middle of a download.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from litdata.core.registry import hooks

__all__ = ["DaemonPool"]

T = TypeVar("T")

_Task = tuple[Future[Any], Callable[[], Any]]


class DaemonPool:
    """``size`` daemon threads, named ``litdata-<name>-<n>``.

    Args:
        size: How many calls run at once.
        name: Names the threads (and the failures reported to the ``failed`` hook).
    """

    def __init__(self, size: int, name: str) -> None:
        self.name = name
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"litdata-{name}-{n}", daemon=True)
            for n in range(max(1, size))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, call: Callable[[], T]) -> Future[T]:
        """Run ``call()`` in a thread; its future holds its result or what it raised."""
        future: Future[T] = Future()
        self._tasks.put((future, call))
        return future

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            future, call = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as error:  # handed to whoever waits on the future
                hooks.failed(self.name, error)
                future.set_exception(error)

    def shutdown(self) -> None:
        """Let the threads exit once the calls already submitted ran (without waiting)."""
        for _ in self._threads:
            self._tasks.put(None)
