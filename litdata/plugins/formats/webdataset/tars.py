"""``iter_webdataset_tar``: the samples of a WebDataset tar shard, as dicts for ``optimize``.

A WebDataset shard is a plain tar whose consecutive members ``<key>.<suffix>`` form one sample
(``0001.jpg``, ``0001.cls``, ``0002.jpg``...). The key is a member's path up to the first dot
of its file name, the suffix everything after it.
"""

from __future__ import annotations

import os
import tarfile
from collections.abc import Iterator
from typing import Any

__all__ = ["iter_webdataset_tar", "split_member"]


def split_member(name: str) -> tuple[str, str] | None:
    """A tar member's sample key and field (``a/b.cls`` -> ``("a/b", "cls")``), or ``None``."""
    folder, _, base = name.rpartition("/")
    stem, dot, suffix = base.partition(".")
    if not dot or not stem or not suffix:
        return None
    return (f"{folder}/{stem}" if folder else stem), suffix


def iter_webdataset_tar(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield one dict per sample of a WebDataset ``.tar`` (``.tar.gz`` too), in tar order.

    Each dict maps every suffix to the member's bytes, plus ``"__key__"`` (the sample key) and
    ``"__url__"`` (the tar's path). Directories and names without a suffix are skipped.

    Raises:
        FileNotFoundError: There is no such file.
        ValueError: It is not a readable tar (or is truncated); the message names it.
    """
    url = os.fspath(path)
    sample: dict[str, Any] = {}
    try:
        with tarfile.open(url, "r:*") as archive:
            for member in archive:
                if not member.isfile():
                    continue
                parts = split_member(member.name)
                if parts is None:
                    continue
                key, suffix = parts
                if sample and sample["__key__"] != key:
                    yield sample
                    sample = {}
                if not sample:
                    sample = {"__key__": key, "__url__": url}
                handle = archive.extractfile(member)
                sample[suffix] = handle.read() if handle is not None else b""
    except tarfile.TarError as error:
        raise ValueError(
            f"{url} is not a readable WebDataset tar ({error}); it is truncated or corrupt."
        ) from None
    if sample:
        yield sample
