"""Cost of the shuffle-order checks: ``CheckedShuffle(FullShuffle())`` vs ``FullShuffle()``.

Every order a shuffle strategy returns is checked to be a permutation where it enters the plan
(``litdata.streaming.epoch.shuffles.CheckedShuffle``). This times, for one epoch, what a reader pays
for the orders: ``litdata.streaming.epoch.plan.epoch_plan`` plus the ``item_order`` of every
segment,
with the checked strategy and with the raw one, on W1- and W3-shaped chunk lists and the stream
row's topologies (0 workers = 1 reader; 2 workers, where each worker computes the whole plan and
the item orders of its own segments, as ``StreamingDataset.runs`` does). The raw strategy
returns numpy arrays; the checked one returns Python lists (its ``tolist`` is counted in), so a
third column times the raw strategy with its orders turned into lists, separating the check
itself (``bincount``) from the conversion.

    python bench/checks.py [--repeats 50] [--stream-results bench/results/<...>.md] [--out FILE]

Reports ms per epoch (median of ``--repeats`` epochs, each a different epoch number) and the
check's cost as a share of the epoch time ours measured in the ``stream`` row (``shuffle``,
same workers): taken from the newest ``bench/results/*.md`` with a stream table, or the file
given. Run under the ours interpreter from the repository root (``PYTHONPATH=.``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for path in (str(REPO), str(BENCH)):
    if path not in sys.path:
        sys.path.insert(0, path)

import workloads  # noqa: E402

SEED = 42
#: (name, workload, chunk sizes): W1 as ours' optimize writes it (6 chunks of ~2,100-3,950
#: items; read from the prepared dataset when there is one), W3 as one chunk of 200,000 items,
#: and W3 as ours' 2-worker optimize writes it (2 chunks of 100,000).
W1_FALLBACK = (3941, 3947, 2112, 3939, 3945, 2116)


def w1_sizes() -> tuple[int, ...]:
    """Chunk sizes of ours' prepared W1 (or a W1-like fallback)."""
    index = workloads.data_dir() / "prepared" / "ours" / "W1" / "index.json"
    try:
        return tuple(int(c["chunk_size"]) for c in json.loads(index.read_text())["chunks"])
    except (OSError, ValueError, KeyError):
        return W1_FALLBACK


def shapes() -> list[tuple[str, str, tuple[int, ...]]]:
    """The chunk lists timed."""
    return [
        ("W1", "W1", w1_sizes()),
        ("W3 (1 x 200,000)", "W3", (200_000,)),
        ("W3 (2 x 100,000)", "W3", (100_000, 100_000)),
    ]


def epoch_cost(sizes: Sequence[int], workers: int, batch: int, strategy: Any, epoch: int) -> float:
    """Seconds the slowest reader spends on the plan and its item orders for one epoch."""
    from litdata.streaming.epoch.plan import Topology, epoch_plan

    topology = Topology(1, workers, batch)
    costs = []
    for worker in range(workers):
        start = time.perf_counter()
        plan = epoch_plan(
            sizes, topology, seed=SEED, epoch=epoch, drop_last=False, strategy=strategy
        )
        for segment in plan[worker]:
            strategy.item_order(segment.region, sizes[segment.region], SEED, epoch)
        costs.append(time.perf_counter() - start)
    return max(costs)


class AsLists:
    """The raw strategy with its orders turned into lists, as ``CheckedShuffle`` returns them.

    Separates the check itself from the ``tolist`` that the checked strategy also does (and that
    makes the reader's per-item loop iterate Python ints rather than numpy scalars).
    """

    def __init__(self, strategy: Any) -> None:
        self.strategy = strategy
        self.name = strategy.name
        self.whole_chunks = strategy.whole_chunks

    def chunk_order(self, num_chunks: int, seed: int, epoch: int) -> list[int]:
        return list(self.strategy.chunk_order(num_chunks, seed, epoch))

    def worker_chunk_order(
        self, chunks: Sequence[int], seed: int, epoch: int, worker: int
    ) -> Sequence[int]:
        return self.strategy.worker_chunk_order(chunks, seed, epoch, worker)

    def item_order(self, chunk: int, num_items: int, seed: int, epoch: int) -> list[int]:
        order: list[int] = self.strategy.item_order(chunk, num_items, seed, epoch).tolist()
        return order


