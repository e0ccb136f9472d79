"""Large remote chunks arrive as parallel ranged GETs, checked part by part, and are read early."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
import uuid

import numpy as np
import pytest

import litdata as ld
from litdata.core.chunks.blocks import BLOCK_KEY
from litdata.core.registry import kinds
from litdata.engine.cache.budget import ByteBudget
from litdata.engine.cache.parts import FLOOR_PART, SPREAD, PartedDownload, parts_of
from litdata.engine.cache.slots import ConnectionSlots
from litdata.engine.link import Link
from litdata.engine.throttle import Throttle, line_key, throttled
from litdata.plugins.storage.memory import MemoryStorage

pytestmark = pytest.mark.usefixtures("fresh_plugins")

#: ``(url, start, end)`` of every ranged request, and whole downloads as ``(url, -1, -1)``.
CALLS: list[tuple[str, int, int]] = []
GUARD = threading.Lock()
STATE = {"running": 0, "peak": 0, "bytes": 0, "peak_bytes": 0}
#: Ranges starting at or past this byte wait for ``LATE`` (set by a test that reads early).
HOLD: dict[str, object] = {"from": None, "late": threading.Event()}


class SlowStore(MemoryStorage):
    """The memory backend, counting requests; each ranged read takes 20 ms, as a link does."""

    name = "slowstore"

    def download(self, url, local_path):
        CALLS.append((url, -1, -1))
        super().download(url, local_path)

    def read_range(self, url, start, end):
        with GUARD:
            CALLS.append((url, start, end))
            STATE["running"] += 1
            STATE["peak"] = max(STATE["peak"], STATE["running"])
            STATE["bytes"] += end - start
            STATE["peak_bytes"] = max(STATE["peak_bytes"], STATE["bytes"])
        try:
            held = HOLD["from"]
            if held is not None and start >= held and url.endswith("chunk-0-0.bin"):
                assert HOLD["late"].wait(20), "the reader waited for the whole chunk"
            time.sleep(0.02)
            return super().read_range(url, start, end)
        finally:
            with GUARD:
                STATE["running"] -= 1
                STATE["bytes"] -= end - start


@pytest.fixture
def url():
    kinds.storage.register("slowstore", SlowStore)
    CALLS.clear()
    STATE.update(running=0, peak=0, bytes=0, peak_bytes=0)
    HOLD.update({"from": None, "late": threading.Event()})
    return f"slowstore://parted-{uuid.uuid4().hex[:8]}/ds"


def _write(url, count=600, blob=16_000, **options):
    samples = ({"id": i, "blob": np.full(blob, i % 251, dtype=np.uint8)} for i in range(count))
    ld.write_dataset(samples, url, chunk_bytes="4MB", **options)
    index = json.loads(SlowStore().fs.cat_file(SlowStore().path(f"{url}/index.json")))
    return index["chunks"]


def _check(samples):
    for sample in samples:
        assert (sample["blob"] == sample["id"] % 251).all()


def test_a_large_chunk_is_fetched_as_parallel_ranged_gets(url, tmp_path):
    chunks = _write(url)
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    samples = list(ds)
    assert sorted(sample["id"] for sample in samples) == list(range(600))
    _check(samples)
    for chunk in [chunk for chunk in chunks if chunk["chunk_bytes"] > 2 << 20]:
        ranges = sorted((s, e) for u, s, e in CALLS if u.endswith("/" + chunk["filename"]))
        assert len(ranges) > 1, chunk["filename"]
        # every byte fetched exactly once, in adjoining parts
        assert ranges[0][0] == 0
        assert ranges[-1][1] == chunk["chunk_bytes"]
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert STATE["peak"] > 1  # parts of a chunk were in flight together
    deadline = time.monotonic() + 10
    while any(t.name.startswith("litdata-parts") for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the part threads outlived their downloads"
        time.sleep(0.01)


def test_parts_in_flight_stay_within_the_memory_budget(url, tmp_path, monkeypatch):
    monkeypatch.setenv("LITDATA_PART_MEMORY_MB", "1")
    chunks = _write(url)
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    samples = list(ds)
    assert sorted(sample["id"] for sample in samples) == list(range(600))
    _check(samples)
    large = [c["filename"] for c in chunks if c["chunk_bytes"] > 2 << 20]
    # parts of half the budget, two of them in flight together at most
    assert all(e - s <= 512 << 10 for u, s, e in CALLS if u.endswith(tuple(large)) and s >= 0)
    assert STATE["peak"] == 2
    assert STATE["peak_bytes"] <= 1 << 20


def test_a_budget_holds_its_bytes_and_lets_waiters_in_as_holders_leave():
    budget = ByteBudget(10)
    seen: list[int] = []
    guard = threading.Lock()

    def hold(size):
        with budget.holding(size):
            with guard:
                seen.append(budget.held)
            time.sleep(0.01)

    threads = [threading.Thread(target=hold, args=(size,)) for size in (4, 4, 4, 7, 30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(seen) == 5
    assert max(seen) <= 10  # a size over the total holds all of it, alone
    assert budget.held == 0
    with pytest.raises(OSError, match="a part failed"), budget.holding(6):
        raise OSError("a part failed")
    assert budget.held == 0  # a failed part gives its bytes back


def test_the_first_items_are_served_before_the_chunk_completes(url, tmp_path):
    """The parts past the first wait until the first batch is out: it cannot wait for them."""
    chunks = _write(url)
    HOLD["from"] = 1 << 20  # everything past the first part of chunk 0
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    loader = ld.StreamingDataLoader(ds, batch_size=8, num_workers=0)
    batches = iter(loader)
    first = next(batches)
    assert first["id"].tolist() == list(range(8))
    assert (first["blob"][:, 0] == first["id"]).all()
    late = [s for u, s, _ in CALLS if u.endswith("chunk-0-0.bin") and s >= 1 << 20]
    assert late, "the later parts were asked for (and still wait)"
    HOLD["late"].set()
    rest = [int(i) for batch in batches for i in batch["id"]]
    assert sorted(first["id"].tolist() + rest) == list(range(600))
    assert chunks[0]["chunk_bytes"] > 2 << 20


def test_a_chunk_without_block_checksums_is_checked_whole_and_not_read_early(url, tmp_path):
    _write(url)
    storage = SlowStore()
    path = storage.path(f"{url}/index.json")
    index = json.loads(storage.fs.cat_file(path))
    for chunk in index["chunks"]:
        chunk.pop(BLOCK_KEY)
    storage.fs.pipe_file(path, json.dumps(index).encode())
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    samples = list(ds)
    assert sorted(sample["id"] for sample in samples) == list(range(600))
    _check(samples)


def test_ranged_reads_off_downloads_whole_chunks(url, tmp_path, monkeypatch):
    _write(url, count=300)
    monkeypatch.setenv("LITDATA_RANGED_READS", "0")
    ds = ld.StreamingDataset(url, cache_dir=str(tmp_path / "cache"))
    assert sorted(sample["id"] for sample in ds) == list(range(300))
    assert all(start == -1 for u, start, _ in CALLS if "chunk-" in u)


def test_parts_are_block_aligned_with_a_small_first_one():
    parts = parts_of(10_000_000, 3 << 20)
    assert parts[0] == (0, 1 << 20)
    assert all(start % (1 << 16) == 0 for start, _ in parts)
    assert parts[-1][1] == 10_000_000
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
    assert parts_of(100_000, 3 << 20) == [(0, 100_000)]  # one part: the whole object
    assert parts_of(3 << 20, 1 << 20, align=3 << 18)[0] == (0, 3 << 18)


def test_the_link_separates_first_byte_time_from_throughput():
    link = Link()
    for size in (1 << 20, 4 << 20, 8 << 20, 2 << 20):
        link.observe(size, 0.030 + size / 50e6)
    assert link.ttfb == pytest.approx(0.030, abs=1e-3)
    assert link.rate == pytest.approx(50e6, rel=0.01)
    # four bandwidth-delay products: 4 * 0.03 s * 50 MB/s = 6 MB, in whole blocks
    assert abs(link.part_size() - 6_000_000) < 1 << 16
    assert link.throughput() > 0


def test_the_link_measures_its_first_requests_over_the_time_they_took():
    # Two 8 MB parts at once, 0.1 s each, just after the process began: 160 MB/s, not the
    # 5 MB/s that spreading them over the whole 3 s window would say (which kept prefetching
    # at its minimum depth for the first seconds of every epoch).
    link = Link()
    link.observe(8_000_000, 0.1)
    link.observe(8_000_000, 0.1)
    assert 100e6 < link.throughput() < 200e6


@pytest.mark.parametrize(("size", "longest"), [(64 << 20, FLOOR_PART), (8 << 20, 1 << 20)])
def test_parts_stay_long_when_the_link_fit_would_cut_them_short(tmp_path, size, longest):
    # Sixteen requests sharing a 400 MB/s link each see 25 MB/s: a fit of those says 1.2 MB
    # parts, each then waiting its 30 ms first byte. A large chunk keeps FLOOR_PART parts;
    # a small one is still cut in SPREAD (of at least a MiB each).
    link = Link()
    for part in (1 << 20, 2 << 20, 3 << 20):
        link.observe(part, 0.010 + part / 25e6)
    assert link.part_size() < 2 << 20
    download = PartedDownload(
        MemoryStorage(),
        "memory://bucket/chunk.bin",
        tmp_path / "chunk.bin",
        target=None,
        size=size,
        table=None,
        link=link,
        throttle=Throttle(16),
        slots=ConnectionSlots(tmp_path / "slots", 16),
        budget=ByteBudget(256 << 20),
    )
    lengths = [end - start for start, end in download.parts]
    assert max(lengths) == longest
    assert len(download.parts) >= min(SPREAD, size // (1 << 20))


def test_the_window_halves_when_throttled_and_grows_back():
    window = Throttle(16)
    assert window.limit == 16
    window.slowed()
    assert window.limit == 8
    window.slowed()  # a request in flight when it halved says so again: no second halving
    assert window.limit == 8
    for _ in range(7):
        window.succeeded()
    window.slowed()
    assert window.limit == 4
    for _ in range(5):  # a window of requests throttled after it halved: it halves again
        window.slowed()
    assert window.limit == 2
    for _ in range(60):
        window.succeeded()
    assert 8 < window.limit <= 16
    assert window.slowdowns == 8


def test_throttling_errors_are_recognised():
    assert throttled(ConnectionError("HTTP 503: Slow Down"))
    assert throttled(OSError("An error occurred (SlowDown) when calling the GetObject operation"))
    assert throttled(ConnectionError("HTTP 429: Too Many Requests"))
    assert throttled(OSError(16, "Please reduce your request rate."))  # s3fs's SlowDown
    assert not throttled(ConnectionError("Connection reset by peer"))


def _on_disk(cache):
    """Bytes of chunks in the cache, published or still downloading."""
    total = 0
    for path in cache.rglob("*chunk-*"):
        with contextlib.suppress(FileNotFoundError):  # evicted or published while we look
            total += path.stat().st_size
    return total


def test_prefetching_by_bytes_stays_within_the_cache_budget(url, tmp_path):
    """A fast link asks for many chunks ahead; the budget bounds them all the same."""
    chunks = _write(url, count=3000)
    size = max(chunk["chunk_bytes"] for chunk in chunks)
    cache = tmp_path / "cache"
    ds = ld.StreamingDataset(url, cache_dir=str(cache), max_cache_size=2 * size)
    peak, seen = 0, []
    for sample in ds:
        seen.append(sample["id"])
        peak = max(peak, _on_disk(cache))
    assert seen == list(range(3000))
    # The budget, plus what the reader holds and prefetches (max_pre_download=2) at once.
    assert peak <= 2 * size + 3 * size, (peak, size)


def _served_in_line(place, held, queued):
    """The order in which four askers get in once a holder of everything lets go.

    Args:
        place: ``place(key)``: a context manager holding a place for the line key ``key``
            (``None``: the holder's, which takes everything).
        held: Whether the holder holds everything yet.
        queued: How many askers wait.
    """
    served = []
    release = threading.Event()

    def ask(key):
        with place(key):
            served.append(key)

    def hold():
        with place(None):
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    while not held():
        time.sleep(0.001)
    keys = ((5, 0), (1, 1), (3, 0), (1, 0))
    askers = [threading.Thread(target=ask, args=(key,)) for key in keys]
    for asker in askers:
        asker.start()
    while queued() < len(keys):
        time.sleep(0.001)
    release.set()
    for thread in [holder, *askers]:
        thread.join(10)
    return served


def test_the_window_serves_the_chunk_needed_first_first():
    """Requests wait in line by their chunk's place, then part: not by who asked first."""
    window = Throttle(1)

    def place(key):
        return window.slot(0) if key is None else window.slot(*key)

    served = _served_in_line(place, lambda: window._running, lambda: len(window._queue))
    assert served == [(1, 0), (1, 1), (3, 0), (5, 0)]


def test_memory_lets_parts_in_by_their_place_in_line():
    """A part of the chunk needed first takes freed memory before any of a later chunk."""
    budget = ByteBudget(10)

    def place(key):
        return budget.holding(10) if key is None else budget.holding(6, line_key(*key))

    served = _served_in_line(place, lambda: budget.held == 10, lambda: len(budget._queue))
    assert served == [(1, 0), (1, 1), (3, 0), (5, 0)]
    assert budget.held == 0
