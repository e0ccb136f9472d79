"""``Lifeline``: a worker process ends within a second or so of the process that started it.

A worker can be blocked anywhere: writing a batch into a pipe nobody reads any more, joining
a queue's feeder thread as it exits, inside the user's function, waiting for a chunk. None of
these places looks at the parent, so a parent killed with SIGKILL (out of memory, a cluster
scheduler, a user) used to leave its workers running for minutes, holding memory and files.
A worker therefore holds a lifeline to its parent as soon as it starts, in two ways:

- **The kernel** (Linux): ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` has the worker killed the
  moment its parent goes, whatever it is doing. Linux sends that signal when the *thread*
  that created the worker ends, not the process, so it is asked for only when the creating
  thread lives as long as the workers (``by_lasting_thread``): an executor's workers are
  started by the thread that then waits for them; a DataLoader's by the thread that makes its
  iterator, which lasts when it is the main thread. The signal is armed after the worker
  started, so the worker then checks that its parent is still the one it started with: a
  parent that died in between is seen, and the worker exits at once.
- **A watchdog** (every platform but Windows): a daemon thread looks every second whether
  the worker's parent is still there and ends the process with ``os._exit`` if not. It needs
  the GIL, so a worker stuck in C code that holds the GIL ends only by the signal.

Workers started through ``forkserver`` are children of the fork server, which lives on while
any of them runs (they inherit the pipe whose end tells it to stop), so neither the signal nor
a change of parent ends them: the watchdog also watches the starting process by its pid.

Windows does not tell a process that its parent died (``os.getppid`` keeps the old pid), so
there the lifeline does nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from litdata.core.processes import running

__all__ = ["ORPHANED_EXIT_CODE", "Lifeline"]

#: The exit status of a worker that ended because its parent died.
ORPHANED_EXIT_CODE = 1

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_WATCH_SECONDS = 1.0


@dataclass(frozen=True)
class Lifeline:
    """Ties the worker process that calls it to ``parent``: the worker ends when it dies.

    Make one in the parent, pass it to the worker (it pickles, for ``spawn``), and call
    ``hold()`` first thing in the worker, or use it as a DataLoader's ``worker_init_fn``.

    Attributes:
        parent: The pid of the process that starts the worker.
        by_lasting_thread: Whether the thread starting the worker lives as long as the worker
            (then Linux's parent-death signal may be used; see the module's notes).
        then: Called with ``__call__``'s arguments after ``hold()``: a user's own
            ``worker_init_fn``, kept.
    """

    parent: int
    by_lasting_thread: bool = True
    then: Callable[..., Any] | None = None

    @classmethod
    def to_this_thread(cls, then: Callable[..., Any] | None = None) -> Lifeline:
        """A lifeline to this process, for workers that this thread is about to start.

        The parent-death signal is used only in the main thread: another thread may end
        while the workers it started are still in use.
        """
        lasting = threading.current_thread() is threading.main_thread()
        return cls(os.getpid(), lasting, then)

    def __call__(self, *args: Any) -> None:
        """``hold()``, then ``then(*args)``: the ``worker_init_fn`` protocol."""
        self.hold()
        if self.then is not None:
            self.then(*args)

    def hold(self) -> None:
        """In the worker: end this process when ``parent`` dies (exits at once if it has)."""
        if sys.platform == "win32":
            return
        direct = os.getppid()  # the parent itself, or a fork server between us
        if self.by_lasting_thread and sys.platform == "linux":
            _ask_for_death_signal()
        if not self._parent_alive(direct):
            os._exit(ORPHANED_EXIT_CODE)
        watchdog = threading.Thread(
            target=self._watch, args=(direct,), name="litdata-lifeline", daemon=True
        )
        watchdog.start()

    def _parent_alive(self, direct: int) -> bool:
        if os.getppid() != direct:  # our parent died: we were given to init (or a subreaper)
            return False
        # A different direct parent: a fork server, or the parent was gone before we looked.
        return direct == self.parent or running(self.parent)

    def _watch(self, direct: int) -> None:
        while self._parent_alive(direct):
            time.sleep(_WATCH_SECONDS)
        os._exit(ORPHANED_EXIT_CODE)


def _ask_for_death_signal() -> None:
    """Have Linux send this process SIGKILL when the thread that started it ends."""
    libc = ctypes.CDLL(None)  # the C library the interpreter runs on
    # A refusal (a seccomp filter) leaves the watchdog to do the job.
    libc.prctl(
        ctypes.c_int(_PR_SET_PDEATHSIG),
        ctypes.c_ulong(signal.SIGKILL),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )
