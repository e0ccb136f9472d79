"""``dask``: the workers of ``optimize`` and ``map`` as tasks on a Dask cluster.

The inputs are cut into small tasks (several per worker thread) that the scheduler hands to
workers as they free up. The job is shipped once, as a task of its own that the scheduler can
recompute, and each task fetches it; a task whose worker dies is rerun by the scheduler
(``distributed.scheduler.allowed-failures`` times), and a finished task's result is released at
once, so a worker lost later never makes the scheduler rerun finished work. Progress comes back
as Dask events (``Worker.log_event``), and a ``distributed.Event`` tells tasks to stop.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.core.work import Item, Job
from litdata.plugins.executors._attempt import Message, Outcome, run_task
from litdata.plugins.executors._cluster import ClusterRunner

distributed = require("distributed", extra="dask", purpose="The dask executor")

__all__ = ["DaskExecutor"]


def _job(job: Job) -> Job:
    """The job, as the result of a task: kept on a worker, recomputed if that worker is lost."""
    return job


@dataclass(frozen=True)
class _Channel:
    """An attempt's channel: events on the run's topic, and the run's stop ``Event``."""

    topic: str

    def send(self, messages: list[Message]) -> None:
        distributed.get_worker().log_event(self.topic, messages)

    def stopped(self) -> bool:
        return bool(distributed.Event(self.topic).is_set())


class _Engine:
    """One run's tasks on a Dask client."""

    def __init__(self, client: Any, job: Job) -> None:
        self.client = client
        self.topic = f"litdata-{uuid.uuid4().hex}"
        self.inbox: queue.SimpleQueue[list[Message]] = queue.SimpleQueue()
        client.subscribe_topic(self.topic, lambda event: self.inbox.put(event[1]))
        self.stop_event = distributed.Event(self.topic, client=client)
        self.job = client.submit(_job, job, key=f"{self.topic}-job", pure=False)
        self.futures: dict[Any, int] = {}
        self.submitted = itertools.count()

    def submit(self, rank: int, inputs: list[Item]) -> None:
        key = f"{self.topic}-{rank}-{next(self.submitted)}"  # a task run again gets a new key
        channel = _Channel(self.topic)
        future = self.client.submit(run_task, self.job, rank, inputs, channel, key=key, pure=False)
        self.futures[future] = rank

    def messages(self) -> list[Message]:
        found: list[Message] = []
        while not self.inbox.empty():
            found.extend(self.inbox.get())  # this thread is its only reader
        return found

    def completed(self, timeout: float) -> list[tuple[int, Outcome | BaseException]]:
        done = [future for future in self.futures if future.done()]
        if not done and timeout:
            time.sleep(timeout)
            done = [future for future in self.futures if future.done()]
        results: list[tuple[int, Outcome | BaseException]] = []
        for future in done:
            status = future.status  # read once: a result on a worker lost since is recomputed
            if status == "finished":
                try:
                    result: Outcome | BaseException = future.result()
                except Exception as error:  # its recomputation failed
                    result = error
            elif status == "error":
                result = future.exception()
            elif status == "cancelled":
                result = RuntimeError("the task was cancelled")
            else:
                continue
            results.append((self.futures.pop(future), result))
            future.release()  # the scheduler forgets it: never recomputed
        return results

    def stop(self) -> None:
        self.stop_event.set()
        self.client.cancel(list(self.futures))

    def close(self) -> None:
        self.client.unsubscribe_topic(self.topic)
        self.client.cancel([*self.futures, self.job])
        self.stop_event.clear()


class DaskExecutor(ClusterRunner):
    """Runs ``optimize``/``map`` on a Dask cluster (``dask.distributed``).

    Args:
        address: The scheduler's address (``"tcp://10.0.0.1:8786"``). By default, the client
            this process already made; else Dask's own default, as ``distributed.Client()``
            makes it: the ``DASK_SCHEDULER_ADDRESS`` setting, or a new ``LocalCluster`` on
            this machine, kept for later runs and closed when the process exits.
        client: A ``distributed.Client`` to run on (instead of ``address``). It is not pickled:
            a pickled executor reconnects to its scheduler.
        tasks_per_slot: Tasks per worker thread: more even out slow inputs and make a lost
            task cheaper to rerun; each task ends with a partial chunk.
        wait_seconds: How long to wait for the cluster to have ``num_nodes`` machines.
        retries: How many times a task whose ``fn`` raised runs again before the run fails
            (for errors that may not recur; a task whose worker was lost is always rerun).

    Raises:
        ValueError: Both ``address`` and ``client`` were given.
    """

    name: ClassVar[str] = "dask"
    cluster: ClassVar[str] = "Dask cluster"

    def __init__(
        self,
        address: str | None = None,
        *,
        client: Any = None,
        tasks_per_slot: int = 4,
        wait_seconds: float = 60.0,
        retries: int = 0,
    ) -> None:
        if address is not None and client is not None:
            raise ValueError("Pass a scheduler address or a client, not both.")
        self.address = address if client is None else client.scheduler.address
        self.tasks_per_slot = tasks_per_slot
        self.wait_seconds = wait_seconds
        self.retries = retries
        self._client = client

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_client": None}

    @contextlib.contextmanager
    def _session(self) -> Iterator[Any]:
        """The client: the one given, one to ``address`` (closed after), or the default."""
        if self._client is not None:
            yield self._client
        elif self.address:
            client = distributed.Client(self.address, set_as_default=False)
            try:
                yield client
            finally:
                client.close()
        else:
            try:
                yield distributed.default_client()
            except ValueError:  # none yet: Dask's default, kept as a script's Client() is
                yield distributed.Client()

    def _workers(self, client: Any) -> list[dict[str, Any]]:
        return list(client.scheduler_info(n_workers=-1)["workers"].values())

    def _machines(self, session: Any) -> int:
        return len({worker["host"] for worker in self._workers(session)})

    def _slots(self, session: Any) -> int:
        return sum(int(worker["nthreads"]) for worker in self._workers(session))

    def _engine(self, session: Any, job: Job) -> _Engine:
        return _Engine(session, job)
