"""``mds``: MosaicML Streaming datasets (an ``index.json`` listing ``shards``), read as they are.

``StreamingDataset("s3://bucket/mds-dataset")`` streams a dataset MosaicML's ``MDSWriter``
wrote, locally or remotely: each shard is a chunk (its samples are items), every column is
decoded as Mosaic decodes it, and samples come back as ``{column: value}`` dicts. Shuffling,
sharding over ranks and workers, resume, subsampling and mixing work as for native datasets.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from litdata.core.chunks.checksum import hasher
from litdata.core.dataset_file import decode_json
from litdata.core.errors import DatasetFormatError, DatasetNotFoundError
from litdata.core.formats import ItemDecoder, ReadOptions
from litdata.core.guards import check_count, check_member
from litdata.core.index import INDEX_FILENAME, ChunkEntry, DatasetConfig, DatasetIndex
from litdata.core.location import Location
from litdata.core.registry.hookspecs import hookimpl

__all__ = ["MDSFormat", "litdata_detect_format"]

FORMAT_NAME = "mds"
#: The shard format version MosaicML Streaming writes (and this adapter reads).
MDS_VERSION = 2


#: Mosaic's hash algorithms, fastest first (any other one known to hashlib comes last).
_SPEED = {"xxh3_64": 0, "xxh64": 1, "xxh3_128": 2, "xxh128": 3, "xxh32": 4, "md5": 5, "sha1": 6}


#: How a native ``index.json`` begins (its first key is ``chunks``, which no MDS index has).
_NATIVE_START = re.compile(rb'\s*\{\s*"chunks"\s*:')
#: The bytes of an ``index.json`` looked at to tell.
_SNIFF = 256


def _is_mds(raw: Any) -> bool:
    return isinstance(raw, dict) and isinstance(raw.get("shards"), list) and "chunks" not in raw


@hookimpl
def litdata_detect_format(location: Location, index: DatasetIndex | None) -> str | None:
    """``"mds"`` for a location whose ``index.json`` lists ``shards`` (not ``chunks``)."""
    if index is not None:
        return None
    try:
        head, _ = location.read_ends(INDEX_FILENAME, _SNIFF)
        if _NATIVE_START.match(head):  # LitData's sorted keys: no need to read it all
            return None
        raw = decode_json(location.read(INDEX_FILENAME), where=location.join(INDEX_FILENAME))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None  # not there, or not JSON: the native format reports it
    return FORMAT_NAME if _is_mds(raw) else None


def _bad(where: str, problem: str) -> DatasetFormatError:
    return DatasetFormatError(
        f"{where} is not a valid MosaicML MDS index: {problem}. Re-create it with MDSWriter."
    )


def _shard_file(shard: Mapping[str, Any], position: int, where: str) -> Mapping[str, Any]:
    for key in ("raw_data", "zip_data"):
        info = shard.get(key)
        if info is None:
            continue
        if not isinstance(info, dict) or "basename" not in info or "bytes" not in info:
            raise _bad(where, f"shards[{position}].{key} lacks a basename and a size")
        field = f"shards[{position}].{key}"
        check_member(info["basename"], where=where, field=f"{field}.basename", nested=True)
        check_count(info["bytes"], where=where, field=f"{field}.bytes")
    raw = shard.get("raw_data")
    if raw is None:
        raise _bad(where, f"shards[{position}] has no raw_data")
    return raw  # type: ignore[no-any-return]


def _entry(shard: Mapping[str, Any], position: int, location: Location) -> ChunkEntry:
    """The chunk entry of one shard: the compressed file when there is one, as stored."""
    where = location.join(INDEX_FILENAME)
    if shard.get("format", "mds") != FORMAT_NAME:
        raise DatasetFormatError(
            f"{where}: shard {position} is in Mosaic's {shard.get('format')!r} format; litdata "
            f"reads MDS shards only. Rewrite the dataset with MDSWriter, or optimize() it."
        )
    if shard.get("version", MDS_VERSION) != MDS_VERSION:
        raise _bad(where, f"shards[{position}] has version {shard.get('version')!r}, not 2")
    raw = _shard_file(shard, position, where)
    # Each sample takes 4 bytes of the shard's offsets at least.
    samples = check_count(
        shard.get("samples"),
        where=where,
        field=f"shards[{position}].samples",
        most=raw["bytes"] // 4 - 2,
    )
    stored, compression = raw, None
    zipped = shard.get("zip_data")
    if zipped is not None:
        local = location.local_path
        # A Mosaic cache folder keeps the decompressed shard and drops the compressed one.
        unzipped = (
            local is not None
            and not os.path.exists(os.path.join(local, zipped["basename"]))
            and os.path.exists(os.path.join(local, raw["basename"]))
        )
        if not unzipped:
            stored, compression = zipped, shard.get("compression")
    hashes = stored.get("hashes") or {}
    if not isinstance(hashes, dict) or not all(
        isinstance(name, str) and isinstance(digest, str) for name, digest in hashes.items()
    ):
        raise _bad(where, f"shards[{position}] has hashes {hashes!r}, not names and digests")
    # The digest MDSWriter recorded is the shard's checksum, checked as any chunk's is.
    known = sorted(filter(hasher, hashes), key=lambda name: _SPEED.get(name, len(_SPEED)))
    if compression is not None and not isinstance(compression, str):
        raise _bad(where, f"shards[{position}].compression is {compression!r}")
    return ChunkEntry(
        filename=stored["basename"],
        chunk_size=samples,
        chunk_bytes=stored["bytes"],
        checksum=f"{known[0]}:{hashes[known[0]]}" if known else None,
        extra={"compression": compression, "raw_bytes": raw["bytes"]},
    )


def _columns(shards: list[Any], where: str) -> tuple[list[str], list[str], list[int | None]]:
    """The columns every shard shares: names, encodings and fixed sizes."""
    from litdata.plugins.formats.mds.columns import column_size  # only once MDS is found

    first = shards[0]
    names, encodings = first.get("column_names"), first.get("column_encodings")
    if not (isinstance(names, list) and isinstance(encodings, list)) or len(names) != len(
        encodings
    ):
        raise _bad(where, "shards[0] lacks matching column_names and column_encodings")
    for position, shard in enumerate(shards[1:], start=1):
        if shard.get("column_names") != names or shard.get("column_encodings") != encodings:
            raise _bad(where, f"shards[{position}] has other columns than shards[0]")
    sizes = [
        column_size(encoding, name, where) for name, encoding in zip(names, encodings, strict=True)
    ]
    return names, encodings, sizes


class MDSFormat:
    """MosaicML Streaming (MDS) datasets, local or remote, read without conversion."""

    name: ClassVar[str] = FORMAT_NAME
    written_by: ClassVar[str] = "MosaicML Streaming's MDSWriter"

    def read_index(self, location: Location) -> DatasetIndex:
        """Adapt ``<location>/index.json`` (its ``shards``) into chunks.

        Raises:
            DatasetNotFoundError: There is no ``index.json``, or it lists no shards.
            DatasetFormatError: It is not an MDS index, or a column's encoding is unknown.
        """
        where = location.join(INDEX_FILENAME)
        try:
            data = location.read(INDEX_FILENAME)
        except (FileNotFoundError, NotADirectoryError):
            raise DatasetNotFoundError(
                f"No MDS dataset at {location.url}: {INDEX_FILENAME} does not exist."
            ) from None
        raw = decode_json(data, where=where)
        if not _is_mds(raw):
            raise _bad(where, "it has no 'shards' list")
        shards = raw["shards"]
        if not shards:
            raise DatasetNotFoundError(f"The MDS dataset at {location.url} has no shards.")
        if not all(isinstance(shard, dict) for shard in shards):
            raise _bad(where, "a shard is not an object")
        names, encodings, sizes = _columns(shards, where)
        chunks = tuple(_entry(shard, position, location) for position, shard in enumerate(shards))
        config = DatasetConfig(
            data_format=tuple(encodings),
            item_loader=None,
            extra={"format": FORMAT_NAME, "column_names": names, "column_sizes": sizes},
        )
        version = "mds-" + hashlib.sha256(data).hexdigest()[:16]
        return DatasetIndex(config, chunks, updated_at=version, format_version=None)

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ItemDecoder:
        """A sample decoder; uncompressed shards also read single samples by byte ranges."""
        from litdata.plugins.formats.mds.shards import MDSDecoder, RangedMDSDecoder

        if any(chunk.extra.get("compression") for chunk in index.chunks):
            return MDSDecoder(index, options)
        return RangedMDSDecoder(index, options)
