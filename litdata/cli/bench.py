"""``litdata bench PATH_OR_URL``: streaming throughput per worker count, to pick ``num_workers``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from litdata.cli.interruption import interrupted
from litdata.cli.storage_flags import add_storage_flags, in_cli_terms, storage_options
from litdata.core.errors import LitdataError
from litdata.engine.boundary.resolve import resolve
from litdata.engine.opening import open_dataset

__all__ = ["Measurement", "add_parser", "measure", "run"]

_EXAMPLES = """examples:
  litdata bench ./my-dataset
  litdata bench s3://bucket/data --workers 0,2,4,8 --seconds 20 --batch-size 256

Each worker count streams the dataset for --seconds (after its first batch, which pays for
starting the workers); the cache is warm after the first run over a remote dataset."""
#: A worker count whose rate is within this fraction of the best is as good and cheaper.
_GOOD_ENOUGH = 0.95


@dataclass(frozen=True)
class Measurement:
    """One worker count's throughput.

    Attributes:
        num_workers: DataLoader workers.
        samples: Samples streamed in the measured time.
        seconds: The measured time.
        nbytes: Bytes streamed (the dataset's mean sample size times the samples).
        startup: Seconds until the first batch.
    """

    num_workers: int
    samples: int
    seconds: float
    nbytes: float
    startup: float

    @property
    def samples_per_second(self) -> float:
        """Samples per second."""
        return self.samples / self.seconds if self.seconds else 0.0

    @property
    def mb_per_second(self) -> float:
        """Megabytes (10^6) per second, uncompressed."""
        return self.nbytes / 1e6 / self.seconds if self.seconds else 0.0


def add_parser(commands: Any) -> None:
    """Register the ``bench`` command."""
    parser = commands.add_parser(
        "bench",
        help="stream a dataset with several worker counts; report samples/s and MB/s",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", help="the dataset directory or URL")
    add_storage_flags(parser)
    default = ",".join(str(n) for n in _default_workers())
    parser.add_argument(
        "--workers", default=default, help=f"worker counts, comma-separated (default: {default})"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="how long each worker count streams (default: %(default)g)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=64, help="samples per batch (default: %(default)s)"
    )
    parser.add_argument("--shuffle", action="store_true", help="read in shuffled order")
    parser.add_argument("--cache-dir", help="where remote chunks are cached")
    parser.set_defaults(run=run)


def _default_workers() -> list[int]:
    cpus = os.cpu_count() or 1
    counts = [0, 1]
    while counts[-1] * 2 <= cpus:
        counts.append(counts[-1] * 2)
    return counts


def measure(
    path: str,
    num_workers: int,
    seconds: float,
    batch_size: int = 64,
    *,
    shuffle: bool = False,
    cache_dir: str | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Measurement:
    """Stream ``path`` with ``num_workers`` workers for about ``seconds`` (epochs repeat)."""
    from litdata.streaming.dataloader import StreamingDataLoader
    from litdata.streaming.dataset import StreamingDataset

    dataset = StreamingDataset(
        path, shuffle=shuffle, cache_dir=cache_dir, storage_options=storage_options
    )
    index = dataset._reader.index
    mean_bytes = sum(c.chunk_bytes for c in index.chunks) / max(1, index.num_items)
    loader = StreamingDataLoader(dataset, batch_size=batch_size, num_workers=num_workers)
    began = time.perf_counter()
    startup, samples, start = 0.0, 0, 0.0
    while True:
        for batch in loader:
            now = time.perf_counter()
            if not start:  # the first batch pays for starting the workers: not measured
                start, startup = now, now - began
                continue
            samples += _batch_length(batch)
            if now - start >= seconds:
                return Measurement(num_workers, samples, now - start, samples * mean_bytes, startup)
        if not len(dataset):
            raise ValueError(f"{path} has no samples to stream.")


def _batch_length(batch: Any) -> int:
    while isinstance(batch, dict | list | tuple):
        batch = next(iter(batch.values())) if isinstance(batch, dict) else batch[0]
        if not isinstance(batch, dict | list | tuple):
            break
    return len(batch) if hasattr(batch, "__len__") else 1


def run(args: argparse.Namespace) -> int:
    """Measure each worker count; print a table and the recommended ``num_workers``."""
    try:
        counts = [int(n) for n in args.workers.split(",") if n.strip()]
    except ValueError:
        print(
            f"error: --workers {args.workers!r} is not a comma-separated list of numbers.",
            file=sys.stderr,
        )
        return 2
    try:
        open_dataset(resolve(args.path, storage_options=storage_options(args)))
    except (LitdataError, OSError, ValueError) as error:
        print(f"error: {in_cli_terms(str(error))}", file=sys.stderr)
        return 1
    print(
        f"Streaming {args.path} with {len(counts)} worker count(s), about {args.seconds:g} s each "
        f"plus worker start-up; Ctrl-C stops and keeps the rows measured.",
        flush=True,
    )
    results: list[Measurement] = []
    try:
        measured = _measure_all(args, counts, results)
    except KeyboardInterrupt:
        if results:  # what was measured stands; the interruption is still reported (130)
            print(f"(interrupted: {len(results)} of {len(counts)} worker counts measured)")
            _recommend(results)
        raise
    if not measured:
        return 1
    _recommend(results)
    return 0


def _measure_all(args: argparse.Namespace, counts: list[int], results: list[Measurement]) -> bool:
    """Measure each worker count into ``results``, printing each row as it is measured.

    Returns:
        Whether every count was measured (a read error is printed, and stops the rest).
    """
    for count in counts:
        try:
            result = measure(
                args.path,
                count,
                args.seconds,
                args.batch_size,
                shuffle=args.shuffle,
                cache_dir=args.cache_dir,
                storage_options=storage_options(args),
            )
        except (LitdataError, OSError, ValueError) as error:
            if interrupted():  # a worker Ctrl-C stopped first: the interruption is the news
                raise KeyboardInterrupt from error
            print(f"error: {in_cli_terms(str(error))}", file=sys.stderr)
            return False
        if not results:  # the table starts once there is a row to show
            print(f"{'workers':>7}  {'samples/s':>12}  {'MB/s':>9}  {'startup':>8}")
        results.append(result)
        print(
            f"{count:>7}  {result.samples_per_second:>12,.0f}  {result.mb_per_second:>9,.1f}"
            f"  {result.startup:>7.2f}s",
            flush=True,
        )
    return True


def _recommend(results: list[Measurement]) -> None:
    """Print the smallest worker count within reach of the best measured."""
    best = max(result.samples_per_second for result in results)
    chosen = min(
        (r for r in results if r.samples_per_second >= _GOOD_ENOUGH * best),
        key=lambda r: r.num_workers,
    )
    print(
        f"num_workers={chosen.num_workers} reaches {chosen.samples_per_second:,.0f} samples/s, "
        f"within {100 - _GOOD_ENOUGH * 100:.0f}% of the best measured here."
    )
