"""Decompression bombs: a small chunk or shard that inflates to gigabytes, its checksum valid.

Each bomb replaces one chunk (or MDS shard) of a real dataset, with its checksum rewritten in
``index.json`` so that only the size bound can catch it, and is read through the public API
(``StreamingDataset(path)[i]``, a streaming epoch, an S3 bucket, ``litdata verify``) in a
child process whose data segment is capped (``RLIMIT_DATA``) at what it uses plus
:data:`HEADROOM`. Decompression with no output bound dies there (``MemoryError``, or an abort);
bounded decompression stops at the size the index records and says which chunk is at fault.
The child also reads the samples of the other chunks, which must be intact.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import json
import os
import pickle
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import brotli
import lz4.frame
import pytest
import snappy
import zstandard
from canonical import canonical
from expected import expected_samples, fixture_dir
from support.mds_fixtures import write_shards

import litdata as ld
from litdata.core.chunks.checksum import checksum_of
from litdata.core.chunks.framing import FRAMED_MAGIC
from litdata.core.errors import SampleDecodeError
from litdata.engine.boundary.resolve import resolve

#: What a bomb inflates to: more than the child may allocate, by far.
BOMB = 3 << 30
#: What the child may allocate beyond what it holds once the dataset is open.
HEADROOM = 768 << 20
#: The most its resident memory may grow while it refuses a bomb (framed chunks may inflate
#: to 256 MiB before they are refused; the others stop within a few megabytes).
GROWTH = 400 << 20

# -- bombs ---------------------------------------------------------------------------------------
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_RLE_BLOCK = 128 << 10  # zstd's largest block


def zstd_bomb(size: int, *, content_size: bool) -> bytes:
    """A zstd frame of ``size`` zero bytes: RLE blocks, 4 bytes per 128 KiB (3 GiB in 96 KiB)."""
    descriptor = 0xC0 if content_size else 0x00  # an 8-byte content size, or none
    header = _ZSTD_MAGIC + bytes([descriptor, 0x38])  # window 128 KiB
    if content_size:
        header += struct.pack("<Q", size)
    blocks, rest = divmod(size, _RLE_BLOCK)
    sizes = [_RLE_BLOCK] * blocks + ([rest] if rest else [])
    body = bytearray()
    for number, length in enumerate(sizes):
        last = number == len(sizes) - 1
        body += (length << 3 | 1 << 1 | last).to_bytes(3, "little") + b"\x00"
    return header + bytes(body)


@functools.cache
def lz4_bomb() -> bytes:
    """An LZ4 frame of 2 GiB of zeros that does not declare its size (about 9 MB)."""
    compressor = lz4.frame.LZ4FrameCompressor()
    zeros = bytes(64 << 20)
    parts = [compressor.begin(), *(compressor.compress(zeros) for _ in range(32))]
    return b"".join([*parts, compressor.flush()])


@functools.cache
def mds_bomb(codec: str) -> bytes:
    """A shard compressed with an MDS ``codec`` that inflates to 2 GiB or more.

    gzip and bz2 read concatenated streams as one, so a stream of zeros repeated will do.
    """
    if codec == "gz":
        return gzip.compress(bytes(64 << 20), 9) * 32
    if codec == "bz2":
        return bz2.compress(bytes(8 << 20), 9) * 256
    if codec == "zstd":  # Mosaic's frames declare their size
        return zstd_bomb(BOMB, content_size=True)
    if codec == "snappy":  # raw snappy starts with its plain length, a varint: 3 GiB here
        return bytes([0x80, 0x80, 0x80, 0x80, 0x0C]) + b"\x00" * 1024
    compressor = brotli.Compressor(quality=1)
    parts = [compressor.process(bytes(64 << 20)) for _ in range(32)]
    return b"".join([*parts, compressor.finish()])


_MDS_COMPRESS = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
    "snappy": snappy.compress,
    "br": brotli.compress,
}


# -- datasets ------------------------------------------------------------------------------------
def _sample(i: int) -> dict[str, Any]:
    return {"id": i, "payload": bytes([i % 251]) * 200}


def _native(folder: Path, compression: str) -> Path:
    """30 samples in 3 chunks of 10, written by litdata (whole-file compression)."""
    return Path(
        ld.write_dataset(map(_sample, range(30)), folder, chunk_size=10, compression=compression)
    )


def _plant(folder: Path, bomb: bytes, position: int = 0, **fields: Any) -> str:
    """Replace chunk ``position`` with ``bomb``, its checksum (if any) rewritten; its name."""
    index = json.loads((folder / "index.json").read_text())
    entry = index["chunks"][position]
    (folder / entry["filename"]).write_bytes(bomb)
    if entry.get("checksum"):
        entry["checksum"] = checksum_of(bomb)
    entry.update(fields)
    (folder / "index.json").write_text(json.dumps(index))
    return str(entry["filename"])


def _litdata_copy(name: str, folder: Path) -> Path:
    """A copy of a dataset LitData 0.2.76 wrote."""
    return Path(shutil.copytree(fixture_dir(name), folder))


def _batch_bomb(original: bytes, *, table_tells: bool) -> bytes:
    """An LDFZ01 file whose first frame is a zstd bomb.

    With ``table_tells`` the frame table (and the item offsets) declare the bomb's size, so
    that the file is self-consistent; otherwise they keep the original sizes.
    """
    header = struct.Struct("<8sHHIII")
    frame = struct.Struct("<IIQII")
    magic, version, flags, count, rows, frames = header.unpack_from(original)
    assert magic == FRAMED_MAGIC
    offsets = list(struct.unpack_from(f"<{count + 1}I", original, header.size))
    table_at = header.size + 4 * (count + 1)
    table = [list(frame.unpack_from(original, table_at + frame.size * i)) for i in range(frames)]
    payloads = [original[start : start + size] for _, _, start, size, _ in table]
    payloads[0] = zstd_bomb(BOMB, content_size=True)
    if table_tells:
        first, items, *_ = table[0]
        grow = BOMB - table[0][4]
        table[0][4] = BOMB
        offsets = [
            offset + grow if i > first + items - 1 else offset for i, offset in enumerate(offsets)
        ]
    position = table_at + frame.size * frames
    for row, payload in zip(table, payloads, strict=True):
        row[2], row[3] = position, len(payload)
        position += len(payload)
    return b"".join(
        [
            header.pack(magic, version, flags, count, rows, frames),
            struct.pack(f"<{count + 1}I", *offsets),
            *(frame.pack(*row) for row in table),
            *payloads,
        ]
    )


def _sample_bomb(original: bytes, count: int, *, content_size: bool) -> bytes:
    """A sample-level chunk whose first item (one zstd frame) is a bomb."""
    offsets = struct.unpack_from(f"<{count + 1}I", original, 4)
    items = [original[offsets[i] : offsets[i + 1]] for i in range(count)]
    items[0] = zstd_bomb(BOMB, content_size=content_size)
    starts = [4 * (count + 2)]
    for item in items:
        starts.append(starts[-1] + len(item))
    return struct.pack(f"<{count + 2}I", count, *starts) + b"".join(items)


def _mds(folder: Path, codec: str) -> tuple[Path, str]:
    """8 samples in 2 MDS shards compressed with ``codec``; the first is a bomb."""
    rows = [[f"sample {i}".encode()] for i in range(8)]
    write_shards(folder, {"text": "str"}, rows, per_shard=4)
    index = json.loads((folder / "index.json").read_text())
    for number, shard in enumerate(index["shards"]):
        raw = folder / shard["raw_data"]["basename"]
        zipped = raw.with_name(f"{raw.name}.{codec}")
        data = mds_bomb(codec) if number == 0 else _MDS_COMPRESS[codec](raw.read_bytes())
        zipped.write_bytes(data)
        raw.unlink()
        shard["compression"] = codec
        shard["zip_data"] = {"basename": zipped.name, "bytes": len(data), "hashes": {}}
    (folder / "index.json").write_text(json.dumps(index))
    return folder, str(index["shards"][0]["zip_data"]["basename"])


# -- the child -----------------------------------------------------------------------------------
CHILD = r"""
import contextlib, io, json, pickle, resource, runpy, sys, time
import litdata as ld

