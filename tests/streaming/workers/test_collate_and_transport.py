import contextlib
import fcntl
import sys
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate

import litdata as ld
from litdata import litdata_collate
from litdata.streaming.workers.collate import into_arena
from litdata.streaming.workers.transport import PIPE_BYTES, TensorPayload, pack, unpack

Pair = namedtuple("Pair", "a b")

BATCHES = [
    [
        {"i": 1, "f": 0.5, "a": np.ones(3, np.float32), "s": "x", "b": b"y"},
        {"i": 2, "f": 1.5, "a": np.zeros(3, np.float32), "s": "z", "b": b"w"},
    ],
    [np.ones((2, 2)), np.zeros((2, 2))],
    [torch.ones(3), torch.zeros(3)],
    [1, 2, 3],
    [True, False],
    [Pair(1, "x"), Pair(2, "y")],
    [{"nested": {"k": 1}}, {"nested": {"k": 2}}],
    [np.int64(3), np.int64(4)],
    [(1, 2.0), (3, 4.0)],
]


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return a == b


@pytest.mark.parametrize("batch", BATCHES, ids=lambda b: type(b[0]).__name__)
def test_litdata_collate_equals_default_collate(batch):
    assert _same(litdata_collate(batch), default_collate(batch))


def test_pack_sends_small_tensors_as_arrays_and_unpack_restores_them():
    batch = {
        "small": torch.arange(10),
        "big": torch.zeros(1 << 19),
        "list": [torch.ones(2)],
        "other": "x",
        "bf16": torch.ones(2, dtype=torch.bfloat16),
    }
    packed = pack(batch)
    assert isinstance(packed["small"], TensorPayload)
    assert isinstance(packed["list"][0], TensorPayload)
    assert isinstance(packed["big"], torch.Tensor)
    assert isinstance(packed["bf16"], torch.Tensor)
    assert _same(unpack(packed), batch)


def _ids_and_bytes(samples):
    return [(sample["id"], bytes(sample["blob"])) for sample in samples]


@pytest.mark.skipif(sys.platform != "linux", reason="pipe sizes are a Linux feature")
def test_the_loader_widens_its_result_pipe_and_large_byte_batches_arrive_whole(tmp_path):
    blobs = [bytes([i]) * 40_000 for i in range(64)]
    samples = ({"id": i, "blob": blob} for i, blob in enumerate(blobs))
    ld.write_dataset(samples, tmp_path, chunk_size=16)
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(tmp_path), batch_size=16, num_workers=2, collate_fn=_ids_and_bytes
    )
    workers = loader._get_iterator()
    pipe = workers._worker_result_queue._reader.fileno()
    wanted = min(PIPE_BYTES, int(Path("/proc/sys/fs/pipe-max-size").read_text()))
    assert fcntl.fcntl(pipe, fcntl.F_GETPIPE_SZ) >= wanted
    workers._shutdown_workers()
    received = dict(pair for batch in loader for pair in batch)
    assert received == dict(enumerate(blobs))


@pytest.mark.parametrize("workers", [0, 1])
def test_images_of_mixed_sizes_fail_with_what_to_do(tmp_path, workers):
    sizes = [(3, 8, 8), (3, 8, 12)]
    ld.write_dataset(
        ({"image": np.zeros(sizes[i % 2], np.uint8), "y": i} for i in range(4)),
        tmp_path / "ds",
        chunk_size=4,
    )
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(str(tmp_path / "ds")), batch_size=4, num_workers=workers
    )
    with pytest.raises(RuntimeError) as caught:
        list(loader)
    message = str(caught.value)
    assert "sample['image']: the samples of this batch have different shapes" in message
    assert "((3, 8, 8), (3, 8, 12)...)" in message
    assert "collate_fn=list" in message
    listed = ld.StreamingDataLoader(
        ld.StreamingDataset(str(tmp_path / "ds")), batch_size=4, collate_fn=list
    )
    assert [len(batch) for batch in listed] == [4]


def test_pil_images_fail_with_what_to_do():
    from PIL import Image

    with pytest.raises(TypeError, match=r"sample\['image'\]: a batch cannot hold Image values"):
        litdata_collate([{"image": Image.new("RGB", (4, 4))}, {"image": Image.new("RGB", (4, 4))}])


class _CollatedInWorker(torch.utils.data.Dataset):
    """Collates ``count`` tensors of ``length`` elements in a worker; says where the batch lies."""

    def __init__(self, count, length, arena):
        self.count, self.length, self.arena = count, length, arena

    def __len__(self):
        return 1

    def __getitem__(self, index):
        tensors = [torch.full((self.length,), i, dtype=torch.int16) for i in range(self.count)]
        with into_arena() if self.arena else contextlib.nullcontext():
            batch = litdata_collate(tensors)
        return batch.is_shared(), bool(torch.equal(batch, default_collate(tensors)))


@pytest.mark.parametrize(
    ("length", "arena", "shared"),
    [(2048, False, False), (1 << 16, False, True), (1 << 16, True, False)],
)
def test_a_worker_stacks_batches_in_shared_memory_only_when_sent_large_by_pipe(
    length, arena, shared
):
    # default_collate puts every batch of a worker in a new shared-memory segment (~40 µs,
    # and a page fault per 4 KiB); small batches are copied on their way out anyway, and
    # batches bound for an arena slot are copied into it, so only large piped ones keep it.
    loader = torch.utils.data.DataLoader(
        _CollatedInWorker(8, length, arena), batch_size=None, num_workers=1
    )
    [(is_shared, equal)] = list(loader)
    assert equal
    assert is_shared is shared
