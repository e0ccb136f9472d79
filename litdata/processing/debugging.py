"""``litdata.breakpoint()``: a ``pdb`` prompt that works inside worker processes.

``multiprocessing`` gives its workers ``/dev/null`` as stdin, so the built-in ``breakpoint()``
in an ``optimize`` fn or a ``DataLoader`` worker returns at once. This one talks to the
controlling terminal (``/dev/tty``) instead, and a lock file makes workers that stop at the
same time take turns: the next prompt appears when the current one continues or quits.
"""

from __future__ import annotations

import fcntl
import os
import pdb
import sys
import tempfile
from typing import IO

__all__ = ["breakpoint"]

_LOCK = os.path.join(tempfile.gettempdir(), "litdata-breakpoint.lock")


class _TurnTakingPdb(pdb.Pdb):
    """``pdb`` on the terminal that gives the terminal up when the session continues."""

    def __init__(self, terminal: tuple[IO[str], IO[str]], lock: IO[str]) -> None:
        super().__init__(stdin=terminal[0], stdout=terminal[1])
        self.use_rawinput = False
        self._lock = lock

    def _give_up(self) -> None:
        if not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def set_continue(self) -> None:
        super().set_continue()
        self._give_up()

    def set_quit(self) -> None:
        super().set_quit()
        self._give_up()


def breakpoint() -> None:  # LitData's name for it
    """Stop the calling process in ``pdb`` on the terminal; workers take turns.

    Raises:
        RuntimeError: The process has no controlling terminal (under a job scheduler, say).
    """
    try:  # pdb keeps both for the session
        terminal = (open("/dev/tty"), open("/dev/tty", "w"))  # noqa: SIM115
    except OSError as error:
        raise RuntimeError(
            "litdata.breakpoint() needs a terminal (/dev/tty) to talk to, and this process "
            f"has none ({error.strerror}). Run the script from a terminal, or log instead."
        ) from error
    lock = open(_LOCK, "a")  # noqa: SIM115  # released when the session continues
    fcntl.flock(lock, fcntl.LOCK_EX)
    print(f"litdata.breakpoint() in process {os.getpid()}", file=terminal[1], flush=True)
    _TurnTakingPdb(terminal, lock).set_trace(sys._getframe(1))
