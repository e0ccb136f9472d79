"""Benchmark workloads W1-W4 (see shared/BENCH.md), generated deterministically as plain files.

The files double as the *memmap baseline* and as the source every system's writer reads from:

    <data>/W1/images.bin   concatenated "JPEG" byte strings (random payload between SOI/EOI markers)
    <data>/W1/offsets.npy  int64[N+1] byte offsets into images.bin
    <data>/W1/labels.npy   int64[N]
    <data>/W2/tokens.bin   uint16[24,414 x 2,048] (50M tokens); documents are 78 blocks each
    <data>/W3/x.npy        float32[200,000, 16]
    <data>/W3/y.npy        int64[200,000]
    <data>/checksums.json  expected checksums (full epoch and the random-access index set)
    <data>/W2/block-fingerprints-v1.npy  uint64 fingerprint of every W2 block (mixture row checks)

    <data>/W5/images.bin   concatenated real 256x256 RGB JPEGs (Pillow, quality 90)
    <data>/W5/offsets.npy, labels.npy  as W1's

W4 reuses W1's files; only its ``optimize`` fn differs (the first 10% of inputs sleep 10x longer).
W5 is decode-heavy: every system decodes each JPEG in its dataset's transform (``decode_jpeg``),
so workers have real work to share.
The mixture row splits W2's documents into two token corpora: A (documents 0-187, ~60%) and B
(documents 188-312).
This module only needs NumPy: it is imported by the parent and by every child interpreter.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DATA_VERSION = 1
MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Workload:
    """Static description of one workload."""

    name: str
    kind: str  # "image", "tokens" or "records"
    count: int  # samples (blocks for tokens) that a full epoch returns
    batch_size: int
    description: str


W1_COUNT = 20_000
W2_BLOCK = 2_048
W2_BLOCKS = 24_414
W2_BLOCKS_PER_DOC = 78  # 313 documents x 78 blocks = 24,414 blocks; chunks hold whole documents
W2_DOCS = W2_BLOCKS // W2_BLOCKS_PER_DOC
W3_COUNT = 200_000
W3_DIM = 16
W4_BASE_COST_S = 100e-6  # per-sample sleep in W4's fn; the first 10% sleep 10x longer
W5_COUNT = 2_000
W5_SIDE = 256
W5_QUALITY = 90

WORKLOADS: dict[str, Workload] = {
    "W1": Workload(
        "W1", "image", W1_COUNT, 64, '20k {"image": ~16 KB JPEG-like bytes, "label": int}'
    ),
    "W2": Workload(
        "W2", "tokens", W2_BLOCKS, 8, "24,414 blocks of 2,048 uint16 tokens (50M tokens)"
    ),
    "W3": Workload("W3", "records", W3_COUNT, 256, '200k {"x": float32[16], "y": int}'),
    "W4": Workload(
        "W4", "image", W1_COUNT, 64, "W1 with the first 10% of optimize inputs 10x slower"
    ),
    "W6": Workload(
        "W6",
        "vision",
        10_000,
        256,
        "10k ImageNet-like JPEG photos (median ~500x375, q90); RandomResizedCrop(224) + flip",
    ),
    "W5": Workload(
        "W5",
        "jpeg",
        W5_COUNT,
        32,
        '2k {"image": 256x256 RGB JPEG (~24 KB) decoded in the transform, "label": int}',
    ),
}
#: Kinds stored as W1 is (``images.bin`` + offsets + labels).
IMAGE_KINDS = ("image", "jpeg", "vision")

RANDOM_ACCESS_COUNT = 1_000
REMOTE_RANDOM_COUNT = 200  # remote-random: the first 200 of the same indices
RANDOM_SEED = 1234

# Mixture row: two corpora cut from W2's documents, mixed 0.7/0.3 (see ``MixtureChecker``).
MIX_A_DOCS = 188  # corpus A = documents [0, 188) (~60%), corpus B = the other 125
MIX_BLOCKS = {"A": MIX_A_DOCS * W2_BLOCKS_PER_DOC, "B": (W2_DOCS - MIX_A_DOCS) * W2_BLOCKS_PER_DOC}
MIX_WEIGHTS = (0.7, 0.3)
MIX_SEED = 42
MIX_SHARE_TOLERANCE = 0.05
FINGERPRINTS_FILE = "block-fingerprints-v1.npy"


def data_dir() -> Path:
    """Root of the generated files (``$LITDATA_BENCH_DIR`` or ``~/.cache/litdata-bench/data``)."""
    env = os.environ.get("LITDATA_BENCH_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "litdata-bench" / "data"


def source_dir(workload: str, root: Path | None = None) -> Path:
    """Directory holding the plain files of ``workload`` (W4 shares W1's)."""
    name = "W1" if workload == "W4" else workload
    return (root or data_dir()) / name


# ----------------------------------------------------------------------------------------------
# Generation (parent only).


def _generate_w1(out: Path) -> None:
    rng = np.random.default_rng(1)
    sizes = rng.integers(15_000, 17_400, size=W1_COUNT)
    offsets = np.zeros(W1_COUNT + 1, dtype=np.int64)
    np.cumsum(sizes + 4, out=offsets[1:])
    with open(out / "images.bin.tmp", "wb") as f:
        for i in range(W1_COUNT):
            payload = rng.integers(0, 256, size=int(sizes[i]), dtype=np.uint8).tobytes()
            f.write(b"\xff\xd8" + payload + b"\xff\xd9")
    os.replace(out / "images.bin.tmp", out / "images.bin")
    np.save(out / "offsets.npy", offsets)
    np.save(out / "labels.npy", (np.arange(W1_COUNT, dtype=np.int64) * 7919) % 1000)


def _generate_w5(out: Path) -> None:
    """Real JPEGs: smooth colour fields with noise and a few shapes, as photos compress."""
    import io

    from PIL import Image, ImageDraw

    rng = np.random.default_rng(5)
    side = np.linspace(0.0, 1.0, W5_SIDE, dtype=np.float32)
    offsets = np.zeros(W5_COUNT + 1, dtype=np.int64)
    with open(out / "images.bin.tmp", "wb") as f:
        for i in range(W5_COUNT):
            tilt = rng.uniform(0, 255, size=(3, 3)).astype(np.float32)
            field = (
                tilt[:, 0, None, None] * side[None, :, None]
                + tilt[:, 1, None, None] * side[None, None, :]
                + tilt[:, 2, None, None] * 0.3
            )
            noise = rng.normal(0, 12, size=(3, W5_SIDE, W5_SIDE)).astype(np.float32)
            pixels = np.clip((field * 0.6 + noise), 0, 255).astype(np.uint8).transpose(1, 2, 0)
            image = Image.fromarray(np.ascontiguousarray(pixels), "RGB")
            draw = ImageDraw.Draw(image)
            for _ in range(4):
                x, y = rng.integers(0, W5_SIDE - 40, size=2).tolist()
                w, h = rng.integers(10, 40, size=2).tolist()
                colour = tuple(rng.integers(0, 256, size=3).tolist())
                draw.ellipse((x, y, x + w, y + h), fill=colour)
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=W5_QUALITY)
            f.write(buffer.getvalue())
            offsets[i + 1] = offsets[i] + len(buffer.getvalue())
    os.replace(out / "images.bin.tmp", out / "images.bin")
    np.save(out / "offsets.npy", offsets)
    np.save(out / "labels.npy", (np.arange(W5_COUNT, dtype=np.int64) * 7919) % 1000)


