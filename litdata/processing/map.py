"""``map``: run a function over inputs in parallel, for its side effects (files it writes)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from litdata.core.protocols import Executor
from litdata.engine.boundary.resolve import resolve
from litdata.engine.native.output_lock import LOCK_FILENAME, OutputLock
from litdata.processing.arguments import SharedArguments, check_common, make_output_dir
from litdata.processing.job import MapJob
from litdata.processing.running import deal, plan_workers, report_done, run_job, workers_per_node

__all__ = ["map"]


def map(  # LitData's public name
    fn: Callable[[Any, str], Any],
    inputs: Sequence[Any],
    output_dir: str | os.PathLike[str],
    *,
    num_workers: int | None = None,
    num_nodes: int | None = None,
    fast_dev_run: bool | int = False,
    batch_size: int | None = None,
    keep_data_ordered: bool = False,
    error_when_not_empty: bool = False,
    start_method: str | None = None,
    verbose: bool = True,
    executor: str | Executor | None = None,
    executor_options: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    input_dir: str | os.PathLike[str] | None = None,
    weights: Sequence[float] | None = None,
    reader: Any = None,
    num_downloaders: int | None = None,
    num_uploaders: int | None = None,
    reorder_files: bool = True,
    machine: Any = None,
    optimize_dns: bool | None = None,
    broadcast_paths: bool = False,
) -> None:
    """Call ``fn(input, output_dir)`` on every input, in parallel workers.

    ``fn`` writes whatever files it makes into the local directory it is given (use names
    unique to each input) and returns ``None``. For a remote ``output_dir``, each worker's
    files are uploaded there (same relative paths) after every input.

    Args:
        fn: The function; it must be importable (module level) when workers are spawned.
        inputs: The inputs (any sequence).
        output_dir: A local directory (created if missing) or a URL.
        num_workers: Worker processes; defaults to the CPUs available to this process. On a
            cluster: workers per machine, which sets how finely the inputs are split into tasks.
        num_nodes: Machines to run on (a cluster executor waits for them).
        fast_dev_run: Process only the first 10 inputs (or this many).
        batch_size: Give ``fn`` lists of this many inputs.
        keep_data_ordered: Give each worker a contiguous slice instead of sharing a queue.
        error_when_not_empty: Refuse an ``output_dir`` that already holds files.
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` for local workers.
        verbose: Show a progress bar.
        executor: An executor plugin's name (``"dask"``, ``"ray"``...) or instance; local
            processes by default.
        executor_options: Arguments of the named executor's constructor.
        storage_options: Options for the storage backends (credentials, endpoint).
        input_dir: A remote folder whose files the inputs name: each is downloaded before
            ``fn`` is called, which gets the local path, and removed after.
        weights: One positive weight per input, to balance the workers (as ``optimize``).
        reader: A ``BaseReader``: ``fn`` gets ``reader.read(input)`` (as ``optimize``).
        num_downloaders: Files of one input downloaded at once (remote ``input_dir``).
        num_uploaders: Files each worker uploads at once (remote output).
        reorder_files: Accepted for LitData's signature (see ``optimize``).
        machine: LitData's Lightning AI Studio machine type: refused.
        optimize_dns: Accepted for LitData's signature; changes nothing here.
        broadcast_paths: Accepted for LitData's signature; changes nothing here.

    ``fn`` may also declare ``is_last`` (whether the input is its worker's last) and
    ``device`` (``"cuda:<rank % GPUs>"``, or ``"cpu"`` without CUDA), as in LitData.

    Raises:
        ValueError: Bad arguments, or ``output_dir`` is not empty with ``error_when_not_empty``.
        ProcessingError: ``fn`` failed or returned a value; the message names the input.
        OutputLockedError: Another writer is writing there.
    """
    common = check_common(SharedArguments.of(locals()))
    wants = MapJob.wanted_arguments(fn)
    items = common.items or []
    location = resolve(output_dir, storage_options=storage_options)
    local = location.local_path
    if local is not None:
        os.makedirs(make_output_dir(local), exist_ok=True)
    if error_when_not_empty and any(
        n != LOCK_FILENAME for n in location.storage.list(location.url)
    ):
        raise ValueError(f"output_dir {location.url} is not empty (error_when_not_empty=True).")
    lock = OutputLock(location, "map")
    lock.acquire()
    start = time.monotonic()
    try:
        workers = plan_workers(common.runner, num_workers, common.nodes, len(items))
        run_job(
            common.runner,
            MapJob(
                common.fn,
                None if local is None else Path(local),
                location if local is None else None,
                common.downloads,
                upload_threads=common.upload_threads,
                node_share=workers_per_node(common.runner, num_workers, workers),
                arguments=wants,
            ),
            deal(items, workers, keep_data_ordered, weights=common.weights),
            workers,
            total=len(items),
            description=f"map -> {location.url.rsplit('/', 1)[-1]}",
            verbose=verbose,
        )
    finally:
        lock.release()
    report_done(f"Processed {len(items):,} inputs into {location.url}", start, verbose)
