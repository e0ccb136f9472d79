"""A training step's samples, from a loader's provenance log (``provenance_dir=``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from litdata.streaming.control.provenance_log import find_step
from litdata.viewer.cost import Cost
from litdata.viewer.source import Source

__all__ = ["MAX_STEP_SAMPLES", "training_step"]

#: Samples of one step drawn (per rank); the rest are listed by id only.
MAX_STEP_SAMPLES = 256


def training_step(
    directory: str | os.PathLike[str], step: int, epoch: int | None, sources: Sequence[Source]
) -> dict[str, Any]:
    """Every rank's batch of ``step``: its ids (dataset, sample) and the samples' rows.

    Raises:
        FileNotFoundError: ``directory`` holds no provenance log.
        ValueError: A log file is damaged.
        LookupError: The log has no such step.
    """
    records = find_step(directory, step, epoch)
    if not records:
        of = "" if epoch is None else f" of epoch {epoch}"
        raise LookupError(f"the provenance log logs no step {step}{of}")
    cost = Cost(in_place=all(source.store.in_place for source in sources))
    ranks = []
    for record in records:
        rows: list[dict[str, Any]] = []
        for dataset, sample in record.ids[:MAX_STEP_SAMPLES]:
            if not 0 <= dataset < len(sources):
                rows.append({"index": sample, "dataset": dataset, "error": "unknown dataset"})
                continue
            row = (
                sources[dataset].rows([sample], cost)[0]
                if sample < len(sources[dataset])
                else {
                    "index": sample,
                    "error": f"sample {sample} is past the dataset's end",
                }
            )
            rows.append({**row, "dataset": dataset})
        ranks.append(
            {
                "rank": record.rank,
                "epoch": record.epoch,
                "step": record.step,
                "ids": [list(pair) for pair in record.ids],
                "rows": rows,
            }
        )
    return {"ranks": ranks, "cost": cost.as_json()}
