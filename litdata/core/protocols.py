"""The contracts plugins satisfy. Plain ``typing.Protocol``s: no base class to inherit.

Each plugin kind is an entry-point group ``litdata.<kind>`` whose entry-point name is the
registry key; the plugin class's ``name`` must equal that key. Optional abilities are separate
``runtime_checkable`` protocols, tested with ``isinstance``. Every method declared here is one
the core calls, and ``litdata.testing`` has a contract test class for each kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from litdata.core.work import Job, Report, WorkSource

__all__ = [
    "ClusterExecutor",
    "Compressor",
    "ElementSerializer",
    "Encryptor",
    "Executor",
    "InPlaceStorage",
    "PickleAware",
    "RangedStorage",
    "Serializer",
    "ShuffleStrategy",
    "StorageBackend",
    "StreamedRangeStorage",
    "WideningSerializer",
    "protocol_members",
]


class Serializer(Protocol):
    """Turns one kind of sample leaf into bytes and back (LitData's serializer interface).

    ``types`` declares what a serializer claims when a dataset's formats are inferred: the
    qualified names of leaf types (``"fractions.Fraction"``). A third-party serializer is only
    asked about leaves of those types, and may not declare a type another installed serializer
    declares; to use one for a type litdata already serializes, pass it to that dataset as
    ``serializers={name: instance}``.

    Optional class attributes: ``priority: int`` (probe order among serializers claiming the
    same leaf; higher first, default 50) and ``fixed_size: int`` (every payload has exactly
    this many bytes; LitData's ``size``).
    """

    name: ClassVar[str]
    types: ClassVar[tuple[str, ...]]

    def can_serialize(self, item: Any) -> bool:
        """Whether this serializer claims ``item`` (a leaf of one of its ``types``)."""
        ...

    def serialize(self, item: Any) -> tuple[bytes | bytearray | memoryview, str | None]:
        """Return the payload and the ``data_format`` name to record (``None``: the key)."""
        ...

    def deserialize(self, data: bytes | memoryview) -> Any:
        """Rebuild a leaf from its payload (the returned value must own its memory)."""
        ...

    def setup(self, data_format: str) -> None:
        """Prepare to decode leaves recorded as ``data_format`` (e.g. ``no_header_numpy:10``)."""
        ...


@runtime_checkable
class ElementSerializer(Protocol):
    """A serializer whose payload is a flat run of equal-size elements with no header.

    Any whole number of elements deserializes on its own, so ``TokensLoader`` cuts windows of
    ``block_size`` tokens out of such payloads.
    """

    def element_size(self) -> int:
        """Bytes per element of the ``data_format`` given to ``setup``."""
        ...


@runtime_checkable
class PickleAware(Protocol):
    """A serializer whose payloads could import and run code; it obeys ``allow_pickle``.

    ``None`` means ``LITDATA_ALLOW_PICKLE`` decides, read when the first payload is decoded.
    """

    allow_pickle: bool | None


@runtime_checkable
class WideningSerializer(Protocol):
    """A serializer whose leaves of one field may be recorded under several names.

    ``widen(recorded, other)`` returns a ``data_format`` name that decodes the payloads of
    both (the JPEG and PNG files of one image field: ``image``), or ``None`` when none does.
    Writers ask it when a leaf serializes under a name other than the field's, and merges ask
    it when two writers recorded a field differently.
    """

    def widen(self, recorded: str, other: str) -> str | None:
        """The name that decodes leaves recorded as ``recorded`` and ``other``, or ``None``."""
        ...


class Compressor(Protocol):
    """Compresses whole chunk files. Constructed as ``cls(level)`` from ``"name[:level]"``."""

    name: ClassVar[str]

    def compress(self, data: bytes | memoryview) -> bytes:
        """Compress one chunk."""
        ...

    def decompress(self, data: bytes | memoryview, max_size: int) -> bytes | bytearray:
        """Decompress one chunk (or frame) into at most ``max_size`` bytes.

        ``max_size`` comes from the index (the plain size it records); the data is someone
        else's and may inflate far beyond it (a decompression bomb). Decompress as a stream,
        holding no more than the output so far, stop as soon as it passes ``max_size``, and
        never allocate a size the data merely declares. The core checks the size afterwards.

        Raises:
            ValueError: The data decompresses to (or declares) more than ``max_size`` bytes.
        """
        ...


class Encryptor(Protocol):
    """Encrypts chunks or samples (``level``). The index stores ``to_config()``, never a secret.

    The same instance (or one built from the same key material) must be given to read.
    """

    name: ClassVar[str]
    level: str

    def encrypt(self, data: bytes | memoryview) -> bytes:
        """Encrypt one chunk or sample."""
        ...

    def decrypt(self, data: bytes | memoryview) -> bytes:
        """Decrypt one chunk or sample.

        Raises:
            ValueError: ``data`` was not encrypted with this key, or was altered.
        """
        ...

    def to_config(self) -> dict[str, Any]:
        """Public parameters to record in ``index.json``: ``algorithm`` (the name), ``level``."""
        ...


class StorageBackend(Protocol):
    """Moves objects between a URL scheme and local files. The key is the URL scheme.

    Constructed as ``cls()``, or ``cls(storage_options=..., session_options=...)`` when the
    user passes them. Instances must pickle (DataLoader workers may be spawned) and be safe to
    call from several threads.
    """

    name: ClassVar[str]

    def download(self, url: str, local_path: str) -> None:
        """Copy the object at ``url`` into the new file ``local_path``.

        The caller publishes the file atomically; a failed download may leave it partial.

        Raises:
            FileNotFoundError: No object at ``url`` (the message names it).
        """
        ...

    def upload(self, local_path: str, url: str) -> None:
        """Copy ``local_path`` to ``url``; readers see the old object or the new one, whole."""
        ...

    def exists(self, url: str) -> bool:
        """Whether an object exists at ``url``."""
        ...

    def list(self, url: str) -> list[str]:
        """Names (not URLs) of the objects directly under the prefix ``url``; empty if none."""
        ...

    def delete(self, url: str) -> None:
        """Remove the object at ``url``; a missing object is not an error."""
        ...


@runtime_checkable
class RangedStorage(Protocol):
    """A backend that reads byte ranges without fetching whole objects."""

    def read_range(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object at ``url``.

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        ...


@runtime_checkable
class StreamedRangeStorage(Protocol):
    """A ranged backend that hands each piece of a range to a sink as it arrives.

    The core then writes and checks the bytes as they come (no buffer of the range, no second
    pass over it). Offsets are contiguous from ``start``; an attempt the backend starts over
    tells the sink ``start`` again.
    """

    def read_range_into(
        self, url: str, start: int, end: int, sink: Callable[[int, bytes | memoryview], None]
    ) -> None:
        """Tell ``sink(offset, data)`` each piece of bytes ``[start, end)`` of ``url``, in order.

        ``data`` is valid during the call only.

        Raises:
            FileNotFoundError: No object at ``url``.
        """
        ...


@runtime_checkable
class InPlaceStorage(Protocol):
    """A backend whose objects are local files that may be read (memory-mapped) in place."""

    def local_path(self, url: str) -> str:
        """The local file path behind ``url``."""
        ...


class ShuffleStrategy(Protocol):
    """Orders chunks and items for one epoch; pure and deterministic in (seed, epoch).

    Chunks are dealt to ranks and workers in ``chunk_order``. With ``whole_chunks`` each worker
    gets whole chunks in contiguous stripes (for in-place reads of network filesystems), else
    chunks are split at worker budgets. Each worker then visits its chunks in
    ``worker_chunk_order``, and the items of a chunk in ``item_order``. Every order must be a
    permutation; the core checks it. Options come as keyword arguments to the constructor
    (``shuffle="window:size=4"`` is ``WindowShuffle(size=4)``).
    """

    name: ClassVar[str]
    whole_chunks: ClassVar[bool]

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """A permutation of ``range(num_chunks)``: the order chunks are dealt in."""
        ...

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """The order in which one worker visits its chunks (a permutation of ``chunks``)."""
        ...

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """A permutation of ``range(num_items)``: the order the items of a chunk are read."""
        ...


class Executor(Protocol):
    """Runs ``optimize``/``map`` workers: local processes, or a Dask or Ray cluster.

    See ``litdata.core.work`` for the job, the work sources and the events.
    """

    name: ClassVar[str]

    def run(
        self, job: Job, source: WorkSource, num_workers: int, on_event: Report
    ) -> list[dict[str, Any]]:
        """Run ``job`` in ``num_workers`` workers fed from ``source``; return their summaries.

        The summaries come in rank order, one per worker; from a ``LiveQueue``, one per rank
        the job ran as (a cluster executor runs each batch the queue delivers as a worker of
        its own). ``on_event`` is called in the caller's process for every worker event. When
        a worker fails, every worker is stopped before ``ProcessingError`` is raised.
        """
        ...


@runtime_checkable
class ClusterExecutor(Protocol):
    """An executor whose workers are a cluster's (Dask, Ray...): an optional ability.

    Its engine balances many small tasks itself, so ``optimize`` and ``map`` deal the inputs into
    ``tasks(...)`` parts and run each part as one worker of ``run``: a task has its own writer
    rank (its chunk file names) and its own checkpoint, and the engine reruns it whole when its
    machine is lost. Only executors with this ability accept ``num_nodes`` above 1.
    """

    def tasks(self, inputs: int, num_workers: int | None, num_nodes: int) -> int:
        """How many tasks to make of ``inputs`` inputs (at least 1, at most ``inputs``).

        Args:
            inputs: The number of inputs.
            num_workers: Tasks running at once on each machine, as the user asked; ``None``
                leaves it to the cluster.
            num_nodes: Machines the run needs: wait until the cluster has that many.

        Raises:
            ValueError: The cluster did not reach ``num_nodes`` machines in time.
        """
        ...


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The names a plugin must define to satisfy ``protocol`` (attributes and methods)."""
    names = set(getattr(protocol, "__annotations__", {}))
    names.update(
        name
        for name, value in vars(protocol).items()
        if callable(value) and not name.startswith("_")
    )
    return tuple(sorted(names))
