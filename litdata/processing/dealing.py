"""How inputs are dealt to workers: contiguous slices (ordered) or one shared queue."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from litdata.core.errors import LitdataWarning
from litdata.core.work import Item, SharedInputs, Slices

__all__ = ["check_weights", "contiguous_slices", "numbered", "shared", "weighted"]


def numbered(inputs: Sequence[Any], start: int = 0) -> list[Item]:
    """Pair every input with its position."""
    return list(enumerate(inputs, start))


def contiguous_slices(
    items: Sequence[Item], num_workers: int, align_chunk_size: int | None = None
) -> Slices:
    """Give each worker a contiguous run of inputs, in order (LitData's ordered split).

    Each worker gets ``len // num_workers`` inputs and the remainder goes one each to the last
    workers, so merging the workers' chunks in rank order keeps the input order. With
    ``align_chunk_size``, every worker but the last gets a whole number of chunks, so chunk
    boundaries fall where a single worker would put them.
    """
    count = len(items)
    if align_chunk_size is not None:
        per_worker = (count // align_chunk_size // num_workers) * align_chunk_size
        if per_worker == 0 and num_workers > 1:
            warnings.warn(
                f"align_chunking: {count} inputs make fewer than one chunk of "
                f"{align_chunk_size} per worker; the last worker gets them all.",
                LitdataWarning,
                stacklevel=3,
            )
        sizes = [per_worker] * (num_workers - 1) + [count - per_worker * (num_workers - 1)]
    else:
        base, extra = divmod(count, num_workers)
        sizes = [base + (1 if rank >= num_workers - extra else 0) for rank in range(num_workers)]
    slices, start = [], 0
    for size in sizes:
        slices.append(list(items[start : start + size]))
        start += size
    return Slices(slices)


def shared(items: Sequence[Item]) -> SharedInputs:
    """One queue that every worker takes its next input from."""
    return SharedInputs(items)


def check_weights(weights: Sequence[float] | None, count: int) -> list[float] | None:
    """``weights`` as floats, checked: one positive number per input.

    Raises:
        ValueError: A wrong count or a weight that is not a positive number.
    """
    if weights is None:
        return None
    values = list(weights)
    if len(values) != count:
        raise ValueError(
            f"The provided weights length should match the inputs' length: weights has "
            f"{len(values)} entries for {count} inputs; give one weight per input."
        )
    bad = [w for w in values if isinstance(w, bool) or not isinstance(w, int | float) or w <= 0]
    if bad:
        raise ValueError(f"weights must be positive numbers; got {bad[:5]}.")
    return [float(w) for w in values]


def weighted(
    items: Sequence[Item], weights: Sequence[float], num_workers: int, ordered: bool
) -> Slices | SharedInputs:
    """Deal inputs by their weights (LitData's ``weights=``, say each input's cost).

    Ordered: each input, heaviest first, goes to the worker with the least weight so far,
    which then processes its inputs in input order. Shared queue: the heaviest inputs are
    queued first, so no worker is left with a long one at the end.
    """
    heaviest_first = sorted(range(len(items)), key=lambda i: -weights[i])
    if not ordered:
        return SharedInputs([items[i] for i in heaviest_first])
    loads = [0.0] * num_workers
    bins: list[list[int]] = [[] for _ in range(num_workers)]
    for i in heaviest_first:
        lightest = loads.index(min(loads))
        bins[lightest].append(i)
        loads[lightest] += weights[i]
    return Slices([[items[i] for i in sorted(part)] for part in bins])
