"""A worker's batches with the arena: several to a message, and back in torch's order.

Each message costs a fixed toll (a request to the worker, a pickled result, thread hand-offs),
which dominates small batches. So a worker process sends its batches several to a message: the
first message holds one batch (the first batch comes soon), each next one twice as many, up to
``GROUP_BATCHES`` batches or about ``GROUP_BYTES`` (the workers of a loader agree on the cap
from the first batch, so that their messages stay alike). The batches of a message share one
slot (``litdata.streaming.workers.arena.slots``), or travel packed by pipe when no slot can
take them.

The training process hands the batches out exactly as without grouping: one worker's batch
after the other's, round robin over the workers that have batches left (each worker's last
message says so). So the order, ``state_dict`` and resume are those of the pipe transport.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import Any, NamedTuple

from litdata.streaming.workers.arena.layout import Layout, plan
from litdata.streaming.workers.arena.slots import (
    InSlot,
    agree,
    close_session,
    new_session,
    open_session,
    writer_for,
)
from litdata.streaming.workers.batching import BatchIds, Envelope
from litdata.streaming.workers.collate import into_arena
from litdata.streaming.workers.transport import map_leaves, pack, unpack

__all__ = ["GROUP_BATCHES", "GROUP_BYTES", "ArenaCollate", "ArenaSession", "Message", "Opened"]

#: A message holds at most this many batches, or as many as make about this many bytes.
GROUP_BATCHES = 16
GROUP_BYTES = 1 << 20
#: Stacking tensors a worker keeps for its next batches.
_SPARE = 4

Counts = tuple[tuple[int, ...], ...]
#: Each batch's ids (``Envelope.ids``), when the loader asked for them.
Named = tuple[BatchIds | None, ...]


class Opened(NamedTuple):
    """A message's batches as the DataLoader's pinning thread read (and pinned) them."""

    source: int
    counts: Counts
    ids: Named
    batches: list[Any]
    last: bool

    def open(self) -> list[Any]:
        """The batches."""
        return self.batches


class Message:
    """What a worker process sends: some of its batches (in a slot, or packed) and their counts.

    Args:
        source: The sending worker's torch id (its place in torch's round robin).
        counts: Each batch's samples per dataset.
        ids: Each batch's ids (``None`` where the loader did not ask).
        batches: Where the batches lie, or the packed batches.
        last: Whether the worker has no batches after these.
    """

    __slots__ = ("batches", "counts", "ids", "last", "source")

    def __init__(  # a message's whole description
        self, source: int, counts: Counts, ids: Named, batches: InSlot | list[Any], *, last: bool
    ) -> None:
        self.source = source
        self.counts = counts
        self.ids = ids
        self.batches = batches
        self.last = last

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.source, self.counts, self.ids, self.batches, self.last)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.source, self.counts, self.ids, self.batches, self.last = state

    def open(self) -> list[Any]:
        """The batches, in the training process (viewing their slot when they have one)."""
        if isinstance(self.batches, InSlot):
            return self.batches.open()
        return [unpack(batch) for batch in self.batches]

    def pin_memory(self, device: Any = None) -> Opened:
        """Called by the DataLoader's pinning thread: the batches, tensors in pinned memory."""
        pinned = [map_leaves(batch, _pinned) for batch in self.open()]
        return Opened(self.source, self.counts, self.ids, pinned, self.last)


def _pinned(leaf: Any) -> Any:
    import torch

    return leaf.pin_memory() if isinstance(leaf, torch.Tensor) else leaf


def _message(session: str, source: int, pending: list[Envelope], worker: int, last: bool) -> Any:
    """The envelope of one message of the ``pending`` batches (an empty last one ends a worker)."""
    layouts = [plan(envelope.data) for envelope in pending]
    sent: InSlot | list[Any] | None = None
    if pending and all(layout is not None for layout in layouts):
        sent = writer_for(session).send([layout for layout in layouts if layout is not None])
    if sent is None:
        sent = [pack(envelope.data) for envelope in pending]
    counts = tuple(tuple(envelope.counts) for envelope in pending)
    ids = tuple(envelope.ids for envelope in pending)
    total = tuple(map(sum, zip(*counts, strict=True)))
    return Envelope(worker, total, Message(source, counts, ids, sent, last=last))


