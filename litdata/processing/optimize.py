"""``optimize``: run a function over inputs in parallel and write what it returns as a dataset."""

from __future__ import annotations

import inspect
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from litdata.core import registries
from litdata.core.errors import DatasetFormatError
from litdata.core.index import DatasetConfig
from litdata.core.item_loaders import ItemLoader, PyTreeLoader
from litdata.core.protocols import Executor, Serializer
from litdata.core.units import parse_size
from litdata.core.work import LiveQueue, WorkSource
from litdata.core.writer import check_chunk_options
from litdata.processing.checkpoint import Checkpoints
from litdata.processing.job import OptimizeJob
from litdata.processing.output import prepare_output
from litdata.processing.progress import ProgressBar
from litdata.processing.split import contiguous_slices, numbered, shared

__all__ = ["ALL_DONE", "FAST_DEV_RUN_INPUTS", "default_num_workers", "optimize", "resolve_executor"]

logger = logging.getLogger(__name__)

#: What a producer puts on a ``queue=`` input, once, when it has no more inputs (LitData's).
ALL_DONE = "ALL_DONE"
#: How many inputs ``fast_dev_run=True`` processes.
FAST_DEV_RUN_INPUTS = 10


def default_num_workers() -> int:
    """The CPUs this process may run on (the scheduler's allowance, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_executor(executor: str | Executor, start_method: str | None) -> Executor:
    """The executor plugin for a name (configured with ``start_method``), or the instance given.

    Raises:
        UnknownPluginError: No executor has that name.
        ValueError: ``start_method`` was given for an executor that does not take one.
    """
    if not isinstance(executor, str):
        return executor
    plugin = registries.executors.load(executor)
    if start_method is None:
        return plugin()
    if "start_method" not in inspect.signature(plugin).parameters:
        raise ValueError(
            f"start_method is for local processes; the {executor!r} executor does not take it."
        )
    return plugin(start_method=start_method)  # type: ignore[call-arg]


def _check_source(inputs: Any, queue: Any) -> None:
    if (inputs is None) == (queue is None):
        raise ValueError(
            "Pass either inputs (a sequence) or queue (a multiprocessing queue), not both and "
            "not neither."
        )
    if queue is not None and not all(hasattr(queue, method) for method in ("get", "put")):
        raise ValueError(f"queue must be a multiprocessing queue, got {type(queue).__name__}.")


def prepare_inputs(inputs: Any, batch_size: int | None, fast_dev_run: bool | int) -> list[Any]:
    """Validate ``inputs`` and return them as a list, batched and trimmed as asked."""
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Iterable):
        raise ValueError(f"inputs must be a sequence of inputs, got {type(inputs).__name__}.")
    items = list(inputs)
    if not items:
        raise ValueError("inputs is empty: there is nothing to process.")
    if batch_size is not None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
        if batch_size > 1:
            items = [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
    if fast_dev_run is not False:
        count = FAST_DEV_RUN_INPUTS if fast_dev_run is True else fast_dev_run
        if not isinstance(count, int) or count < 1:
            raise ValueError(
                f"fast_dev_run must be True or a positive integer, got {fast_dev_run!r}."
            )
        items = items[:count]
    return items


def check_workers(num_workers: int | None, count: int | None) -> int:
    """The number of workers to start (never more than there are inputs)."""
    if num_workers is None:
        num_workers = default_num_workers()
    if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
        raise ValueError(f"num_workers must be a non-negative integer, got {num_workers!r}.")
    num_workers = max(num_workers, 1)
    return min(num_workers, count) if count is not None else num_workers


def _ordered(
    keep_data_ordered: bool | None, use_checkpoint: bool, align_chunking: bool, queue: Any
) -> bool:
    if keep_data_ordered is False and (use_checkpoint or align_chunking):
        feature = "use_checkpoint" if use_checkpoint else "align_chunking"
        raise ValueError(
            f"{feature}=True needs ordered inputs; it cannot be combined with "
            f"keep_data_ordered=False."
        )
    if queue is not None and (keep_data_ordered or use_checkpoint):
        raise ValueError(
            "queue inputs arrive in no fixed order: they cannot be combined with "
            "keep_data_ordered or use_checkpoint."
        )
    return bool(keep_data_ordered or use_checkpoint or align_chunking)


def _check_append(
    existing: DatasetConfig,
    chunk_size: int | None,
    chunk_bytes: int | str | None,
    compression: str | None,
    item_loader: ItemLoader | None,
) -> None:
    """Refuse, before any work, writer settings that differ from the dataset's."""
    given = {
        "chunk_size": chunk_size,
        "chunk_bytes": None if chunk_bytes is None else parse_size(chunk_bytes),
        "compression": compression,
        "item_loader": (item_loader or PyTreeLoader()).name,
    }
    recorded = existing.core()
    different = [
        f"{key}={value!r} (the dataset has {recorded[key]!r})"
        for key, value in given.items()
        if recorded[key] != value
    ]
    if different:
        raise DatasetFormatError(
            f"mode='append' needs the settings the dataset was written with: "
            f"{'; '.join(different)}."
        )


