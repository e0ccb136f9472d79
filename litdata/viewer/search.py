"""Substring search over a dataset's string fields, in bounded slices.

One call scans from a starting sample until it has :data:`MAX_HITS` hits, has read
:data:`MAX_SCANNED` samples or has run :data:`MAX_SECONDS`, and says where to go on. The page
asks for the next slice until the end or until the user stops it: no request runs unbounded,
and stopping costs nothing.
"""

from __future__ import annotations

import time
from typing import Any

from litdata.viewer.cells import leaves
from litdata.viewer.cost import Cost
from litdata.viewer.source import Source

__all__ = ["MAX_HITS", "MAX_QUERY", "MAX_SCANNED", "MAX_SECONDS", "search"]

#: Hits returned by one call.
MAX_HITS = 50
#: Samples one call reads at most.
MAX_SCANNED = 2_000
#: Seconds one call runs at most (checked between batches).
MAX_SECONDS = 2.0
#: Characters of a query.
MAX_QUERY = 200
#: Samples read while holding the reader.
_BATCH = 50
#: Characters shown on each side of a match.
_CONTEXT = 40


def _hits_in(index: int, sample: Any, needle: str) -> list[dict[str, Any]]:
    found = []
    for name, value in leaves(sample):
        if not isinstance(value, str):
            continue
        at = value.lower().find(needle)
        if at >= 0:
            found.append(
                {
                    "index": index,
                    "field": name,
                    "before": value[max(0, at - _CONTEXT) : at],
                    "match": value[at : at + len(needle)],
                    "after": value[at + len(needle) : at + len(needle) + _CONTEXT],
                }
            )
    return found


def search(source: Source, query: str, start: int) -> dict[str, Any]:
    """The hits of ``query`` (case-insensitive) from sample ``start`` on, one bounded slice.

    Raises:
        ValueError: The query is empty or longer than :data:`MAX_QUERY`.
    """
    if not query or len(query) > MAX_QUERY:
        raise ValueError(f"a search needs 1 to {MAX_QUERY} characters, got {len(query)}")
    needle = query.lower()
    total = len(source)
    position = max(0, start)
    hits: list[dict[str, Any]] = []
    errors: list[int] = []
    cost = Cost(in_place=source.store.in_place)
    began = time.monotonic()
    end = min(total, position + MAX_SCANNED)
    while position < end and len(hits) < MAX_HITS and time.monotonic() - began < MAX_SECONDS:
        batch = range(position, min(end, position + _BATCH))

        def scan(reader: Any, batch: range = batch) -> None:
            for index in batch:
                try:
                    sample = reader[index]
                except Exception:  # an unreadable sample is reported, never fatal
                    errors.append(index)
                    continue
                hits.extend(_hits_in(index, sample, needle))

        source.locked(cost, scan)
        position = batch.stop
    return {
        "hits": hits[:MAX_HITS],
        "next": position if position < total else None,
        "scanned": [max(0, start), position],
        "errors": errors,
        "cost": cost.as_json(),
    }
