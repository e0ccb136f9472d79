"""``map``: run a function over inputs in parallel, for its side effects (files it writes)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from litdata.core.protocols import Executor
from litdata.processing.job import MapJob
from litdata.processing.run import (
    check_fn,
    check_workers,
    deal,
    make_output_dir,
    prepare_inputs,
    report_done,
    resolve_executor,
    run_job,
)

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
    check_fn(fn)
    items = prepare_inputs(inputs, batch_size, fast_dev_run)
    directory = make_output_dir(output_dir)
    if error_when_not_empty and any(directory.iterdir()):
        raise ValueError(f"output_dir {directory} is not empty (error_when_not_empty=True).")
    workers = check_workers(num_workers, len(items))
    runner = resolve_executor(executor, start_method)
    source = deal(items, workers, keep_data_ordered)
    start = time.monotonic()
    run_job(
        runner,
        MapJob(fn, directory),
        source,
        workers,
        total=len(items),
        description=f"map -> {directory.name}",
        verbose=verbose,
    )
    report_done(f"Processed {len(items):,} inputs into {directory}", start, verbose)