def optimize(
    fn: Callable[[Any], Any],
    inputs: Sequence[Any] | None = None,
    output_dir: str | os.PathLike[str] = "optimized_data",
    *,
    queue: Any = None,
    chunk_size: int | None = None,
    chunk_bytes: int | str | None = None,
    align_chunking: bool = False,
    compression: str | None = None,
    num_workers: int | None = None,
    fast_dev_run: bool | int = False,
    batch_size: int | None = None,
    mode: str | None = None,
    use_checkpoint: bool = False,
    item_loader: ItemLoader | None = None,
    serializers: Mapping[str, Serializer] | None = None,
    start_method: str | None = None,
    keep_data_ordered: bool | None = None,
    verbose: bool = True,
    executor: str | Executor = "local",
) -> None:
    """Call ``fn`` on every input, in parallel workers, and write its samples as a dataset.

    Args:
        fn: ``fn(input)`` returns a sample (any structure of dicts, lists, tuples and leaves),
            ``None`` to skip the input, or yields several samples. It must be importable
            (module level) when workers are spawned.
        inputs: The inputs (any sequence). Exactly one of ``inputs`` and ``queue``.
        output_dir: A local directory; ``index.json`` appears in it last, atomically.
        queue: A ``multiprocessing`` queue of inputs, ended by one ``ALL_DONE`` from the producer.
        chunk_size: Items per chunk (tokens for ``TokensLoader``).
        chunk_bytes: Bytes per chunk, e.g. ``"64MB"``. Exactly one of the two.
        align_chunking: Deal whole chunks of ``chunk_size`` inputs to the workers, so chunks
            match a single-worker run (ordered; needs ``chunk_size``).
        compression: ``"zstd"``, ``"zstd:<level>"``, ``"lz4"`` or a plugin's codec.
        num_workers: Worker processes; defaults to the CPUs available to this process.
        fast_dev_run: Process only the first 10 inputs (or this many).
        batch_size: Give ``fn`` lists of this many inputs.
        mode: ``None`` (refuse an existing dataset), ``"overwrite"`` or ``"append"``.
        use_checkpoint: Resume an interrupted run without duplicates or losses (ordered).
        item_loader: ``TokensLoader()`` for token streams; ``PyTreeLoader`` by default.
        serializers: Extra serializers, probed before the installed ones.
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` for local workers.
        keep_data_ordered: ``True`` gives each worker a contiguous slice and keeps the input
            order in the dataset; ``False`` (the default) shares one queue, so a slow input
            never idles the others.
        verbose: Show a progress bar.
        executor: ``"local"`` (processes on this machine) or another executor plugin.

    Raises:
        ValueError: Bad or contradictory arguments; the message says which.
        DatasetExistsError: ``output_dir`` holds a dataset and ``mode`` is ``None``.
        ProcessingError: ``fn`` failed; the message names the input and holds its traceback.
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {type(fn).__name__}.")
    _check_source(inputs, queue)
    items = None if queue is not None else prepare_inputs(inputs, batch_size, fast_dev_run)
    if align_chunking and chunk_size is None:
        raise ValueError("align_chunking=True needs chunk_size (it aligns whole chunks of items).")
    if use_checkpoint and inspect.isgeneratorfunction(fn):
        raise ValueError(
            "use_checkpoint=True cannot resume a generator fn (an input may yield "
            "samples into several chunks); return one sample per input instead."
        )
    if use_checkpoint and mode == "append":
        raise ValueError(
            "mode='append' (add to a finished dataset) and use_checkpoint=True "
            "(resume an unfinished run) cannot be combined."
        )
    ordered = _ordered(keep_data_ordered, use_checkpoint, align_chunking, queue)
    workers = check_workers(num_workers, None if items is None else len(items))
    runner = resolve_executor(executor, start_method)
    check_chunk_options(chunk_size, chunk_bytes, compression)
    writer_options = {
        "chunk_size": chunk_size,
        "chunk_bytes": chunk_bytes,
        "compression": compression,
    }

    output = prepare_output(output_dir, mode, use_checkpoint)
    if output.existing is not None:
        _check_append(output.existing.config, chunk_size, chunk_bytes, compression, item_loader)
    job = OptimizeJob(
        fn,
        output.write_dir,
        writer_options,
        item_loader,
        serializers,
        output.existing.config if output.existing else None,
        output.chunk_starts,
    )
    source: WorkSource
    if items is None:
        source = LiveQueue(queue, ALL_DONE)
    elif not ordered:
        source = shared(numbered(items))
    else:
        source = contiguous_slices(numbered(items), workers, chunk_size if align_chunking else None)
        if use_checkpoint:
            checkpoints = Checkpoints(output.directory)
            job.checkpoints = checkpoints.directory
            source, job.resume = checkpoints.resume(source)

    start = time.monotonic()
    total = None if items is None else len(items)
    try:
        with ProgressBar(total, f"optimize -> {output.directory.name}", verbose) as bar:
            summaries = runner.run(job, source, workers, bar)
        index = output.publish()
    except BaseException:
        output.discard()
        raise
    Checkpoints(output.directory).remove()
    samples = sum(summary.get("samples", 0) for summary in summaries)
    message = (
        f"Wrote {samples:,} samples in {len(index.chunks)} chunks to {output.directory} "
        f"in {time.monotonic() - start:.1f} s."
    )
    logger.info(message)
    if verbose:
        print(message)  # the closing line of the progress display
