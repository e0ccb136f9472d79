"""``StreamingDataset``: an optimized dataset as a PyTorch ``IterableDataset`` (and by index)."""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

# Shuffles and subsets draw from numpy.random: load it with the class, not in the first batch.
import numpy as np
import numpy.random
import numpy.typing as npt
from torch.utils.data import IterableDataset

from litdata.core import cpu_stages
from litdata.core.formats import ItemLoader
from litdata.core.heap import release_freed
from litdata.core.protocols import Encryptor, Serializer
from litdata.core.registry import hooks
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.prefetch import uses
from litdata.engine.opening import open_dataset
from litdata.engine.reader import DatasetReader, PartsGone, position_of
from litdata.streaming.control.provenance import NamedBatches
from litdata.streaming.epoch.plan import Segment, Segments, Topology, worker_plan, worker_sizes
from litdata.streaming.epoch.regions import Region, RegionIndex
from litdata.streaming.epoch.sample_key import SampleKey, replay_epoch, transforming
from litdata.streaming.epoch.shuffles import (
    CheckedShuffle,
    ShuffleSetting,
    choose_shuffle,
    describe,
)
from litdata.streaming.epoch.subsets import subsample_regions, subset_regions
from litdata.streaming.epoch.topology import logical_worker, rank_and_world
from litdata.streaming.frames import FrameWindows
from litdata.streaming.options import (
    cache_budget,
    check_batch_size,
    check_options,
    check_transforms,
)
from litdata.streaming.reprs import length_of, render
from litdata.streaming.resume.state import Resumable, Run, plan_with_history
from litdata.streaming.sampler import ChunkedIndex
from litdata.streaming.sized import SizedIterator
from litdata.streaming.workers.batching import (
    deliver,
    in_worker,
    single_id_batches,
)

__all__ = ["StreamingDataset"]

logger = logging.getLogger(__name__)

#: Items decoded at a time when a composition reads a child's segments sample by sample.
RUN = 64


