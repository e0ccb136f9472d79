"""A forked child leaves its parent's fsspec event loop alone.

fsspec runs every async filesystem (s3fs, gcsfs, adlfs) on one event loop in a thread of its
own. A forked child inherits that loop object without its thread, and with it the parent's
epoll instance: one kernel object that both processes share. When the child drops a
filesystem it inherited, the client's finalizer closes the inherited connections through that
loop, which takes the parent's sockets out of the shared epoll: the parent then never hears
the answer on a kept-alive connection and waits for its read timeout (a 10 s stall at the end
of every ``optimize`` to S3 with forked workers, once they exit, behind any server that keeps
connections open). Right after the fork the child gives the inherited loop a selector of its
own and marks it stopped, so what it closes there is only its own copies of the sockets.

This reaches into two private attributes of asyncio's selector event loop (``_selector`` and
``_thread_id``); a loop without them is left as it is.
"""

from __future__ import annotations

import os
import selectors
import sys
from typing import Any

__all__: list[str] = []  # imported for its fork hooks (by the fsspec backends)

#: The parent's fsspec loop, noted just before a fork.
_NOTED: list[Any] = []


def _note() -> None:
    asyn = sys.modules.get("fsspec.asyn")
    _NOTED[:] = [asyn.loop[0]] if asyn is not None and asyn.loop[0] is not None else []


def _disarm() -> None:
    for loop in _NOTED:
        if hasattr(loop, "_selector") and hasattr(loop, "_thread_id"):
            loop._selector = selectors.DefaultSelector()  # the child's own epoll
            loop._thread_id = None  # not running here: nothing waits on it
    _NOTED.clear()


os.register_at_fork(before=_note, after_in_child=_disarm, after_in_parent=_NOTED.clear)
