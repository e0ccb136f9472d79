"""Parquet test data: folders of real Parquet files (written with pyarrow), and what they hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def row(i: int) -> dict[str, Any]:
    """Row ``i``: a scalar of each kind, a variable-length list, a struct, bytes and a null."""
    return {
        "id": i,
        "text": f"row {i}",
        "score": i / 4,
        "tags": [f"t{j}" for j in range(i % 4)],
        "meta": {"even": i % 2 == 0, "half": i // 2},
        "blob": bytes([i % 256]) * (i % 5),
        "maybe": None if i % 3 == 0 else i,
    }


def write_parquet(
    folder: Path, sizes: list[int], row_group_size: int = 7, prefix: str = "part"
) -> list[dict[str, Any]]:
    """Write one Parquet file per size (``part-00000.parquet``...); return the rows in order."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for number, size in enumerate(sizes):
        part = [row(len(rows) + i) for i in range(size)]
        table = pa.Table.from_pylist(part)
        pq.write_table(
            table, folder / f"{prefix}-{number:05d}.parquet", row_group_size=row_group_size
        )
        rows += part
    return rows


def read_with_pyarrow(folder: Path, pattern: str = "*.parquet") -> list[dict[str, Any]]:
    """The rows of the files of ``folder`` matching ``pattern``, in name order, by pyarrow."""
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob(pattern)):
        rows += pq.read_table(path).to_pylist()
    return rows