def decode_jpeg(sample: dict[str, Any]) -> dict[str, Any]:
    """W5's transform: the JPEG decoded (Pillow) into a uint8 ``[256, 256, 3]`` tensor."""
    import io

    import torch
    from PIL import Image

    with Image.open(io.BytesIO(sample["image"])) as image:
        pixels = np.array(image if image.mode == "RGB" else image.convert("RGB"))  # writable
    return {"image": torch.from_numpy(pixels), "label": int(sample["label"])}


def _generate_w6(out: Path) -> None:
    from vision_data import generate_w6

    generate_w6(out)


def _vision_expected(root: Path) -> dict[str, int]:
    labels = np.load(source_dir("W6", root) / "labels.npy")
    return {"count": len(labels), "a": int(labels.sum()), "b": 0}


def _generate_w2(out: Path) -> None:
    rng = np.random.default_rng(2)
    tokens = rng.integers(0, 50_257, size=W2_BLOCKS * W2_BLOCK, dtype=np.uint16)
    tokens.tofile(out / "tokens.bin.tmp")
    os.replace(out / "tokens.bin.tmp", out / "tokens.bin")


def _generate_w3(out: Path) -> None:
    rng = np.random.default_rng(3)
    np.save(out / "x.npy", rng.standard_normal((W3_COUNT, W3_DIM), dtype=np.float32))
    np.save(out / "y.npy", rng.integers(0, 10, size=W3_COUNT, dtype=np.int64))


