"""CPU seconds per stage of the read path, for the bench and for tuning (off unless asked).

With ``LITDATA_CPU_STAGES=<file>`` set, each process counts the CPU time (user and system, of
the thread doing the work, :func:`time.thread_time`) spent in each stage of fetching and
handing over chunks and batches, and appends its totals to ``<file>`` as one JSON line when it
ends (``{"pid": ..., "stages": {"checksum": 0.12, ...}}``; DataLoader workers write theirs as
they exit, a process may write again with larger totals: the last line of a pid counts).
Threads that do nothing but one stage are charged whole (:func:`watch_thread`): the event
loop of an async storage client is the ``network`` stage.

Stages: ``network`` (requests and bodies: the storage client's threads), ``cache write``
(writing fetched bytes into the cache and publishing them), ``checksum`` (block and chunk
digests), ``decompression``, ``decode`` (items read from chunks and collated), ``hand-over``
(a batch packed by a worker and unpacked by the training process). Off, :func:`timed` returns
one shared do-nothing context and nothing is written.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from litdata.core import config

__all__ = [
    "STAGES",
    "add",
    "counted",
    "enabled",
    "flush",
    "read_totals",
    "reload",
    "reset",
    "snapshot",
    "timed",
    "watch_thread",
]

#: The stages, in pipeline order.
STAGES = ("network", "cache write", "checksum", "decompression", "decode", "hand-over")

_LOCK = threading.Lock()
_NULL = contextlib.nullcontext()
_NESTING = threading.local()
T = TypeVar("T")


class _State:
    """One process's counters (made again in a forked child)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.pid = os.getpid()
        self.totals: dict[str, float] = {}
        #: Threads charged whole: ``(stage, CPU clock id, clock at watch time)``.
        self.threads: dict[int, tuple[str, int, float]] = {}
        #: Seconds charged to other stages from within each watched thread.
        self.inner: dict[int, float] = {}
        self.registered = False


#: This process's counters (a list of one, so that no ``global`` statement is needed).
_STATE: list[_State] = []


def _state() -> _State | None:
    if not _STATE or _STATE[0].pid != os.getpid():
        _STATE[:] = [_State(config.cpu_stages_file())]
    return _STATE[0] if _STATE[0].path else None


def enabled() -> bool:
    """Whether this process counts CPU per stage (``LITDATA_CPU_STAGES`` is set)."""
    return _state() is not None


def add(stage: str, seconds: float) -> None:
    """Charge ``seconds`` of CPU to ``stage`` (nothing when counting is off).

    Called inside a :func:`timed` stage of the same thread, or in a thread charged whole to
    a stage, the seconds are taken off that stage (each second counts once).
    """
    state = _state()
    if state is None:
        return
    outer = getattr(_NESTING, "stack", None)
    if outer:
        outer[-1] += seconds
    with _LOCK:
        state.totals[stage] = state.totals.get(stage, 0.0) + seconds
        ident = threading.get_ident()
        if ident in state.threads:
            state.inner[ident] = state.inner.get(ident, 0.0) + seconds
        _register(state)


@contextlib.contextmanager
def _timing(stage: str) -> Iterator[None]:
    stack: list[float] = _NESTING.__dict__.setdefault("stack", [])
    stack.append(0.0)  # the seconds of stages nested in this one
    began = time.thread_time()
    try:
        yield
    finally:
        nested = stack.pop()
        add(stage, time.thread_time() - began - nested)  # told to the enclosing stage too
        if stack:
            stack[-1] += nested  # which is told of all this stage took


def timed(stage: str) -> contextlib.AbstractContextManager[Any]:
    """A context that charges the CPU time of the thread inside it to ``stage``.

    Stages nested in it (in the same thread) are charged to themselves, not to it.
    """
    return _timing(stage) if enabled() else _NULL


def counted(stage: str, items: Iterable[T]) -> Iterator[T]:
    """``items``, the CPU time spent making each one charged to ``stage`` (when counting).

    When counting is off, ``items``' own iterator: nothing is added to the loop.
    """
    return _counting(stage, iter(items)) if enabled() else iter(items)


def _counting(stage: str, iterator: Iterator[T]) -> Iterator[T]:
    try:
        while True:
            with _timing(stage):
                try:
                    item = next(iterator)
                except StopIteration:
                    return
            yield item
    finally:  # a consumer that stops early closes ``items`` now, as ``yield from`` would
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


def watch_thread(stage: str, thread: threading.Thread) -> None:
    """Charge all CPU ``thread`` spends from now on to ``stage`` (once per thread)."""
    state = _state()
    ident = thread.ident
    if state is None or ident is None or ident in state.threads:
        return
    try:
        clock = time.pthread_getcpuclockid(ident)
        now = time.clock_gettime(clock)
    except (OSError, AttributeError):  # not on this platform, or the thread ended
        return
    with _LOCK:
        state.threads[ident] = (stage, clock, now)
        _register(state)


def snapshot() -> dict[str, float]:
    """This process's totals so far, the watched threads' CPU included."""
    state = _state()
    if state is None:
        return {}
    with _LOCK:
        totals = dict(state.totals)
        for ident, (stage, clock, began) in state.threads.items():
            try:
                spent = time.clock_gettime(clock) - began - state.inner.get(ident, 0.0)
            except OSError:  # the thread ended: its clock is gone
                continue
            totals[stage] = totals.get(stage, 0.0) + spent
    return totals


def flush() -> None:
    """Append this process's totals to the file (as the last line of this pid)."""
    state = _state()
    if state is None or state.path is None:
        return
    line = json.dumps({"pid": os.getpid(), "stages": snapshot()}) + "\n"
    descriptor = os.open(state.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line.encode())
    finally:
        os.close(descriptor)


def reset() -> None:
    """Zero this process's totals (a watched thread is charged from now on)."""
    state = _state()
    if state is None:
        return
    with _LOCK:
        state.totals.clear()
        state.inner.clear()
        for ident, (stage, clock, _) in list(state.threads.items()):
            state.threads[ident] = (stage, clock, _clock(clock))


def _clock(clock: int) -> float:
    """The CPU clock's seconds (0 for a thread that ended)."""
    try:
        return time.clock_gettime(clock)
    except OSError:
        return 0.0


def reload() -> None:
    """Read ``LITDATA_CPU_STAGES`` again (counting starts afresh, or stops)."""
    _STATE.clear()


def read_totals(path: str | os.PathLike[str]) -> dict[str, float]:
    """The totals of every process that wrote to ``path`` (each pid's last line), summed."""
    last: dict[int, dict[str, float]] = {}
    with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as handle:
        for line in handle:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                record = json.loads(line)
                last[int(record["pid"])] = {str(k): float(v) for k, v in record["stages"].items()}
    totals: dict[str, float] = {}
    for stages in last.values():
        for stage, seconds in stages.items():
            totals[stage] = totals.get(stage, 0.0) + seconds
    return totals


def _register(state: _State) -> None:
    """Write the totals when the process ends (a multiprocessing child runs its finalizers)."""
    if state.registered:
        return
    state.registered = True
    atexit.register(flush)
    from multiprocessing import util

    util.Finalize(None, flush, exitpriority=100)
