"""``ChunkCache``: makes each chunk of a dataset available as a local, checked, plain file.

- A local, uncompressed chunk is read where it lies (never copied, never modified); its bytes
  are checked against the index's checksum the first time this process uses it, unless
  it passed before and has not changed since (`VerifiedChunks`).
- A remote or compressed chunk is fetched (downloaded, or read in place), checked, decompressed
  and published into the cache atomically, by one process at a time: the others wait for it.
- A reader *holds* each chunk it uses (a shared lock); when a download would take the cache
  past ``max_cache_size``, chunks nobody holds are evicted, least recently used first.
- ``max_cache_size=0`` asks for no cache: a fetched chunk is kept in this process's memory
  while it is held (:mod:`~litdata.engine.cache.memory`), never written to the cache folder.
- ``LITDATA_DIRECT_CACHE=1``: a chunk fetched in ranged parts is read from the fetching
  process's memory while it holds it, and cached from there around the file cache
  (:mod:`~litdata.engine.cache.direct`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from litdata.core import config, cpu_stages
from litdata.core.chunks import checksum
from litdata.core.chunks.blocks import BlockTable
from litdata.core.chunks.checksum import verify_file
from litdata.core.chunks.names import decompressed_filename
from litdata.core.chunks.stored import plain_chunk
from litdata.core.dataset_file import read_regular
from litdata.core.errors import ChunkCorruptError, ChunkWaitTimeoutError
from litdata.core.guards import inside
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.core.location import Location
from litdata.core.protocols import Compressor
from litdata.core.publish import publishing
from litdata.core.registry import hooks
from litdata.engine.boundary.options import resolve_plugin
from litdata.engine.cache.copies import CheckedCopies
from litdata.engine.cache.direct import write_direct
from litdata.engine.cache.directory import VERIFIED, cache_home, flat_name, version_dir
from litdata.engine.cache.eviction import make_room
from litdata.engine.cache.in_place import InPlaceChecks, inflated_in_place, missing_chunk
from litdata.engine.cache.locks import ChunkLock
from litdata.engine.cache.memory import MemoryChunks, memory_supported
from litdata.engine.cache.parts import PartedDownload, arriving
from litdata.engine.cache.slots import node_slots
from litdata.engine.cache.verified import VerifiedChunks
from litdata.engine.link import MIN_PART, link_to
from litdata.engine.throttle import throttle_of

__all__ = ["ChunkCache"]

logger = logging.getLogger(__name__)

#: How long a process waits for another one to fetch a chunk before fetching it itself.
WAIT_SECONDS = 120.0
#: Seconds of the measured throughput worth of chunks fetched ahead (beyond ``depth``).
LOOKAHEAD_S = 2.0
#: How often a process looks again whether a chunk it waits for was published.
_POLL_SECONDS = 0.02


def _known_digest(entry: ChunkEntry) -> str | None:
    """The digest a checked copy of an uncompressed chunk records, known without hashing it.

    Its index checksum, when that is the algorithm the records use: its bytes passed it, or
    passed every block's.
    """
    recorded = entry.checksum
    return recorded if recorded and recorded.startswith(f"{checksum.ALGORITHM}:") else None


class ChunkCache:
    """Local plain files for the chunks of one dataset.

    Args:
        location: Where the dataset lives.
        index: Its index.
        cache_dir: The cache root (``LITDATA_CACHE_DIR`` or ``~/.lightning/chunks`` if unset).
        max_cache_size: The budget in bytes for this dataset's cached chunks; ``None`` for no
            limit. Chunks held by a reader are never evicted, so the cache may exceed it by
            the chunks in use and in flight. ``0``: no cache (fetched chunks stay in memory
            while they are held, where the system allows it).
        verify: Check in-place chunks against their checksums (fetched chunks always are).
        cache_mode: The permission bits of cached files (folders get the matching search
            bits); ``None``: ``LITDATA_CACHE_MODE``, else ``0600`` (folders ``0700``).
    """

    def __init__(
        self,
        location: Location,
        index: DatasetIndex,
        *,
        cache_dir: str | None = None,
        max_cache_size: int | None = None,
        verify: bool = True,
        cache_mode: int | None = None,
    ) -> None:
        self.location = location
        self.index = index
        self.cache_dir = cache_dir
        self.max_cache_size = max_cache_size
        self.verify = verify
        self.mode = (
            config.cache_mode()
            if cache_mode is None
            else config.checked_mode(cache_mode, f"cache_mode={cache_mode:#o}")
        )
        self._compression = index.config.compression
        self._local = location.local_path
        self._directory: Path | None = None
        self._compressor: Compressor | None = None
        self._holds: dict[int, ChunkLock] = {}
        #: Cached copies this process checked (hashed on first use).
        self._copies = CheckedCopies()
        #: Fetched chunks held in memory (no cache, or landed: ``LITDATA_DIRECT_CACHE``).
        self._memory = MemoryChunks()
        verified: VerifiedChunks | None = None
        if self._local is not None and config.verify_setting() != "always":
            home = cache_home(self.location.url, cache_dir)
            verified = VerifiedChunks(home / VERIFIED, self.mode)
        #: In-place chunks checked by this process.
        self._in_place_checks = InPlaceChecks(verified)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(
            _compressor=None,
            _holds={},
            _directory=None,
            _copies=CheckedCopies(),
            _memory=MemoryChunks(),
        )
        return state

    @property
    def in_memory(self) -> bool:
        """Whether fetched chunks are kept in memory only (``max_cache_size=0``, no cache)."""
        return self.max_cache_size == 0 and not self.in_place and memory_supported()

    @property
    def in_place(self) -> bool:
        """Whether chunks are read where they lie (local and not compressed)."""
        return self._local is not None and not self._compression

    @property
    def directory(self) -> Path:
        """This dataset version's cache folder (created on first use)."""
        if self._directory is None:
            home = cache_home(self.location.url, self.cache_dir)
            self._directory = version_dir(home, self.index, self.mode, self.location.url)
        return self._directory

    def _member(self, entry: ChunkEntry, name: str | None = None) -> str:
        """The local file of a chunk in the dataset's folder, checked to resolve inside it."""
        where = f"Chunk {entry.filename} of {self.location.url}"
        return inside(self._local or "", name or entry.filename, where=where)

    def _plain_name(self, entry: ChunkEntry) -> str:
        """The chunk's file name in the cache folder."""
        name = entry.filename
        if self._compression:
            name = decompressed_filename(name, self._compression)
        return flat_name(name)

    # -- using a chunk ---------------------------------------------------------------------
    def hold(self, chunk_index: int) -> str:
        """The local plain file of chunk ``chunk_index``, fetched if needed, and held.

        No process evicts a held chunk until :meth:`release`.

        Raises:
            FileNotFoundError: The chunk is missing from the dataset.
            ChunkCorruptError: Its bytes fail their checksum, or do not decompress to what the
                index says.
            ChunkWaitTimeoutError: Another process was fetching it and did not finish in time.
        """
        entry = self.index.chunks[chunk_index]
        outside = self._outside_cache(chunk_index, entry)
        if outside is not None:
            return outside
        held = self._holds.get(chunk_index)
        target = self.directory / self._plain_name(entry)
        if held is not None:
            return self._memory.path(chunk_index) or str(target)
        lock = ChunkLock(self.directory, target.name, self.mode)
        deadline = time.monotonic() + WAIT_SECONDS
        fetch_seconds = float(config.integer("LITDATA_CHUNK_TIMEOUT", 600, minimum=1))
        while True:
            # Waits while another process fetches it, as long as a fetch of our own may take.
            if not lock.acquire("shared", timeout=fetch_seconds):
                raise self._stuck(entry, target, fetch_seconds, "LITDATA_CHUNK_TIMEOUT")
            if target.exists() and self._copies.usable(target, self.location.join(entry.filename)):
                break
            lock.release()
            # Never wait for the exclusive lock: the process that got it first may publish
            # the chunk and hold it (shared) for as long as it reads it.
            if lock.acquire("exclusive", timeout=0):
                try:
                    if not target.exists():
                        self._fetch(entry, target, chunk_index)
                finally:
                    lock.release()  # then hold it shared, like any reader
            elif time.monotonic() > deadline:
                raise self._stuck(entry, target, WAIT_SECONDS, None)
            else:
                time.sleep(_POLL_SECONDS)
        os.utime(target)  # most recently used
        self._holds[chunk_index] = lock
        return self._memory.path(chunk_index) or str(target)

    def _outside_cache(self, chunk_index: int, entry: ChunkEntry) -> str | None:
        """The chunk's file when the cache folder does not hold it, else ``None``.

        Read in place (checked), left decompressed in place by LitData, or held in memory
        (no cache).
        """
        if self.in_place:
            path = self._member(entry)
            if self.verify:
                self._in_place_checks.check(path, chunk_index, entry)
            return path
        inflated = self._inflated_in_place(entry)
        if inflated is not None:
            return inflated
        if self.in_memory:
            key = self._memory_key(entry)
            fetch = partial(self._fetch_into_memory, entry, key)
            return self._memory.hold(chunk_index, entry.filename, fetch)
        return None

    def _stuck(
        self, entry: ChunkEntry, target: Path, waited: float, setting: str | None
    ) -> ChunkWaitTimeoutError:
        hint = f" Raise {setting} (seconds) if it is only slow." if setting else ""
        return ChunkWaitTimeoutError(
            str(target),
            waited,
            f"Another process is fetching chunk {entry.filename} of {self.location.url} "
            f"and has not published it: it is stuck, or the storage is far too slow.{hint}",
        )

    def _inflated_in_place(self, entry: ChunkEntry) -> str | None:
        """The decompressed file LitData left in place of a local compressed chunk, if any."""
        if self._local is None or not self._compression:
            return None
        plain = self._member(entry, self._plain_name(entry))
        return inflated_in_place(self._member(entry), plain, entry)

    def cached(self, chunk_index: int) -> bool:
        """Whether chunk ``chunk_index`` is a local file already (in place, or in the cache)."""
        if self.in_place or self._inflated_in_place(self.index.chunks[chunk_index]):
            return True
        if self.in_memory:
            return self._memory.held(chunk_index)
        return (self.directory / self._plain_name(self.index.chunks[chunk_index])).exists()

    def release(self, chunk_index: int) -> None:
        """Stop holding chunk ``chunk_index``: it may be evicted again.

        With no cache, its memory is freed once its reader closed it.
        """
        self._memory.release(chunk_index)
        lock = self._holds.pop(chunk_index, None)
        if lock is not None:
            lock.release()

    # -- fetching --------------------------------------------------------------------------
    def stored(self, entry: ChunkEntry, scratch: Path) -> tuple[bytes, str]:
        """A chunk's bytes as stored, and where they came from (its path or URL).

        Args:
            entry: The chunk's index entry.
            scratch: A local file to download a remote chunk into.

        Raises:
            FileNotFoundError: The chunk is missing.
        """
        if self._local is not None:
            source = self._member(entry)
            try:
                return read_regular(source), source
            except FileNotFoundError:
                raise missing_chunk(source) from None
        url, _ = self._download(entry, scratch)
        return scratch.read_bytes(), url

    def _download(
        self, entry: ChunkEntry, scratch: Path, target: Path | None = None
    ) -> tuple[str, bool]:
        """Download a remote chunk as stored into ``scratch``.

        A large chunk of a store that reads ranges is fetched as parallel ranged GETs
        (:class:`~litdata.engine.cache.parts.PartedDownload`), each part checked against its
        block checksums when the chunk has them; readers of this process may read items of
        the parts that arrived when ``target`` (the plain file it will be published as) is
        given.

        Returns:
            Its URL, and whether every byte was checked already (against block checksums).
        """
        url = self.location.join(entry.filename)
        try:
            parted = self._parted(entry, url, scratch, target)
            if parted is None:
                self.location.storage.download(url, str(scratch), entry.chunk_bytes)
                return url, False
            parted.run()
        except FileNotFoundError:
            raise missing_chunk(url) from None
        return url, parted.table is not None

    def _parted(
        self, entry: ChunkEntry, url: str, scratch: Path, target: Path | None
    ) -> PartedDownload | None:
        """The parallel ranged download of a large chunk, or ``None`` to download it whole."""
        if not self._ranged(entry):
            return None
        storage = self.location.storage
        store = self._store()
        root = Path(self.cache_dir).expanduser() if self.cache_dir else config.cache_root()
        table = BlockTable.of(entry, f"The index of {self.location.url}")
        return PartedDownload(
            storage,
            url,
            scratch,
            target=target,
            size=entry.chunk_bytes,
            table=table,
            link=link_to(store),
            throttle=throttle_of(store, config.connection_budget()),
            slots=node_slots(root, self.mode),
        )

    def _ranged(self, entry: ChunkEntry) -> bool:
        """Whether the chunk is fetched as parallel ranged parts (remote, large enough)."""
        return (
            self._local is None
            and self.location.storage.ranged
            and entry.chunk_bytes > 2 * MIN_PART
            and config.ranged_reads_setting() != "off"
        )

    def _lands(self, entry: ChunkEntry) -> bool:
        """Whether its fetch lands in memory first (``LITDATA_DIRECT_CACHE``: :meth:`_fetch`)."""
        return (
            not self._compression
            and self._ranged(entry)
            and memory_supported()
            and bool(config.flag("LITDATA_DIRECT_CACHE", default=False))
        )

    def _store(self) -> str:
        """The store, as its link is measured: scheme and bucket (``s3://bucket``)."""
        return "/".join(self.location.url.split("/", 3)[:3])

    def lookahead(self) -> int:
        """The bytes of chunks worth fetching ahead: what the link moved in ``LOOKAHEAD_S``.

        At most a quarter of ``max_cache_size`` (other readers of the node share it), and
        none for a dataset read in place.
        """
        if self._local is not None:
            return 0
        wanted = int(link_to(self._store()).throughput() * LOOKAHEAD_S)
        if self.max_cache_size is not None:
            wanted = min(wanted, self.max_cache_size // 4)
        return wanted

    def arriving(self, chunk_index: int, starting: Callable[[], bool]) -> PartedDownload | None:
        """The parallel download of chunk ``chunk_index`` in flight in this process, if any.

        Args:
            chunk_index: The chunk.
            starting: Whether a fetch of it is scheduled and has not ended (its download is
                waited for while so).
        """
        if self._local is not None or self._compression:
            return None
        entry = self.index.chunks[chunk_index]
        if self.in_memory:
            return arriving(self._memory_key(entry), starting)
        return arriving(self.directory / self._plain_name(entry), starting)

    def _memory_key(self, entry: ChunkEntry) -> Path:
        """What a chunk fetched into memory is known as while it arrives (no file has it)."""
        return Path(f"memory:{id(self)}") / self._plain_name(entry)

    def _fetch_into_memory(self, entry: ChunkEntry, key: Path, path: Path) -> None:
        """Fetch, check and decompress one chunk into the memory file at ``path``.

        As :meth:`_fetch`, without the cache folder: nothing to evict, publish or record.
        """
        start = time.perf_counter()
        size, source, inflating, _ = self._fetch_checked(entry, path, key)
        hooks.chunk_downloaded(source, str(path), size, time.perf_counter() - start - inflating)
        if inflating:
            hooks.chunk_decompressed(str(path), entry.chunk_bytes, inflating)

    def _fetch_checked(
        self, entry: ChunkEntry, temporary: Path, target: Path
    ) -> tuple[int, str, float, str | None]:
        """:meth:`_fetch_plain`, once more when a download fails its check.

        A transfer may have been cut or garbled; a second failure, or a bad local file, is an
        error.
        """
        if self._local is None:  # a download: one more try
            try:
                return self._fetch_plain(entry, temporary, target)
            except ChunkCorruptError:
                where = self.location.join(entry.filename)
                logger.warning("chunk %s failed its check; downloading it again", where)
        return self._fetch_plain(entry, temporary, target)

    def _fetch_plain(
        self, entry: ChunkEntry, temporary: Path, target: Path
    ) -> tuple[int, str, float, str | None]:
        """Put the chunk's checked plain bytes in ``temporary``.

        Returns ``(size as stored, source, seconds spent checking and decompressing, the
        plain bytes' digest if it is known without hashing them again)``; the seconds are 0
        for a chunk checked while it streams to disk.

        A remote, uncompressed chunk is downloaded straight into place and checked from the
        file, block by block (or piece by piece as it arrives), so prefetching never holds
        whole chunks in memory.

        Raises:
            ChunkCorruptError: It fails its checksum, or does not decompress to what the index
                says.
        """
        if self._local is None and not self._compression:
            url, checked = self._download(entry, temporary, target)
            if not checked:
                with cpu_stages.timed("checksum"):
                    verify_file(temporary, entry, url)
            return temporary.stat().st_size, url, 0.0, _known_digest(entry)
        data, source = self.stored(entry, temporary)
        start = time.perf_counter()
        with cpu_stages.timed("decompression"):
            plain = plain_chunk(
                data,
                entry,
                compressor=self._codec(),
                level=self.index.config.extra.get("compression_level"),
                where=source,
            )
        if plain is not data or self._local is not None:
            with cpu_stages.timed("cache write"):
                temporary.write_bytes(plain)
        with cpu_stages.timed("checksum"):  # hashed in memory, not from the file again
            digest = _known_digest(entry) if plain is data else checksum.checksum_of(plain)
        return len(data), source, time.perf_counter() - start, digest

    def _fetch(self, entry: ChunkEntry, target: Path, chunk_index: int) -> None:
        """Fetch, check and decompress one chunk, and publish it as ``target``.

        With ``LITDATA_DIRECT_CACHE=1``, a plain chunk fetched in ranged parts lands in this
        process's memory first, where this process reads it while it holds it; the cache file
        is written from there, around the file cache (:mod:`~litdata.engine.cache.direct`).
        """
        start = time.perf_counter()
        if self.max_cache_size is not None:
            make_room(self.directory, self.max_cache_size, entry.chunk_bytes, self.mode)
        landing = None
        if self._lands(entry):
            landing = self._memory.land(chunk_index, entry.filename, entry.chunk_bytes)
        try:
            with publishing(target, entry.chunk_bytes, self.mode) as temporary:
                size, source, inflating, digest = self._fetch_checked(
                    entry, landing or temporary, target
                )
                if landing is not None:
                    with cpu_stages.timed("cache write"):
                        write_direct(landing, temporary, self.mode)
        except BaseException:
            if landing is not None:
                self._memory.release(chunk_index)
            raise
        with cpu_stages.timed("checksum"):
            self._copies.record(target, self.mode, digest)
        hooks.chunk_downloaded(source, str(target), size, time.perf_counter() - start - inflating)
        if inflating:
            hooks.chunk_decompressed(str(target), entry.chunk_bytes, inflating)
        logger.debug("fetched %s into %s", source, target)

    def _codec(self) -> Compressor | None:
        if self._compression and self._compressor is None:
            providers = self.index.plugins.get("compression", {})
            self._compressor = resolve_plugin("compression", self._compression, providers=providers)
        return self._compressor
