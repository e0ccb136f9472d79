"""What a plugin returns, checked where it enters litdata: one wrapper per plugin kind.

:func:`litdata.engine.boundary.options.resolve_plugin` wraps every plugin it resolves in its kind's
wrapper (the storage backend's is :class:`~litdata.engine.boundary.storage.Storage`, which also
retries). A
wrapper checks what the plugin returns (bytes from a codec, a permutation from a shuffle, an
index from a format, a summary per worker from an executor) and raises a
``PluginValidationError`` naming the plugin and its distribution; any other attribute is the
plugin's own, so optional abilities (``isinstance(wrapper, ClusterExecutor)``) stay visible.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from litdata.core.errors import PluginValidationError
from litdata.core.formats import FormatAdapter, ItemDecoder, ReadOptions
from litdata.core.index import DatasetIndex, check_index
from litdata.core.location import Location
from litdata.core.protocols import Compressor, Encryptor, Executor, ShuffleStrategy
from litdata.core.registry import kinds
from litdata.core.work import Job, LiveQueue, Report, WorkSource

__all__ = [
    "WRAPPERS",
    "Checked",
    "CheckedCompressor",
    "CheckedEncryptor",
    "CheckedExecutor",
    "CheckedFormat",
    "CheckedShuffle",
    "describe_plugin",
    "invalid",
]


def describe_plugin(kind: str, plugin: Any) -> str:
    """The plugin and who provides it, for messages: ``'zstd' (litdata 0.3.0)``."""
    registry = kinds.ALL[kind]
    name = getattr(plugin, "name", None)
    if isinstance(name, str) and name in registry:
        return f"{name!r} ({registry.info(name).origin})"
    kind_of = plugin if isinstance(plugin, type) else type(plugin)
    return f"{kind_of.__module__}.{kind_of.__qualname__} (passed in)"


#: The contract test class of each kind, named in the errors about a plugin.
_CONTRACTS = {
    "storage": "StorageContract",
    "serializers": "SerializerContract",
    "compression": "CompressorContract",
    "encryption": "EncryptorContract",
    "shuffle": "ShuffleContract",
    "formats": "FormatContract",
    "executors": "ExecutorContract",
    "item_loaders": "ItemLoaderContract",
}


def invalid(kind: str, plugin: Any, method: str, problem: str) -> PluginValidationError:
    """The error for a plugin that broke its contract: who, what it returned, where to look.

    Args:
        kind: The plugin's kind.
        plugin: The plugin (instance or class).
        method: The method that misbehaved.
        problem: What it returned or did, e.g. ``"returned str"``.
    """
    noun = kinds.ALL[kind].noun
    return PluginValidationError(
        f"The {noun} {describe_plugin(kind, plugin)} {problem} from {method}. Fix the plugin "
        f"(litdata.testing.{_CONTRACTS[kind]} checks it), or choose another {noun}."
    )


class Checked:
    """A plugin, with its kind's checks on what it returns; other attributes are its own.

    Args:
        plugin: The plugin instance.
    """

    kind: ClassVar[str]

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.name: str = getattr(plugin, "name", type(plugin).__name__)

    def __getattr__(self, name: str) -> Any:
        if name == "plugin":  # not set yet: unpickling
            raise AttributeError(name)
        return getattr(self.plugin, name)

    def __repr__(self) -> str:
        return repr(self.plugin)

    def _bytes(self, value: Any, method: str) -> Any:
        if not isinstance(value, bytes | bytearray):
            raise invalid(self.kind, self.plugin, method, f"returned {type(value).__name__}")
        return value


class CheckedCompressor(Checked):
    """A compressor whose output is bytes (its bound is checked where a chunk is inflated)."""

    kind = "compression"
    plugin: Compressor

    def compress(self, data: bytes | memoryview) -> bytes:
        """The plugin's compression of ``data``."""
        return bytes(self._bytes(self.plugin.compress(data), "compress"))

    def decompress(self, data: bytes | memoryview, max_size: int) -> bytes | bytearray:
        """The plugin's decompression of ``data`` (at most ``max_size`` bytes).

        Raises:
            PluginValidationError: The plugin's ``decompress`` takes no ``max_size`` (written
                for an earlier litdata), or returned something other than bytes.
        """
        try:
            inflated = self.plugin.decompress(data, max_size)
        except TypeError as error:
            if _takes_two(self.plugin.decompress):
                raise
            raise PluginValidationError(
                f"The compressor {describe_plugin(self.kind, self.plugin)} has "
                f"decompress(data), but litdata calls decompress(data, max_size): a stored "
                f"frame comes from someone else's files, and inflating it past max_size bytes "
                f"must raise instead of allocating. Update the plugin (litdata.testing."
                f"CompressorContract checks it)."
            ) from error
        result: bytes | bytearray = self._bytes(inflated, "decompress")
        return result


