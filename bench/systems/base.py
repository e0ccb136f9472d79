"""Adapter interface shared by every system, plus small helpers used inside child processes."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from memory import descendants, tree_pss_kib
from workloads import (
    REMOTE_RANDOM_COUNT,
    W2_BLOCK,
    WORKLOADS,
    Checker,
    MixtureChecker,
    Source,
    random_indices,
)


class Unsupported(Exception):
    """An adapter cannot run this (row, workload); reported as ``unsupported: <reason>``."""


def fresh_dir(path: Path) -> Path:
    """Remove ``path`` if present and recreate it empty."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def dir_bytes(path: Path) -> int:
    """Total size of the files under ``path``."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def percentile_us(samples_s: list[float], q: float) -> float:
    """The ``q``-th percentile of durations given in seconds, in microseconds."""
    return float(np.percentile(np.asarray(samples_s) * 1e6, q))


def add_batch(checker: Checker, batch: Any, kind: str) -> None:
    """Feed one collated batch (dict, tuple/list or tensor, per system) to ``checker``."""
    if kind == "image":
        if isinstance(batch, dict):
            checker.add_images(batch["image"], batch["label"])
        else:
            checker.add_images(batch[0], batch[1])
    elif kind == "jpeg":
        checker.add_jpegs(batch["image"], batch["label"])
    elif kind == "vision":
        checker.add_vision(batch["image"], batch["label"])
    elif kind == "tokens":
        checker.add_tokens(batch["tokens"] if isinstance(batch, dict) else batch)
    elif isinstance(batch, dict):
        checker.add_records(batch["x"], batch["y"])
    else:
        checker.add_records(batch[0], batch[1])


def pss_now_mb() -> float:
    """PSS of this process and its children now, in MB (a sample the parent's sampler may miss)."""
    return tree_pss_kib(os.getpid()) * 1024 / 1e6


class Remote(NamedTuple):
    """A dataset on the bench's S3 server, as a child is told about it."""

    url: str  # s3://bench/<system>/<W>
    storage_options: dict[str, Any]  # LitData's (boto3's) names
    request_log: str | None  # the server's request log, to count requests


class EpochTimes(NamedTuple):
    """What ``_epoch`` measured."""

    seconds: float
    first_batch_ms: float
    pss_end_mb: float
    cpu_s: float  # CPU seconds of the whole process tree during the epoch


_TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu_s() -> float:
    """CPU seconds (user + system) of this process, its reaped children and live descendants."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    for pid in descendants(os.getpid())[1:]:  # [0] is this process
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone (and reaped: counted above, or by its parent's exit)
        total += (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime
    return total


def _epoch(make_loader: Callable[[], Iterable[Any]], add: Callable[[Any], None]) -> EpochTimes:
    """Time one epoch from building the loader to its last batch, handing each batch to ``add``."""
    cpu_start = tree_cpu_s()
    start = time.perf_counter()
    loader = make_loader()
    first = None
    for batch in loader:
        if first is None:
            first = time.perf_counter() - start
        add(batch)
    elapsed = time.perf_counter() - start
    cpu = tree_cpu_s() - cpu_start  # workers still alive: counted from /proc
    pss_end = pss_now_mb()  # untimed, while the loader and its datasets are still alive
    return EpochTimes(elapsed, (first or 0.0) * 1e3, pss_end, cpu)


def time_stream(make_loader: Callable[[], Iterable[Any]], kind: str, count: int) -> dict[str, Any]:
    """Time one epoch: from building dataset + loader (inside ``make_loader``) to the last batch."""
    checker = Checker(kind)
    batches = 0

    def add(batch: Any) -> None:
        nonlocal batches
        add_batch(checker, batch, kind)
        batches += 1

    times = _epoch(make_loader, add)
    got = checker.result()
    elapsed = times.seconds
    return {
        "pss_end_mb": times.pss_end_mb,
        "metrics": {
            "samples_per_s": got["count"] / elapsed if elapsed > 0 else 0.0,
            "cpu_s_per_1k": times.cpu_s * 1000 / max(1, got["count"]),
            "epoch_s": elapsed,
            "first_batch_ms": times.first_batch_ms,
            "batches": batches,
        },
        "check": got,
        "check_kind": "full",
    }


def time_mixture(make_loader: Callable[[], Iterable[Any]], root: Path) -> dict[str, Any]:
    """Time one mixture epoch (building datasets + loader to the last batch) of token blocks."""
    checker = MixtureChecker()
    blocks = 0

    def add(batch: Any) -> None:
        nonlocal blocks
        blocks += checker.add(batch)

    times = _epoch(make_loader, add)
    got = checker.result(root)
    elapsed = times.seconds
    return {
        "pss_end_mb": times.pss_end_mb,
        "metrics": {
            "tokens_per_s": blocks * W2_BLOCK / elapsed if elapsed > 0 else 0.0,
            "blocks_per_s": blocks / elapsed if elapsed > 0 else 0.0,
            "epoch_s": elapsed,
            "first_batch_ms": times.first_batch_ms,
            "blocks": blocks,
            "b_share": got["b_blocks"] / blocks if blocks else 0.0,
        },
        "check": got,
        "check_kind": "mixture",
    }


def time_random(
    open_dataset: Callable[[], Any], workload: str, get: Callable[[Any, int], Any] | None = None
) -> dict[str, Any]:
    """Open a dataset (timed separately) and time 1,000 random ``ds[i]`` one by one."""
    kind = WORKLOADS[workload].kind
    checker = Checker(kind)
    start = time.perf_counter()
    ds = open_dataset()
    opened = time.perf_counter() - start
    durations: list[float] = []
    getter = get or (lambda d, i: d[i])
    for i in random_indices(workload):
        t0 = time.perf_counter()
        sample = getter(ds, i)
        durations.append(time.perf_counter() - t0)
        checker.add_sample(sample)
    return {
        "pss_end_mb": pss_now_mb(),
        "metrics": {
            "p50_us": percentile_us(durations, 50),
            "p99_us": percentile_us(durations, 99),
            "first_us": durations[0] * 1e6,
            "open_ms": opened * 1e3,
        },
        "check": checker.result(),
        "check_kind": "random",
    }


def same_sample(kind: str, got: Any, want: Any) -> bool:
    """Whether a returned sample equals the source's (W1 and W3 samples)."""
    if kind == "image":
        return bytes(got["image"]) == want["image"] and int(got["label"]) == want["label"]
    if kind == "tokens":
        return bool(np.array_equal(np.asarray(got), want))
    return bool(np.array_equal(np.asarray(got["x"]), want["x"])) and int(got["y"]) == want["y"]


def time_remote_random(
    open_dataset: Callable[[], Any], workload: str, source: Source, request_log: str | None
) -> dict[str, Any]:
    """Open a remote dataset (cold cache) and time ``REMOTE_RANDOM_COUNT`` random ``ds[i]``.

    With ``request_log`` (the S3 server's request log), the requests each ``ds[i]`` made are
    counted from the log's new lines (outside the timed calls).
    """
    from remote import RequestLog

    log = RequestLog(Path(request_log)) if request_log else None
    kind = WORKLOADS[workload].kind
    indices = random_indices(workload)[:REMOTE_RANDOM_COUNT]
    mark = log.offset() if log else 0
    start = time.perf_counter()
    ds = open_dataset()
    opened = time.perf_counter() - start
    open_requests = log.count(mark)[0] if log else 0
    durations: list[float] = []
    requests: list[int] = []
    ranged = 0
    wrong = 0
    for i in indices:
        mark = log.offset() if log else 0
        t0 = time.perf_counter()
        sample = ds[i]
        durations.append(time.perf_counter() - t0)
        if log:
            made, made_ranged = log.count(mark)
            requests.append(made)
            ranged += made_ranged
        wrong += not same_sample(kind, sample, source.sample(i))
    metrics: dict[str, Any] = {
        "p50_us": percentile_us(durations, 50),
        "p99_us": percentile_us(durations, 99),
        "first_us": durations[0] * 1e6,
        "open_ms": opened * 1e3,
    }
    if log:
        metrics.update(
            requests_per_item=sum(requests) / len(requests),
            first_requests=requests[0],
            max_requests=max(requests),
            ranged_share=ranged / max(1, sum(requests)),
            open_requests=open_requests,
        )
    return {
        "pss_end_mb": pss_now_mb(),
        "metrics": metrics,
        "check": {"count": len(indices), "wrong": wrong},
        "check_kind": "exact",
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` and return ``(seconds, result)``."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def verify_iter(samples: Iterable[Any], kind: str) -> dict[str, int]:
    """Checksum of an iterable of unbatched samples."""
    checker = Checker(kind)
    for sample in samples:
        checker.add_sample(sample)
    return checker.result()


class System:
    """One system under test. Methods run inside a child process and return a result dict.

    A result dict has ``metrics`` (name → number), ``check`` (a ``Checker`` result, or
    ``{"count": n}``) and ``check_kind`` (``full``, ``random`` or ``count``).
    """

    name = "?"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.note = ""  # shown under the table (how the adapter ran this cell, if notable)

    def source(self, workload: str) -> Source:
        """The workload's plain files."""
        return Source(workload, self.root)

    def setup(self) -> None:
        """Import the system's modules (and clean up) before anything is timed."""
        import torch  # noqa: F401  every system's loader path uses torch

    def prepare(self, workload: str, out: Path) -> None:
        """Write the dataset that the read rows (random, stream) use."""
        raise Unsupported("no writer")

    def write(self, workload: str, out: Path) -> dict[str, Any]:
        """Row ``write``: single-process lowest-level writer over the samples."""
        raise Unsupported("no single-process writer")

    def optimize(self, workload: str, out: Path) -> dict[str, Any]:
        """Row ``optimize``: parallel optimize (2 workers) or the system's closest equivalent."""
        raise Unsupported("no optimize")

    def random(self, workload: str, dataset: Path) -> dict[str, Any]:
        """Row ``random``: 1,000 random ``ds[i]`` on a freshly opened dataset."""
        raise Unsupported("no random access")

    def stream(
        self, workload: str, dataset: Path, shuffle: bool, num_workers: int
    ) -> dict[str, Any]:
        """Row ``stream``: one epoch through the system's loader."""
        raise Unsupported("no streaming loader")

    def remote_stream(
        self, workload: str, remote: Remote, cache_dir: Path, num_workers: int
    ) -> dict[str, Any]:
        """Row ``remote-stream``: one shuffled epoch of the dataset at ``remote.url``."""
        raise Unsupported("no remote streaming")

    def remote_random(self, workload: str, remote: Remote, cache_dir: Path) -> dict[str, Any]:
        """Row ``remote-random``: random ``ds[i]`` of a freshly opened remote dataset."""
        raise Unsupported("no remote random access")

    def prepare_mixture(self, out: Path) -> None:
        """Write the mixture row's two token corpora to ``out/A`` and ``out/B``."""
        raise Unsupported("no token mixture")

    def mixture(self, dataset: Path, mix: str, num_workers: int) -> dict[str, Any]:
        """Row ``mixture``: one epoch of the A/B token mixture (``mix``: weighted or all)."""
        raise Unsupported("no token mixture")

    def versions(self) -> dict[str, str]:
        """Versions worth recording in the results."""
        return {}


def write_marker(path: Path, info: dict[str, Any]) -> None:
    """Mark a prepared dataset as complete."""
    (path / ".bench-prepared.json").write_text(json.dumps(info, sort_keys=True))


def read_marker(path: Path) -> dict[str, Any] | None:
    """The marker written by :func:`write_marker`, or None."""
    marker = path / ".bench-prepared.json"
    if not marker.exists():
        return None
    return json.loads(marker.read_text())


def cpu_count() -> int:
    """CPUs available to this process."""
    return len(os.sched_getaffinity(0))
