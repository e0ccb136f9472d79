"""``MemoryChunks``: fetched chunks kept in memory while they are read, never in the cache folder.

With ``max_cache_size=0`` (no cache) a remote chunk read once would be written into the cache
folder, read, and evicted: on a local ext4 disk writing it costs more CPU per byte than
fetching it (the file system's bookkeeping for every page). Here such a chunk goes into
anonymous memory instead (a ``memfd``: a file without a name on disk, freed with its last
descriptor and mapping), which the chunk's reader opens and maps like a cached file through
``/proc/self/fd/<n>``. Each process holds the chunks it reads, from the fetch until the reader
releases them; nothing is shared between processes and nothing outlives them.

With a cache and ``LITDATA_DIRECT_CACHE=1``, a chunk this process fetches lands in such
memory first (:meth:`MemoryChunks.land`): this process reads it from there while it holds
it, and the cache file is written from it around the system's file cache
(:mod:`~litdata.engine.cache.direct`), so the fetched bytes are not copied into newly
allocated file-cache pages and mapped back from them. Landed chunks of a process take at
most :data:`LANDING_BYTES` together; past that, chunks go to the cache folder the usual way.

Only where the system has ``memfd_create`` (Linux); elsewhere the cache folder is used as
before and evicts each chunk once it is released.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["LANDING_BYTES", "MemoryChunks", "memory_supported"]

#: The bytes of fetched chunks a process keeps in memory beside the cache at once.
LANDING_BYTES = 1 << 30
#: The characters of a chunk's name its memory file is shown with (4 bytes each at most).
_SHOWN_NAME = 60


def memory_supported() -> bool:
    """Whether chunks can be kept in anonymous memory here (``memfd_create`` and ``/proc``)."""
    return hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd")


class _MemoryChunk:
    """One chunk's bytes in a ``memfd``; opened by its path, freed once closed and unmapped."""

    def __init__(self, name: str, size: int = 0) -> None:
        # the name is only shown (``/proc/<pid>/fd``); the system takes 249 bytes at most
        self.descriptor = os.memfd_create(name[:_SHOWN_NAME], os.MFD_CLOEXEC)
        #: The bytes it was made for (a landed chunk's, counted against the landing budget).
        self.size = size

    @property
    def path(self) -> Path:
        """A path that opens it (in this process)."""
        return Path(f"/proc/self/fd/{self.descriptor}")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.descriptor)


class MemoryChunks:
    """The chunks this process holds in memory, by chunk index."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._held: dict[int, _MemoryChunk] = {}
        self._fetching: dict[int, threading.Lock] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        """Pickled for a worker: the chunks held stay in this process."""
        return {}

    def __setstate__(self, state: dict[str, object]) -> None:
        """A new process's: it holds nothing yet."""
        self.__init__()  # type: ignore[misc]

    def _forked(self) -> None:
        """In a forked child: let go of the parent's chunks (the child's copies of them)."""
        if os.getpid() != self._pid:
            for chunk in self._held.values():
                chunk.close()
            self._pid, self._held, self._fetching = os.getpid(), {}, {}
            self._lock = threading.Lock()

    def held(self, chunk_index: int) -> bool:
        """Whether chunk ``chunk_index`` is in memory in this process."""
        self._forked()
        return chunk_index in self._held

    def hold(self, chunk_index: int, name: str, fetch: Callable[[Path], None]) -> str:
        """The path of chunk ``chunk_index`` in memory, fetched by ``fetch(path)`` if needed.

        A thread asking for a chunk another thread is fetching waits for that fetch.

        Args:
            chunk_index: The chunk.
            name: Its name (shown by the system for the memory).
            fetch: Fills the (empty) file at the path given with the chunk's checked bytes.
        """
        self._forked()
        with self._lock:
            found = self._held.get(chunk_index)
            if found is not None:
                return str(found.path)
            gate = self._fetching.setdefault(chunk_index, threading.Lock())
        with gate:
            with self._lock:
                found = self._held.get(chunk_index)
            if found is not None:
                return str(found.path)
            chunk = _MemoryChunk(name)
            try:
                fetch(chunk.path)
            except BaseException:
                chunk.close()
                raise
            with self._lock:
                self._held[chunk_index] = chunk
                self._fetching.pop(chunk_index, None)
        return str(chunk.path)

    def path(self, chunk_index: int) -> str | None:
        """The path of chunk ``chunk_index`` if this process holds it in memory."""
        self._forked()
        with self._lock:
            found = self._held.get(chunk_index)
        return None if found is None else str(found.path)

    def land(self, chunk_index: int, name: str, size: int) -> Path | None:
        """A new, empty memory file for chunk ``chunk_index`` (``size`` bytes), held from now.

        Returns ``None`` when the landed chunks would pass :data:`LANDING_BYTES` (or the chunk
        is held already): the caller fetches it into the cache folder the usual way.
        """
        self._forked()
        with self._lock:
            landed = sum(chunk.size for chunk in self._held.values())
            if chunk_index in self._held or landed + size > LANDING_BYTES:
                return None
            chunk = self._held[chunk_index] = _MemoryChunk(name, size)
        return chunk.path

    def release(self, chunk_index: int) -> None:
        """Let chunk ``chunk_index`` go (its memory is freed once its reader unmapped it)."""
        self._forked()
        with self._lock:
            chunk = self._held.pop(chunk_index, None)
        if chunk is not None:
            chunk.close()

    def close(self) -> None:
        """Let every chunk go."""
        self._forked()
        with self._lock:
            chunks, self._held = list(self._held.values()), {}
        for chunk in chunks:
            chunk.close()
