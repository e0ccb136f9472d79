"""Whether Ctrl-C reached the command, whatever else went wrong after it.

Ctrl-C signals the whole process group: the command and its workers at once. A worker that
dies of it first can make the command fail with another error (torch's ``DataLoader worker
exited unexpectedly``, raised from its ``SIGCHLD`` handler while ``KeyboardInterrupt`` unwinds,
or an error the command reports itself) that would replace the ``KeyboardInterrupt``. The
command line notes every ``SIGINT`` it receives (:func:`watching`), so that it still reports
the interruption, and only that (:func:`interrupted`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["interrupted", "watching"]

_RECEIVED: list[int] = []


def _note(signum: int, frame: FrameType | None) -> None:
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether ``SIGINT`` arrived while :func:`watching`."""
    return bool(_RECEIVED)


@contextlib.contextmanager
def watching() -> Iterator[None]:
    """Note ``SIGINT`` in the block, then raise ``KeyboardInterrupt`` as Python does.

    In the main thread only (elsewhere no handler can be set; Python's handling stays).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _RECEIVED.clear()
    previous = signal.signal(signal.SIGINT, _note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
