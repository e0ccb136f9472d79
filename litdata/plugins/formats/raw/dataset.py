"""``StreamingRawDataset``: a map-style dataset over the original files of a folder or bucket.

No ``optimize`` step: the files are listed once (the list is kept, see
:mod:`~litdata.plugins.formats.raw.indexer`) and each item is the bytes of one file, or of a
group of related files when ``setup`` groups them (an image and its mask). A batch's files are
fetched concurrently (``__getitems__``, which PyTorch's ``DataLoader`` calls with a batch's
indices).
Use it with a plain ``torch.utils.data.DataLoader``; shuffle with ``shuffle=True``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from litdata.core.location import Location
from litdata.engine.boundary.resolve import resolve
from litdata.engine.cache.directory import cache_home
from litdata.plugins.formats.raw.fetch import FileFetcher
from litdata.plugins.formats.raw.indexer import (
    BaseIndexer,
    FileIndexer,
    FileMetadata,
    load_or_build_index,
)

__all__ = ["StreamingRawDataset"]

Item = FileMetadata | list[FileMetadata]


def _dataset_base() -> type:
    from torch.utils.data import Dataset

    return Dataset


class StreamingRawDataset(_dataset_base()):  # type: ignore[misc]
    """Stream the original files of a local folder or a remote prefix (``s3://...``).

    Args:
        input_dir: The folder or URL holding the files.
        cache_dir: The cache root (the file list and, with ``cache_files``, the files).
        indexer: Finds the files; ``FileIndexer()`` (every file, 5 levels deep) by default.
        storage_options: Options for the storage backend (credentials, endpoint...).
        cache_files: Keep fetched files in the cache and read them from there next time.
        recompute_index: List the files again instead of using the kept list.
        transform: Applied to each item (bytes, or a list of bytes for grouped files).
        max_concurrent_downloads: Requests in flight per process; ``None`` chooses from the
            file sizes and the number of DataLoader workers.
        item_type: ``"bytes"`` (the files' contents) or ``"path"`` (their cached local paths;
            needs ``cache_files=True``).
        range_parallel_threshold: Fetch files of at least this many bytes as parallel ranged
            requests (0: one request per file).
        range_chunk_size: The size of those ranges.
        download_timeout: Seconds a batch's files may take (at least 3 s per 25 MB of its
            largest file); past it, a ``TimeoutError`` names a file still missing.
        max_prefetch: LitData's look-ahead of items fetched in the background (default 16,
            0: none), kept as ``self.max_prefetch``. A hint: this dataset fetches the files of
            the items asked for (each batch's files concurrently) and reads nothing ahead, which
            is LitData's ``max_prefetch=0``; a DataLoader's own ``prefetch_factor`` overlaps
            batches.
        prefetch_cache_size: The look-ahead's memory, in items (``None``: twice
            ``max_prefetch``), kept as ``self.prefetch_cache_size``; a hint as well.
        hedge_delay: LitData's hedged requests: seconds before a slow download is requested a
            second time (0: never, the default and what this dataset does). A hint.

    Override :meth:`setup` to filter the files or to group them into items.

    Raises:
        ValueError: ``item_type`` is not ``"bytes"`` or ``"path"``, ``"path"`` is asked
            without ``cache_files``, no files were found, or ``max_prefetch``,
            ``prefetch_cache_size`` or ``hedge_delay`` is negative.
        TypeError: ``setup`` did not return a list.
    """

    def __init__(  # noqa: PLR0917  # LitData's signature
        self,
        input_dir: str | os.PathLike[str],
        cache_dir: str | None = None,
        indexer: BaseIndexer | None = None,
        storage_options: Mapping[str, Any] | None = None,
        cache_files: bool = False,
        recompute_index: bool = False,
        transform: Callable[[Any], Any] | None = None,
        max_concurrent_downloads: int | None = None,
        *,
        item_type: Literal["bytes", "path"] = "bytes",
        range_parallel_threshold: int = 0,
        range_chunk_size: int = 8 * 1024 * 1024,
        download_timeout: float = 120.0,
        max_prefetch: int = 16,
        prefetch_cache_size: int | None = None,
        hedge_delay: float = 0.0,
    ) -> None:
        if prefetch_cache_size is None:
            prefetch_cache_size = 2 * max_prefetch
        for name, value in (
            ("max_prefetch", max_prefetch),
            ("prefetch_cache_size", prefetch_cache_size),
            ("hedge_delay", hedge_delay),
        ):
            if value < 0:
                raise ValueError(f"{name} must be 0 or more, got {value!r}")
        self.max_prefetch = max_prefetch
        self.prefetch_cache_size = prefetch_cache_size
        self.hedge_delay = hedge_delay
        if item_type not in ("bytes", "path"):
            raise ValueError(f"item_type must be 'bytes' or 'path', got {item_type!r}")
        if item_type == "path" and not cache_files:
            raise ValueError(
                "item_type='path' returns the local copies of the files, so it needs "
                "cache_files=True."
            )
        self.location: Location = resolve(input_dir, storage_options=storage_options)
        self.input_dir = self.location.url
        self.transform = transform
        self.item_type = item_type
        self.cache_files = cache_files
        files = load_or_build_index(
            self.location, indexer or FileIndexer(), cache_dir, recompute_index, storage_options
        )
        items = self.setup(files)
        if not isinstance(items, list):
            raise TypeError(
                f"The setup method must return a list (of FileMetadata, or of lists of them): "
                f"{type(self).__name__}.setup returned a {type(items).__name__}."
            )
        self.items: list[Item] = list(items)
        if max_concurrent_downloads is not None:
            max_concurrent_downloads = max(1, max_concurrent_downloads)
        folder = cache_home(self.location.url, cache_dir) / "files" if cache_files else None
        self._fetcher = FileFetcher(
            self.location,
            max_concurrent_downloads,
            folder,
            range_parallel_threshold=range_parallel_threshold,
            range_chunk_size=range_chunk_size,
            timeout=download_timeout,
        )

    def setup(self, files: list[FileMetadata]) -> list[FileMetadata] | list[list[FileMetadata]]:
        """Turn the listed files into items: by default, one item per file.

        Override to drop files or to group related ones (each group becomes one item whose
        value is the list of their bytes).
        """
        return files

    def __len__(self) -> int:
        return len(self.items)

    def _check(self, index: int) -> int:
        if index < 0:
            index += len(self.items)
        if not 0 <= index < len(self.items):
            raise IndexError(
                f"Index {index} out of range: the dataset has {len(self.items)} items."
            )
        return index

    def _files_of(self, item: Any) -> list[FileMetadata]:
        files = item if isinstance(item, list) else [item]
        for file in files:
            if not isinstance(file, FileMetadata):
                raise TypeError(
                    f"Dataset items must be of type FileMetadata or a list of FileMetadata; "
                    f"{type(self).__name__}.setup gave a {type(file).__name__} ({file!r:.80})."
                )
        return files

    def __getitem__(self, index: int) -> Any:
        return self.__getitems__([index])[0]

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        """The items at ``indices``, all their files fetched concurrently."""
        items = [self.items[self._check(index)] for index in indices]
        files = [file for item in items for file in self._files_of(item)]
        fetched = iter(self._fetcher.fetch(files, as_paths=self.item_type == "path"))
        values: list[Any] = []
        for item in items:
            value = [next(fetched) for _ in item] if isinstance(item, list) else next(fetched)
            values.append(value if self.transform is None else self.transform(value))
        return values

    @property
    def sizes(self) -> list[int]:
        """Bytes per item (a group's files summed)."""
        return [
            sum(f.size for f in item) if isinstance(item, list) else item.size
            for item in self.items
        ]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.input_dir!r}, items={len(self.items)})"
