"""``iter_webdataset_tar``: the samples of a WebDataset tar shard, as dicts for ``optimize``.

A WebDataset shard is a plain tar whose consecutive members ``<key>.<suffix>`` form one sample
(``0001.jpg``, ``0001.cls``, ``0002.jpg``...). The key is a member's path up to the first dot
of its file name, the suffix everything after it.
"""

from __future__ import annotations

import itertools
import os
import tarfile
from collections.abc import Iterator
from typing import Any

__all__ = ["iter_webdataset_tar", "samples_in", "split_member"]


def split_member(name: str) -> tuple[str, str] | None:
    """A tar member's sample key and field (``a/b.cls`` -> ``("a/b", "cls")``), or ``None``."""
    folder, _, base = name.rpartition("/")
    stem, dot, suffix = base.partition(".")
    if not dot or not stem or not suffix:
        return None
    return (f"{folder}/{stem}" if folder else stem), suffix


def samples_in(
    archive: tarfile.TarFile,
) -> Iterator[tuple[str, Iterator[tuple[str, tarfile.TarInfo]]]]:
    """The samples of an open tar, in order: each key with its ``(suffix, member)`` pairs.

    Directories and names without a suffix are skipped. The members come lazily, in tar
    order, so a caller may read each one's data as it comes (a compressed tar never seeks back).
    """
    named = (
        (parts, member)
        for member in archive
        if member.isfile() and (parts := split_member(member.name)) is not None
    )
    for key, group in itertools.groupby(named, key=lambda pair: pair[0][0]):
        yield key, ((parts[1], member) for parts, member in group)


def iter_webdataset_tar(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield one dict per sample of a WebDataset ``.tar`` (``.tar.gz`` too), in tar order.

    Each dict maps every suffix to the member's bytes, plus ``"__key__"`` (the sample key) and
    ``"__url__"`` (the tar's path). Directories and names without a suffix are skipped.

    Raises:
        FileNotFoundError: There is no such file.
        ValueError: It is not a readable tar (or is truncated); the message names it.
    """
    url = os.fspath(path)
    try:
        with tarfile.open(url, "r:*") as archive:
            for key, members in samples_in(archive):
                sample: dict[str, Any] = {"__key__": key, "__url__": url}
                for suffix, member in members:
                    handle = archive.extractfile(member)
                    sample[suffix] = handle.read() if handle is not None else b""
                yield sample
    except tarfile.TarError as error:
        raise ValueError(
            f"{url} is not a readable WebDataset tar ({error}); it is truncated or corrupt."
        ) from None
