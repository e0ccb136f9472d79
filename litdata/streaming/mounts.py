"""Which filesystem a dataset is on: network and parallel ones get the ``window`` shuffle."""

from __future__ import annotations

import os
from pathlib import Path

from litdata.core import config

__all__ = ["filesystem_type", "wants_window"]

_NETWORK = ("nfs", "nfs4", "lustre", "gpfs", "panfs", "beegfs", "fuse.vast", "vast")


def filesystem_type(path: str | os.PathLike[str]) -> str | None:
    """The type of the filesystem ``path`` is on (the longest covering ``/proc/mounts`` entry)."""
    target = os.path.realpath(path)
    best: tuple[int, str] | None = None
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:  # noqa: PLR2004  # device, mount point, type
            continue
        mount = fields[1].replace("\\040", " ")
        covers = target == mount or target.startswith(mount.rstrip("/") + "/")
        if covers and (best is None or len(mount) > best[0]):
            best = (len(mount), fields[2])
    return best[1] if best else None


def wants_window(path: str | os.PathLike[str]) -> bool:
    """Whether shuffled reads of ``path`` should use whole chunks in stripes (``window``).

    ``LITDATA_POSIX_FAST=1`` forces it, ``=0`` forbids it; otherwise it is used on network and
    parallel filesystems, where long sequential reads of whole chunks pay off.
    """
    forced = config.posix_fast()
    if forced is not None:
        return forced
    kind = filesystem_type(path) or ""
    return kind.startswith(_NETWORK) or "vast" in os.fspath(path).lower()
