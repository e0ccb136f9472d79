"""What each interop fixture in ``tests/data/litdata-0.2.76/`` holds (no LitData needed).

``make_fixtures.py`` (run under the peers' interpreter, with Lightning AI's LitData 0.2.76)
writes every dataset from :func:`source_samples`; a reader of that dataset must return
:func:`expected_samples`. Only NumPy and Pillow are required here; torch is imported lazily by
the fixtures whose samples hold tensors. Small media inputs (JPEG/PNG bytes) are committed under
``tests/data/litdata-0.2.76/_media/`` because re-encoding them could differ between Pillow builds.

A dataset's expected samples are listed in global index order, i.e. the order of
``ds[0] .. ds[len-1]`` and of an unshuffled single-process iteration.
"""

from __future__ import annotations

import io
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FIXTURES_ROOT = Path(__file__).resolve().parents[1] / "data" / "litdata-0.2.76"
MEDIA_DIR = FIXTURES_ROOT / "_media"

#: A namedtuple registered with LitData's pytree under :data:`POINT_TYPE_NAME` by both writer
#: and reader (an unregistered namedtuple cannot be written by LitData at all).
Point = namedtuple("Point", ["x", "label", "values"])
POINT_TYPE_NAME = "litdata_interop.Point"


@dataclass(frozen=True)
class Wrapper:
    """Stand-in for a LitData media wrapper (``litdata.Image(bytes=...)`` etc.).

    ``make_fixtures.py`` turns it into the real ``litdata.<kind>(**fields)``.
    """

    kind: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JpegFile:
    """Stand-in for ``PIL.Image.open(path)`` of a committed JPEG (LitData stores its bytes)."""

    name: str


@dataclass(frozen=True)
class Fixture:
    """How a fixture was written and how it must be read."""

    name: str
    writer: str  # "binary_writer" or "optimize"
    options: dict[str, Any]
    count: int
    item_loader: str | None = None  # None (PyTreeLoader) or "tokens:<block_size>"
    description: str = ""


def _torch() -> Any:
    import torch

    return torch


# --------------------------------------------------------------------------------------------
# Media inputs (committed files).

JPEG_NAMES = [f"img{i}.jpg" for i in range(4)]
PNG_NAMES = [f"img{i}.png" for i in range(2)]


def media_pixels(i: int, height: int = 6, width: int = 8) -> np.ndarray:
    """Deterministic RGB pixels for media input ``i``."""
    y, x = np.mgrid[0:height, 0:width]
    r = (x * 29 + i * 50) % 256
    g = (y * 41 + i * 17) % 256
    b = (x * y * 7 + i * 91) % 256
    return np.stack([r, g, b], axis=-1).astype(np.uint8)


def media_bytes(name: str) -> bytes:
    """Return the committed bytes of a media input."""
    return (MEDIA_DIR / name).read_bytes()


def decode_rgb_chw(data: bytes) -> Any:
    """Decode like LitData streams ``jpeg``/``image:*`` leaves back: a uint8 CHW RGB tensor."""
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.load()
    array = np.ascontiguousarray(np.asarray(image.convert("RGB")).transpose(2, 0, 1))
    return _torch().from_numpy(array)


# --------------------------------------------------------------------------------------------
# Sample generators: each returns (source sample, expected sample) for index i.


