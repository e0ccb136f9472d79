"""``ray``: the workers of ``optimize`` and ``map`` as tasks on a Ray cluster.

The inputs are cut into small tasks (several per CPU) that Ray schedules as CPUs free up. The
job is put in the object store once and every task reads it from there; a task whose worker
process or node dies is rerun by Ray (``max_retries`` times), while a task whose ``fn`` raised
runs again only when asked (``retries``); otherwise the run fails, naming the input. Attempts
talk to the driver through a small actor, the run's inbox: progress in, the stop flag out.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from litdata.core.imports import require
from litdata.core.work import Item, Job
from litdata.plugins.executors._attempt import Message, Outcome, run_task
from litdata.plugins.executors._cluster import ClusterRunner

ray = require("ray", extra="ray", purpose="The ray executor")

__all__ = ["RayExecutor"]


class _Inbox:
    """The run's inbox (a Ray actor): messages from the attempts, and the stop flag."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.stopped = False

    def put(self, messages: list[Message]) -> None:
        self.messages.extend(messages)

    def drain(self) -> list[Message]:
        messages, self.messages = self.messages, []
        return messages

    def stop(self) -> None:
        self.stopped = True

    def is_stopped(self) -> bool:
        return self.stopped


@dataclass(frozen=True)
class _Channel:
    """An attempt's channel: the run's inbox actor."""

    inbox: Any

    def send(self, messages: list[Message]) -> None:
        self.inbox.put.remote(messages)

    def stopped(self) -> bool:
        return bool(ray.get(self.inbox.is_stopped.remote()))


class _Engine:
    """One run's tasks on the Ray cluster this process is connected to."""

    def __init__(self, job: Job, max_retries: int) -> None:
        self.inbox = ray.remote(num_cpus=0)(_Inbox).remote()
        self.job = ray.put(job)
        self.task = ray.remote(num_cpus=1, max_retries=max_retries)(run_task)
        self.refs: dict[Any, int] = {}

    def submit(self, rank: int, inputs: list[Item]) -> None:
        self.refs[self.task.remote(self.job, rank, inputs, _Channel(self.inbox))] = rank

    def messages(self) -> list[Message]:
        return list(ray.get(self.inbox.drain.remote()))

    def completed(self, timeout: float) -> list[tuple[int, Outcome | BaseException]]:
        if not self.refs:
            time.sleep(timeout)
            return []
        ready, _ = ray.wait(list(self.refs), num_returns=len(self.refs), timeout=timeout)
        results: list[tuple[int, Outcome | BaseException]] = []
        for ref in ready:
            rank = self.refs.pop(ref)
            try:
                results.append((rank, ray.get(ref)))
            except Exception as error:  # the task could not run: the driver reports it
                results.append((rank, error))
        return results

    def stop(self) -> None:
        ray.get(self.inbox.stop.remote())
        for ref in self.refs:
            ray.cancel(ref)

    def close(self) -> None:
        ray.kill(self.inbox)


class RayExecutor(ClusterRunner):
    """Runs ``optimize``/``map`` on a Ray cluster.

    Args:
        address: The cluster to connect to (``"auto"``, ``"ray://head:10001"``) when this
            process is not connected yet; by default Ray's own, as ``ray.init()`` chooses:
            ``RAY_ADDRESS``, or a new local instance. The connection is kept for later runs,
            and closed when the process exits.
        init_options: Other arguments of ``ray.init`` (``num_cpus``, ``runtime_env``...).
        tasks_per_slot: Tasks per CPU: more even out slow inputs and make a lost task
            cheaper to rerun; each task ends with a partial chunk.
        wait_seconds: How long to wait for the cluster to have ``num_nodes`` machines.
        retries: How many times a task whose ``fn`` raised runs again before the run fails
            (for errors that may not recur; a task whose worker was lost is always rerun).
        max_retries: How many times Ray reruns a task whose worker died.
    """

    name: ClassVar[str] = "ray"
    cluster: ClassVar[str] = "Ray cluster"

    def __init__(
        self,
        address: str | None = None,
        *,
        init_options: dict[str, Any] | None = None,
        tasks_per_slot: int = 4,
        wait_seconds: float = 60.0,
        retries: int = 0,
        max_retries: int = 3,
    ) -> None:
        self.address = address
        self.init_options = dict(init_options or {})
        self.tasks_per_slot = tasks_per_slot
        self.wait_seconds = wait_seconds
        self.retries = retries
        self.max_retries = max_retries

    @contextlib.contextmanager
    def _session(self) -> Iterator[None]:
        """Connected to the cluster (the connection is kept for later runs)."""
        if not ray.is_initialized():
            ray.init(address=self.address, **self.init_options)
        yield

    def _machines(self, session: Any) -> int:
        return sum(1 for node in ray.nodes() if node["Alive"])

    def _slots(self, session: Any) -> int:
        return int(ray.cluster_resources().get("CPU", 1))

    def _engine(self, session: Any, job: Job) -> _Engine:
        return _Engine(job, self.max_retries)
