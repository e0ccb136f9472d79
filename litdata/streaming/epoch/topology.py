"""Where this process stands: its rank among the training processes, its DataLoader worker."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from litdata.core.registry import hooks
from litdata.streaming.epoch.plan import Topology

__all__ = [
    "as_thread_worker",
    "logical_worker",
    "num_nodes",
    "rank_and_world",
    "thread_worker",
    "worker_and_count",
]

#: The worker a thread of ``StreamingDataLoader(worker_mode="thread")`` plays, per thread.
_thread_role = threading.local()


def rank_and_world() -> tuple[int, int]:
    """This process's ``(rank, world size)`` among the training processes.

    From ``torch.distributed`` when it is initialised, else from the ``RANK`` (or
    ``GLOBAL_RANK``) and ``WORLD_SIZE`` environment variables, else ``(0, 1)``.

    Raises:
        ValueError: The environment variables are not integers or are inconsistent.
    """
    dist: Any = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    raw_world = os.environ.get("WORLD_SIZE", "1")
    raw_rank = os.environ.get("RANK", os.environ.get("GLOBAL_RANK", "0"))
    try:
        world, rank = int(raw_world), int(raw_rank)
    except ValueError:
        raise ValueError(
            f"WORLD_SIZE={raw_world!r} and RANK={raw_rank!r} must be integers."
        ) from None
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"RANK={rank} is not a rank of WORLD_SIZE={world}.")
    return rank, world


def num_nodes(world: int) -> int:
    """How many machines the ``world`` processes run on (``LOCAL_WORLD_SIZE`` per machine)."""
    per_node = os.environ.get("LOCAL_WORLD_SIZE", "")
    return max(1, world // int(per_node)) if per_node.isdigit() and int(per_node) else 1


@contextmanager
def as_thread_worker(worker: int, num_workers: int) -> Iterator[None]:
    """While inside, this thread is worker ``worker`` of ``num_workers`` (thread workers).

    Torch's ``get_worker_info()`` is global to a process, so thread workers say who they
    are here instead; ``worker_and_count`` reads it first.
    """
    _thread_role.worker = (worker, num_workers)
    try:
        yield
    finally:
        del _thread_role.worker


def thread_worker() -> tuple[int, int] | None:
    """``(worker id, number of workers)`` when this thread is a thread worker, else ``None``."""
    role: tuple[int, int] | None = getattr(_thread_role, "worker", None)
    return role


def worker_and_count() -> tuple[int, int]:
    """``(worker id, number of workers)`` inside a DataLoader worker, else ``(0, 1)``.

    A DataLoader worker is a worker process, or a thread of ``worker_mode="thread"``.
    """
    role = thread_worker()
    if role is not None:
        return role
    from torch.utils.data import get_worker_info

    info = get_worker_info()
    return (0, 1) if info is None else (info.id, info.num_workers)


def logical_worker(batch_size: int, rotation: Callable[[Topology], int]) -> tuple[Topology, int]:
    """This worker's topology and its *logical* id.

    A resumed epoch rotates the ids (``rotation``) so that torch's first worker continues the
    round robin where the interrupted run stopped.
    """
    rank, world = rank_and_world()
    worker, workers = worker_and_count()
    topology = Topology(world, workers, batch_size)
    if thread_worker() is None:  # a process's context; threads of one process share it
        hooks.process_context(
            dist_world_size=world,
            dist_global_rank=rank,
            dist_num_nodes=num_nodes(world),
            worker_world_size=workers,
            worker_rank=worker,
        )
    return topology, (worker + rotation(topology)) % workers
