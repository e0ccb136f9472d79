"""``Uploader``: sends finished files to a remote location from a background thread.

A writer hands each chunk over as soon as it is written and goes on encoding; the uploads
run in order (so a checkpoint queued after a chunk is published after it), and the local
copy is removed once its upload succeeded. The first failure is raised by the next
:meth:`Uploader.submit` or by :meth:`Uploader.wait`, with its original traceback.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from litdata.core.storage.location import Location

__all__ = ["Uploader"]

Task = Callable[[], None]


class Uploader:
    """Uploads files to ``location`` in order, in one daemon thread.

    Args:
        location: Where the files go (a remote location).
        backlog: How many uploads may wait before ``submit`` blocks (bounds the local disk
            a fast writer can fill ahead of a slow network).
    """

    def __init__(self, location: Location, backlog: int = 4) -> None:
        self.location = location
        self._tasks: queue.Queue[tuple[Task, Future[None]] | None] = queue.Queue(backlog)
        self._futures: list[Future[None]] = []
        self._thread = threading.Thread(target=self._run, name="litdata-upload", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (task := self._tasks.get()) is not None:
            action, future = task
            try:
                action()
            except BaseException as error:  # handed to the writer as it is
                future.set_exception(error)
            else:
                future.set_result(None)

    def _raise_failure(self) -> None:
        for future in self._futures:
            if future.done() and future.exception() is not None:
                future.result()
        self._futures = [future for future in self._futures if not future.done()]

    def submit(self, action: Task) -> None:
        """Run ``action`` after the tasks already submitted.

        Raises:
            Exception: What an earlier task raised.
        """
        self._raise_failure()
        future: Future[None] = Future()
        self._futures.append(future)
        self._tasks.put((action, future))

    def upload(self, path: str | os.PathLike[str], name: str | None = None) -> None:
        """Upload the local file ``path`` as ``name`` (its own name by default), then delete it."""
        source = Path(path)
        url = self.location.join(name or source.name)

        def send() -> None:
            self.location.storage.upload(str(source), url)
            source.unlink(missing_ok=True)

        self.submit(send)

    def wait(self) -> None:
        """Wait for every task, then stop the thread.

        Raises:
            Exception: What the first failed task raised.
        """
        self._tasks.put(None)
        self._thread.join()
        for future in self._futures:
            future.result()
        self._futures = []
