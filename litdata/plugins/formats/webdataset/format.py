"""``webdataset``: a local folder of WebDataset ``.tar`` shards, streamed without conversion.

Each tar is a chunk; each run of consecutive members sharing a key (``0001.jpg``,
``0001.cls``) is an item, returned as WebDataset returns it: ``{"__key__", "__url__",
<suffix>: bytes, ...}``. Indexing reads only the tar headers (seeking over the data), and a
shard is memory-mapped when opened, so members are sliced out of the page cache.

Only local (or mounted) folders of plain ``.tar`` files are detected: remote shards would have to
be downloaded in full just to count their samples, and a folder listing on every remote open
would cost every other dataset a request. Ingest those with ``iter_webdataset_tar`` and
``optimize`` instead.
"""

from __future__ import annotations

import os
import tarfile
from typing import Any, ClassVar

from litdata.core.dataset_file import open_regular
from litdata.core.errors import ChunkCorruptError, DatasetFormatError, DatasetNotFoundError
from litdata.core.formats import ItemDecoder, ReadOptions
from litdata.core.index import INDEX_FILENAME, ChunkEntry, DatasetConfig, DatasetIndex
from litdata.core.location import Location
from litdata.core.registry.hookspecs import hookimpl
from litdata.engine.mapped_file import MappedFile
from litdata.plugins.formats.webdataset.tars import samples_in, split_member

__all__ = ["TarShard", "WebDatasetFormat", "litdata_detect_format"]

FORMAT_NAME = "webdataset"
#: One member: (suffix, start of its data in the tar, its size).
Member = tuple[str, int, int]


def _tars(folder: str) -> list[str]:
    return sorted(
        name
        for name in os.listdir(folder)
        if name.endswith(".tar") and os.path.isfile(os.path.join(folder, name))
    )


@hookimpl
def litdata_detect_format(location: Location, index: DatasetIndex | None) -> str | None:
    """``"webdataset"`` for a local folder of ``.tar`` files without an ``index.json``."""
    folder = location.local_path
    if index is not None or folder is None or not os.path.isdir(folder):
        return None
    if os.path.exists(os.path.join(folder, INDEX_FILENAME)):
        return None
    return FORMAT_NAME if _tars(folder) else None


def _refuse_unmapped(members: list[tarfile.TarInfo], path: str) -> None:
    """Refuse a sample member whose bytes are not its data stored whole (read in place).

    Raises:
        DatasetFormatError: A member named like a sample field is sparse (``tar --sparse``:
            its data is stored in pieces), a link, a device or a FIFO.
    """
    for member in members:
        if member.isdir() or split_member(member.name) is None:
            continue
        if member.issparse():
            what = "a sparse file (tar --sparse stores its data in pieces)"
        elif not member.isfile():
            what = "a link, device or FIFO, not a regular file"
        else:
            continue
        raise DatasetFormatError(
            f"WebDataset shard {path}: member {member.name!r} is {what}; samples are read "
            f"where they lie in the tar, so only regular members are. Re-create the shard "
            f"without --sparse and with files, not links."
        )


def scan(path: str) -> list[tuple[str, list[Member]]]:
    """The samples of a tar: ``(key, members)`` per run of members sharing a key.

    Raises:
        ChunkCorruptError: It is not a readable tar, or is truncated.
        DatasetFormatError: A sample member is not a regular file stored whole.
    """
    try:
        with open_regular(path) as handle, tarfile.open(fileobj=handle, mode="r:") as archive:
            _refuse_unmapped(archive.getmembers(), path)
            samples = [
                (key, [(suffix, member.offset_data, member.size) for suffix, member in members])
                for key, members in samples_in(archive)
            ]
    except tarfile.TarError as error:
        raise ChunkCorruptError(
            f"WebDataset shard {path} is not a readable tar ({error}); it is truncated or "
            f"corrupt. Re-create or re-copy it."
        ) from None
    size = os.path.getsize(path)
    if samples and any(start + length > size for _, start, length in samples[-1][1]):
        raise ChunkCorruptError(
            f"WebDataset shard {path} is truncated: its last member ends past its {size:,} "
            f"bytes. Re-create or re-copy it."
        )
    return samples


class TarShard(MappedFile):
    """One tar shard, memory-mapped, with its samples' member offsets.

    Args:
        path: The local tar file.
        entry: Its chunk entry (the sample count is checked against it).

    Raises:
        ChunkCorruptError: The tar changed since it was indexed, or is unreadable.
        ChunkMissingError: It is gone.
    """

    __slots__ = ("samples",)
    kind: ClassVar[str] = "WebDataset shard"

    def __init__(self, path: str, entry: ChunkEntry) -> None:
        if not os.path.exists(path):
            raise self.missing(path)
        self.samples = scan(path)
        if len(self.samples) != entry.chunk_size:
            raise ChunkCorruptError(
                f"WebDataset shard {path} holds {len(self.samples)} samples, but it had "
                f"{entry.chunk_size} when the folder was indexed; it changed while being read."
            )
        super().__init__(path)

    def sample(self, position: int) -> dict[str, Any]:
        """Sample ``position``: ``{"__key__", "__url__", suffix: bytes...}``."""
        key, members = self.samples[position]
        sample: dict[str, Any] = {"__key__": key, "__url__": str(self.path)}
        for suffix, start, length in members:
            sample[suffix] = self.view[start : start + length].tobytes()
        return sample


class TarDecoder:
    """Opens tar shards and returns their samples."""

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """The shard's sample count."""
        return entry.chunk_size

    def open(self, path: str, entry: ChunkEntry) -> TarShard:
        """Index and map a shard."""
        return TarShard(path, entry)

    def read(self, chunk: TarShard, position: int) -> dict[str, Any]:
        """Sample ``position`` of a shard."""
        return chunk.sample(position)


class WebDatasetFormat:
    """A local folder of WebDataset tar shards, read in place."""

    name: ClassVar[str] = FORMAT_NAME
    written_by: ClassVar[str] = "a WebDataset writer (tar shards)"

    def read_index(self, location: Location) -> DatasetIndex:
        """One chunk per ``.tar`` file directly in the folder, in name order.

        Raises:
            DatasetNotFoundError: The location is not a local folder holding ``.tar`` files.
            ChunkCorruptError: A shard is not a readable tar (the message names it).
        """
        folder = location.local_path
        tars = _tars(folder) if folder is not None and os.path.isdir(folder) else []
        if folder is None or not tars:
            raise DatasetNotFoundError(
                f"No WebDataset shards at {location.url}: it is not a local folder holding "
                f".tar files."
            )
        chunks = []
        for name in tars:
            path = os.path.join(folder, name)
            chunks.append(ChunkEntry(name, len(scan(path)), os.path.getsize(path)))
        if not any(chunk.chunk_size for chunk in chunks):
            raise DatasetNotFoundError(f"The WebDataset shards at {location.url} hold no samples.")
        config = DatasetConfig(item_loader=None, extra={"format": FORMAT_NAME})
        return DatasetIndex(config, tuple(chunks), format_version=None)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """The tar decoder."""
        del index, options
        return TarDecoder()
