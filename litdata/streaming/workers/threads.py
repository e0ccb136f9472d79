"""Thread workers: a loader's per-worker plans run in threads of the training process.

``StreamingDataLoader(..., worker_mode="thread")`` runs worker ``i`` of ``num_workers`` in a
thread instead of a process. Each thread iterates its own copy of the dataset (as a worker
process does), made by ``worker_copy``: the dataset's machinery (readers, caches, plans) is
copied, everything immutable or foreign to litdata (index arrays, the frozen index, the
user's transforms and tokenizers) is shared. Each worker fills a queue of ``prefetch_factor``
batches and the loader takes them in torch's order: round robin over the workers, a worker
leaving the round when it has no batch left. So batches, their order and ``state_dict`` are
those of worker processes, and a state saved in one mode resumes in the other.
"""

from __future__ import annotations

import collections
import dataclasses
import io
import pickle
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from litdata.core.errors import LitdataWarning
from litdata.streaming.epoch.topology import as_thread_worker

__all__ = ["Pinning", "ThreadWorkers", "worker_copy"]

#: How long a blocked thread waits before it looks whether the loader stopped (seconds).
POLL_S = 0.1
#: How long closing waits for a worker thread to finish its batch (seconds).
JOIN_S = 30.0

#: Containers are copied with what they hold: a litdata object may sit inside.
_CONTAINERS = (dict, list, tuple, set, frozenset, collections.deque)


def _copied(value: object) -> bool:
    """Whether ``worker_copy`` copies ``value`` (else the copy shares it)."""
    if isinstance(value, _CONTAINERS):
        return True
    kind = type(value)
    if not any(base.__module__.partition(".")[0] == "litdata" for base in kind.__mro__):
        return False  # the user's objects, arrays, functions, locks: shared
    params = getattr(kind, "__dataclass_params__", None)
    frozen = dataclasses.is_dataclass(kind) and params is not None and params.frozen
    return not frozen  # litdata's immutable values (the index, locations) are shared


