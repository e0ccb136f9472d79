"""CPU seconds per read stage: off by default, nested stages counted once, workers' totals kept."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time

import pytest

from litdata.core import cpu_stages


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@pytest.fixture
def stages_file(tmp_path, monkeypatch):
    path = tmp_path / "stages.jsonl"
    monkeypatch.setenv("LITDATA_CPU_STAGES", str(path))
    cpu_stages.reload()
    yield path
    monkeypatch.delenv("LITDATA_CPU_STAGES")
    cpu_stages.reload()


def test_off_by_default_nothing_is_counted_or_written(monkeypatch, tmp_path):
    monkeypatch.delenv("LITDATA_CPU_STAGES", raising=False)
    cpu_stages.reload()
    assert not cpu_stages.enabled()
    with cpu_stages.timed("checksum"):
        _spin(0.01)
    assert list(cpu_stages.counted("decode", [1, 2])) == [1, 2]
    assert cpu_stages.snapshot() == {}
    cpu_stages.flush()
    assert not list(tmp_path.iterdir())


def test_a_nested_stage_is_taken_off_the_one_around_it(stages_file):
    with cpu_stages.timed("hand-over"):
        _spin(0.02)
        with cpu_stages.timed("checksum"):
            _spin(0.05)
            cpu_stages.add("cache write", 0.0)
    totals = cpu_stages.snapshot()
    assert totals["checksum"] >= 0.05
    assert 0.02 <= totals["hand-over"] < 0.05  # its own work only


def test_counted_charges_making_each_item(stages_file):
    def items():
        for n in range(3):
            _spin(0.01)
            yield n

    assert list(cpu_stages.counted("decode", items())) == [0, 1, 2]
    assert cpu_stages.snapshot()["decode"] >= 0.03


def test_a_watched_thread_is_charged_whole_less_what_it_told_of(stages_file):
    ready, done = threading.Event(), threading.Event()

    def work():
        ready.wait(5)
        _spin(0.03)
        cpu_stages.add("checksum", 0.01)  # told from the watched thread: not network's
        done.set()
        time.sleep(1)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    cpu_stages.watch_thread("network", thread)
    ready.set()
    assert done.wait(5)
    totals = cpu_stages.snapshot()
    assert 0.015 <= totals["network"] < 0.03
    assert totals["checksum"] == pytest.approx(0.01)


def _child() -> None:
    with cpu_stages.timed("decode"):
        _spin(0.02)


def test_a_worker_process_writes_its_totals_when_it_ends(stages_file):
    cpu_stages.add("network", 0.5)
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_child)
    child.start()
    child.join(20)
    assert child.exitcode == 0
    cpu_stages.flush()
    records = [json.loads(line) for line in stages_file.read_text().splitlines()]
    assert len({record["pid"] for record in records}) == 2
    totals = cpu_stages.read_totals(stages_file)
    assert totals["network"] == pytest.approx(0.5)  # the parent's, not the child's copy
    assert totals["decode"] >= 0.02


def test_a_consumer_stopping_early_closes_what_is_counted(stages_file):
    closed = []

    def items():
        try:
            yield from range(10)
        finally:
            closed.append(True)

    counted = cpu_stages.counted("hand-over", items())
    assert next(counted) == 0
    counted.close()
    assert closed == [True]


def test_a_loader_with_workers_counts_every_process(stages_file, tmp_path):
    import uuid

    import litdata as ld

    url = f"memory://stages-{uuid.uuid4().hex[:8]}/ds"
    ld.write_dataset(({"id": i, "blob": bytes(2000)} for i in range(400)), url, chunk_bytes="64KB")
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    loader = ld.StreamingDataLoader(ds, batch_size=10, num_workers=2)
    assert sorted(int(i) for batch in loader for i in batch["id"]) == list(range(400))
    cpu_stages.flush()
    records = [json.loads(line) for line in stages_file.read_text().splitlines()]
    assert len({record["pid"] for record in records}) >= 3  # the trainer and both workers
    totals = cpu_stages.read_totals(stages_file)
    assert totals["decode"] > 0
    assert totals["hand-over"] > 0
    assert totals["checksum"] > 0  # each fetched chunk checked
