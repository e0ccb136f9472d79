"""The contracts plugins satisfy. Plain ``typing.Protocol``s: no base class to inherit.

Each plugin kind is an entry-point group ``litdata.<kind>`` whose entry-point name is the
registry key; the plugin class's ``name`` must equal that key. Optional abilities are separate
``runtime_checkable`` protocols, tested with ``isinstance``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from litdata.core.index import DatasetIndex
    from litdata.core.work import Job, Report, WorkSource

__all__ = [
    "Compressor",
    "Encryptor",
    "Executor",
    "FileDecompressor",
    "FormatAdapter",
    "InPlaceStorage",
    "PickleAware",
    "RangedStorage",
    "Serializer",
    "ShuffleStrategy",
    "StorageBackend",
    "protocol_members",
]


class Serializer(Protocol):
    """Turns one kind of sample leaf into bytes and back (LitData's serializer interface).

    Optional class attributes: ``priority: int`` (probe order when inferring a leaf's
    serializer on write; higher first, default 50) and ``fixed_size: int`` (every payload has
    exactly this many bytes; LitData's ``size``).
    """

    name: ClassVar[str]

    def can_serialize(self, item: Any) -> bool:
        """Whether this serializer claims ``item`` when a dataset's formats are inferred."""
        ...

    def serialize(self, item: Any) -> tuple[bytes | bytearray | memoryview, str | None]:
        """Return the payload and the ``data_format`` name to record (``None``: the key)."""
        ...

    def deserialize(self, data: bytes | memoryview) -> Any:
        """Rebuild a leaf from its payload."""
        ...

    def setup(self, data_format: str) -> None:
        """Prepare to decode leaves recorded as ``data_format`` (e.g. ``no_header_numpy:10``)."""
        ...


@runtime_checkable
class PickleAware(Protocol):
    """A serializer whose payloads could import and run code; it obeys ``allow_pickle``.

    ``None`` means ``LITDATA_ALLOW_PICKLE`` decides, read when the first payload is decoded.
    """

    allow_pickle: bool | None


class Compressor(Protocol):
    """Compresses whole chunk files. Constructed as ``cls(level)`` from ``"name[:level]"``."""

    name: ClassVar[str]

    def compress(self, data: bytes | memoryview) -> bytes:
        """Compress one chunk."""
        ...

    def decompress(self, data: bytes | memoryview) -> bytes:
        """Decompress one chunk."""
        ...


@runtime_checkable
class FileDecompressor(Protocol):
    """A compressor that can stream a file to a file without holding it in memory."""

    def decompress_file(self, source: str, destination: str) -> None:
        """Decompress ``source`` into ``destination``."""
        ...


class Encryptor(Protocol):
    """Encrypts chunks or samples. The index stores ``to_config()``, never a secret."""

    name: ClassVar[str]
    level: str

    def encrypt(self, data: bytes) -> bytes:
        """Encrypt one chunk or sample."""
        ...

    def decrypt(self, data: bytes | memoryview) -> bytes:
        """Decrypt one chunk or sample."""
        ...

    def to_config(self) -> dict[str, Any]:
        """Public parameters to record in ``index.json`` (algorithm, level, salt...)."""
        ...


class StorageBackend(Protocol):
    """Moves files between a URL scheme and local paths. The key is the URL scheme."""

    name: ClassVar[str]

    def download(self, url: str, local_path: str) -> None:
        """Copy the object at ``url`` to ``local_path`` (the caller publishes it atomically)."""
        ...

    def upload(self, local_path: str, url: str) -> None:
        """Copy ``local_path`` to ``url``."""
        ...

    def exists(self, url: str) -> bool:
        """Whether an object exists at ``url``."""
        ...

    def list(self, url: str) -> list[str]:
        """Names of the objects directly under the prefix ``url``."""
        ...

    def delete(self, url: str) -> None:
        """Remove the object at ``url``; a missing object is not an error."""
        ...


@runtime_checkable
class RangedStorage(Protocol):
    """A backend that reads byte ranges without fetching whole objects."""

    def read_range(self, url: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object at ``url``."""
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
    ``worker_chunk_order``, and the items of a chunk in ``item_order``.
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


class FormatAdapter(Protocol):
    """Presents a dataset stored in some format as litdata chunks (native, MDS, Parquet...)."""

    name: ClassVar[str]

    def read_index(self, root: str) -> DatasetIndex:
        """Read or build the index of the dataset under the local directory ``root``."""
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

        ``on_event`` is called in the caller's process for every worker event. When a worker
        fails, every worker is stopped before ``ProcessingError`` is raised.
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
