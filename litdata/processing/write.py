"""``write_dataset``: samples already in hand, written as a dataset by this process alone."""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from pathlib import Path
from typing import Any

from litdata.core.formats import ItemLoader
from litdata.core.protocols import Encryptor, Serializer
from litdata.core.units import counted
from litdata.engine.native.writer import ChunkWriter, check_chunk_options, write_samples
from litdata.processing.output import check_append, prepare_output
from litdata.processing.running import report_done

__all__ = ["write_dataset"]


def write_dataset(
    samples: Iterable[Any],
    output_dir: str | os.PathLike[str],
    *,
    chunk_size: int | None = None,
    chunk_bytes: int | str | None = None,
    compression: str | None = None,
    serializers: Mapping[str, Serializer] | None = None,
    item_loader: ItemLoader | None = None,
    encryption: Encryptor | None = None,
    storage_options: Mapping[str, Any] | None = None,
    key_fn: Callable[[Any], Any] | None = None,
    mode: str | None = None,
    verbose: bool | None = None,
) -> Path | str:
    """Write ``samples`` as a dataset in one process (``optimize`` runs this in many).

    Args:
        samples: The samples, in order.
        output_dir: A local directory or a URL (chunks are uploaded as they are written,
            ``index.json`` last).
        chunk_size: Items per chunk (exactly one of this and ``chunk_bytes``).
        chunk_bytes: Bytes per chunk, an int or a size string such as ``"64MB"``.
        compression: A compressor spec, e.g. ``"zstd"``.
        serializers: Extra serializers by name, probed before the installed ones.
        item_loader: The item encoding (``TokensLoader()`` for token streams).
        encryption: Encrypt each sample or chunk with this key (see its ``level``).
        storage_options: Options for the storage backend of a URL (credentials, endpoint).
        key_fn: ``sample -> key`` (an int or a str): write the ``keys/`` sidecar, so that
            ``StreamingDataset(...)["key"]`` finds a sample by its id.
        mode: What to do with a dataset already at ``output_dir``, as in ``optimize``:
            ``None`` refuses it, ``"append"`` adds the samples after its own (with the same
            settings), ``"overwrite"`` replaces it (the old one stays until the new one is
            complete, locally).
        verbose: Show a progress bar (samples written, samples/s) and a closing summary
            line, as ``optimize`` does; ``None``: when the output is a terminal (a script
            whose output goes to a file or a test stays quiet).

    Returns:
        The dataset directory (or its URL), which holds ``index.json`` once this returns.
        When writing fails, what it wrote is removed (and a folder it created, if empty).

    Raises:
        DatasetExistsError: ``output_dir`` already holds a dataset and ``mode`` is ``None``
            (a ``FileExistsError``).
        ValueError: No sample was given, or ``mode`` is unknown.
    """
    target = check_chunk_options(chunk_size, chunk_bytes, compression)
    if verbose is None:
        verbose = sys.stdout.isatty()
    output = prepare_output(
        output_dir, mode, False, storage_options=storage_options, command="write_dataset"
    )
    try:
        check_append(
            output,
            chunk_size=chunk_size,
            chunk_bytes=target,
            compression=compression,
            item_loader=item_loader,
            key_fn=key_fn,
        )
        existing = output.existing
        make = functools.partial(
            ChunkWriter,
            chunk_size=chunk_size,
            chunk_bytes=target,
            compression=compression,
            serializers=serializers,
            item_loader=item_loader,
            encryption=encryption,
            key_fn=key_fn,
            chunk_index=output.chunk_starts.get(0, 0),
            expected=existing.config if existing is not None and existing.chunks else None,
            mode="overwrite",  # prepare_output applied write_dataset's mode to the folder
        )
        start = time.monotonic()
        counter = _Counted(samples, verbose, output.location.url)
        write_samples(counter, make, output.write_dir, output.upload_to)
        index = output.publish()
    except BaseException:
        output.discard()
        raise
    chunks = len(index.chunks) - (len(existing.chunks) if existing is not None else 0)
    report_done(
        f"Wrote {counted(counter.count, 'sample')} in {counted(chunks, 'chunk')} to "
        f"{output.location.url}",
        start,
        verbose,
    )
    local = output.location.local_path
    return Path(local) if local is not None else output.location.url


class _Counted:
    """The samples, counted as they are taken, with a progress bar when ``verbose``."""

    def __init__(self, samples: Iterable[Any], verbose: bool, url: str) -> None:
        self._samples = samples
        self._verbose = verbose
        self._name = url.rstrip("/").rsplit("/", 1)[-1]
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        from tqdm.auto import tqdm

        total = len(self._samples) if isinstance(self._samples, Sized) else None
        with tqdm(
            total=total,
            desc=f"write_dataset -> {self._name}",
            unit="sample",
            disable=not self._verbose,
            dynamic_ncols=True,
        ) as bar:
            for sample in self._samples:
                yield sample
                self.count += 1
                bar.update()
