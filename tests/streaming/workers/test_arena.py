"""The arena transport: batches from worker processes through reused shared-memory slots."""

import gc
import os
import pickle
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import litdata as ld
from litdata.streaming.workers import collate
from litdata.streaming.workers.arena import slots as arena
from litdata.streaming.workers.arena.layout import plan
from litdata.streaming.workers.arena.messages import ArenaSession

SHM = Path("/dev/shm")


def _ours() -> list[Path]:
    return sorted(SHM.glob(f"litdata-arena-{os.getpid()}-*"))


def _raw(tensor):
    return tensor.contiguous().reshape(-1).view(torch.uint8)


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return (
            type(b) is torch.Tensor
            and a.dtype == b.dtype
            and a.shape == b.shape
            and torch.equal(_raw(a), _raw(b))
        )
    if isinstance(a, np.ndarray):
        return type(b) is np.ndarray and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


TORCH_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.uint16,
    torch.int32,
    torch.uint32,
    torch.int64,
    torch.uint64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
    torch.float8_e4m3fn,
]


def _every_leaf() -> dict:
    tensors = {str(dtype): torch.arange(12).view(3, 4).to(dtype) for dtype in TORCH_DTYPES}
    return {
        "tensors": tensors,
        "transposed": torch.arange(12.0).view(3, 4).t(),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "arrays": (np.arange(6, dtype=">i4").reshape(2, 3), np.ones(3, np.bool_), np.zeros(0)),
        "datetimes": np.array(["2026-01-01"], dtype="datetime64[D]"),
        "blobs": [b"ab", b"", b"c" * 1000],
        "blob": b"one",
        "names": ["x", "y"],
        "nested": {"deeper": [(1, 2.0, None, True, "s")]},
    }


@pytest.fixture
def session():
    opened = ArenaSession(num_workers=1)
    yield opened.name
    opened.close(iter(()))


def test_every_leaf_type_comes_back_equal_from_a_slot(session):
    batch = _every_leaf()
    sent = arena.writer_for(session).send([plan(batch)])
    assert sent is not None
    (back,) = pickle.loads(pickle.dumps(sent)).open()
    assert _same(batch, back)
    assert len(pickle.dumps(sent)) < 4096  # a descriptor: the payload stays in the slot
    assert not _ours()  # the training process unlinked the slot's file when it mapped it


def test_a_slot_is_reused_only_once_its_batch_is_dropped(session):
    writer = arena.writer_for(session)
    batch = {"x": torch.arange(1000)}
    first = writer.send([plan(batch)])
    kept = first.open()
    second = writer.send([plan(batch)])
    assert second.name != first.name  # the first slot is still held
    del kept
    gc.collect()
    third = writer.send([plan({"x": torch.zeros(1000, dtype=torch.int64)})])
    assert third.name == first.name
    (zeros,) = third.open()
    assert not zeros["x"].any()


def test_a_worker_whose_slots_are_all_held_returns_none_for_the_pipe(session):
    writer = arena.writer_for(session)
    held = [writer.send([plan([torch.ones(10)])]).open() for _ in range(arena.MAX_SLOTS)]
    assert writer.send([plan([torch.ones(10)])]) is None
    assert all(torch.equal(batch[0][0], torch.ones(10)) for batch in held)


def test_objects_no_slot_can_hold_have_no_layout():
    assert plan({"x": object()}) is None
    assert plan([torch.ones(2, requires_grad=True)]) is None
    assert plan(np.array([object()])) is None


class Opaque:
    def __init__(self, ids):
        self.ids = ids


def opaque_collate(samples):
    return Opaque([int(sample["id"]) for sample in samples])


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """600 samples of every kind of leaf a dataset holds, in chunks of 50."""
    path = tmp_path_factory.mktemp("mixed")
    ld.write_dataset(
        (
            {
                "id": i,
                "x": np.full(4, i, np.float32),
                "blob": bytes([i % 256]) * (i % 37),
                "name": f"n{i}",
                "t": torch.full((2,), i, dtype=torch.bfloat16),
            }
            for i in range(600)
        ),
        path,
        chunk_size=50,
    )
    return path


def _epoch(path, **options):
    options.setdefault("num_workers", 2)
    options.setdefault("batch_size", 8)
    loader = ld.StreamingDataLoader(ld.StreamingDataset(path, shuffle=True), **options)
    return list(loader)


def test_the_arena_delivers_the_pipes_batches_in_the_pipes_order(mixed):
    through_arena = _epoch(mixed)
    through_pipe = _epoch(mixed, transport="pipe")
    assert len(through_arena) == 75
    assert all(map(_same, through_arena, through_pipe))
    assert not _ours()


def test_batches_kept_past_the_ring_stay_correct(mixed):
    kept = _epoch(mixed, batch_size=2)  # 300 batches, all held: far more than the slots
    expected = _epoch(mixed, batch_size=2, transport="pipe")
    assert all(map(_same, kept, expected))


def test_a_custom_collate_of_objects_falls_back_to_the_pipe(mixed):
    batches = _epoch(mixed, collate_fn=opaque_collate)
    assert all(type(batch) is Opaque for batch in batches)
    assert sorted(i for batch in batches for i in batch.ids) == list(range(600))