def _group_cap(session: str, first: Layout | None) -> int:
    size = first.size if first is not None else GROUP_BYTES  # by pipe: one batch a message
    return agree(session, "group", max(1, min(GROUP_BATCHES, GROUP_BYTES // max(size, 1))))


class ArenaCollate:
    """A loader's collate function whose batches leave worker processes through slots.

    Args:
        collate: The collate function that makes each batch.
        session: The slots' session (a loader's epoch).
    """

    def __init__(self, collate: Callable[[list[Any]], Any], session: str) -> None:
        self.collate = collate
        self.session = session
        #: Stacking tensors free for the next batch: their last batch is in its slot.
        self._spare: list[Any] = []
        #: The stacking tensors of each batch not sent yet (by the batch's ``id``).
        self._lent: dict[int, list[Any]] = {}

    def __call__(self, samples: list[Any]) -> Any:
        """The batch of ``samples`` (``group`` sends it), stacked into reused memory."""
        used: list[Any] = []

        def lend(shape: tuple[int, ...], dtype: Any) -> Any:
            used.append(self._stacking(shape, dtype))
            return used[-1]

        with into_arena(lend):
            batch = self.collate(samples)
        if used:
            self._lent[id(batch)] = used
        return batch

    def _stacking(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A spare tensor of ``shape`` and ``dtype``, or a new one."""
        import torch

        for place, spare in enumerate(self._spare):
            if spare.shape == shape and spare.dtype == dtype:
                return self._spare.pop(place)
        return torch.empty(shape, dtype=dtype)

    def _sent(self, pending: list[Envelope], message: Envelope) -> None:
        """Take back the stacking tensors of ``pending``'s batches once they are in a slot.

        Batches sent by pipe keep theirs (pickling may share their memory with the training
        process), and new ones are made.
        """
        in_slot = isinstance(message.data.batches, InSlot)
        for envelope in pending:
            used = self._lent.pop(id(envelope.data), [])
            if in_slot:
                self._spare = [*used, *self._spare][:_SPARE]

    def group(self, envelopes: Iterator[Envelope]) -> Iterator[Envelope]:
        """In a worker process: the messages that carry the batches of ``envelopes``."""
        from torch.utils.data import get_worker_info

        info = get_worker_info()
        source = 0 if info is None else info.id
        cap = 0
        limit = 1
        pending: list[Envelope] = []
        worker = -1
        for envelope in envelopes:
            worker = envelope.worker
            pending.append(envelope)
            if not cap:
                cap = _group_cap(self.session, plan(envelope.data))
            if len(pending) >= min(limit, cap):
                message = _message(self.session, source, pending, worker, last=False)
                self._sent(pending, message)
                yield message
                pending = []
                limit *= 2
        message = _message(self.session, source, pending, worker, last=True)
        self._sent(pending, message)
        yield message


class ArenaSession:
    """One epoch of a loader's slots and messages, seen from the training process.

    Args:
        num_workers: The loader's worker processes.
        in_order: Hand batches out in torch's round robin (else as they come, as torch does
            with ``in_order=False``).
    """

    def __init__(self, num_workers: int, *, in_order: bool = True) -> None:
        self.name = new_session()
        self._num_workers = num_workers
        self._in_order = in_order
        open_session(self.name)

    def collate(self, collate: Callable[[list[Any]], Any]) -> ArenaCollate:
        """``collate``, its batches sent through this session's slots."""
        return ArenaCollate(collate, self.name)

    def unbundle(self, messages: Iterator[Any]) -> Iterator[Any]:
        """One envelope per batch of ``messages``, in the order the pipe transport has them."""
        count = self._num_workers
        queues: list[deque[Envelope]] = [deque() for _ in range(count)]
        done = [False] * count
        turn = 0
        for message in messages:
            data = getattr(message, "data", None)
            if not isinstance(data, Message | Opened):
                yield message
                continue
            batches = data.open()
            worker = message.worker
            queue = queues[data.source]
            queue.extend(
                Envelope(worker, counts, batch, ids)
                for counts, ids, batch in zip(data.counts, data.ids, batches, strict=True)
            )
            done[data.source] = data.last or not self._in_order
            del data, batches, message  # the consumer's references alone keep slots busy
            turn = yield from _take_turns(queues, done, turn)
        done = [True] * count  # workers torch saw end without a last message
        yield from _take_turns(queues, done, turn)

    def close(self, workers: Iterator[Any]) -> None:
        """End the session once its ``workers`` (torch's iterator) are shut down.

        Batches already handed out stay valid; slot files that no batch reached (a worker
        killed, an epoch broken off) are removed.
        """
        shutdown = getattr(workers, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        close_session(self.name)


def _take_turns(
    queues: list[deque[Envelope]], done: list[bool], turn: int
) -> Generator[Envelope, None, int]:
    """Hand out queued batches round robin from ``turn``, skipping finished workers.

    Returns the worker whose turn it is when it has nothing queued yet.
    """
    idle = 0  # finished workers passed over in a row
    while idle < len(queues):
        if queues[turn]:
            yield queues[turn].popleft()
            idle = 0
        elif done[turn]:
            idle += 1
        else:
            return turn
        turn = (turn + 1) % len(queues)
    return turn
