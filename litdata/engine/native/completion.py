"""Completing a dataset whose per-writer indexes were never merged into ``index.json``.

A folder of chunks and ``<rank>.index.json`` files (writers that each closed their index, and
a merge that never ran) is a dataset that lacks its ``index.json``. LitData's
``StreamingDataset`` merges them when it opens such a folder; so does litdata's, safely:

- A local folder it may write: under the output lock (``.litdata.lock``), so that ranks and
  workers opening it at once merge it once. The first publishes ``index.json`` (atomically, then
  removes the per-writer files); the others wait for it and read it.
- A folder a writer still writes (its lock is held) or that a litdata run left unfinished (its
  lock file remains: it may lack chunks) is refused, saying which and what to do.
- A read-only folder, or a remote dataset (readers often may not write there, and object stores
  have no atomic lock): the indexes are merged in memory and nothing is written. That index has
  no time stamp, so every rank builds the same one. ``complete_dataset()`` publishes it.
"""

from __future__ import annotations

import logging
import os
import time

from litdata.core.errors import DatasetNotFoundError, OutputLockedError
from litdata.core.index import INDEX_FILENAME, DatasetIndex, index_from_bytes, load_index
from litdata.core.location import Location
from litdata.engine.native.output_lock import (
    LOCK_FILENAME,
    LockState,
    OutputLock,
    describe_holder,
    lock_state,
)
from litdata.engine.native.rank_indexes import (
    merge_rank_indexes,
    merged_in_memory,
    rank_index_names,
)

__all__ = ["MERGING", "complete_on_open", "publish_merged"]

logger = logging.getLogger(__name__)

#: What a process merging per-writer indexes writes into the lock it holds meanwhile.
MERGING = "a merge of per-writer indexes into index.json"
#: How long a process waits for another one's merge to publish ``index.json``.
WAIT_SECONDS = 120.0
_POLL_SECONDS = 0.05


def complete_on_open(location: Location) -> DatasetIndex | None:
    """The index of a dataset that has per-writer indexes but no ``index.json``, merged.

    Returns:
        The merged index (published when the folder is local and writable), or ``None`` when
        there is no per-writer index either.

    Raises:
        OutputLockedError: A writer still writes the dataset.
        DatasetNotFoundError: A litdata run that wrote it did not finish.
        DatasetFormatError: The writers' configs differ.
    """
    names = location.storage.list(location.url)
    parts = rank_index_names(names)
    if not parts:
        return None
    local = location.local_path
    if local is not None and os.access(local, os.W_OK):
        return publish_merged(location)
    state = lock_state(location)
    if state is not None:  # a writer there, or what an unfinished run left: not a dataset yet
        raise _unfinished(location, state)
    where = "is read-only" if local is not None else "is remote (it is only read)"
    logger.warning(
        "%s has no %s and %s: its %d per-writer indexes are merged in memory, and nothing is "
        "written; litdata.complete_dataset(%r), with write access, publishes the index",
        location.url,
        INDEX_FILENAME,
        where,
        len(parts),
        location.url,
    )
    try:
        return merged_in_memory(location)
    except FileNotFoundError:  # another process merged them meanwhile (and removed them)
        raise DatasetNotFoundError(
            f"The per-writer indexes of {location.url} changed while it was being opened "
            f"(another process merging them?). Open it again."
        ) from None


def _unfinished(location: Location, state: LockState) -> OutputLockedError | DatasetNotFoundError:
    """Why a dataset whose output lock is there cannot be completed now."""
    if state.live:
        return OutputLockedError(
            f"{location.url} has no {INDEX_FILENAME} yet: {describe_holder(state.holder)} is "
            f"writing it. Wait for it to finish."
        )
    return DatasetNotFoundError(
        f"{location.url} has per-writer indexes but no {INDEX_FILENAME}, and the litdata run "
        f"that wrote them did not finish ({describe_holder(state.holder)}; its {LOCK_FILENAME} "
        f"remains): the dataset may lack chunks. Run it again (use_checkpoint=True resumes "
        f"it), or publish what is there with litdata.complete_dataset({location.url!r})."
    )


def _published(location: Location) -> DatasetIndex | None:
    """``index.json`` if it is there now (read past any cached listing or probe)."""
    local = location.local_path
    if local is not None:
        path = os.path.join(local, INDEX_FILENAME)
        return load_index(path) if os.path.exists(path) else None
    if not location.storage.exists(location.join(INDEX_FILENAME)):
        return None
    return index_from_bytes(location.read(INDEX_FILENAME), location.join(INDEX_FILENAME))


def publish_merged(location: Location, *, take_over: bool = False) -> DatasetIndex:
    """Merge the per-writer indexes into ``index.json`` under the output lock, once.

    Idempotent: when another process published ``index.json`` first (or is publishing it),
    that index is returned.

    Args:
        location: The dataset.
        take_over: Also merge what a litdata run that did not finish left (its lock file
            remains), as ``complete_dataset()`` does when asked to.

    Raises:
        OutputLockedError: A writer still writes the dataset (or another merge did not end in
            ``WAIT_SECONDS``).
        DatasetNotFoundError: A litdata run that wrote it did not finish (without
            ``take_over``), or there is nothing to merge.
    """
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        found = _published(location)
        if found is not None:
            return found
        state = lock_state(location)
        merging = state is not None and state.holder.get("command") == MERGING
        if state is not None and state.live:
            if not merging or time.monotonic() > deadline:
                raise _unfinished(location, state)
            time.sleep(_POLL_SECONDS)  # another process merges: its index.json comes soon
            continue
        if state is not None and not merging and not take_over:
            raise _unfinished(location, state)
        lock = OutputLock(location, MERGING)
        try:
            lock.acquire()
        except OutputLockedError:  # another process took it between our look and now
            time.sleep(_POLL_SECONDS)
            continue
        try:
            return _published(location) or merge_rank_indexes(location)
        finally:
            lock.release()