class _SharingPickler(pickle.Pickler):
    """Pickles what ``_copied`` says to copy; the rest is passed by reference."""

    def __init__(self, file: io.BytesIO, shared: dict[int, object]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._shared = shared

    def persistent_id(self, obj: object) -> int | None:  # pickle's hook
        if _copied(obj):
            return None
        self._shared[id(obj)] = obj
        return id(obj)


class _SharingUnpickler(pickle.Unpickler):
    """Unpickles ``_SharingPickler``'s output, handing back the shared objects themselves."""

    def __init__(self, file: io.BytesIO, shared: dict[int, object]) -> None:
        super().__init__(file)
        self._shared = shared

    def persistent_load(self, pid: Any) -> object:  # pickle's hook
        return self._shared[pid]


def worker_copy(dataset: Any) -> Any:
    """A copy of ``dataset`` for one thread worker, as a worker process gets one.

    The copy goes through the objects' own pickling (``__getstate__``), which leaves out
    what one reader holds while it iterates (open chunks, prefetch threads), so each thread
    reads on its own. Only containers and litdata's mutable objects are copied; every other
    object (arrays, the frozen index, the user's functions and objects) is shared, so thread
    workers hold no second copy of the index and a transform must be safe to call from
    several threads.
    """
    shared: dict[int, object] = {}
    buffer = io.BytesIO()
    _SharingPickler(buffer, shared).dump(dataset)
    buffer.seek(0)
    return _SharingUnpickler(buffer, shared).load()


@dataclasses.dataclass(frozen=True)
class Pinning:
    """Copies each batch into pinned memory, in its worker thread (``pin_memory=True``).

    Attributes:
        device_index: The accelerator the training thread uses (each thread sets its own).
        device: The accelerator's type (``"cuda"``...).
    """

    device_index: int
    device: str | None

    @classmethod
    def here(cls) -> Pinning | None:
        """Pinning for this thread's accelerator, or ``None`` without one (as torch does)."""
        import torch

        accelerator = torch.accelerator.current_accelerator()
        if not torch.accelerator.is_available() or accelerator is None:
            return None
        if accelerator.type == "mps":  # torch cannot pin for MPS either
            return None
        return cls(torch.accelerator.current_device_index(), accelerator.type)

    def start(self) -> None:
        """Make this thread use the training thread's accelerator."""
        import torch

        torch.accelerator.set_device_index(self.device_index)

    def __call__(self, batch: Any) -> Any:
        """``batch`` with its tensors in pinned memory."""
        from torch.utils.data._utils.pin_memory import pin_memory

        return pin_memory(batch, self.device)  # type: ignore[no-untyped-call]


#: What ``_poll`` returns when nothing came.
_NOTHING = object()


def _poll(source: queue.Queue[Any]) -> Any:
    """The next item of ``source`` if one comes within ``POLL_S``, else ``_NOTHING``."""
    try:
        return source.get(timeout=POLL_S)
    except queue.Empty:
        return _NOTHING


class _End:
    """What a worker's queue gets after its last batch."""


@dataclasses.dataclass(frozen=True)
class _Failure:
    """What a worker's queue gets when the worker raised."""

    error: BaseException
    worker: int


def _one_torch_thread() -> None:
    """Run this thread's torch operations on one thread, as torch's worker processes do.

    Several threads each fanning a ``torch.stack`` out over every core (whose OpenMP threads
    then spin, waiting for more) cost far more than they save: on 2 busy cores, batches of
    decoded images came 2-4 times slower. Torch keeps the count per thread once a thread has
    asked for it (and one shared default, which ``ThreadWorkers`` puts back).
    """
    import torch

    torch.get_num_threads()  # this thread's own count from now on
    torch.set_num_threads(1)


class _Worker:
    """One thread worker: iterates its copy of the dataset into its bounded queue."""

    def __init__(
        self,
        dataset: Any,
        worker: int,
        num_workers: int,
        depth: int,
        stop: threading.Event,
        *,
        init: Callable[[int], None] | None,
        pinning: Pinning | None,
    ) -> None:
        self.out: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self.started = threading.Event()  # set once the thread set its torch threads
        self._dataset, self._worker, self._count = dataset, worker, num_workers
        self._stop, self._init, self._pinning = stop, init, pinning
        self.thread = threading.Thread(
            target=self._run, name=f"litdata-thread-worker-{worker}", daemon=True
        )

    def _put(self, item: Any) -> bool:
        """Queue ``item``, waiting for room; ``False`` when the loader stopped meanwhile."""
        while not self._stop.is_set():
            if self._offer(item):
                return True
        return False

    def _offer(self, item: Any) -> bool:
        """Queue ``item`` if room comes within ``POLL_S``."""
        try:
            self.out.put(item, timeout=POLL_S)
        except queue.Full:
            return False
        return True

    def _run(self) -> None:
        with as_thread_worker(self._worker, self._count):
            iterator: Any = None
            try:
                try:
                    _one_torch_thread()
                finally:
                    self.started.set()
                if self._pinning is not None:
                    self._pinning.start()
                if self._init is not None:
                    self._init(self._worker)
                iterator = iter(self._dataset)
                for made in iterator:
                    batch = made if self._pinning is None else self._pinning(made)
                    if not self._put(batch):
                        return
                self._put(_End())
            except BaseException as error:  # handed to the training loop, which raises it
                self._put(_Failure(error, self._worker))
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:  # here: a generator closes in the thread running it
                    close()
                self._dataset = None


class ThreadWorkers(Iterator[Any]):
    """An epoch's batches from ``num_workers`` thread workers, in torch's worker order.

    Args:
        dataset: The dataset (each thread iterates a ``worker_copy`` of it).
        num_workers: How many threads.
        prefetch_factor: Batches each thread may have made ahead.
        worker_init_fn: Called first in each thread with its worker id.
        pinning: Pin each batch's memory in its thread, if given.
        timeout: Seconds to wait for a batch before raising (0: no limit).
    """

    def __init__(
        self,
        dataset: Any,
        num_workers: int,
        *,
        prefetch_factor: int = 2,
        worker_init_fn: Callable[[int], None] | None = None,
        pinning: Pinning | None = None,
        timeout: float = 0,
    ) -> None:
        self._stop = threading.Event()
        self._timeout = timeout
        self._workers: list[_Worker] = []  # what __del__ closes if a copy below fails
        self._workers = [
            _Worker(
                worker_copy(dataset),
                worker,
                num_workers,
                max(1, prefetch_factor),
                self._stop,
                init=worker_init_fn,
                pinning=pinning,
            )
            for worker in range(num_workers)
        ]
        self._active = list(range(num_workers))  # the round, in torch's order
        self._turn = 0
        import torch

        threads = torch.get_num_threads()
        for worker in self._workers:
            worker.thread.start()
        for worker in self._workers:
            worker.started.wait()
        torch.set_num_threads(threads)  # the default the workers changed, for everyone else

    def __next__(self) -> Any:
        while self._active:
            worker = self._active[self._turn]
            item = self._take(worker)
            if isinstance(item, _End):  # out of the round; the next one has this turn now
                del self._active[self._turn]
                if self._turn == len(self._active):
                    self._turn = 0
                continue
            if isinstance(item, _Failure):
                self.close()
                error = item.error
                note = getattr(error, "add_note", None)  # Python 3.11+
                if note is not None:
                    note(f"(raised in thread worker {item.worker} of StreamingDataLoader)")
                raise error
            self._turn = (self._turn + 1) % len(self._active)
            return item
        self.close()
        raise StopIteration

    def _take(self, worker: int) -> Any:
        """The next item of ``worker``'s queue, watching the timeout."""
        source = self._workers[worker]
        started = time.monotonic()
        while (item := _poll(source.out)) is _NOTHING:
            if not source.thread.is_alive() and source.out.empty():
                raise RuntimeError(
                    f"Thread worker {worker} of StreamingDataLoader ended without a result; "
                    f"this is a bug in litdata, please report it."
                )
            if self._timeout and time.monotonic() - started > self._timeout:
                self.close()
                raise RuntimeError(
                    f"Thread worker {worker} of StreamingDataLoader made no batch in "
                    f"{self._timeout} s (timeout={self._timeout}); raise timeout, or find what "
                    f"blocks the dataset's reading."
                )
        return item

    def close(self) -> None:
        """Stop the workers and wait until their threads ended (each finishes its batch)."""
        self._stop.set()
        self._active = []
        deadline = time.monotonic() + JOIN_S
        for worker in self._workers:
            worker.thread.join(max(0.0, deadline - time.monotonic()))
            if worker.thread.is_alive():
                warnings.warn(
                    f"{worker.thread.name} of StreamingDataLoader still runs {JOIN_S} s after "
                    f"the loader stopped: a transform or read in it does not return.",
                    LitdataWarning,
                    stacklevel=2,
                )
        for worker in self._workers:  # batches made ahead are dropped with the epoch
            while not worker.out.empty():
                worker.out.get_nowait()

    def __del__(self) -> None:
        if not self._stop.is_set():
            self.close()
