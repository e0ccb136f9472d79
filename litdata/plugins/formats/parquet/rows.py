"""Parquet rows: ``ParquetLoader`` and the decoder that reads rows of local Parquet files.

Each file is a chunk; its rows are the items, returned as ``{column: value}`` dicts. A chunk is
read one row group at a time, when a row of it is first asked for, and a row group is dropped
once all its rows were read (or the chunk is released). Rows asked for in order are converted
to Python a whole row group at once; rows asked for in a shuffled order are converted one by one
from the row group's Arrow columns, so a shuffled epoch holds Arrow data, not Python objects.

pyarrow reads without its thread pools (``use_threads=False``, no pre-buffering), so it is safe
in forked DataLoader workers, even when the parent read Parquet before forking. Polars, whose
thread pool deadlocks after a fork, is never used.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import Any, ClassVar

from litdata.core.errors import DatasetFormatError
from litdata.core.formats import ReadOptions
from litdata.core.index import ChunkEntry, DatasetIndex
from litdata.plugins.formats.parquet.footers import LOADER_NAME, arrow

__all__ = ["ParquetChunk", "ParquetDecoder", "ParquetLoader"]


class ParquetLoader:
    """Read Parquet files as they are: each file is a chunk, each row a ``{column: value}`` item.

    ``StreamingDataset("data/", item_loader=ParquetLoader())`` streams a folder of Parquet
    files (LitData's spelling; ``item_loader`` may be omitted).

    Args:
        pre_load_chunk: Accepted for LitData compatibility; chunks are fetched ahead by the
            reader's prefetch (``max_pre_download``) whatever it is.
        low_memory: Read one row group at a time (``True``, the default), or whole files.
        columns: Read only these columns (all when ``None``).
    """

    name: ClassVar[str] = LOADER_NAME
    sample_items: ClassVar[bool] = True

    def __init__(
        self,
        pre_load_chunk: bool = False,
        low_memory: bool = True,
        columns: Sequence[str] | None = None,
    ) -> None:
        if columns is not None and (
            isinstance(columns, str) or not all(isinstance(c, str) for c in columns)
        ):
            raise TypeError(f"columns must be a list of column names, got {columns!r}")
        self.pre_load_chunk = pre_load_chunk
        self.low_memory = low_memory
        self.columns = list(columns) if columns is not None else None

    def encoder(self, serializers: Any) -> Any:
        """ParquetLoader only reads.

        Raises:
            ValueError: Always: ``optimize`` writes chunks with PyTreeLoader or TokensLoader.
        """
        del serializers
        raise ValueError(
            "ParquetLoader reads existing Parquet files; it does not write. Stream the files "
            "with StreamingDataset(folder, item_loader=ParquetLoader()), or convert them with "
            "optimize() and the default PyTreeLoader."
        )

    def decoder(self, index: DatasetIndex, options: ReadOptions) -> ParquetDecoder:
        """A decoder of the rows of ``index``'s files."""
        return ParquetDecoder(index, self.columns, self.low_memory, options.where)

    def state_dict(self) -> dict[str, Any]:
        """The columns read, when chosen (a resumed run must read the same ones)."""
        return {} if self.columns is None else {"columns": self.columns}

    def __repr__(self) -> str:
        return f"ParquetLoader(low_memory={self.low_memory}, columns={self.columns})"


class ParquetChunk:
    """One local Parquet file opened for reading rows.

    Args:
        path: The file.
        entry: Its index entry (its number of rows is checked).
        columns: The columns to read, or ``None`` for all.
        whole: Read the whole file as one group (``low_memory=False``).
    """

    def __init__(
        self, path: str, entry: ChunkEntry, columns: list[str] | None, whole: bool
    ) -> None:
        _, parquet = arrow()
        self.path = path
        self._columns = columns
        try:
            self._file = parquet.ParquetFile(path, pre_buffer=False, memory_map=True)
        except (OSError, ValueError) as error:
            raise DatasetFormatError(f"{path} is not a readable Parquet file: {error}") from error
        metadata = self._file.metadata
        if metadata.num_rows != entry.chunk_size:
            raise DatasetFormatError(
                f"{path} has {metadata.num_rows} rows, but the index records {entry.chunk_size} "
                f"for {entry.filename}: the file changed after it was indexed. Index the folder "
                f"again (litdata.index_parquet_dataset)."
            )
        if columns is not None:
            missing = sorted(set(columns) - set(self._file.schema_arrow.names))
            if missing:
                raise DatasetFormatError(
                    f"ParquetLoader(columns=...) asks for {missing}, which {path} does not have; "
                    f"its columns are {self._file.schema_arrow.names}."
                )
        sizes = (
            [metadata.num_rows]
            if whole
            else [metadata.row_group(group).num_rows for group in range(metadata.num_row_groups)]
        )
        self._whole = whole
        self._ends = list(accumulate(sizes))
        self._sizes = sizes
        #: Row group -> (its Arrow columns or its rows as dicts, rows not yet read).
        self._groups: dict[int, list[Any]] = {}

    def _load(self, group: int, first_row: bool) -> list[Any]:
        try:
            if self._whole:
                table = self._file.read(columns=self._columns, use_threads=False)
            else:
                table = self._file.read_row_group(group, columns=self._columns, use_threads=False)
        except (OSError, ValueError) as error:
            raise DatasetFormatError(
                f"Row group {group} of {self.path} cannot be read: {error}. The file may be "
                f"truncated or corrupt; replace it."
            ) from error
        # Read in order: convert the group at once. Shuffled: keep Arrow, convert row by row.
        data: Any = table.to_pylist() if first_row else (table.column_names, table.columns)
        held = [data, self._sizes[group]]
        self._groups[group] = held
        return held

    def row(self, position: int) -> dict[str, Any]:
        """The row at ``position`` of the file, as ``{column: value}``."""
        group = bisect_right(self._ends, position)
        start = self._ends[group] - self._sizes[group]
        held = self._groups.get(group)
        if held is None:
            held = self._load(group, position == start)
        data = held[0]
        offset = position - start
        if isinstance(data, list):
            row: dict[str, Any] = data[offset]
        else:
            names, columns = data
            row = {
                name: column[offset].as_py() for name, column in zip(names, columns, strict=True)
            }
        held[1] -= 1
        if held[1] <= 0:  # every row of the group was read: drop it
            del self._groups[group]
        return row

    def prefetch(self) -> None:
        """Nothing to do: row groups are read when first needed."""

    def release(self) -> None:
        """Drop the row groups held."""
        self._groups.clear()

    def close(self) -> None:
        """Close the file."""
        self._groups.clear()
        self._file.close()


class ParquetDecoder:
    """Reads the rows of the Parquet files of a dataset.

    Args:
        index: The dataset's index (one chunk per file).
        columns: The columns to read, or ``None`` for all.
        low_memory: Read a row group at a time, rather than whole files.
        where: The dataset's location, for messages.
    """

    def __init__(
        self, index: DatasetIndex, columns: list[str] | None, low_memory: bool, where: str
    ) -> None:
        self.index = index
        self.columns = columns
        self.low_memory = low_memory
        self.where = where

    def items_in_chunk(self, entry: ChunkEntry) -> int:
        """A file's rows."""
        return entry.chunk_size

    def open(self, path: str, entry: ChunkEntry) -> ParquetChunk:
        """Open the local Parquet file ``path``."""
        return ParquetChunk(path, entry, self.columns, whole=not self.low_memory)

    def read(self, chunk: ParquetChunk, position: int) -> dict[str, Any]:
        """The row at ``position``."""
        return chunk.row(position)
