"""A forge of hostile datasets: edited indexes, resealed chunks, mutations for hypothesis.

An attacker controls every byte of a dataset in their bucket; a clumsy user edits
``index.json`` by hand. These helpers start from a real dataset (written by ``write_dataset``)
and change what such a person would change, keeping the rest consistent (a chunk edited on
purpose gets its checksum recomputed, so only the check under test can catch it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

import litdata as ld
from litdata.core.chunks.checksum import checksum_of
from litdata.core.errors import (
    DatasetFormatError,
    DatasetNotFoundError,
    SampleDecodeError,
    UnknownPluginError,
    UnsafeDataError,
)

#: What a hostile dataset may raise: clear errors about the dataset, never anything else.
CLEAR_ERRORS = (
    DatasetFormatError,
    DatasetNotFoundError,
    SampleDecodeError,
    UnknownPluginError,
    UnsafeDataError,
)

COUNT = 300


def sample(i: int) -> dict[str, Any]:
    """The samples of :func:`dataset`: an id and a small array derived from it."""
    return {"id": i, "value": np.full(16, i % 251, dtype=np.uint8)}


def is_right(item: Any) -> bool:
    """Whether ``item`` is the sample its id says it is."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("id"), int)
        and 0 <= item["id"] < COUNT
        and np.array_equal(np.asarray(item.get("value")), sample(item["id"])["value"])
    )


def dataset(folder: Path, **options: Any) -> Path:
    """A real dataset of :data:`COUNT` samples in chunks of 50 (``write_dataset`` options)."""
    return Path(
        ld.write_dataset((sample(i) for i in range(COUNT)), folder, chunk_size=50, **options)
    )


def read_index(folder: Path) -> dict[str, Any]:
    """The dataset's ``index.json``, decoded."""
    return dict(json.loads((folder / "index.json").read_text()))


def write_index(folder: Path, index: dict[str, Any]) -> None:
    """Replace the dataset's ``index.json``."""
    (folder / "index.json").write_text(json.dumps(index))


def edit_index(folder: Path, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply ``edit`` to the decoded ``index.json`` and write it back; returns the result."""
    index = read_index(folder)
    edit(index)
    write_index(folder, index)
    return index


def reseal(folder: Path, position: int) -> None:
    """Recompute chunk ``position``'s checksum and size after its file was edited on purpose."""

    def edit(index: dict[str, Any]) -> None:
        entry = index["chunks"][position]
        data = (folder / entry["filename"]).read_bytes()
        if entry.get("checksum") is not None:
            entry["checksum"] = checksum_of(data)
        entry.pop("block_checksums", None)

    edit_index(folder, edit)


def unsealed(folder: Path) -> None:
    """Remove every checksum, as in a dataset written by LitData (nothing to verify against)."""

    def edit(index: dict[str, Any]) -> None:
        for entry in index["chunks"]:
            entry.pop("checksum", None)
            entry.pop("block_checksums", None)

    edit_index(folder, edit)


def files_outside(root: Path, allowed: list[Path]) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` outside the ``allowed`` folders, with its size and mtime."""
    found = {}
    for directory, _, names in os.walk(root):
        if any(Path(directory).is_relative_to(folder) for folder in allowed):
            continue
        for name in names:
            status = (Path(directory) / name).lstat()
            found[os.path.join(directory, name)] = (status.st_size, status.st_mtime_ns)
    return found


def read_everything(folder: Path, **options: Any) -> list[Any]:
    """Open the dataset and read every sample twice: by index, then in one shuffled epoch."""
    data = ld.StreamingDataset(str(folder), shuffle=True, **options)
    items = [data[i] for i in range(len(data))]
    items.extend(iter(data))
    return items


# -- mutations (hypothesis) -------------------------------------------------------------------
#: Values an attacker or a clumsy editor puts in a field.
HOSTILE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([0, 1, -1, 2**28, 2**31, 2**32, 2**40, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            ".",
            "..",
            "../victim",
            "../../victim",
            "../../victim/planted.txt",
            "/etc/passwd",
            "a/b",
            "a\\b",
            "a\x00b",
            "chunk-0-0.bin",
            "zstd",
            "PyTreeLoader",
            "TokensLoader",
        ]
    ),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)

#: Paths of the fields a mutation may change (``chunks[*]`` picks a chunk).
FIELDS = [
    ("updated_at",),
    ("format_version",),
    ("keys",),
    ("plugins",),
    ("config",),
    ("config", "chunk_bytes"),
    ("config", "chunk_size"),
    ("config", "compression"),
    ("config", "data_format"),
    ("config", "data_spec"),
    ("config", "encryption"),
    ("config", "item_loader"),
    ("chunks",),
    ("chunks", "*", "filename"),
    ("chunks", "*", "chunk_size"),
    ("chunks", "*", "chunk_bytes"),
    ("chunks", "*", "dim"),
    ("chunks", "*", "checksum"),
    ("chunks", "*", "block_checksums"),
]


@st.composite
def mutations(draw: st.DrawFn) -> list[tuple[tuple[Any, ...], Any]]:
    """One to three ``(field path, value)`` changes of an index."""
    changes = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        field = list(draw(st.sampled_from(FIELDS)))
        if "*" in field:
            field[field.index("*")] = draw(st.integers(min_value=0, max_value=5))
        changes.append((tuple(field), draw(HOSTILE_VALUES)))
    return changes


def _holds(target: Any, key: Any) -> bool:
    if isinstance(target, dict):
        return key in target
    return isinstance(target, list) and isinstance(key, int) and key < len(target)


def mutate(index: dict[str, Any], changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    """Apply ``changes`` (from :func:`mutations`) where their path still exists."""
    for path, value in changes:
        target: Any = index
        for key in path[:-1]:
            if not _holds(target, key):
                break
            target = target[key]
        else:
            if isinstance(target, dict) or _holds(target, path[-1]):
                target[path[-1]] = value
