"""MDS fixtures for the tests: the datasets the real MDSWriter wrote, and hand-built shards.

``tests/data/mds-0.13.0/`` holds datasets written by MosaicML Streaming 0.13.0's ``MDSWriter``
(``tests/interop/mds_with_mosaic.py write``) and, as ``<name>.mosaic.json``, every sample as
Mosaic's own ``StreamingDataset`` read it (``canonical`` form). ``write_shards`` builds small
MDS datasets from already-encoded column bytes, following the format (for inputs the real
writer refuses to produce: unknown encodings, unsafe pickles).
"""

from __future__ import annotations

import json
import shutil
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import canonical
import mds_samples

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "mds-0.13.0"

__all__ = ["FIXTURES", "canonical", "copy_fixture", "mds_samples", "mosaic_read", "write_shards"]


def copy_fixture(name: str, target: Path) -> Path:
    """A copy of fixture ``name`` at ``target`` (tests may damage it)."""
    shutil.copytree(FIXTURES / name, target)
    return target


def mosaic_read(name: str) -> list[Any]:
    """Fixture ``name``'s samples as Mosaic read them (canonical form)."""
    samples: list[Any] = json.loads((FIXTURES / f"{name}.mosaic.json").read_text())["samples"]
    return samples


def write_shards(
    folder: Path,
    columns: dict[str, str],
    rows: Sequence[Sequence[bytes]],
    per_shard: int = 4,
) -> Path:
    """Write an uncompressed MDS dataset whose samples hold ``rows`` (encoded column bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    names, encodings = list(columns), list(columns.values())
    shards = []
    for number, first in enumerate(range(0, len(rows), per_shard)):
        samples = [
            struct.pack(f"<{len(row)}I", *map(len, row)) + b"".join(row)
            for row in rows[first : first + per_shard]
        ]
        config = json.dumps({"column_names": names}).encode()
        offsets = [4 + 4 * (len(samples) + 1) + len(config)]
        for sample in samples:
            offsets.append(offsets[-1] + len(sample))
        data = struct.pack(f"<{len(offsets) + 1}I", len(samples), *offsets) + config
        basename = f"shard.{number:05d}.mds"
        (folder / basename).write_bytes(data + b"".join(samples))
        shards.append(
            {
                "column_encodings": encodings,
                "column_names": names,
                "column_sizes": [None] * len(names),
                "compression": None,
                "format": "mds",
                "hashes": [],
                "raw_data": {"basename": basename, "bytes": offsets[-1], "hashes": {}},
                "samples": len(samples),
                "size_limit": None,
                "version": 2,
                "zip_data": None,
            }
        )
    (folder / "index.json").write_text(json.dumps({"shards": shards, "version": 2}))
    return folder