def ensure_data(root: Path | None = None, log: Any = print) -> Path:
    """Generate the workload files and checksums once (reused while ``DATA_VERSION`` matches)."""
    root = root or data_dir()
    root.mkdir(parents=True, exist_ok=True)
    generators = (
        ("W1", _generate_w1),
        ("W2", _generate_w2),
        ("W3", _generate_w3),
        ("W5", _generate_w5),
        ("W6", _generate_w6),
    )
    for name, gen in generators:
        out = root / name
        marker = out / f".complete-v{DATA_VERSION}"
        if marker.exists():
            continue
        out.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        gen(out)
        marker.write_text("ok\n")
        log(f"generated {name} in {time.perf_counter() - start:.1f}s -> {out}")
    checks = root / f"checksums-v{DATA_VERSION}.json"
    if not checks.exists():
        checks.write_text(json.dumps(compute_expected(root), indent=1))
    known = json.loads(checks.read_text())
    if "W5" not in known:  # checksums written before W5 existed
        known["W5"] = _expected_of(Source("W5", root))
        checks.write_text(json.dumps(known, indent=1))
    if "W6" not in known:  # ... or W6: its crops are random, so counts and labels only
        known["W6"] = {"full": _vision_expected(root)}
        checks.write_text(json.dumps(known, indent=1))
    fingerprints = source_dir("W2", root) / FINGERPRINTS_FILE
    if not fingerprints.exists():
        tokens = np.fromfile(source_dir("W2", root) / "tokens.bin", dtype=np.uint16)
        fps = block_fingerprints(tokens.reshape(W2_BLOCKS, W2_BLOCK))
        if len(np.unique(fps)) != W2_BLOCKS:
            raise RuntimeError("W2 block fingerprints collide; change _FINGERPRINT_SEED")
        np.save(fingerprints.with_suffix(".tmp.npy"), fps)
        os.replace(fingerprints.with_suffix(".tmp.npy"), fingerprints)
    return root


# ----------------------------------------------------------------------------------------------
# Access to the files (children).


class Source:
    """Memory-mapped view of one workload's plain files."""

    def __init__(self, workload: str, root: Path | None = None) -> None:
        self.workload = WORKLOADS[workload]
        self.dir = source_dir(workload, root)
        kind = self.workload.kind
        if kind in IMAGE_KINDS:
            self.images = np.memmap(self.dir / "images.bin", dtype=np.uint8, mode="r")
            self.offsets = np.load(self.dir / "offsets.npy")
            self.labels = np.load(self.dir / "labels.npy")
        elif kind == "tokens":
            self.tokens = np.memmap(self.dir / "tokens.bin", dtype=np.uint16, mode="r")
        else:
            self.x = np.load(self.dir / "x.npy", mmap_mode="r")
            self.y = np.load(self.dir / "y.npy", mmap_mode="r")

    def __len__(self) -> int:
        return self.workload.count

    def image(self, i: int) -> bytes:
        """W1 image ``i`` as bytes."""
        return self.images[self.offsets[i] : self.offsets[i + 1]].tobytes()

    def sample(self, i: int) -> Any:
        """Sample ``i`` as the dataset stores it (dict for W1/W3, token block for W2)."""
        kind = self.workload.kind
        if kind in IMAGE_KINDS:
            return {"image": self.image(i), "label": int(self.labels[i])}
        if kind == "tokens":
            return np.array(self.tokens[i * W2_BLOCK : (i + 1) * W2_BLOCK])
        return {"x": np.array(self.x[i]), "y": int(self.y[i])}

    def samples(self) -> Iterator[Any]:
        """All samples in order."""
        for i in range(len(self)):
            yield self.sample(i)

    def document(self, d: int) -> np.ndarray:
        """W2 document ``d`` (78 blocks of tokens) as a uint16 array."""
        start = d * W2_BLOCKS_PER_DOC * W2_BLOCK
        return np.array(self.tokens[start : start + W2_BLOCKS_PER_DOC * W2_BLOCK])


