"""Running a checked ``optimize`` or ``map``: how many workers, dealing inputs, the job."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from litdata.core.protocols import ClusterExecutor, Executor
from litdata.core.work import Job, SharedInputs, Slices, WorkSource
from litdata.processing.arguments import check_workers
from litdata.processing.dealing import contiguous_slices, numbered, shared, weighted
from litdata.processing.progress import ProgressBar

__all__ = ["deal", "plan_workers", "report_done", "run_job"]

logger = logging.getLogger(__name__)


def plan_workers(
    runner: Executor,
    num_workers: int | None,
    num_nodes: int,
    count: int | None,
    chunk_size: int | None = None,
) -> int:
    """How many workers ``runner`` runs: processes here, or tasks on a cluster.

    A cluster executor splits ``count`` inputs into tasks (each of whole chunks of
    ``chunk_size`` inputs, when aligned); any other runs ``num_workers`` processes.
    """
    if not isinstance(runner, ClusterExecutor) or count is None:
        return check_workers(num_workers, count)
    units = count if chunk_size is None else max(1, count // chunk_size)
    per_node = None if num_workers is None else max(1, num_workers)
    return max(1, min(runner.tasks(count, per_node, num_nodes), units))


def workers_per_node(runner: Executor, num_workers: int | None, workers: int) -> int:
    """How many of ``workers`` run on one machine at once (they share its connections)."""
    if isinstance(runner, ClusterExecutor):
        return check_workers(num_workers, None)
    return max(1, workers)


def deal(
    items: list[Any],
    workers: int,
    ordered: bool,
    align_chunk_size: int | None = None,
    weights: Sequence[float] | None = None,
) -> SharedInputs | Slices:
    """Number the inputs and deal them: a contiguous slice each if ``ordered``, else one queue.

    With ``weights``, by weight instead (see :func:`~litdata.processing.dealing.weighted`).
    """
    pairs = numbered(items)
    if weights is not None:
        return weighted(pairs, weights, workers, ordered)
    return contiguous_slices(pairs, workers, align_chunk_size) if ordered else shared(pairs)


def run_job(
    runner: Executor,
    job: Job,
    source: WorkSource,
    workers: int,
    *,
    total: int | None,
    description: str,
    verbose: bool,
) -> list[dict[str, Any]]:
    """Run ``job`` with a progress bar (shown if ``verbose``); return the workers' summaries.

    Raises:
        PluginValidationError: The executor did not return one summary dict per worker.
    """
    with _terminate_as_exit(), ProgressBar(total, description, verbose) as bar:
        summaries = runner.run(job, source, workers, bar)
    return summaries


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """While workers run, ``SIGTERM`` unwinds the driver like ``Ctrl-C`` does.

    The workers are then stopped, the partial output is removed and the lock released, and
    the process exits with status 143, instead of dying with its workers left behind.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        logger.warning("terminated (SIGTERM): stopping the workers and cleaning up")
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def report_done(message: str, start: float, verbose: bool) -> None:
    """Log ``message`` with the seconds since ``start``; print it too if ``verbose``."""
    message = f"{message} in {time.monotonic() - start:.1f} s."
    logger.info(message)
    if verbose:
        print(message)  # the closing line of the progress display