class StreamingDataset(FrameWindows, Resumable, NamedBatches, IterableDataset[Any]):
    """Stream an optimized dataset: deterministic, sharded across ranks and workers, resumable.

    Iterate it with ``StreamingDataLoader`` (which batches inside the workers and makes
    ``state_dict()`` exact), or index it: ``ds[i]``, ``ds[a:b]``. Local datasets are
    memory-mapped in place, never copied or modified.

    The class is made of parts, each in the room of its concern: ``FrameWindows``
    (``streaming/frames.py``: windows of frames over ``TemporalArrayLoader`` records),
    ``Resumable`` (``streaming/resume/state.py``: ``state_dict``, ``load_state_dict``, the
    settings ranks agree on), ``NamedBatches`` (``streaming/control/provenance.py``: each
    batch's sample ids from the plan) and torch's ``IterableDataset``; this module adds
    opening, indexing and iterating.

    Args:
        input_dir: The dataset's directory or URL (written by ``optimize``, or by LitData).
        cache_dir: Where chunks that cannot be read in place go (remote or compressed ones).
        item_loader: The item loader the dataset was written with; ``TokensLoader(block_size)``
            for token datasets.
        shuffle: ``False``, ``True`` (the shuffle suited to the location: ``full``, or
            ``window`` on network and parallel filesystems), a shuffle plugin's name with
            options (``"window:size=4"``), or a shuffle strategy instance.
        drop_last: Read only whole batches, the same number on every rank. Defaults to ``True``
            when training with several processes, ``False`` otherwise.
        seed: Seeds the shuffles; the same seed and epoch give the same order everywhere.
        serializers: Extra serializers (your own, or overrides).
        max_cache_size: Cache budget for downloaded chunks (bytes, ``"50GB"`` or a fraction of
            free disk); it takes effect with remote storage. ``0``: no cache, each chunk is
            kept in memory while it is read and never written to disk.
        subsample: Read this fraction of the items (``0.1``), or upsample (``2.5``: two whole
            copies and half of a third), a float.
        max_pre_download: Chunks each worker may fetch ahead (remote storage).
        index_path: An ``index.json`` (or its directory) to use instead of the dataset's.
        force_override_state_dict: When resuming, keep this dataset's seed, shuffle and
            drop_last even if the state dict recorded others (with a warning).
        transform: A function (or list of functions, applied in order) of each sample.
        num_canonical_nodes: Recorded in the state dict, as LitData does; resuming on another
            number of nodes or workers is always elastic here.
        allow_pickle: Let pickled leaves import code (only for datasets you trust).
        encryption: The key of an encrypted dataset.
        storage_options: Options for the storage backend (credentials, endpoint...).
        session_options: Session options for backends that take them (S3).
        verify: Check each chunk against its checksum before its first sample is returned
            (default on; ``LITDATA_VERIFY=0`` turns it off by default).
        cache_mode: Permission bits of the cached files, e.g. ``0o640`` for a cache shared by
            a group (folders get the matching search bits); default ``LITDATA_CACHE_MODE``,
            else ``0o600``: no other local user reads the chunks.
    """

    def __init__(  # noqa: PLR0917  # LitData's first positional arguments
        self,
        input_dir: str | os.PathLike[str],
        cache_dir: str | None = None,
        item_loader: ItemLoader | None = None,
        shuffle: ShuffleSetting = False,
        drop_last: bool | None = None,
        seed: int = 42,
        *,
        serializers: Mapping[str, Serializer] | None = None,
        max_cache_size: int | float | str | None = None,
        subsample: float = 1.0,
        max_pre_download: int = 2,
        index_path: str | os.PathLike[str] | None = None,
        force_override_state_dict: bool = False,
        transform: Callable[[Any], Any] | Sequence[Callable[[Any], Any]] | None = None,
        num_canonical_nodes: int | None = None,
        allow_pickle: bool | None = None,
        encryption: Encryptor | None = None,
        storage_options: Mapping[str, Any] | None = None,
        session_options: Mapping[str, Any] | None = None,
        verify: bool | None = None,
        cache_mode: int | None = None,
    ) -> None:
        super().__init__()
        check_options(shuffle, drop_last, seed, max_pre_download, num_canonical_nodes)
        self.transforms = check_transforms(transform)
        self.max_cache_size = cache_budget(max_cache_size, cache_dir)
        self.max_pre_download = max_pre_download
        self.input_dir = os.fspath(input_dir)
        self.cache_dir = cache_dir
        location = resolve(
            self.input_dir, storage_options=storage_options, session_options=session_options
        )
        self._reader = DatasetReader(
            location,
            serializers=serializers,
            allow_pickle=allow_pickle,
            cache_dir=cache_dir,
            item_loader=item_loader,
            dataset=open_dataset(location, index_path, cache_dir, cache_mode),
            encryption=encryption,
            max_cache_size=self.max_cache_size,
            verify=verify,
            cache_mode=cache_mode,
        )
        self.item_loader = self._reader.item_loader
        regions = self._whole()
        if subsample != 1.0 or not isinstance(subsample, float):
            regions = RegionIndex(
                subsample_regions(regions.regions, subsample, seed, bool(shuffle))
            )
        self.shuffle = shuffle
        self._strategy: CheckedShuffle | None = choose_shuffle(shuffle, self._reader.root)
        self.drop_last = drop_last
        self.seed = seed
        self.force_override_state_dict = force_override_state_dict
        self.num_canonical_nodes = num_canonical_nodes
        self.current_epoch = 1
        self._batch_size = 1
        self._num_workers = 1
        self._collate: Callable[[list[Any]], Any] | None = None
        self._with_ids = False
        self._resume = None
        self._set_regions(regions)

    def _whole(self) -> RegionIndex:
        """Every chunk, whole: the reader's arrays."""
        return RegionIndex.whole_chunks(self._reader.chunk_sizes, self._reader.chunk_starts)

    def _set_regions(self, regions: Sequence[Region] | RegionIndex) -> None:
        self._regions = regions if isinstance(regions, RegionIndex) else RegionIndex(regions)
        self._identity = None  # computed when first asked for

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._regions.whole:  # the reader's arrays again, not a copy of them
            state["_regions"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if state.get("_regions") is None:
            self._regions = self._whole()

    # -- configuration (StreamingDataLoader calls these) -------------------------------------
    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch``'s order (ignored while a loaded state dict is pending)."""
        if self._resume is None:
            self.current_epoch = epoch

    def set_shuffle(self, shuffle: ShuffleSetting) -> None:
        """Change ``shuffle``."""
        check_options(shuffle, self.drop_last, self.seed, self.max_pre_download, None)
        self._strategy = choose_shuffle(shuffle, self._reader.root)
        self.shuffle = shuffle

    def set_drop_last(self, drop_last: bool) -> None:
        """Change ``drop_last``."""
        check_options(self.shuffle, drop_last, self.seed, self.max_pre_download, None)
        self.drop_last = drop_last

    def settings(self) -> Any:
        """``shuffle`` and ``drop_last`` as set now, for ``restore_settings``."""
        return self.shuffle, self._strategy, self.drop_last

    def restore_settings(self, saved: Any) -> None:
        """Put back what ``settings()`` returned (a loader's overrides end with its epoch)."""
        self.shuffle, self._strategy, self.drop_last = saved

    def set_batch_size(self, batch_size: int) -> None:
        """Plan for batches of ``batch_size`` (every worker's share is whole batches)."""
        self._batch_size = check_batch_size(batch_size)

    def set_num_workers(self, num_workers: int) -> None:
        """Plan for ``num_workers`` DataLoader workers (0 means 1: the main process)."""
        self._num_workers = max(1, num_workers)

    def set_collate(self, collate: Callable[[list[Any]], Any] | None, *, ids: bool = False) -> None:
        """Yield batches collated with ``collate`` (inside the workers) instead of samples.

        With ``ids`` each batch's ``Envelope`` carries its samples' ids (``batch_plan``'s).
        """
        self._collate = collate
        self._with_ids = ids

    # -- what the dataset is ---------------------------------------------------------------
    @property
    def num_items(self) -> int:
        """How many items this dataset reads per epoch, over all ranks."""
        return len(self._regions)

    @property
    def regions(self) -> list[Region]:
        """The items this dataset reads, as regions of chunks."""
        return self._regions.regions

    @property
    def strategy(self) -> CheckedShuffle:
        """The shuffle strategy ``shuffle`` selects (chosen once per ``shuffle`` value)."""
        if self._strategy is None:
            self._strategy = choose_shuffle(self.shuffle, self._reader.root)
        return self._strategy

    def drop_last_for(self, world_size: int) -> bool:
        """``drop_last`` as given, else on when training with several processes."""
        return self.drop_last if self.drop_last is not None else world_size > 1

    def shares(self, num_workers: int, batch_size: int) -> list[int]:
        """The items each of this rank's workers reads per epoch."""
        rank, world = rank_and_world()
        topology = Topology(world, max(1, num_workers), batch_size)
        whole = self.strategy.whole_chunks
        shares = worker_sizes(self._regions.sizes, topology, self.drop_last_for(world), whole)
        return shares[rank * topology.num_workers : (rank + 1) * topology.num_workers]

    def get_len(self, num_workers: int, batch_size: int) -> int:
        """This rank's number of items per epoch for ``num_workers`` and ``batch_size``."""
        return sum(self.shares(num_workers, batch_size))

    def num_batches(self, num_workers: int, batch_size: int) -> int:
        """This rank's number of batches per epoch (each worker makes its own)."""
        return sum(-(-share // batch_size) for share in self.shares(num_workers, batch_size))

    def __len__(self) -> int:
        return self.get_len(self._num_workers, self._batch_size)

    def __repr__(self) -> str:
        shuffle = self.shuffle if isinstance(self.shuffle, bool | str) else describe(self.strategy)
        return render(
            type(self).__name__,
            [
                ("input_dir", self._reader.root),
                ("length", length_of(self)),
                ("items", self.num_items),
                ("chunks", len(self._reader.index.chunks)),
                ("shuffle", shuffle),
                ("seed", self.seed),
                ("drop_last", self.drop_last),
                ("epoch", self.current_epoch),
                ("workers", self._num_workers),
                ("batch_size", self._batch_size),
            ],
        )

    # -- random access -----------------------------------------------------------------------
    @property
    def _all_transforms(self) -> tuple[Callable[[Any], Any], ...]:
        """``transform=`` functions, then a subclass's ``transform`` (method or attribute)."""
        own = getattr(self, "transform", None)
        return (*self.transforms, own) if callable(own) else self.transforms

    def _transformed(self, sample: Any, index: int) -> Any:
        """``sample`` through the transforms, with ``index``'s key current (``sample_key``)."""
        transforms = self._all_transforms
        if not transforms:
            return sample
        epoch = replay_epoch() or self.current_epoch
        with transforming(SampleKey(self.seed, epoch, index, self.input_dir)):
            for transform in transforms:
                sample = transform(sample)
        return sample

    def __getitem__(self, index: int | slice | str | ChunkedIndex) -> Any:
        count = len(self._regions)
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(count))]
        if isinstance(index, str):
            return self.get_by_key(index)
        if isinstance(index, ChunkedIndex):
            position = index.index - self._reader.chunk_start(index.chunk_index)
            sample = self._reader.read(index.chunk_index, position)
            return self._transformed(sample, index.index)
        if not isinstance(index, int):
            raise TypeError(f"Indices are ints, slices or str keys, not {type(index).__name__}")
        position = position_of(index, count)
        return self._transformed(self._reader.read(*self._regions.locate(position)), position)

    def get_by_key(self, key: int | str) -> Any:
        """The sample whose key (from ``optimize(..., key_fn=...)``) is ``key``.

        ``ds["some-id"]`` is the same for str keys; ``ds[42]`` stays positional, so int keys
        are looked up here. The whole dataset is searched, whatever subset this one reads.

        Raises:
            KeyError: No sample has that key, or the dataset has no ``keys/`` sidecar.
            TypeError: ``key`` is not an int or a str.
        """
        found = self._reader.find_key(key)
        return self._transformed(self._reader[found], found)

    def subset(self, indices: Sequence[int] | slice) -> StreamingDataset:
        """A dataset reading only the items at ``indices`` (in that order).

        Raises:
            ValueError: An index is out of range.
        """
        if isinstance(indices, slice):
            indices = range(*indices.indices(len(self._regions)))
        return self.with_regions(subset_regions(self._regions, list(indices)))

    def with_regions(self, regions: Sequence[Region]) -> StreamingDataset:
        """A copy of this dataset that reads ``regions`` instead."""
        clone = copy.copy(self)
        clone._resume = None
        clone._set_regions(regions)
        return clone

    # -- iteration -------------------------------------------------------------------------
    def worker_segments(
        self,
        logical: int,
        topology: Topology,
        *,
        rank: int | None = None,
        epoch: int | None = None,
        fresh: bool = False,
    ) -> Sequence[Segment]:
        """The segments worker ``logical`` of a rank reads in an epoch.

        Args:
            logical: The logical worker.
            topology: Ranks, workers and batch size.
            rank: The rank (default: this process's).
            epoch: The epoch (default: the current one).
            fresh: Plan the epoch from its start, ignoring a loaded state dict.
        """
        rank = rank_and_world()[0] if rank is None else rank
        saved = [] if fresh else (self._resume or {}).get("history", [])
        history = [Run.from_json(run) for run in saved]
        worker = rank * topology.num_workers + logical
        seed, drop_last = self.seed, self.drop_last_for(topology.world_size)
        epoch = self.current_epoch if epoch is None else epoch
        sizes, strategy = self._regions.sizes, self.strategy
        if not history:  # this worker's segments alone, computed on arrays
            return worker_plan(
                sizes,
                topology,
                worker,
                seed=seed,
                epoch=epoch,
                drop_last=drop_last,
                strategy=strategy,
            )
        plan = plan_with_history(
            sizes, history, topology, seed=seed, epoch=epoch, drop_last=drop_last, strategy=strategy
        )
        return plan[worker]

    def runs(self, segments: Sequence[Segment], size: int = RUN) -> Iterator[list[Any]]:
        """The samples of ``segments``, decoded (and transformed) ``size`` at a time."""
        if not segments:  # nothing to read (an empty dataset needs no decoder)
            return
        strategy, epoch, seed = self.strategy, self.current_epoch, self.seed
        regions, reader = self._regions, self._reader
        read: Callable[[Any, int], Any] = reader.decoder.read
        transforms = self._all_transforms
        overridden = type(self).__getitem__ is not StreamingDataset.__getitem__
        chunks = self._chunks_of(segments)
        first_use, last_use = uses(chunks)  # where each chunk is read the first, last time
        reader.prefetch(chunks[first_use], self.max_pre_download)
        del chunks, first_use
        release_freed()  # the plan's temporaries (freed by now) leave this process
        try:
            for number, segment in enumerate(segments):
                region = regions.region(segment.region)
                order = strategy.item_order(segment.region, region.size, seed, epoch)
                start, first_id = region.start, regions.first(segment.region)
                # A chunk still downloading in parts serves the items of the parts that
                # arrived (verified); once it is complete, it is opened as usual.
                early = None if overridden else reader.arriving(region.chunk)
                chunk: Any = None
                read = hooks.wrap_read(early or reader.decoder.read, region.chunk)  # observers
                for first in range(segment.offset, segment.offset + segment.count, size):
                    last = min(first + size, segment.offset + segment.count)
                    positions = order[first:last]
                    run = None
                    if early is not None:
                        try:
                            run = [read(None, start + position) for position in positions]
                        except PartsGone:
                            early = None
                    if early is None and chunk is None:
                        chunk = reader.chunk(region.chunk)
                        chunk.prefetch()  # the kernel reads the chunk ahead while we decode
                        read = hooks.wrap_read(reader.decoder.read, region.chunk)
                    if overridden:  # a subclass's __getitem__ sees every streamed item
                        base = reader.chunk_start(region.chunk) + start
                        run = [
                            self[ChunkedIndex(base + position, region.chunk)]
                            for position in positions
                        ]
                    elif run is None:
                        run = [read(chunk, start + position) for position in positions]
                    if transforms and not overridden:
                        run = [
                            self._transformed(sample, int(first_id + position))
                            for sample, position in zip(run, positions, strict=True)
                        ]
                    yield run
                if chunk is None:  # read from its parts: the prefetcher hands it over now
                    reader.chunk(region.chunk)
                if last_use[number]:  # done with this chunk for the epoch
                    reader.done_with(region.chunk)
        finally:  # an error, or a reader that stopped early: no fetch goes on behind its back
            reader.close()

    def _chunks_of(self, segments: Sequence[Segment]) -> npt.NDArray[np.int64]:
        """The chunk each segment reads (an array, from the plan's arrays when it has them)."""
        if isinstance(segments, Segments):
            regions = segments.regions
        else:
            regions = np.fromiter((s.region for s in segments), np.int64, len(segments))
        chosen = self._regions.chunks
        return regions if chosen is None else chosen[regions]

    def __iter__(self) -> Iterator[Any]:
        return SizedIterator(self._iterate(), self)

    def _iterate(self) -> Iterator[Any]:
        topology, logical = logical_worker(self._batch_size, self.rotation)
        segments = self.worker_segments(logical, topology)
        decoded = cpu_stages.counted("decode", self.runs(segments, self._batch_size))
        runs = ((0, run) for run in decoded)
        size, ids = self._batch_size, None
        if self._with_ids:
            ids = single_id_batches(self.segment_ids(segments, self.current_epoch), size)
        delivered = deliver(runs, size, self._collate, logical, self.num_sources, ids=ids)
        yield from cpu_stages.counted("hand-over", delivered) if in_worker() else delivered
        if topology.num_workers == 1 and not in_worker():
            self._end_of_epoch()

    def _end_of_epoch(self) -> None:
        self._resume = None
        self.current_epoch += 1
