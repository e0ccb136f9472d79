"""The pipeline tracer's writer: one line per event, in LitData's trace-log format.

Each process appends its events to the same log file (``O_APPEND``, one ``write`` per line, so
lines of DataLoader workers and optimize workers never interleave). A line looks like::

    ts:1733050000123456.789;PID:4242; TID:1401; name: download;ph: B;cat: download;cname:
    rail_load;chunk: chunk-0-3.bin;dist_world_size: 1;dist_global_rank: 0;dist_num_nodes: 1;
    worker_world_size: 2;worker_rank: 1;

(on one line). ``litdata trace convert`` and LitData's Litracer turn the log into a Chrome /
Perfetto trace. With tracing off, :func:`current` answers ``None`` and callers skip their
tracing code with one branch; the settings are read from the environment once per process.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from litdata.core import config

__all__ = [
    "CATEGORIES",
    "COLORS",
    "LEVELS",
    "Tracer",
    "categories_for",
    "current",
    "reload",
    "set_context",
]

_BATCH = ("epoch", "batch", "crash")
_CHUNK = (*_BATCH, "download", "read", "delete", "decompress", "write")
_SAMPLE = (*_CHUNK, "sample")

#: The categories each level records.
LEVELS: Mapping[str, frozenset[str]] = {
    "off": frozenset(),
    "batch": frozenset(_BATCH),
    "chunk": frozenset(_CHUNK),
    "sample": frozenset(_SAMPLE),
    "debug": frozenset((*_SAMPLE, "lock")),
}
#: Every category.
CATEGORIES = LEVELS["debug"]
#: The Chrome trace colour of each category (``cname``), as LitData picks them.
COLORS: Mapping[str, str] = {
    "epoch": "memory_dump",
    "batch": "thread_state_runnable",
    "download": "rail_load",
    "read": "good",
    "delete": "rail_animate",
    "decompress": "cq_build_attempt_running",
    "write": "rail_response",
    "sample": "generic_work",
    "lock": "thread_state_sleeping",
    "crash": "terrible",
}
_CONTEXT_KEYS = (
    "dist_world_size",
    "dist_global_rank",
    "dist_num_nodes",
    "worker_world_size",
    "worker_rank",
)


def categories_for(level: str | None, categories: Iterable[str] | str | None) -> frozenset[str]:
    """The categories to record for a ``level`` and an explicit list (which wins).

    Raises:
        ValueError: The level or a category is unknown.
    """
    if categories is not None:
        names = categories.split(",") if isinstance(categories, str) else list(categories)
        chosen = frozenset(name.strip() for name in names if name.strip())
        unknown = sorted(chosen - CATEGORIES)
        if unknown:
            raise ValueError(
                f"Unknown trace categories {unknown}; choose from {sorted(CATEGORIES)}."
            )
        return chosen
    if level is None:
        return frozenset()
    if level not in LEVELS:
        raise ValueError(f"Unknown trace level {level!r}; choose one of {list(LEVELS)}.")
    return LEVELS[level]


def _clean(value: Any) -> str:
    """A value as one field: no ``;`` (the separator) and no line breaks."""
    return str(value).replace(";", ",").replace("\r", " ").replace("\n", " ")


class Tracer:
    """Appends trace events of the enabled ``categories`` to ``path``.

    Args:
        path: The log file (created if needed; appended to).
        categories: The categories recorded; events of others are dropped.
    """

    def __init__(self, path: str, categories: frozenset[str]) -> None:
        self.path = path
        self.categories = categories
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._pid = os.getpid()
        self._context = {"dist_world_size": 1, "dist_global_rank": 0, "dist_num_nodes": 1}
        self._context.update(worker_world_size=1, worker_rank=0)
        self._suffix = self._render_context()

    def on(self, category: str) -> bool:
        """Whether events of ``category`` are recorded."""
        return category in self.categories

    def set_context(self, **fields: int) -> None:
        """Set where this process stands (``dist_global_rank``, ``worker_rank``...)."""
        self._context.update({key: value for key, value in fields.items() if key in _CONTEXT_KEYS})
        self._suffix = self._render_context()

    def _render_context(self) -> str:
        return "".join(f"{key}: {self._context[key]};" for key in _CONTEXT_KEYS)

    def after_fork(self) -> None:
        """Take the new process's id (the file stays open, shared)."""
        self._pid = os.getpid()

    def event(
        self, name: str, phase: str, category: str, args: Mapping[str, Any], ts: float | None = None
    ) -> None:
        """Write one event: ``phase`` is ``B`` (begin), ``E`` (end) or ``I`` (instant).

        Args:
            name: The event's stable name (``download``, ``read``, ``batch``...).
            phase: ``B``, ``E`` or ``I``.
            category: Its category; nothing is written when it is not enabled.
            args: Its arguments (chunk, index...), written as ``key: value`` fields.
            ts: Its time (``time.time()`` seconds); now when omitted.
        """
        if category not in self.categories:
            return
        stamp = (time.time() if ts is None else ts) * 1e6
        fields = "".join(
            [
                f"{key}: {value if type(value) is int else _clean(value)};"
                for key, value in args.items()
            ]
        )
        color = COLORS.get(category, "generic_work")
        line = (
            f"ts:{stamp:.3f};PID:{self._pid}; TID:{threading.get_ident()}; "
            f"name: {name};ph: {phase};cat: {category};cname: {color};{fields}{self._suffix}\n"
        )
        os.write(self._fd, line.encode())

    def begin(self, name: str, category: str, **args: Any) -> None:
        """Open a span (``ph: B``)."""
        self.event(name, "B", category, args)

    def end(self, name: str, category: str, **args: Any) -> None:
        """Close a span (``ph: E``)."""
        self.event(name, "E", category, args)

    def instant(self, name: str, category: str, **args: Any) -> None:
        """A moment (``ph: I``), e.g. a crash."""
        self.event(name, "I", category, args)

    def span(self, name: str, category: str, seconds: float, **args: Any) -> None:
        """A span that just ended and lasted ``seconds``: its ``B`` and ``E`` lines."""
        now = time.time()
        self.event(name, "B", category, args, ts=now - seconds)
        self.event(name, "E", category, args, ts=now)

    def close(self) -> None:
        """Close the log file."""
        os.close(self._fd)


_UNSET: Any = object()
_tracer: Tracer | None = _UNSET


def current() -> Tracer | None:
    """This process's tracer, or ``None`` when tracing is off (settings read once)."""
    global _tracer  # noqa: PLW0603  # one tracer per process
    if _tracer is _UNSET:
        level, categories, log_file = config.trace_settings()
        chosen = categories_for(level, categories)
        _tracer = Tracer(log_file, chosen) if chosen else None
    return _tracer


def reload() -> Tracer | None:
    """Read the settings again (after ``enable_tracer``); returns the new tracer, if any."""
    global _tracer  # noqa: PLW0603
    if _tracer is not _UNSET and _tracer is not None:
        _tracer.close()
    _tracer = _UNSET
    return current()


def set_context(**fields: int) -> None:
    """Record where this process stands in the lines it writes (if tracing is on).

    Args:
        **fields: ``dist_world_size``, ``dist_global_rank``, ``dist_num_nodes``,
            ``worker_world_size``, ``worker_rank``.
    """
    tracer = current()
    if tracer is not None:
        tracer.set_context(**fields)


def _after_fork() -> None:
    if _tracer is not _UNSET and _tracer is not None:
        _tracer.after_fork()


os.register_at_fork(after_in_child=_after_fork)