def measure(sizes: Sequence[int], workers: int, batch: int, repeats: int) -> dict[str, float]:
    """Median ms per epoch: raw, raw as lists, checked (interleaved, after one warm-up each)."""
    from litdata.plugins.shuffle.full import FullShuffle
    from litdata.streaming.epoch.shuffles import CheckedShuffle

    strategies = {
        "raw": FullShuffle(),
        "lists": AsLists(FullShuffle()),
        "checked": CheckedShuffle(FullShuffle()),
    }
    for strategy in strategies.values():
        epoch_cost(sizes, workers, batch, strategy, 1)
    times: dict[str, list[float]] = {name: [] for name in strategies}
    for epoch in range(2, repeats + 2):
        for name, strategy in strategies.items():
            times[name].append(epoch_cost(sizes, workers, batch, strategy, epoch))
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def _number(text: str) -> float | None:
    match = re.match(r"\s*([\d.,]+)\s*([kM]?)", text)
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    return value * {"": 1, "k": 1e3, "M": 1e6}[match.group(2)]


def stream_epochs(path: Path | None) -> tuple[Path | None, dict[tuple[str, int], float]]:
    """Ours' shuffled epoch ms per (workload, workers) from a results file's stream table."""
    candidates = [path] if path else sorted((BENCH / "results").glob("*.md"), reverse=True)
    for candidate in candidates:
        found = _parse_stream(candidate.read_text())
        if found:
            return candidate, found
    return None, {}


def _parse_stream(text: str) -> dict[tuple[str, int], float]:
    found: dict[tuple[str, int], float] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if not line.startswith("### stream:"):
            continue
        header = next((h for h in lines[number:] if h.startswith("| workload")), "")
        columns = [c.strip() for c in header.strip("|").split("|")]
        if "ours" not in columns:
            continue
        ours = columns.index("ours")
        for row in lines[number:]:
            if row.startswith("### ") and row is not line:
                break
            cells = [c.strip() for c in row.strip("|").split("|")]
            if len(cells) <= ours or cells[1] != "samples/s":
                continue
            match = re.match(r"(W\d) shuffle, (\d) workers", cells[0])
            rate = _number(cells[ours])
            if match and rate:
                workload, workers = match.group(1), int(match.group(2))
                count = workloads.WORKLOADS[workload].count
                found[(workload, workers)] = count / rate * 1e3
        if found:
            return found
    return found


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--stream-results", default=None, help="a bench results .md")
    parser.add_argument("--out", default=None, help="write the table here too")
    args = parser.parse_args(argv)
    given = Path(args.stream_results).resolve() if args.stream_results else None
    source, epochs = stream_epochs(given)
    lines = [
        f"### checks: shuffle-order checks, {dt.datetime.now():%Y-%m-%d %H:%M}",
        "",
        "epoch_plan + every segment's item_order for one epoch, full shuffle, seed 42; median "
        f"of {args.repeats} epochs; at 2 workers the slower worker's share (each computes the "
        "whole plan and its own segments' orders). 'as lists': the raw orders turned into "
        "Python lists, as the checked strategy returns them.",
        "",
        "| chunks | workers | raw FullShuffle ms | raw, as lists ms | CheckedShuffle ms | "
        "checked - raw ms | checked - as lists ms | ours' stream epoch ms | "
        "checked - raw, % of epoch |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, workload, sizes in shapes():
        batch = workloads.WORKLOADS[workload].batch_size
        for workers in (0, 2):
            got = measure(sizes, max(1, workers), batch, args.repeats)
            extra = got["checked"] - got["raw"]
            epoch = epochs.get((workload, workers))
            share = f"{100 * extra / epoch:.2f}%" if epoch else "-"
            lines.append(
                f"| {name}: {len(sizes)} chunks | {workers} | {got['raw']:.3f} | "
                f"{got['lists']:.3f} | {got['checked']:.3f} | {extra:.3f} | "
                f"{got['checked'] - got['lists']:.3f} | {f'{epoch:.0f}' if epoch else '-'} | "
                f"{share} |"
            )
    where = f"`{source.relative_to(REPO)}`" if source else "none found"
    lines += [
        "",
        f"Epoch times: ours, `shuffle`, from the stream table of {where} (samples / samples/s).",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
