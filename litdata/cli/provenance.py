"""``litdata provenance DIR --step N``: the samples of a batch, from a loader's provenance log."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from litdata.streaming.control.provenance_log import find_step

__all__ = ["add_parser", "run"]

_EXAMPLES = """examples:
  litdata provenance ./ids --step 1200             every rank's batch of step 1200
  litdata provenance ./ids --step 1200 --epoch 3   in epoch 3
  litdata provenance ./ids --step 1200 --json      one JSON object per rank

The log is written by StreamingDataLoader(..., provenance_dir="./ids"). Each id is
(dataset index, sample index): mixture.datasets[d][i] (ds[i] for one dataset) is the sample."""


def add_parser(commands: Any) -> None:
    """Register the ``provenance`` command."""
    parser = commands.add_parser(
        "provenance",
        help="the samples of a training step, from a loader's provenance log",
        description="Read back what StreamingDataLoader(provenance_dir=DIR) logged.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", help="the log's folder (provenance_dir)")
    parser.add_argument("--step", type=int, required=True, help="the step in its epoch, from 0")
    parser.add_argument("--epoch", type=int, help="the epoch (default: the last that has it)")
    parser.add_argument("--json", action="store_true", help="one JSON object per rank")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print each rank's ids of the step. Exit 1 when the log is missing, damaged or lacks it."""
    try:
        records = find_step(args.directory, args.step, args.epoch)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not records:
        epoch = "" if args.epoch is None else f" of epoch {args.epoch}"
        print(f"error: {args.directory} logs no step {args.step}{epoch}.", file=sys.stderr)
        return 1
    for record in records:
        if args.json:
            line = {"rank": record.rank, "epoch": record.epoch, "step": record.step}
            print(json.dumps({**line, "ids": record.ids}))
            continue
        print(
            f"rank {record.rank}, epoch {record.epoch}, step {record.step}: "
            f"{len(record.ids)} samples (dataset, index)"
        )
        print("  " + " ".join(f"({d}, {i})" for d, i in record.ids))
    return 0
