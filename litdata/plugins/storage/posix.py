"""POSIX-fast: datasets on network and parallel filesystems are shuffled in whole-chunk stripes.

This module is a hook plugin. It answers ``litdata_shuffle_for`` for local paths on NFS,
Lustre, GPFS, PanFS, BeeGFS and VAST mounts with the ``window`` shuffle: each worker reads whole
chunks from a contiguous stripe, so the filesystem sees long sequential reads.
``LITDATA_POSIX_FAST=1`` forces it for every local path, ``=0`` turns it off.
"""

from __future__ import annotations

import os
from pathlib import Path

from litdata.core import config
from litdata.core.location import is_url
from litdata.core.registry.hookspecs import hookimpl

__all__ = ["filesystem_type", "litdata_shuffle_for", "wants_window"]

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
    """Whether shuffled reads of the local ``path`` should use whole chunks in stripes."""
    forced = config.flag("LITDATA_POSIX_FAST", None)
    if forced is not None:
        return forced
    kind = filesystem_type(path) or ""
    return kind.startswith(_NETWORK) or "vast" in os.fspath(path).lower()


@hookimpl
def litdata_shuffle_for(url: str, shuffle: bool) -> str | None:
    """``window`` for shuffled local datasets on network filesystems; else no opinion."""
    if shuffle and not is_url(url) and wants_window(url):
        return "window"
    return None
