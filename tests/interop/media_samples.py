"""Media samples both sides build (with their own ``litdata``), and one summary of what each
reads back: the interop tests compare LitData's view of a dataset with ours, leaf by leaf.

Needs numpy, Pillow, torch, nibabel, trimesh, pypdf (or pdfplumber to read), tifffile and
torch-geometric on the side that imports it.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import Any

import numpy as np

#: Samples per dataset.
COUNT = 3
#: What both writers record for ``build``'s samples, leaf by leaf.
DATA_FORMAT = [
    "audio:wav",
    "video:mp4",
    "nifti:nii",
    "nifti:gz",  # LitData names Nifti(path="x.nii.gz") by its last suffix
    "mesh:glb",
    "tiff",
    "jpeg_array",
    "graph",
    "graph:pickle",
    "pdf",
]
#: A stand-in MP4 (stored and read back as bytes: decoding needs FFmpeg).
MP4 = b"\x00\x00\x00\x18ftypmp42" + bytes(40)


def pdf_bytes(pages: int) -> bytes:
    """A PDF of ``pages`` blank pages, page ``i`` ``100 + i`` points wide."""
    import pypdf

    writer = pypdf.PdfWriter()
    for page in range(pages):
        writer.add_blank_page(width=100 + page, height=60)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _jpeg(color: tuple[int, int, int]) -> Any:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 8), color).save(buffer, format="JPEG", quality=95)
    return Image.open(io.BytesIO(buffer.getvalue()))


def build(index: int, scratch: Path) -> dict[str, Any]:
    """Sample ``index``: one leaf of every media kind (files for NIfTI go to ``scratch``)."""
    import nibabel
    import torch
    import trimesh

    from litdata import Audio, Graph, JpegArray, Mesh, Nifti, Pdf, Tiff, Video

    voxels = np.arange(24, dtype=np.float32).reshape(2, 3, 4) + index
    gz = scratch / f"volume-{index}.nii.gz"
    nibabel.save(nibabel.Nifti1Image(voxels * 2, np.diag([1.0, 2.0, 3.0, 1.0])), gz)
    tone = (np.sin(np.arange(200) / (5.0 + index)) * 0.5).astype(np.float32)
    return {
        "audio": Audio(array=tone, sampling_rate=8000 + index),
        "video": Video(bytes=MP4 + bytes([index])),
        "nifti": Nifti(array=voxels, affine=np.diag([2.0, 2.0, 2.0, 1.0])),
        "nifti_gz": Nifti(path=str(gz)),
        "mesh": Mesh(mesh=trimesh.creation.box(extents=(1.0 + index, 2.0, 3.0))),
        "tiff": Tiff(array=np.arange(12, dtype=np.uint16).reshape(3, 4) * (index + 1)),
        "jpegs": JpegArray(images=[_jpeg((200, 100, 50)), _jpeg((10, 20, 30 + index))]),
        "graph": Graph(
            x=torch.arange(6, dtype=torch.float32).reshape(3, 2) + index,
            edge_index=torch.tensor([[0, 1], [1, 2]]),
            y=torch.tensor([index]),
        ),
        "opaque": Graph(data=[index, "networkx-like"]),
        "pdf": Pdf(bytes=pdf_bytes(index + 1)),
    }


def _audio(value: Any) -> list[Any]:
    if isinstance(value, bytes | bytearray | memoryview):
        with wave.open(io.BytesIO(bytes(value))) as reader:
            rate = reader.getframerate()
            samples = np.frombuffer(reader.readframes(reader.getnframes()), "<i2")
        return [rate, samples.tolist()]
    return [int(value["sampling_rate"]), np.round(value["array"] * 32768).astype(int).tolist()]


def _volume(image: Any) -> list[Any]:
    return [np.asarray(image.dataobj).tolist(), np.asarray(image.affine).tolist()]


def _mesh(value: Any) -> list[Any]:
    mesh = value.to_geometry() if hasattr(value, "to_geometry") else value
    return [np.round(mesh.extents, 6).tolist(), len(mesh.faces)]


def _pages(document: Any) -> list[float]:
    """Page widths, of a ``pypdf.PdfReader`` (ours) or a ``pdfplumber.PDF`` (LitData's)."""
    widths = []
    for page in document.pages:
        width = getattr(page, "width", None)  # pdfplumber
        widths.append(float(page.mediabox.width if width is None else width))
    return widths


def summary(sample: dict[str, Any]) -> dict[str, Any]:
    """A JSON-able description of a sample read back (by LitData or by us)."""
    return {
        "audio": _audio(sample["audio"]),
        "video": bytes(sample["video"]).hex(),
        "nifti": _volume(sample["nifti"]),
        "nifti_gz": _volume(sample["nifti_gz"]),
        "mesh": _mesh(sample["mesh"]),
        "tiff": [str(sample["tiff"].dtype), sample["tiff"].tolist()],
        "jpegs": [
            [list(image.shape), image.float().mean(dim=(1, 2)).round().tolist()]
            for image in sample["jpegs"]
        ],
        "graph": {key: value.tolist() for key, value in sorted(sample["graph"].to_dict().items())},
        "opaque": sample["opaque"],
        "pdf": _pages(sample["pdf"]),
    }


#: Frames of each temporal record.
TRACKS = (10, 6, 7, 1)


def temporal_record(index: int) -> dict[str, Any]:
    """Record ``index`` for TemporalArrayLoader: arrays and a tensor sharing the frame axis."""
    import torch

    frames = TRACKS[index]
    return {
        "features": np.arange(frames * 2, dtype=np.float32).reshape(frames, 2) + index,
        "score": np.linspace(0, 1, frames, dtype=np.float32),
        "valid": np.arange(frames) % 2 == 0,
        "steps": torch.arange(frames, dtype=torch.int64) * index,
    }


def temporal_summary(record: dict[str, Any]) -> dict[str, Any]:
    """Each field's kind, dtype and values."""
    return {
        name: [type(value).__name__, str(value.dtype), value.tolist()]
        for name, value in record.items()
    }


#: ``read_window`` calls both sides answer: (record, start, frames, fields).
WINDOWS = ((0, 3, 4, ["steps", "features"]), (2, 0, 7, None), (1, 2, 3, ["valid"]), (3, 0, 1, []))
