"""Checking ``StreamingDataset``'s arguments, with messages that say what is expected."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.units import parse_size

__all__ = ["cache_budget", "check_options", "check_transforms"]


def check_options(
    shuffle: object,
    drop_last: object,
    seed: object,
    max_pre_download: object,
    num_canonical_nodes: object,
) -> None:
    """Refuse arguments of the wrong type or range.

    Raises:
        ValueError: naming the argument and what it should be.
    """
    if not isinstance(shuffle, bool | str) and not hasattr(shuffle, "item_order"):
        raise ValueError(
            f"shuffle must be True, False, a shuffle plugin's name (with options, e.g. "
            f"'window:size=4') or a shuffle strategy, got {shuffle!r}"
        )
    if drop_last is not None and not isinstance(drop_last, bool):
        raise ValueError(f"drop_last must be True, False or None, got {drop_last!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(max_pre_download, int) or max_pre_download < 1:
        raise ValueError(f"max_pre_download must be a positive integer, got {max_pre_download!r}")
    if num_canonical_nodes is not None and (
        not isinstance(num_canonical_nodes, int) or num_canonical_nodes < 1
    ):
        raise ValueError(
            f"num_canonical_nodes must be a positive integer or None, got {num_canonical_nodes!r}"
        )


def check_batch_size(batch_size: object) -> int:
    """``batch_size`` after checking it is a positive integer.

    Raises:
        ValueError: It is not.
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    return batch_size


def cache_budget(max_cache_size: int | float | str | None, cache_dir: str | None = None) -> int:
    """The cache budget in bytes, for a cache under ``cache_dir`` (or the default cache root).

    ``None`` means 75% of the free space where the cache lives, keeping 50 GB free when there
    is more than that; a float (or numeric string) in (0, 1] is that fraction of the free space;
    an int or a size string (``"100GB"``) is an absolute size; ``0`` means no cache (chunks
    are kept in memory while they are read, see :mod:`litdata.engine.cache.memory`).

    Raises:
        ValueError: The value is none of these.
    """
    root = Path(cache_dir).expanduser() if cache_dir else config.cache_root()
    probe = next((p for p in [root, *root.parents] if p.exists()), Path("/"))
    free = shutil.disk_usage(probe).free
    if max_cache_size is None:
        reserve = 50 * 10**9
        return int(min(0.75 * free, free - reserve) if free > reserve else 0.75 * free)
    if max_cache_size in (0, "0") and not isinstance(max_cache_size, bool):
        return 0
    if isinstance(max_cache_size, int) and not isinstance(max_cache_size, bool):
        return parse_size(max_cache_size, what="max_cache_size")
    try:
        fraction = float(max_cache_size)
    except ValueError:
        if isinstance(max_cache_size, str):
            return parse_size(max_cache_size, what="max_cache_size")
        raise
    if not 0 < fraction <= 1:
        raise ValueError(
            f"max_cache_size={max_cache_size!r}: a fraction must be in (0, 1]; give sizes as a "
            f"string with a unit, e.g. '50GB'."
        )
    return int(fraction * free)


def check_transforms(
    transform: Callable[[Any], Any] | Sequence[Callable[[Any], Any]] | None,
) -> tuple[Callable[[Any], Any], ...]:
    """``transform`` as a tuple of functions applied in order.

    Raises:
        ValueError: Something in it is not callable.
    """
    if transform is None:
        return ()
    transforms = tuple(transform) if isinstance(transform, list | tuple) else (transform,)
    for item in transforms:
        if not callable(item):
            raise ValueError(f"transform must be a callable or a list of callables, got {item!r}")
    return transforms
