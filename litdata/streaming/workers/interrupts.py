"""Ctrl-C while DataLoader worker processes start: held until each worker can take it.

A worker process runs Python's own start-up (``multiprocessing``'s bootstrap) before torch's
worker loop, which turns ``KeyboardInterrupt`` into a quiet exit (the training process raises
it anyway). Ctrl-C in that window printed the worker's traceback. So the thread that starts
the workers holds ``SIGINT`` while it does (:func:`held_while_starting`): a worker starts with
it held, inherited, and lets it in from its ``worker_init_fn`` (:func:`let_in`), inside
torch's loop; the training process gets it once the workers are started.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["held_while_starting", "let_in"]

_HELD = {signal.SIGINT} if hasattr(signal, "pthread_sigmask") else set[signal.Signals]()


@contextlib.contextmanager
def held_while_starting() -> Iterator[None]:
    """Hold ``SIGINT`` in this thread within the block (and in the processes it starts)."""
    if not _HELD:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)  # one held meanwhile: now


def let_in(then: Callable[..., Any] | None, *args: Any) -> None:
    """In a worker: let ``SIGINT`` in (one held since the start arrives now), then ``then``."""
    if _HELD:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
    if then is not None:
        then(*args)