spec = json.loads(sys.argv[1])
dataset = ld.StreamingDataset(spec["path"], **spec["options"])
len(dataset)

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

_, hard = resource.getrlimit(resource.RLIMIT_DATA)
resource.setrlimit(resource.RLIMIT_DATA, (status("VmData") + spec["headroom"], hard))
with open("/proc/self/clear_refs", "w") as handle:
    handle.write("5")  # the peak resident size starts again from here
before = status("VmRSS")
outcome = {"error": None, "message": "", "chain": []}
start = time.monotonic()
try:
    if spec["action"] == "epoch":
        for _ in ld.StreamingDataLoader(dataset, batch_size=4, num_workers=0, collate_fn=list):
            pass
    elif spec["action"] == "verify":  # the command line: what it prints is the message
        printed = io.StringIO()
        sys.argv = ["litdata", "verify", "--quiet", spec["path"]]
        with contextlib.redirect_stdout(printed):
            try:
                runpy.run_module("litdata", run_name="__main__")
            except SystemExit as verdict:
                outcome.update(error=f"exit {verdict.code}", message=printed.getvalue())
    else:
        dataset[spec["bad"]]
except BaseException as error:
    outcome.update(error=type(error).__name__, message=str(error))
    cause = error
    while cause is not None:
        outcome["chain"].append(type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
outcome["seconds"] = time.monotonic() - start
outcome["grew"] = status("VmHWM") - before
good = []
for i in spec["good"]:
    try:
        good.append(dataset[i])
    except Exception as error:
        good.append(f"{type(error).__name__}: {error}")
with open(spec["samples"], "wb") as handle:
    pickle.dump(good, handle)
print(json.dumps(outcome))
"""


@dataclass
class Outcome:
    """What the child saw: the error (its name, message and causes), how long it took to come,
    how far resident memory grew, and the samples of the other chunks."""

    error: str | None
    message: str
    chain: list[str]
    seconds: float
    grew: int
    good: list[Any]


def _read(
    path: str | Path,
    bad: int,
    good: list[int],
    tmp_path: Path,
    *,
    action: str = "item",
    options: dict[str, Any] | None = None,
) -> Outcome:
    """Under the cap, read sample ``bad`` of ``path`` (or, as ``action`` says, an ``"epoch"``,
    or ``"verify"`` it with the command line), then the ``good`` samples."""
    spec = {
        "path": str(path),
        "bad": bad,
        "good": good,
        "action": action,
        "options": options or {},
        "headroom": HEADROOM,
        "samples": str(tmp_path / "good.pickle"),
    }
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=180,
        env=os.environ,
        check=False,
    )
    assert child.returncode == 0, f"the child died ({child.returncode}): {child.stderr[-3000:]}"
    outcome = json.loads(child.stdout.strip().splitlines()[-1])
    good_samples = pickle.loads((tmp_path / "good.pickle").read_bytes())
    return Outcome(**outcome, good=good_samples)


def _refused(
    outcome: Outcome, name: str, expected: list[Any], record: Any, error: str = "ChunkCorruptError"
) -> None:
    """The bomb was an ``error`` naming ``name``, stopped by the bound; the rest reads."""
    record.seconds = outcome.seconds  # the child's own time to the error, not its start-up
    assert outcome.error == error, outcome
    assert name in outcome.message, outcome.message
    assert "MemoryError" not in outcome.chain, outcome
    stopped = ("decompresses to more than", "declares", "may inflate to")
    assert any(words in outcome.message for words in stopped), outcome.message
    assert outcome.grew < GROWTH, f"resident memory grew by {outcome.grew:,} bytes"
    wrong = sum(
        canonical(got) != canonical(want) for got, want in zip(outcome.good, expected, strict=True)
    )
    lost = sum(isinstance(got, str) for got in outcome.good)
    record(
        f"{error} naming {name}; resident memory +{outcome.grew >> 20} MiB under a "
        f"{HEADROOM >> 20} MiB cap",
        lost=lost,
        wrong=wrong - lost,
    )


def _case(*values: Any, fault: str) -> Any:
    """A parametrized case, recorded in the fault table as ``fault``."""
    return pytest.param(*values, marks=pytest.mark.fault(f"decompression bomb, {fault}"), id=fault)


# -- whole-file chunks (litdata's, and LitData's compression_level="chunk") ---------------------
@pytest.mark.parametrize(
    ("compression", "bomb"),
    [
        _case(
            "zstd", lambda: zstd_bomb(BOMB, content_size=True), fault="zstd chunk, size declared"
        ),
        _case("zstd", lambda: zstd_bomb(BOMB, content_size=False), fault="zstd chunk, no size"),
        _case("lz4", lz4_bomb, fault="lz4 chunk, no size"),
    ],
)
def test_a_whole_file_bomb_is_refused_at_the_indexed_size(compression, bomb, tmp_path, record):
    folder = _native(tmp_path / "ds", compression)
    name = _plant(folder, bomb())
    outcome = _read(folder, 3, list(range(10, 30)), tmp_path)
    _refused(outcome, name, [_sample(i) for i in range(10, 30)], record)


@pytest.mark.fault("decompression bomb, zstd chunk in a streaming epoch")
def test_a_bomb_ends_a_streaming_epoch_with_an_error_naming_it(tmp_path, record):
    folder = _native(tmp_path / "ds", "zstd")
    name = _plant(folder, zstd_bomb(BOMB, content_size=False), position=1)
    outcome = _read(folder, 0, list(range(10)) + list(range(20, 30)), tmp_path, action="epoch")
    _refused(outcome, name, [_sample(i) for i in [*range(10), *range(20, 30)]], record)


@pytest.mark.fault("decompression bomb, zstd chunk checked by litdata verify")
def test_litdata_verify_reports_a_bomb_without_inflating_it(tmp_path, record):
    folder = _native(tmp_path / "ds", "zstd")
    name = _plant(folder, zstd_bomb(BOMB, content_size=False), position=2)
    outcome = _read(folder, 0, list(range(20)), tmp_path, action="verify")
    assert f"error: {name}: " in outcome.message, outcome.message
    _refused(outcome, name, [_sample(i) for i in range(20)], record, error="exit 1")


@pytest.mark.fault("decompression bomb, LitData whole-file zstd chunk")
def test_a_bomb_in_a_litdata_chunk_level_dataset_is_refused(tmp_path, record):
    folder = _litdata_copy("zstd_chunk", tmp_path / "ds")
    name = _plant(folder, zstd_bomb(BOMB, content_size=False))
    outcome = _read(folder, 1, list(range(4, 10)), tmp_path)
    _refused(outcome, name, expected_samples("zstd_chunk")[4:], record)


@pytest.mark.fault("decompression bomb, zstd chunk on S3")
def test_a_remote_bomb_is_refused_naming_its_url(s3_server, tmp_path, record):
    folder = _native(tmp_path / "ds", "zstd")
    name = _plant(folder, zstd_bomb(BOMB, content_size=True))
    url = s3_server.url(s3_server.new_bucket(), "ds")
    remote = resolve(url, storage_options=s3_server.storage_options)
    for path in sorted(folder.iterdir()):
        remote.storage.upload(str(path), remote.join(path.name))
    options = {"storage_options": s3_server.storage_options}
    outcome = _read(url, 0, list(range(10, 30)), tmp_path, options=options)
    _refused(outcome, remote.join(name), [_sample(i) for i in range(10, 30)], record)


# -- LitData's framed layouts --------------------------------------------------------------------
@pytest.mark.parametrize(
    "table_tells",
    [
        _case(False, fault="LitData batch frame, its table's size kept"),
        _case(True, fault="LitData batch frame, its table declaring it"),
    ],
)
def test_a_batch_frame_bomb_is_refused(table_tells, tmp_path, record):
    folder = _litdata_copy("zstd_frames", tmp_path / "ds")
    chunk = folder / "chunk-0-0.bin"
    bomb = _batch_bomb(chunk.read_bytes(), table_tells=table_tells)
    name = _plant(folder, bomb, chunk_bytes=len(bomb))
    outcome = _read(folder, 0, list(range(5, 10)), tmp_path)
    _refused(outcome, name, expected_samples("zstd_frames")[5:], record)


@pytest.mark.parametrize(
    "content_size",
    [
        _case(True, fault="LitData sample-level item, size declared"),
        _case(False, fault="LitData sample-level item, no size"),
    ],
)
def test_a_sample_level_bomb_is_refused_at_the_framed_limit(content_size, tmp_path, record):
    folder = _litdata_copy("zstd_sample", tmp_path / "ds")
    chunk = folder / "chunk-0-0.bin"
    bomb = _sample_bomb(chunk.read_bytes(), 4, content_size=content_size)
    name = _plant(folder, bomb, chunk_bytes=len(bomb))
    outcome = _read(folder, 2, list(range(4, 10)), tmp_path)
    _refused(outcome, name, expected_samples("zstd_sample")[4:], record)


# -- MosaicML MDS shards -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "codec", [_case(codec, fault=f"MDS shard ({codec})") for codec in _MDS_COMPRESS]
)
def test_an_mds_shard_bomb_is_refused_at_its_raw_size(codec, tmp_path, record):
    folder, name = _mds(tmp_path / "ds", codec)
    outcome = _read(folder, 0, list(range(4, 8)), tmp_path)
    _refused(outcome, name, [{"text": f"sample {i}"} for i in range(4, 8)], record)


# -- leaves and listings -------------------------------------------------------------------------
@pytest.mark.fault("decompression bomb: a .nii.gz leaf that inflates past its header's size")
def test_a_nifti_leaf_bomb(tmp_path, record):
    nibabel = pytest.importorskip("nibabel")
    import numpy as np

    volume = nibabel.Nifti1Image(np.zeros((4, 4, 4), dtype=np.uint8), np.eye(4))
    honest = gzip.compress(bytes(volume.to_bytes()))
    bomb = gzip.compress(bytes(volume.to_bytes()) + bytes(64 << 20))  # 64 MiB past its size
    (tmp_path / "honest.nii.gz").write_bytes(honest)
    (tmp_path / "bomb.nii.gz").write_bytes(bomb)
    samples = [
        {"scan": ld.Nifti(path=tmp_path / name)} for name in ("honest.nii.gz", "bomb.nii.gz")
    ]
    folder = ld.write_dataset(samples, tmp_path / "ds", chunk_size=1)
    assert ld.StreamingDataset(str(folder))[0]["scan"].shape == (4, 4, 4)
    record.start()
    with pytest.raises(SampleDecodeError, match="decompression bomb"):
        ld.StreamingDataset(str(folder))[1]
    record.failed()
    record("SampleDecodeError naming the leaf: inflation stops at the header's volume size")
