"""Windows of frames from TemporalArrayLoader records: ``read_window`` and ``frame_counts``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litdata.engine.reader import DatasetReader, position_of
from litdata.streaming.epoch.regions import RegionIndex

__all__ = ["FrameWindows"]


class FrameWindows:
    """What a streaming dataset of TemporalArrayLoader records adds (LitData's methods).

    Needs the dataset's reader (``_reader``) and its selection of items (``_regions``).
    """

    _reader: DatasetReader
    _regions: RegionIndex

    def read_window(
        self,
        index: int,
        start: int,
        frames: int,
        fields: Sequence[str] | None = None,
        *,
        max_concurrent_reads: int = 8,
    ) -> dict[str, Any]:
        """Frames ``[start, start + frames)`` of record ``index`` (TemporalArrayLoader datasets).

        Only the window's rows are decoded (its chunk is fetched whole when remote);
        transforms are not applied and the iteration position does not move.

        Args:
            index: The record.
            start: The first frame.
            frames: How many frames.
            fields: The fields to return (all when ``None``).
            max_concurrent_reads: Accepted for LitData compatibility; reads are sequential.

        Raises:
            TypeError: The dataset was not written with TemporalArrayLoader.
            KeyError: A field is not in the records.
            IndexError: ``index`` or the window is out of range.
        """
        chunk, position = self._regions.locate(position_of(index, len(self._regions)))
        return self._reader.read_window(chunk, position, start, frames, fields)

    @property
    def frame_counts(self) -> list[int]:
        """Frames of each record, in dataset order (TemporalArrayLoader datasets; index only)."""
        counts: list[int] = []
        for region in self._regions.regions:
            counts += self._reader.frame_counts(region.chunk)[region.start : region.end]
        return counts