def _leaves(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    torch = _torch()
    src = {
        "int": i * 7 - 3,
        "float": i / 4 - 1.0,
        "bool": i % 2 == 0,
        "str": f"sample-{i}-é",
        "bytes": bytes((i * 13 + k) % 256 for k in range(5 + i)),
        "np1d_i16": (np.arange(5, dtype=np.int16) * (i + 1) - 7).astype(np.int16),
        "np1d_f64": np.linspace(0.0, 1.0, 4, dtype=np.float64) * i,
        "npnd_f32": (np.arange(6, dtype=np.float32).reshape(2, 3) + i / 2).astype(np.float32),
        "npnd_u8": (np.arange(24, dtype=np.int64).reshape(2, 3, 4) * (i + 3) % 256).astype(
            np.uint8
        ),
        "t1d_i64": torch.arange(4, dtype=torch.int64) * (i - 5),
        "t1d_u8": torch.arange(3, dtype=torch.uint8) + i,
        "tnd_f32": torch.arange(4, dtype=torch.float32).reshape(2, 2) * (i + 0.25),
        "t0d_i32": torch.tensor(i * 11, dtype=torch.int32),
        "none": None,
        "complex": complex(i, -2 * i),
        "np_int64": np.int64(i * 1000 + 1),
        "np_float32": np.float32(i + 0.5),
    }
    return src, dict(src)


def _media(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    from PIL import Image

    torch = _torch()
    jpeg = media_bytes(JPEG_NAMES[i])
    png = media_bytes(PNG_NAMES[i % 2])
    pil_rgb = Image.fromarray(media_pixels(i), "RGB")
    pil_l = Image.fromarray(media_pixels(i)[:, :, 0], "L")
    tokens = np.arange(5, dtype=np.uint16) * 1000 + i
    src = {
        "pil_rgb": pil_rgb,
        "pil_l": pil_l,
        "jpeg_file": JpegFile(JPEG_NAMES[i]),
        "image_jpeg": Wrapper("Image", {"bytes": jpeg}),
        "image_png": Wrapper("Image", {"bytes": png}),
        "jpeg_wrapper": Wrapper("Jpeg", {"bytes": jpeg}),
        "pil_wrapper": Wrapper("Pil", {"image": pil_rgb}),
        "file": Wrapper("File", {"bytes": b"file payload %d" % i}),
        "text": Wrapper("Text", {"text": f"text é {i}"}),
        "tensor_1d": Wrapper("Tensor", {"array": tokens}),
    }
    expected = {
        "pil_rgb": pil_rgb,
        "pil_l": pil_l,
        "jpeg_file": decode_rgb_chw(jpeg),
        "image_jpeg": decode_rgb_chw(jpeg),
        "image_png": decode_rgb_chw(png),
        "jpeg_wrapper": decode_rgb_chw(jpeg),
        "pil_wrapper": pil_rgb,
        "file": b"file payload %d" % i,
        "text": f"text é {i}",
        "tensor_1d": torch.from_numpy(tokens.copy()),
    }
    return src, expected


def _nested_list(i: int) -> tuple[list[Any], list[Any]]:
    src = [i, f"s{i}", [i, i + 1, (i * 2, "t")], {"k": i, "arr": np.arange(3, dtype=np.int32) + i}]
    return src, src


def _nested_tuple(i: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    src = (i, np.arange(3, dtype=np.float32) + i, {"a": i, "b": (1.5 * i, "x")}, ())
    return src, src


def _nested_dict(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    src = {
        "meta": {"id": i, "name": f"n{i}", "inner": {"flag": i % 3 == 0, "score": i * 0.125}},
        "pair": (i, f"p{i}"),
        "arr": np.full((2, 2), i, dtype=np.int64),
    }
    return src, src


def _json_leaves(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    src = {
        "id": i,
        "tags": [f"t{i}", "x", "é"],
        "ids": [i, i + 1, -i],
        "floats": [0.5 * i, 1.5],
        "bools": [True, i % 2 == 1],
        "records": [{"k": i, "v": "a"}, {"k": -i, "v": "b"}],
        "mixed": [1, "a", None, 2.5],
        "lists": [[i], [i, i + 1]],
        "empty": [],
        "inner": {"values": [i, 2 * i], "name": f"in{i}"},
        "arr": np.arange(2, dtype=np.int16) + i,
    }
    return src, src


def _scalar_int(i: int) -> tuple[int, int]:
    return i * 3 - 4, i * 3 - 4


def _namedtuple(i: int) -> tuple[Any, Any]:
    src = Point(i, f"pt{i}", np.arange(2, dtype=np.float64) * i)
    return src, src


def _records(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Records for chunking/compression/worker fixtures (carry a numpy leaf, see NOTES.md)."""
    src = {
        "index": i,
        "x": (np.arange(16, dtype=np.float32) + i).astype(np.float32),
        "payload": bytes((i + k) % 7 for k in range(40 + i)),
    }
    return src, dict(src)


def token_sequence(i: int, dtype: Any = np.uint16) -> np.ndarray:
    """The ``i``-th token sequence written to the tokens fixtures (length ``100 + 37 i``)."""
    n = 100 + 37 * i
    return ((np.arange(n, dtype=np.int64) * 7 + i * 1000) % 65536).astype(dtype)


TOKEN_SEQUENCES = 10
TOKEN_CHUNK_SIZE = 600  # tokens per chunk (TokensLoader counts tokens, not sequences)
TOKEN_BLOCK = 64


def _token_chunks() -> list[list[int]]:
    """Sequence indices per chunk, as LitData groups them (closed before tokens > chunk_size)."""
    chunks: list[list[int]] = [[]]
    tokens = 0
    for i in range(TOKEN_SEQUENCES):
        n = len(token_sequence(i))
        if chunks[-1] and tokens + n > TOKEN_CHUNK_SIZE:
            chunks.append([])
            tokens = 0
        chunks[-1].append(i)
        tokens += n
    return chunks


def token_blocks(as_torch: bool) -> list[Any]:
    """What ``TokensLoader(block_size=TOKEN_BLOCK)`` returns: ``dim // block`` blocks per chunk."""
    out: list[Any] = []
    for chunk in _token_chunks():
        tokens = np.concatenate([token_sequence(i) for i in chunk])
        for b in range(len(tokens) // TOKEN_BLOCK):
            block = tokens[b * TOKEN_BLOCK : (b + 1) * TOKEN_BLOCK].copy()
            out.append(_torch().from_numpy(block) if as_torch else block)
    return out


# --------------------------------------------------------------------------------------------
# The fixture table.

FIXTURES: dict[str, Fixture] = {
    f.name: f
    for f in [
        Fixture(
            "leaves",
            "binary_writer",
            {"chunk_size": 4},
            10,
            description="dict samples with every basic leaf kind; 3 chunks (4, 4, 2)",
        ),
        Fixture(
            "media",
            "binary_writer",
            {"chunk_size": 2},
            4,
            description="PIL images, JPEG files and LitData media wrappers",
        ),
        Fixture(
            "nested_list",
            "binary_writer",
            {"chunk_size": 3},
            5,
            description="top-level list samples",
        ),
        Fixture(
            "nested_tuple",
            "binary_writer",
            {"chunk_size": 3},
            5,
            description="top-level tuple samples",
        ),
        Fixture(
            "nested_dict",
            "binary_writer",
            {"chunk_size": 3},
            5,
            description="dict-in-dict and tuple-in-dict",
        ),
        Fixture(
            "json_leaves",
            "binary_writer",
            {"chunk_size": 3},
            5,
            description="lists inside dict samples (LitData 0.2.76 stores each as one 'json' leaf)",
        ),
        Fixture(
            "scalar_int", "binary_writer", {"chunk_size": 4}, 6, description="bare int samples"
        ),
        Fixture(
            "namedtuple",
            "binary_writer",
            {"chunk_size": 2},
            3,
            description=f"registered namedtuple samples ({POINT_TYPE_NAME})",
        ),
        Fixture(
            "chunk_bytes",
            "optimize",
            {"chunk_bytes": "1kb", "num_workers": 1},
            20,
            description="optimize with chunk_bytes='1kb' (several chunks)",
        ),
        Fixture(
            "zstd",
            "optimize",
            {"chunk_size": 4, "compression": "zstd", "num_workers": 1},
            10,
            description="compression='zstd' (0.2.76 default: framed zstd inside .bin)",
        ),
        Fixture(
            "zstd_frames",
            "optimize",
            {
                "chunk_size": 5,
                "compression": "zstd:7",
                "compression_batch_size": 2,
                "num_workers": 1,
            },
            10,
            description="compression='zstd:7', 2 items per zstd frame",
        ),
        Fixture(
            "zstd_sample",
            "optimize",
            {
                "chunk_size": 4,
                "compression": "zstd",
                "compression_level": "sample",
                "num_workers": 1,
            },
            10,
            description="compression_level='sample' (each item its own zstd frame)",
        ),
        Fixture(
            "zstd_chunk",
            "optimize",
            {
                "chunk_size": 4,
                "compression": "zstd",
                "compression_level": "chunk",
                "num_workers": 1,
            },
            10,
            description="compression_level='chunk' (whole file, chunk-R-I.zstd.bin)",
        ),
        Fixture(
            "zstd_chunk_level",
            "optimize",
            {
                "chunk_size": 4,
                "compression": "zstd:7",
                "compression_level": "chunk",
                "num_workers": 1,
            },
            10,
            description="compression='zstd:7', compression_level='chunk' (chunk-R-I.zstd:7.bin)",
        ),
        Fixture(
            "tokens",
            "optimize",
            {"chunk_size": TOKEN_CHUNK_SIZE, "num_workers": 1, "tokens": True},
            len(token_blocks(as_torch=False)),
            item_loader=f"tokens:{TOKEN_BLOCK}",
            description="TokensLoader, uint16 torch tensors, several chunks",
        ),
        Fixture(
            "tokens_numpy",
            "optimize",
            {"chunk_size": TOKEN_CHUNK_SIZE, "num_workers": 1, "tokens": True, "numpy": True},
            len(token_blocks(as_torch=False)),
            item_loader=f"tokens:{TOKEN_BLOCK}",
            description="TokensLoader, uint16 numpy arrays",
        ),
        Fixture(
            "workers2",
            "optimize",
            {"chunk_size": 4, "num_workers": 2, "keep_data_ordered": True},
            12,
            description="optimize(num_workers=2): chunk-0-* and chunk-1-*",
        ),
    ]
}

_GENERATORS: dict[str, Callable[[int], tuple[Any, Any]]] = {
    "leaves": _leaves,
    "media": _media,
    "nested_list": _nested_list,
    "nested_tuple": _nested_tuple,
    "nested_dict": _nested_dict,
    "json_leaves": _json_leaves,
    "scalar_int": _scalar_int,
    "namedtuple": _namedtuple,
    "chunk_bytes": _records,
    "zstd": _records,
    "zstd_frames": _records,
    "zstd_sample": _records,
    "zstd_chunk": _records,
    "zstd_chunk_level": _records,
    "workers2": _records,
}


def source_samples(name: str) -> list[Any]:
    """The samples (or optimize inputs' outputs) written into fixture ``name``, in order."""
    fixture = FIXTURES[name]
    if fixture.options.get("tokens"):
        if fixture.options.get("numpy"):
            return [token_sequence(i) for i in range(TOKEN_SEQUENCES)]
        return [_torch().from_numpy(token_sequence(i)) for i in range(TOKEN_SEQUENCES)]
    return [_GENERATORS[name](i)[0] for i in range(fixture.count)]


def expected_samples(name: str) -> list[Any]:
    """What ``ds[i]`` returns for every ``i`` of fixture ``name`` (read with its item loader)."""
    fixture = FIXTURES[name]
    if fixture.options.get("tokens"):
        return token_blocks(as_torch=not fixture.options.get("numpy"))
    return [_GENERATORS[name](i)[1] for i in range(fixture.count)]


def fixture_dir(name: str) -> Path:
    """Directory of fixture ``name``."""
    return FIXTURES_ROOT / name
