"""Random mutations of a real dataset: a clear error or the right samples, never anything else.

Hypothesis changes one to three fields of ``index.json`` to hostile values (paths, huge and
negative numbers, wrong types, NUL bytes...), or flips, cuts and extends the bytes of a chunk.
Each mutated dataset is opened and read whole, by index and streamed. It must either raise one
of the clear errors (``forge.CLEAR_ERRORS``) or return exactly the samples written; it must
write nothing outside its own and its cache's folder, and allocate a bounded amount.
"""

from __future__ import annotations

import shutil
import tracemalloc
import uuid
from pathlib import Path

import pytest
from hostile import forge
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import litdata as ld

#: The most memory one read of a mutated 300-sample dataset may allocate.
ALLOCATION_BOUND = 64 << 20

SETTINGS = settings(
    max_examples=80,
    deadline=None,
    database=None,
    derandomize=True,  # the same examples on every run: CI never fails by chance
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module", params=["plain", "zstd"])
def pristine(request, tmp_path_factory):
    """The dataset every example copies, uncompressed or zstd-compressed."""
    options = {"compression": "zstd"} if request.param == "zstd" else {}
    return forge.dataset(tmp_path_factory.mktemp("pristine") / "ds", **options)


def _sandbox(pristine: Path, root: Path) -> tuple[Path, Path, Path]:
    """A fresh copy of the dataset, a cache folder and a victim file beside them."""
    sandbox = root / uuid.uuid4().hex
    folder = Path(shutil.copytree(pristine, sandbox / "ds"))
    (sandbox / "victim").mkdir()
    (sandbox / "victim" / "keep.txt").write_text("mine")
    return sandbox, folder, sandbox / "cache"


def _judge(sandbox: Path, folder: Path, cache: Path, expect_right: bool = True) -> None:
    """Read the dataset whole; assert a clear error or the right samples, and nothing else."""
    before = forge.files_outside(sandbox, [folder, cache])
    tracemalloc.start()
    message = ""
    try:
        items = forge.read_everything(folder, cache_dir=str(cache))
    except forge.CLEAR_ERRORS as error:
        items, message = None, str(error)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < ALLOCATION_BOUND, f"{peak:,} bytes allocated"
    assert items is not None or message.strip()
    if items is not None and expect_right:
        assert len(items) == 2 * forge.COUNT
        assert all(map(forge.is_right, items))
    assert forge.files_outside(sandbox, [folder, cache]) == before


@SETTINGS
@given(changes=forge.mutations())
def test_a_mutated_index(pristine, tmp_path_factory, changes):
    sandbox, folder, cache = _sandbox(pristine, tmp_path_factory.getbasetemp() / "mutated")
    forge.edit_index(folder, lambda index: forge.mutate(index, changes))
    _judge(sandbox, folder, cache)


#: A change of a chunk's bytes: ``(kind, position as a fraction of the file, byte)``.
BYTE_CHANGES = st.tuples(
    st.sampled_from(["flip", "cut", "extend"]),
    st.floats(min_value=0, max_value=1, exclude_max=True),
    st.integers(min_value=1, max_value=255),
)


def _damage(path: Path, change: tuple[str, float, int]) -> None:
    kind, where, value = change
    data = bytearray(path.read_bytes())
    position = int(where * len(data))
    if kind == "flip":
        data[position] ^= value
    elif kind == "cut":
        del data[position:]
    else:
        data[position:position] = bytes([value]) * value
    path.write_bytes(bytes(data))


@SETTINGS
@given(change=BYTE_CHANGES, chunk=st.integers(min_value=0, max_value=5), sealed=st.booleans())
def test_a_damaged_chunk(pristine, tmp_path_factory, change, chunk, sealed):
    """Sealed (checksums kept): an error or the right samples. Unsealed (LitData's datasets,
    with nothing to verify against): wrong values may come back, but only clear errors."""
    sandbox, folder, cache = _sandbox(pristine, tmp_path_factory.getbasetemp() / "damaged")
    if not sealed:
        forge.unsealed(folder)
    _damage(folder / forge.read_index(folder)["chunks"][chunk]["filename"], change)
    _judge(sandbox, folder, cache, expect_right=sealed)


#: MDS shard fields a mutation may change (``*``: which shard).
MDS_FIELDS = [
    ("shards", "*", "samples"),
    ("shards", "*", "raw_data", "basename"),
    ("shards", "*", "raw_data", "bytes"),
    ("shards", "*", "raw_data", "hashes"),
    ("shards", "*", "compression"),
    ("shards", "*", "column_names"),
    ("shards", "*", "column_encodings"),
    ("shards", "*", "format"),
    ("shards", "*", "version"),
    ("shards", "*", "zip_data"),
]


@st.composite
def mds_mutations(draw: st.DrawFn) -> list[tuple[tuple[object, ...], object]]:
    """One or two changes of an MDS index's shard fields."""
    changes = []
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        field = list(draw(st.sampled_from(MDS_FIELDS)))
        field[1] = draw(st.integers(min_value=0, max_value=2))
        changes.append((tuple(field), draw(forge.HOSTILE_VALUES)))
    return changes


@pytest.fixture(scope="module")
def pristine_mds(tmp_path_factory):
    """An uncompressed MDS dataset of 12 JSON samples (3 shards) with an xxh64 digest each."""
    import json

    import xxhash
    from support.mds_fixtures import write_shards

    rows = [[json.dumps({"n": i}).encode()] for i in range(12)]
    folder = write_shards(tmp_path_factory.mktemp("mds") / "ds", {"doc": "json"}, rows)
    index = json.loads((folder / "index.json").read_text())
    for shard in index["shards"]:
        data = (folder / shard["raw_data"]["basename"]).read_bytes()
        shard["raw_data"]["hashes"] = {"xxh64": xxhash.xxh64_hexdigest(data)}
    (folder / "index.json").write_text(json.dumps(index))
    return folder


@SETTINGS
@given(changes=mds_mutations())
def test_a_mutated_mds_index(pristine_mds, tmp_path_factory, changes):
    sandbox, folder, cache = _sandbox(pristine_mds, tmp_path_factory.getbasetemp() / "mds")
    forge.edit_index(folder, lambda index: forge.mutate(index, changes))
    before = forge.files_outside(sandbox, [folder, cache])
    try:
        data = ld.StreamingDataset(str(folder), cache_dir=str(cache))
        samples = [data[i]["doc"] for i in range(len(data))]
    except forge.CLEAR_ERRORS:
        samples = None
    if samples is not None:
        assert samples == [{"n": i} for i in range(12)]
    assert forge.files_outside(sandbox, [folder, cache]) == before
