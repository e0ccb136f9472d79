"""Files that change under a running reader: a chunk replaced between two epochs of one process."""

from __future__ import annotations

import shutil

import pytest
from hostile import forge

import litdata as ld
from litdata.core.errors import ChunkCorruptError


def _epoch(loader) -> tuple[list, Exception | None]:
    seen: list = []
    try:
        for batch in loader:
            seen.extend(batch)
    except ChunkCorruptError as error:
        return seen, error
    return seen, None


@pytest.mark.fault("chunk replaced by another between two epochs of one process")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_chunk_replaced_between_epochs_is_checked_again(tmp_path, record, num_workers):
    record.fault += f" ({num_workers} workers)"
    folder = forge.dataset(tmp_path / "ds")
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(str(folder)),
        batch_size=10,
        num_workers=num_workers,
        collate_fn=list,
    )
    first, error = _epoch(loader)
    assert error is None
    assert sorted(item["id"] for item in first) == list(range(forge.COUNT))
    names = [chunk["filename"] for chunk in forge.read_index(folder)["chunks"]]
    replaced = folder / names[2]
    shutil.copyfile(folder / names[0], replaced.with_suffix(".new"))
    replaced.with_suffix(".new").replace(replaced)  # the same size: only the checksum differs
    record.start()
    second, error = _epoch(loader)
    record.failed()
    assert error is not None
    assert names[2] in str(error)
    ids = [item["id"] for item in second]
    record(
        "ChunkCorruptError naming the replaced chunk in the next epoch",
        duplicated=len(ids) - len(set(ids)),
        wrong=sum(not forge.is_right(item) for item in second),
    )
