"""Before the first batch of an epoch, the ranks check that they all read the same way.

Under ``torch.distributed`` the ranks exchange what they read (``all_gather_object``), and every
rank fails naming the ranks that differ, instead of hanging in a collective later.

Without a process group (ranks known only from ``RANK`` and ``WORLD_SIZE``) there is no channel
between the ranks, and nothing a rank computes alone reveals another's seed. What ranks may
share is a folder: each leaves a note of what it reads (the dataset's identity, seed, shuffle,
drop_last...), keyed by the launch and by the loader (the first loader a process iterates is
loader 0 on every rank), then compares it with the notes of the other ranks. The rank that
looks last sees the difference (at the latest at the next epoch) and fails.

A note counts when its writer still runs on this machine (same process, same start time), or
comes from another machine of a launch that has an id of its own (``TORCHELASTIC_RUN_ID`` from
``torchrun --rdzv-id``, or ``SLURM_JOB_ID``): without one, an earlier launch's notes could not be
told apart. The folder is ``LITDATA_RANKS_DIR``, by default in the local cache: ranks on other
machines are compared only through a shared folder. When ranks on several machines cannot all be
compared, litdata warns once, recommending ``torch.distributed.init_process_group``.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import json
import os
import socket
import sys
import warnings
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from litdata.core import config
from litdata.core.errors import LitdataWarning
from litdata.core.processes import running
from litdata.core.publish import publish_bytes
from litdata.streaming.epoch.topology import rank_and_world

__all__ = ["check_ranks_agree"]

View = Mapping[str, Any]

_LOADERS: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()
_NUMBERS = itertools.count()
_NOTES: set[Path] = set()  # written by this process, removed when it exits
_WARNED: list[bool] = []


def check_ranks_agree(loader: object, agreement: Callable[[], View]) -> None:
    """Check that every rank reads what this one reads, with the same settings.

    Args:
        loader: The loader about to iterate (its notes are told apart from other loaders').
        agreement: What every rank must agree on (computed only with several ranks).

    Raises:
        RuntimeError: Some ranks read differently; the message names them and the settings.
    """
    dist: Any = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        world = dist.get_world_size()
        if world > 1:
            views: list[Any] = [None] * world
            dist.all_gather_object(views, agreement())
            _compare(0, views[0], dict(enumerate(views)))
        return
    rank, world = rank_and_world()
    if world == 1:
        return
    if loader not in _LOADERS:
        _LOADERS[loader] = next(_NUMBERS)
    _compare_notes(_LOADERS[loader], rank, world, agreement())


def _compare(rank: int, view: View, others: Mapping[int, View]) -> None:
    differ = sorted(other for other, seen in others.items() if seen != view)
    if not differ:
        return
    details = "; ".join(
        f"rank {other}: {key}={others[other].get(key)!r}"
        for other in differ
        for key in view
        if others[other].get(key) != view[key]
    )
    raise RuntimeError(
        f"Ranks {differ} read a different dataset than rank {rank} ({details}; rank {rank} has "
        f"{dict(view)}). Every rank must open the same dataset with the same seed, shuffle and "
        f"drop_last."
    )


def _launch_id() -> str | None:
    """An id of this launch shared by all its ranks, when the launcher gives one."""
    run = os.environ.get("TORCHELASTIC_RUN_ID")
    if run and run != "none":
        return f"torchelastic:{run}"
    job = os.environ.get("SLURM_JOB_ID")
    return f"slurm:{job}.{os.environ.get('SLURM_STEP_ID', '')}" if job else None


def _spans_machines(world: int) -> bool:
    """Whether the launcher says the ranks run on several machines."""
    local = os.environ.get("LOCAL_WORLD_SIZE", "")
    nodes = os.environ.get("SLURM_JOB_NUM_NODES", "")
    return (local.isdigit() and int(local) < world) or (nodes.isdigit() and int(nodes) > 1)


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), where ``/proc`` says."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _counts(note: Mapping[str, Any], launch: str | None) -> bool:
    """Whether a note is from a rank of this launch (see the module)."""
    if note.get("host") != socket.gethostname():
        return launch is not None
    pid = int(note.get("pid", 0))
    return running(pid) and _started(pid) == note.get("started")


def _forget() -> None:
    for path in _NOTES:
        with contextlib.suppress(OSError):
            path.unlink()


def _compare_notes(loader: int, rank: int, world: int, view: View) -> None:
    root, chosen = config.ranks_dir()
    launch = _launch_id()
    if _spans_machines(world) and not (chosen and launch) and not _WARNED:
        _WARNED.append(True)
        warnings.warn(
            f"The ranks run on several machines without torch.distributed: litdata can check "
            f"that they read the same dataset with the same settings only through notes in "
            f"{root}, which ranks on other machines see when it is a shared folder "
            f"(LITDATA_RANKS_DIR) and the launch has an id (torchrun --rdzv-id, or SLURM). "
            f"Call torch.distributed.init_process_group() before iterating to check every rank.",
            LitdataWarning,
            stacklevel=4,
        )
    key = [os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT"), world, launch]
    folder = root / hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    view = json.loads(json.dumps(view, sort_keys=True, default=str))  # as the notes hold it
    mine = folder / f"loader-{loader}-rank-{rank}.json"
    note = {
        "rank": rank,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": _started(os.getpid()),
        "view": view,
    }
    publish_bytes(mine, json.dumps(note).encode())
    if not _NOTES:
        atexit.register(_forget)
    _NOTES.add(mine)
    others = {}
    for path in folder.glob(f"loader-{loader}-rank-*.json"):
        try:
            other = json.loads(path.read_bytes())
        except (OSError, ValueError):  # removed as we looked
            continue
        if path != mine and _counts(other, launch):
            others[int(other["rank"])] = other["view"]
    _compare(rank, view, others)