def test_two_epochs_with_persistent_workers_asked_for(mixed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # today: ignored, the loader says so
        loader = ld.StreamingDataLoader(
            ld.StreamingDataset(mixed), batch_size=8, num_workers=2, persistent_workers=True
        )
        epochs = [[int(i) for batch in loader for i in batch["id"]] for _ in range(2)]
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(600))
    assert not _ours()


def test_pin_memory_and_the_arena(mixed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pinning needs an accelerator
        batches = _epoch(mixed, pin_memory=True)
    assert sorted(int(i) for batch in batches for i in batch["id"]) == list(range(600))


def test_resume_through_the_arena_continues_with_the_next_batch(mixed):
    dataset = ld.StreamingDataset(mixed, shuffle=True)
    whole = list(ld.StreamingDataLoader(dataset, batch_size=8, num_workers=2))
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(mixed, shuffle=True), batch_size=8, num_workers=2
    )
    for step, _ in enumerate(loader):
        if step == 20:
            state = loader.state_dict()
            break
    resumed = ld.StreamingDataLoader(
        ld.StreamingDataset(mixed, shuffle=True), batch_size=8, num_workers=2
    )
    resumed.load_state_dict(state)
    assert all(map(_same, list(resumed), whole[21:]))


def test_spawned_workers_use_the_arena(mixed):
    through_arena = _epoch(mixed, multiprocessing_context="spawn")
    assert all(map(_same, through_arena, _epoch(mixed, transport="pipe")))


def _pid(sample):
    return {**sample, "pid": os.getpid()}


def test_a_worker_killed_mid_epoch_fails_clearly_and_leaves_no_segments(mixed):
    dataset = ld.StreamingDataset(mixed, transform=_pid)
    loader = ld.StreamingDataLoader(dataset, batch_size=2, num_workers=2, prefetch_factor=1)
    batches = iter(loader)
    victim = int(next(batches)["pid"][0])
    os.kill(victim, signal.SIGKILL)
    with pytest.raises(RuntimeError, match="exited unexpectedly|killed"):
        for _ in batches:
            pass
    del batches
    gc.collect()
    assert not _ours()


def test_a_broken_off_epoch_leaves_no_segments(mixed):
    loader = ld.StreamingDataLoader(ld.StreamingDataset(mixed), batch_size=8, num_workers=2)
    for step, _ in enumerate(loader):
        if step == 3:
            break
    gc.collect()
    assert not _ours()


def test_an_unknown_transport_is_refused(mixed):
    with pytest.raises(ValueError, match="transport='shm'"):
        ld.StreamingDataLoader(ld.StreamingDataset(mixed), transport="shm")


def test_a_process_that_exits_mid_epoch_leaves_no_segments(mixed):
    script = (
        "import os, sys, litdata as ld\n"
        "loader = ld.StreamingDataLoader(ld.StreamingDataset(sys.argv[1]), batch_size=2,"
        " num_workers=2)\n"
        "batches = iter(loader)\n"
        "next(batches)\n"
        "print(os.getpid())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(mixed)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).parents[3],
    )
    pid = int(done.stdout.split()[-1])
    assert not list(SHM.glob(f"litdata-arena-{pid}-*"))


def test_out_of_order_delivery_hands_every_batch_out_once(mixed):
    batches = _epoch(mixed, in_order=False)
    assert sorted(int(i) for batch in batches for i in batch["id"]) == list(range(600))


@pytest.fixture
def lend_all(monkeypatch):
    """Every stacked leaf written to lent memory, however small (forked workers inherit it)."""
    monkeypatch.setattr(collate, "LENT_BYTES", 0)


def _images(path, count, side):
    ld.write_dataset(
        (
            {"id": i, "image": torch.full((3, side, side), i % 251, dtype=torch.uint8)}
            for i in range(count)
        ),
        path,
        chunk_size=20,
    )


def _check_images(batches, count, side):
    assert sorted(int(i) for batch in batches for i in batch["id"]) == list(range(count))
    for batch in batches:
        expected = (batch["id"] % 251).to(torch.uint8).view(-1, 1, 1, 1)
        assert torch.equal(batch["image"], expected.expand(-1, 3, side, side))


def test_batches_of_images_are_stacked_into_lent_memory_and_stay_right(tmp_path):
    _images(tmp_path, 120, 224)  # batches of 56 images: 8.4 MB, above LENT_BYTES
    batches = _epoch(tmp_path, batch_size=56)
    _check_images(batches, 120, 224)
    assert all(map(_same, batches, _epoch(tmp_path, transport="pipe", batch_size=56)))


@pytest.mark.parametrize("batch_size", [16, 2])  # one batch a message; several, all held
def test_lent_memory_is_taken_back_only_from_batches_in_a_slot(tmp_path, lend_all, batch_size):
    _images(tmp_path, 200, 32)
    batches = _epoch(tmp_path, batch_size=batch_size)
    _check_images(batches, 200, 32)
    assert all(map(_same, batches, _epoch(tmp_path, transport="pipe", batch_size=batch_size)))


def test_held_batches_in_lent_memory_stay_right_past_the_ring(mixed, lend_all):
    kept = _epoch(mixed, batch_size=2)  # 300 batches held: most go by pipe, with their memory
    assert all(map(_same, kept, _epoch(mixed, batch_size=2, transport="pipe")))
