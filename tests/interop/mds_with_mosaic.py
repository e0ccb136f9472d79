"""Run by the real MosaicML Streaming (the peers' python): write MDS datasets, read them back.

    python mds_with_mosaic.py write OUT_DIR COMPRESSION NUM_SAMPLES SIZE_LIMIT [--hashes] [--simple]
    python mds_with_mosaic.py read DATASET_DIR OUT_JSON
    python mds_with_mosaic.py wds OUT_PATTERN NUM_SAMPLES MAXCOUNT

``write`` uses ``MDSWriter`` with every column encoding (``COMPRESSION`` ``none`` for
uncompressed shards), or with three plain columns (``--simple``, for streaming tests).
``read`` dumps ``canonical(ds[i])`` for every sample of Mosaic's own ``StreamingDataset`` over a
copy of the dataset (Mosaic decompresses shards into its local folder). ``wds`` writes
WebDataset tar shards with ``webdataset.ShardWriter``. Run with the working directory outside
the repository, whose ``litdata`` would shadow the peer's.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from mds_samples import COLUMNS, SIMPLE_COLUMNS, mds_sample, simple_sample, wds_sample  # noqa: E402


def write(
    out: str, compression: str, count: int, size_limit: int, hashes: bool, simple: bool
) -> None:
    from streaming import MDSWriter

    make = simple_sample if simple else mds_sample
    with MDSWriter(
        out=out,
        columns=SIMPLE_COLUMNS if simple else COLUMNS,
        compression=None if compression == "none" else compression,
        size_limit=size_limit,
        hashes=["sha1", "xxh64"] if hashes else None,
    ) as writer:
        for index in range(count):
            writer.write(make(index))


def read(dataset: str, out: str) -> None:
    from canonical import canonical
    from streaming import StreamingDataset

    scratch = Path(tempfile.mkdtemp(prefix="mds-read-"))
    copy = scratch / "ds"
    shutil.copytree(dataset, copy)
    data = StreamingDataset(local=str(copy), shuffle=False, batch_size=1, allow_unsafe_types=True)
    samples: list[Any] = [canonical(data[index]) for index in range(len(data))]
    Path(out).write_text(json.dumps({"len": len(data), "samples": samples}))
    shutil.rmtree(scratch, ignore_errors=True)


def wds(pattern: str, count: int, maxcount: int) -> None:
    import webdataset

    with webdataset.ShardWriter(pattern, maxcount=maxcount) as sink:
        for index in range(count):
            sink.write(wds_sample(index))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "write":
        write(args[0], args[1], int(args[2]), int(args[3]), "--hashes" in args, "--simple" in args)
    elif command == "read":
        read(args[0], args[1])
    elif command == "wds":
        wds(args[0], int(args[1]), int(args[2]))
    else:
        raise SystemExit(f"unknown command {command!r}")