def _takes_two(method: Any) -> bool:
    """Whether ``method`` accepts two positional arguments."""
    try:
        inspect.signature(method).bind(b"", 0)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): assume it does
        return True
    return True


class CheckedEncryptor(Checked):
    """An encryptor whose output is bytes (a failed decryption is the reader's to explain)."""

    kind = "encryption"
    plugin: Encryptor

    def encrypt(self, data: bytes | memoryview) -> bytes:
        """The plugin's encryption of ``data``."""
        return bytes(self._bytes(self.plugin.encrypt(data), "encrypt"))

    def decrypt(self, data: bytes | memoryview) -> bytes:
        """The plugin's decryption of ``data``."""
        return bytes(self._bytes(self.plugin.decrypt(data), "decrypt"))


class CheckedFormat(Checked):
    """A format adapter whose index is a ``DatasetIndex``, and a safe one."""

    kind = "formats"
    plugin: FormatAdapter

    def read_index(self, location: Location) -> DatasetIndex:
        """The plugin's index of the dataset at ``location``, checked (``check_index``)."""
        return self._checked_index(self.plugin.read_index(location), location, "read_index")

    def read_cached_index(self, location: Location, home: Path, mode: int) -> DatasetIndex:
        """As ``read_index``, through the plugin's ``read_cached_index`` when it has one.

        A format that can keep a derived form of its index in the dataset's cache folder
        ``home`` (files of ``mode``) has that method; the index is checked all the same.
        """
        read = getattr(self.plugin, "read_cached_index", None)
        if read is None:
            return self.read_index(location)
        return self._checked_index(read(location, home, mode), location, "read_cached_index")

    def _checked_index(self, index: Any, location: Location, method: str) -> DatasetIndex:
        if not isinstance(index, DatasetIndex):
            raise invalid(
                self.kind,
                self.plugin,
                method,
                f"returned {type(index).__name__} for {location.url} (not a DatasetIndex)",
            )
        return check_index(index, f"The index of {location.url}")

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """The plugin's decoder (its item counts are checked by the reader)."""
        return self.plugin.decoder(index, options)


class CheckedExecutor(Checked):
    """An executor that returns one summary dict per worker."""

    kind = "executors"
    plugin: Executor

    def run(
        self, job: Job, source: WorkSource, num_workers: int, on_event: Report
    ) -> list[dict[str, Any]]:
        """The plugin's run of ``job``, its summaries checked.

        A live queue may be run as any number of workers; other sources as ``num_workers``.
        """
        summaries = self.plugin.run(job, source, num_workers, on_event)
        counted = isinstance(source, LiveQueue) or (
            isinstance(summaries, list) and len(summaries) == num_workers
        )
        if not (
            isinstance(summaries, list)
            and counted
            and all(isinstance(summary, dict) for summary in summaries)
        ):
            raise invalid(
                self.kind,
                self.plugin,
                "run",
                f"returned {str(summaries)[:80]} (one summary dict per worker, {num_workers}, "
                f"is the contract)",
            )
        return summaries


def _check(
    order: Sequence[int], expected: Sequence[int], strategy: Any, method: str
) -> Sequence[int]:
    """``order`` (a range, or a list), after checking it is a permutation of ``expected``."""
    if isinstance(order, range) and order == expected:
        return order
    array = _permutation(order, expected, strategy, method)
    checked: list[int] = order if isinstance(order, list) else array.tolist()
    return checked


def _covers(array: npt.NDArray[np.int64]) -> bool:
    """Whether ``array`` (values in ``[0, len)``) holds every position (so each once)."""
    seen = np.zeros(len(array), dtype=bool)
    seen[array] = True
    return bool(seen.all())


