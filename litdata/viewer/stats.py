"""``Statistics``: per-field histograms, top values and missing counts, computed in steps.

Over the whole dataset when it holds at most :data:`FULL_LIMIT` samples, else over a uniform
sample of :data:`SAMPLE_SIZE` of them drawn with :data:`SEED` (the same every time, and the
result says which). The work advances :data:`BATCH` samples per step, so the page can show
progress and other requests are served in between.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from litdata.viewer.cells import as_array, leaves, value_kind
from litdata.viewer.cost import Cost
from litdata.viewer.images import image_size
from litdata.viewer.source import Source

__all__ = ["BATCH", "FULL_LIMIT", "SAMPLE_SIZE", "SEED", "Statistics"]

#: A dataset this small is described whole.
FULL_LIMIT = 10_000
#: A larger one through this many samples, drawn uniformly without replacement ...
SAMPLE_SIZE = 2_000
#: ... with this seed.
SEED = 0
#: Samples read per step.
BATCH = 50
#: Bars per histogram.
BINS = 20
#: A field with at most this many distinct values lists them (top values).
TOP_LIMIT = 30
#: Characters of a text value counted as a top value.
TOP_TEXT = 80


@dataclass
class _Field:
    kinds: Counter[str] = field(default_factory=Counter)
    missing: int = 0
    #: metric name -> (sample indices, values)
    metrics: dict[str, tuple[list[int], list[float]]] = field(default_factory=dict)
    values: dict[str, list[int]] = field(default_factory=dict)
    many_values: bool = False

    def measure(self, metric: str, index: int, value: float) -> None:
        found = self.metrics.setdefault(metric, ([], []))
        found[0].append(index)
        found[1].append(value)

    def count_value(self, index: int, value: str) -> None:
        if self.many_values:
            return
        self.values.setdefault(value, []).append(index)
        if len(self.values) > TOP_LIMIT:
            self.many_values, self.values = True, {}


def _histogram(values: list[float]) -> list[dict[str, float]]:
    array = np.asarray(values, dtype=np.float64)
    array = array[np.isfinite(array)]
    if not array.size:
        return []
    low, high = float(array.min()), float(array.max())
    if low == high:
        return [{"lo": low, "hi": high, "count": int(array.size)}]
    if high - low < BINS and bool(np.all(array == np.round(array))):  # a bar per whole number
        counts, edges = np.histogram(array, bins=np.arange(low, high + 2))
    else:
        counts, edges = np.histogram(array, bins=BINS, range=(low, high))
    return [
        {"lo": float(edges[k]), "hi": float(edges[k + 1]), "count": int(counts[k])}
        for k in range(len(counts))
    ]


class Statistics:
    """The statistics of one dataset, advanced by :meth:`step` until :attr:`finished`."""

    def __init__(self, source: Source) -> None:
        self.source = source
        total = len(source)
        self.whole = total <= FULL_LIMIT
        if self.whole:
            self.indices = np.arange(total, dtype=np.int64)
        else:
            rng = np.random.default_rng(SEED)
            self.indices = np.sort(rng.choice(total, SAMPLE_SIZE, replace=False))
        self.done = 0
        self.errors = 0
        self.cost = Cost(in_place=source.store.in_place)
        self._fields: dict[str, _Field] = {}
        self._lock = threading.Lock()

    @property
    def finished(self) -> bool:
        """Whether every chosen sample has been read."""
        return self.done >= len(self.indices)

    def step(self) -> None:
        """Read and measure the next :data:`BATCH` samples."""
        batch = self.indices[self.done : self.done + BATCH].tolist()
        cost = Cost()
        samples = self.source.locked(cost, lambda reader: [_read(reader, i) for i in batch])
        with self._lock:
            self.cost.add(cost)
            for index, sample in zip(batch, samples, strict=True):
                if isinstance(sample, _Failed):
                    self.errors += 1
                    continue
                seen = set()
                for name, value in leaves(sample):
                    seen.add(name)
                    self._measure(self._fields.setdefault(name, _Field()), index, value)
                for name, stats in self._fields.items():
                    if name not in seen:
                        stats.missing += 1
            self.done += len(batch)

    def _measure(self, stats: _Field, index: int, value: Any) -> None:
        kind = value_kind(value)
        stats.kinds[kind] += 1
        if kind == "none":
            stats.missing += 1
        elif kind in ("number", "bool"):
            stats.measure("value", index, float(value))
            stats.count_value(index, str(value))
        elif kind == "text":
            stats.measure("length", index, float(len(value)))
            stats.count_value(index, value[:TOP_TEXT])
        elif kind == "image":
            try:
                width, height = image_size(value)
            except ValueError:
                return
            stats.measure("width", index, float(width))
            stats.measure("height", index, float(height))
        elif kind == "array":
            stats.measure("size", index, float(as_array(value).size))  # type: ignore[union-attr]
        elif kind in ("bytes", "audio", "video"):
            stats.measure("bytes", index, float(len(value)))

    def result(self) -> dict[str, Any]:
        """Progress, and the statistics of the samples read so far."""
        with self._lock:
            fields = {
                name: {
                    "kinds": dict(stats.kinds),
                    "missing": stats.missing,
                    "histograms": {
                        metric: _histogram(values) for metric, (_, values) in stats.metrics.items()
                    },
                    "top": None
                    if stats.many_values or not stats.values
                    else [
                        [value, len(found)]
                        for value, found in sorted(
                            stats.values.items(), key=lambda pair: -len(pair[1])
                        )
                    ],
                }
                for name, stats in self._fields.items()
            }
            return {
                "done": self.done,
                "total": len(self.indices),
                "finished": self.finished,
                "whole": self.whole,
                "sample_size": SAMPLE_SIZE,
                "seed": SEED,
                "items": len(self.source),
                "errors": self.errors,
                "fields": fields,
                "cost": self.cost.as_json(),
            }

    def matching(
        self, name: str, metric: str | None, bar: int | None, value: str | None
    ) -> list[int]:
        """The samples read whose ``metric`` falls in histogram bar ``bar``, or valued ``value``.

        Raises:
            KeyError: No such field, metric or value.
            IndexError: No such bar.
        """
        with self._lock:
            stats = self._fields[name]
            if value is not None:
                return list(stats.values[value])
            indices, values = stats.metrics[metric or ""]
            bars = _histogram(values)
            if bar is None or not 0 <= bar < len(bars):
                raise IndexError(f"field {name!r} has {len(bars)} bars of {metric!r}, not {bar}")
            low, high = bars[bar]["lo"], bars[bar]["hi"]
            last = bar == len(bars) - 1
            return [
                i
                for i, v in zip(indices, values, strict=True)
                if low <= v and (v < high or (last and v <= high))
            ]


class _Failed:
    """A sample that could not be read (counted as an error)."""


def _read(reader: Any, index: int) -> Any:
    try:
        return reader[index]
    except Exception:  # a bad sample is counted, not fatal
        return _Failed()
