"""``Uploader``: sends finished files to a remote location from a background thread.

A writer hands each chunk over as soon as it is written and goes on encoding; chunks upload in
``threads`` threads at once, and a task submitted with :meth:`Uploader.submit` (a checkpoint,
a per-writer index) runs only once everything handed over before it is uploaded. The local
copy of a file is removed once its upload succeeded. The workers of a processing job on one
node share its connection budget (``LITDATA_CONNECTIONS``): each worker's uploader sets
``LITDATA_UPLOAD_CONNECTIONS`` to its share for its process (unless the user set it), which
the storage backends' parallel uploads stay within. The first failure is raised by the next
:meth:`Uploader.submit` or by :meth:`Uploader.wait`, with its original traceback.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from litdata.core import config
from litdata.core.location import Location

__all__ = ["Uploader"]

#: The variable a worker's share of the node's connection budget is given in.
_SHARE = "LITDATA_UPLOAD_CONNECTIONS"

Task = Callable[[], None]


class Uploader:
    """Uploads files to ``location`` from background threads.

    Args:
        location: Where the files go (a remote location).
        backlog: How many uploads may wait before a new one blocks (bounds the local disk
            a fast writer can fill ahead of a slow network).
        threads: Uploads in flight at once (LitData's ``num_uploaders``).
        node_share: How many processes on this node upload at once (a job's workers); each
            gets that share of the node's connection budget.
    """

    def __init__(
        self, location: Location, backlog: int = 4, threads: int = 1, node_share: int = 1
    ) -> None:
        self.location = location
        self._restore: str | None = None
        if node_share > 1 and _SHARE not in os.environ:
            os.environ[_SHARE] = str(max(1, config.connection_budget() // node_share))
            self._restore = _SHARE
        self._tasks: queue.Queue[tuple[Task, Future[None]] | None] = queue.Queue(backlog)
        self._futures: list[Future[None]] = []
        self._threads = [
            threading.Thread(target=self._run, name="litdata-upload", daemon=True)
            for _ in range(max(1, threads))
        ]
        for thread in self._threads:
            thread.start()

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

    def _put(self, action: Task) -> None:
        self._raise_failure()
        future: Future[None] = Future()
        self._futures.append(future)
        self._tasks.put((action, future))

    def submit(self, action: Task) -> None:
        """Run ``action`` once every task handed over before it has succeeded.

        Raises:
            Exception: What an earlier task raised.
        """
        before = list(self._futures)

        def after_the_rest() -> None:
            for future in before:
                future.result()  # an earlier failure fails this task too
            action()

        self._put(after_the_rest)

    def upload(
        self, path: str | os.PathLike[str], name: str | None = None, *, last: bool = False
    ) -> None:
        """Upload the local file ``path`` as ``name`` (its own name by default), then delete it.

        Args:
            path: The local file.
            name: Its name at the location.
            last: Upload it only after everything handed over before it (an index that names
                the chunks uploaded before it).
        """
        source = Path(path)
        url = self.location.join(name or source.name)

        def send() -> None:
            self.location.storage.upload(str(source), url)
            source.unlink(missing_ok=True)

        if last:
            self.submit(send)
        else:
            self._put(send)

    def wait(self) -> None:
        """Wait for every task, then stop the threads.

        Raises:
            Exception: What the first failed task raised.
        """
        for _ in self._threads:
            self._tasks.put(None)
        for thread in self._threads:
            thread.join()
        if self._restore is not None:
            os.environ.pop(self._restore, None)
            self._restore = None
        for future in self._futures:
            future.result()
        self._futures = []