def _permutation(
    order: Sequence[int], expected: Sequence[int], strategy: Any, method: str
) -> npt.NDArray[np.int64]:
    """``order`` as an int64 array, after checking it is a permutation of ``expected``."""
    array = np.asarray(order, dtype=np.int64)
    if isinstance(expected, range) and expected.start == 0 and expected.step == 1:
        count = len(expected)
        ok = array.shape == (count,) and (
            count == 0 or (int(array.min()) >= 0 and int(array.max()) < count and _covers(array))
        )
    else:
        ok = array.shape == (len(expected),) and bool(
            np.array_equal(np.sort(array), np.sort(np.asarray(expected, dtype=np.int64)))
        )
    if not ok:
        values = array.tolist() if array.ndim == 1 else order
        shown = values if len(values) <= 10 else [*values[:10], "..."]  # noqa: PLR2004
        raise invalid(
            "shuffle",
            strategy,
            method,
            f"returned {shown}, which is not a permutation of its {len(expected)} positions: "
            f"items would be read twice or never,",
        )
    return array


#: How many chunks' item orders a ``CheckedShuffle`` keeps.
RECENT_ORDERS = 4


class CheckedShuffle(Checked):
    """A strategy whose every order is checked to be a permutation (cheap: once per chunk).

    Args:
        strategy: The strategy to wrap.
    """

    kind = "shuffle"

    def __init__(self, strategy: ShuffleStrategy | CheckedShuffle) -> None:
        if isinstance(strategy, CheckedShuffle):
            strategy = strategy.strategy
        super().__init__(strategy)
        self.strategy: ShuffleStrategy = strategy
        #: The strategy's name.
        self.name: str = strategy.name
        #: Whether workers get whole chunks in stripes.
        self.whole_chunks = bool(strategy.whole_chunks)
        self._recent: dict[tuple[int, int, int, int], tuple[Sequence[int], Any]] = {}

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> Sequence[int]:
        """The strategy's chunk order, checked."""
        order = self.strategy.chunk_order(num_chunks, seed, epoch)
        return _check(order, range(num_chunks), self.strategy, "chunk_order")

    def chunk_permutation(self, num_chunks: int, seed: int, epoch: int) -> npt.NDArray[np.int64]:
        """The strategy's chunk order as an int64 array, checked (no Python int per chunk).

        A strategy returning a numpy array (or a range) is checked and used as it is.
        """
        order = self.strategy.chunk_order(num_chunks, seed, epoch)
        if isinstance(order, range) and order == range(num_chunks):
            return np.arange(num_chunks, dtype=np.int64)
        return _permutation(order, range(num_chunks), self.strategy, "chunk_order")

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        """The strategy's order of one worker's chunks, checked."""
        order = self.strategy.worker_chunk_order(chunks, seed, epoch, worker)
        return _check(order, chunks, self.strategy, "worker_chunk_order")

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> Sequence[int]:
        """The strategy's item order for one chunk, checked."""
        return self._item_orders(chunk, num_items, seed, epoch)[0]

    def item_permutation(
        self, chunk: int, num_items: int, seed: int, epoch: int
    ) -> npt.NDArray[np.int64]:
        """The strategy's item order for one chunk as an int64 array, checked."""
        return self._item_orders(chunk, num_items, seed, epoch)[1]

    def _item_orders(
        self, chunk: int, num_items: int, seed: int, epoch: int
    ) -> tuple[Sequence[int], npt.NDArray[np.int64]]:
        """A chunk's order as a sequence and as an array, kept for the last few chunks.

        Reading a chunk and naming its samples (a loader's provenance) ask for the same
        orders in step: the second asker finds them here instead of reshuffling.
        """
        key = (chunk, num_items, seed, epoch)
        cached = self._recent.get(key)
        if cached is None:
            order = self.strategy.item_order(chunk, num_items, seed, epoch)
            if isinstance(order, range) and order == range(num_items):
                cached = (order, np.arange(num_items, dtype=np.int64))
            else:
                array = _permutation(order, range(num_items), self.strategy, "item_order")
                cached = (order if isinstance(order, list) else array.tolist(), array)
            if len(self._recent) >= RECENT_ORDERS:
                del self._recent[next(iter(self._recent))]
            self._recent[key] = cached
        return cached

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the kept orders (a worker makes its own)."""
        return {**self.__dict__, "_recent": {}}


#: The wrapper of each kind that has one (storage's is ``Storage``, made by ``resolve``).
WRAPPERS: dict[str, type[Checked]] = {
    wrapper.kind: wrapper
    for wrapper in (
        CheckedCompressor,
        CheckedEncryptor,
        CheckedFormat,
        CheckedExecutor,
        CheckedShuffle,
    )
}
