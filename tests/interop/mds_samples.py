"""The samples of the MDS and WebDataset interop tests: the same on both sides.

Pure NumPy + Pillow, imported by the peers' scripts and by our tests.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

import numpy as np

#: One column per MDS encoding MosaicML Streaming 0.13 writes.
COLUMNS = {
    "id": "int",
    "si": "str_int",
    "sf": "str_float",
    "sd": "str_decimal",
    "name": "str",
    "blob": "bytes",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "arr": "ndarray",
    "arr_dtype": "ndarray:int16",
    "arr_fixed": "ndarray:float32:2,3",
    "meta": "json",
    "obj": "pkl",
    "raw_img": "pil",
    "jpg": "jpeg",
    "png_img": "png",
    "pils": "list[pil]",
    "jpgs": "list[jpeg]",
    "pngs": "list[png]",
    "jpeg_arr": "jpeg_array",
}

#: Three plain columns, for streaming, resume and mixing tests.
SIMPLE_COLUMNS = {"id": "int", "name": "str", "vec": "ndarray:float32:4"}

_ARRAY_DTYPES = ["uint8", "int8", "uint16", "int16", "float16", "uint32", "int32", "float32"]


def _image(index: int) -> Any:
    from PIL import Image

    pixels = (np.arange(6 * 5 * 3, dtype=np.uint16).reshape(6, 5, 3) * (index + 1)) % 256
    return Image.fromarray(pixels.astype(np.uint8), "RGB")


def _encoded(index: int, kind: str) -> bytes:
    out = io.BytesIO()
    _image(index).save(out, format=kind)
    return out.getvalue()


def mds_sample(index: int) -> dict[str, Any]:
    """Sample ``index``: every column, with values that vary in size and content."""
    dtype = _ARRAY_DTYPES[index % len(_ARRAY_DTYPES)]
    shape = (1 + index % 3, 2 + index % 4) if index % 2 else (3 + index % 5,)
    return {
        "id": index,
        "si": index * 10**20,
        "sf": index / 7,
        "sd": Decimal(index) / Decimal(8),
        "name": f"sample-{index}" * (1 + index % 4),
        "blob": bytes(range(index % 256)) * 2,
        "u8": index % 256,
        "u16": 1000 + index,
        "u32": 100_000 + index,
        "u64": 2**40 + index,
        "i8": -(index % 128),
        "i16": -1000 - index,
        "i32": -100_000 - index,
        "i64": -(2**40) - index,
        "f16": index / 4,
        "f32": index / 3,
        "f64": index / 9,
        "arr": (np.arange(int(np.prod(shape))) + index).astype(dtype).reshape(shape),
        "arr_dtype": np.full((2, 1 + index % 3), index, dtype=np.int16),
        "arr_fixed": np.arange(6, dtype=np.float32).reshape(2, 3) * index,
        "meta": {"index": index, "tags": ["a", "b"][: index % 3], "score": index / 2},
        "obj": {"index": index, "pair": (index, str(index)), "set": {index}},
        "raw_img": _image(index),
        "jpg": _image(index + 2),
        "png_img": _image(index + 1),
        "pils": [_image(index + k) for k in range(index % 3)],
        "jpgs": [_image(index + k) for k in range(1 + index % 2)],
        "pngs": [_image(index + k) for k in range(1 + index % 3)],
        "jpeg_arr": [_encoded(index + k, "JPEG") for k in range(1 + index % 2)],
    }


def simple_sample(index: int) -> dict[str, Any]:
    """Sample ``index`` of the three-column datasets."""
    return {
        "id": index,
        "name": f"row-{index}",
        "vec": np.arange(4, dtype=np.float32) + index,
    }


def wds_sample(index: int) -> dict[str, Any]:
    """WebDataset sample ``index``: a key and a few typed members."""
    return {
        "__key__": f"sample{index:05d}",
        "txt": f"caption {index}",
        "cls": str(index % 10),
        "json": json.dumps({"index": index}),
        "bin": bytes([index % 256]) * (1 + index % 17),
    }


def wds_rows(tar: str) -> Any:
    """``optimize``'s ``fn`` in the WebDataset ingest test: one row per sample of a tar."""
    import litdata

    for sample in litdata.iter_webdataset_tar(tar):
        yield {"key": sample["__key__"], "label": int(sample["cls"]), "text": sample["txt"]}
