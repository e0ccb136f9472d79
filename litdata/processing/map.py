"""``map``: run a function over inputs in parallel, for its side effects (files it writes)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from litdata.core.protocols import Executor
from litdata.core.work import WorkSource
from litdata.processing.job import MapJob
from litdata.processing.optimize import check_workers, prepare_inputs, resolve_executor
from litdata.processing.progress import ProgressBar
from litdata.processing.split import contiguous_slices, numbered, shared

__all__ = ["map"]


def map(  # LitData's public name
    fn: Callable[[Any, str], Any],
    inputs: Sequence[Any],
    output_dir: str | os.PathLike[str],
    *,
    num_workers: int | None = None,
    fast_dev_run: bool | int = False,
    batch_size: int | None = None,
    keep_data_ordered: bool = False,
    error_when_not_empty: bool = False,
    start_method: str | None = None,
    verbose: bool = True,
    executor: str | Executor = "local",
) -> None:
    """Call ``fn(input, output_dir)`` on every input, in parallel workers.

    ``fn`` writes whatever files it makes into ``output_dir`` (use names unique to each input)
    and returns ``None``.

    Args:
        fn: The function; it must be importable (module level) when workers are spawned.
        inputs: The inputs (any sequence).
        output_dir: A local directory (created if missing) given to ``fn``.
        num_workers: Worker processes; defaults to the CPUs available to this process.
        fast_dev_run: Process only the first 10 inputs (or this many).
        batch_size: Give ``fn`` lists of this many inputs.
        keep_data_ordered: Give each worker a contiguous slice instead of sharing a queue.
        error_when_not_empty: Refuse an ``output_dir`` that already holds files.
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` for local workers.
        verbose: Show a progress bar.
        executor: ``"local"`` or another executor plugin.

    Raises:
        ValueError: Bad arguments, or ``output_dir`` is not empty with ``error_when_not_empty``.
        ProcessingError: ``fn`` failed or returned a value; the message names the input.
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {type(fn).__name__}.")
    items = prepare_inputs(inputs, batch_size, fast_dev_run)
    directory = Path(output_dir).absolute()
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"output_dir {directory} is a file; give a directory.")
    directory.mkdir(parents=True, exist_ok=True)
    if error_when_not_empty and any(directory.iterdir()):
        raise ValueError(f"output_dir {directory} is not empty (error_when_not_empty=True).")
    workers = check_workers(num_workers, len(items))
    runner = resolve_executor(executor, start_method)
    pairs = numbered(items)
    source: WorkSource = contiguous_slices(pairs, workers) if keep_data_ordered else shared(pairs)
    start = time.monotonic()
    with ProgressBar(len(items), f"map -> {directory.name}", verbose) as bar:
        runner.run(MapJob(fn, directory), source, workers, bar)
    if verbose:
        print(  # the closing line of the progress display
            f"Processed {len(items):,} inputs into {directory} in {time.monotonic() - start:.1f} s."
        )