_SOURCES: dict[tuple[str, str], Source] = {}


def _source(workload: str, root: str) -> Source:
    key = (workload, root)
    if key not in _SOURCES:
        _SOURCES[key] = Source(workload, Path(root))
    return _SOURCES[key]


def mixture_inputs(corpus: str) -> list[int]:
    """W2 document indices of mixture corpus ``A`` or ``B`` (inputs to W2's ``optimize_fn``)."""
    return list(range(MIX_A_DOCS)) if corpus == "A" else list(range(MIX_A_DOCS, W2_DOCS))


def optimize_inputs(workload: str) -> list[int]:
    """Inputs given to ``optimize``: sample indices, or W2's document indices."""
    return list(
        range(W2_DOCS if WORKLOADS[workload].kind == "tokens" else WORKLOADS[workload].count)
    )


def optimize_fn(index: int, workload: str, root: str, as_torch: bool = True) -> Any:
    """``optimize`` fn (use via ``functools.partial``): sample ``index`` of ``workload``.

    W2 returns one document (a 1-D token tensor, for ``TokensLoader``); W4 sleeps
    ``W4_BASE_COST_S`` per sample and 10x that for the first 10% of inputs.
    """
    src = _source(workload, root)
    if workload == "W4":
        time.sleep(W4_BASE_COST_S * (10 if index < W1_COUNT // 10 else 1))
    if src.workload.kind == "tokens":
        doc = src.document(index)
        if as_torch:
            import torch

            return torch.from_numpy(doc)
        return doc
    return src.sample(index)


# ----------------------------------------------------------------------------------------------
# Checksums: order-independent, exact, cheap enough to run on every batch.


class Checker:
    """Accumulates an order-independent fingerprint of the samples that came back."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.count = 0
        self.a = 0  # labels sum / token sum / x-bits sum
        self.b = 0  # image fingerprint / block fingerprint / y sum

    def add_image(self, image: Any, label: int) -> None:
        """One W1 sample (``image`` may be bytes or a memoryview)."""
        mv = memoryview(image)
        self.count += 1
        self.a += int(label)
        head = int.from_bytes(mv[2:10], "little")
        self.b = (self.b + head * 31 + len(mv)) & MASK64

    def add_images(self, images: Any, labels: Any) -> None:
        """A W1 batch: a sequence of byte strings and a sequence/tensor/array of labels."""
        labels = _as_numpy(labels)
        if len(images) != len(labels):
            raise ValueError(f"batch has {len(images)} images but {len(labels)} labels")
        for image, label in zip(images, labels.tolist(), strict=True):
            self.add_image(image, label)

    def add_jpegs(self, images: Any, labels: Any) -> None:
        """A W5 batch: decoded images ``[B, 256, 256, 3]`` uint8 and their labels."""
        pixels = _as_numpy(images)
        labels = np.atleast_1d(_as_numpy(labels)).astype(np.int64)
        if pixels.ndim == 3:
            pixels = pixels[None]
        if pixels.shape != (len(labels), W5_SIDE, W5_SIDE, 3):
            raise ValueError(f"images of shape {pixels.shape} for {len(labels)} labels")
        self.count += len(labels)
        self.a += int(labels.sum())
        self.b = (self.b + int(pixels[:, ::17, ::13, :].astype(np.int64).sum())) & MASK64

    def add_vision(self, images: Any, labels: Any) -> None:
        """A W6 batch: one contiguous ``[B, 3, 224, 224]`` uint8 tensor and its labels."""
        from vision_data import check_batch

        count, label_sum = check_batch(images, labels)
        self.count += count
        self.a += label_sum

    def add_tokens(self, blocks: Any) -> None:
        """A W2 batch (2-D) or one block (1-D) of uint16 tokens."""
        arr = _as_numpy(blocks)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.shape[1] != W2_BLOCK:
            raise ValueError(f"token block of length {arr.shape[1]}, expected {W2_BLOCK}")
        arr = arr.astype(np.int64)
        self.count += arr.shape[0]
        self.a += int(arr.sum())
        self.b = (self.b + int((arr[:, 0] * 65_536 + arr[:, -1]).sum())) & MASK64

    def add_records(self, x: Any, y: Any) -> None:
        """A W3 batch (``x``: [B, 16] float32, ``y``: [B]) or one record (``x``: [16])."""
        xa = np.ascontiguousarray(_as_numpy(x), dtype=np.float32)
        if xa.ndim == 1:
            xa = xa[None, :]
        ya = np.atleast_1d(_as_numpy(y)).astype(np.int64)
        if xa.shape != (len(ya), W3_DIM):
            raise ValueError(f"x of shape {xa.shape} for {len(ya)} labels")
        self.count += len(ya)
        self.a = (self.a + int(xa.view(np.int32).astype(np.int64).sum())) & MASK64
        self.b += int(ya.sum())

    def add_sample(self, sample: Any) -> None:
        """One unbatched sample as the workload stores it."""
        if self.kind == "image":
            self.add_image(sample["image"], sample["label"])
        elif self.kind == "jpeg":
            self.add_jpegs(sample["image"], [sample["label"]])
        elif self.kind == "tokens":
            self.add_tokens(sample)
        else:
            self.add_records(sample["x"], sample["y"])

    def result(self) -> dict[str, int]:
        """The fingerprint (compare with ``expected_checks``)."""
        return {"count": self.count, "a": self.a, "b": self.b}


_FINGERPRINT_SEED = 5
_FINGERPRINT_WEIGHTS = np.random.default_rng(_FINGERPRINT_SEED).integers(
    0, np.iinfo(np.uint64).max, size=W2_BLOCK // 4, dtype=np.uint64, endpoint=True
) | np.uint64(1)


def block_fingerprints(blocks: Any) -> np.ndarray:
    """One uint64 per 2,048-token block: a random linear hash (mod 2**64) of all its tokens."""
    arr = np.ascontiguousarray(_as_numpy(blocks), dtype=np.uint16)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.shape[1] != W2_BLOCK:
        raise ValueError(f"token block of length {arr.shape[1]}, expected {W2_BLOCK}")
    return (arr.view(np.uint64) * _FINGERPRINT_WEIGHTS).sum(axis=1, dtype=np.uint64)


class MixtureChecker:
    """Checks a mixture epoch: every block a real block of A or B, none twice, B's share.

    ``add`` only fingerprints each batch (cheap, inside the timed loop); ``result`` looks the
    fingerprints up in W2's precomputed ones (after the timing).
    """

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []

    def add(self, batch: Any) -> int:
        """Fingerprint one batch; returns its number of blocks."""
        fps = block_fingerprints(batch["tokens"] if isinstance(batch, dict) else batch)
        self.parts.append(fps)
        return len(fps)

    def result(self, root: Path) -> dict[str, Any]:
        """Counts per corpus, duplicates and blocks that are no W2 block (``foreign``)."""
        source = np.load(source_dir("W2", root) / FINGERPRINTS_FILE)
        order = np.argsort(source)
        ordered = source[order]
        got = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.uint64)
        pos = np.minimum(np.searchsorted(ordered, got), len(ordered) - 1)
        known = ordered[pos] == got
        block = order[pos[known]]
        a_blocks = int((block < MIX_BLOCKS["A"]).sum())
        count = len(got)
        return {
            "count": count,
            "a_blocks": a_blocks,
            "b_blocks": int(known.sum()) - a_blocks,
            "foreign": int((~known).sum()),
            "duplicates": count - len(np.unique(got)),
        }


def mixture_problems(check: dict[str, Any], mix: str) -> list[str]:
    """Why a mixture epoch is wrong (empty if right).

    ``weighted`` (weights 0.7/0.3, stop when one corpus runs out): no duplicate or foreign block,
    B's share within ``MIX_SHARE_TOLERANCE`` of 0.3, and one corpus fully read. ``all``
    (``iterate_over_all``): every block of A and B exactly once.
    """
    problems = []
    if check.get("foreign"):
        problems.append(f"{check['foreign']} blocks are not W2 blocks")
    if check.get("duplicates"):
        problems.append(f"{check['duplicates']} duplicate blocks")
    a, b = check.get("a_blocks", 0), check.get("b_blocks", 0)
    if mix == "weighted":
        share = b / (a + b) if a + b else 0.0
        if abs(share - MIX_WEIGHTS[1]) > MIX_SHARE_TOLERANCE:
            problems.append(f"B share {share:.3f}, expected {MIX_WEIGHTS[1]}")
        if a != MIX_BLOCKS["A"] and b != MIX_BLOCKS["B"]:
            problems.append(f"stopped with neither corpus exhausted (A {a}, B {b})")
    elif (a, b) != (MIX_BLOCKS["A"], MIX_BLOCKS["B"]):
        problems.append(f"A {a}/{MIX_BLOCKS['A']}, B {b}/{MIX_BLOCKS['B']} blocks")
    return problems


def collate_images(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Collate W1 samples for every torch-style loader: a list of image ``bytes``, a label array.

    torch's default collate cannot batch variable-length ``memoryview``s (what LitData returns for
    ``bytes`` leaves), and ``memoryview``s cannot cross a worker process boundary, so every system
    gets this same collate on W1.
    """
    return {
        "image": [bytes(s["image"]) for s in samples],
        "label": np.fromiter(
            (int(s["label"]) for s in samples), dtype=np.int64, count=len(samples)
        ),
    }


def _as_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return value.numpy()
    return np.asarray(value)


def random_indices(workload: str) -> list[int]:
    """The 1,000 indices of the random-access row (fixed seed)."""
    rng = np.random.default_rng(RANDOM_SEED)
    return rng.integers(0, WORKLOADS[workload].count, size=RANDOM_ACCESS_COUNT).tolist()


def compute_expected(root: Path) -> dict[str, dict[str, dict[str, int]]]:
    """Checksums of a full epoch and of the random-access set, per workload."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for name in ("W1", "W2", "W3"):
        src = Source(name, root)
        full = Checker(src.workload.kind)
        rand = Checker(src.workload.kind)
        if src.workload.kind == "image":
            for i in range(len(src)):
                full.add_image(src.image(i), int(src.labels[i]))
        elif src.workload.kind == "tokens":
            full.add_tokens(np.asarray(src.tokens).reshape(W2_BLOCKS, W2_BLOCK))
        else:
            full.add_records(np.asarray(src.x), np.asarray(src.y))
        for i in random_indices(name):
            rand.add_sample(src.sample(i))
        out[name] = {"full": full.result(), "random": rand.result()}
    out["W4"] = out["W1"]
    out["W5"] = _expected_of(Source("W5", root))
    out["W6"] = {"full": _vision_expected(root)}
    return out


def _expected_of(src: Source) -> dict[str, dict[str, int]]:
    """W5's checksums: of its images as ``decode_jpeg`` decodes them (no random row)."""
    full = Checker(src.workload.kind)
    for i in range(len(src)):
        decoded = decode_jpeg(src.sample(i))
        full.add_jpegs(decoded["image"], [decoded["label"]])
    return {"full": full.result()}


def expected_checks(root: Path | None = None) -> dict[str, dict[str, dict[str, int]]]:
    """Load the checksums written by :func:`ensure_data`."""
    root = root or data_dir()
    return json.loads((root / f"checksums-v{DATA_VERSION}.json").read_text())
