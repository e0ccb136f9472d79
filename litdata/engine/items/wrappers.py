"""Media wrappers (LitData's): mark a sample leaf as a file, text, image, tensor or media.

``Image(path=...)`` keeps the file's encoded bytes; ``Image(array=...)`` or ``Image(image=...)``
encodes pixels (PNG by default, or ``format``/``quality``). ``File(path=...)`` stores any
file's bytes. ``Audio``, ``Video``, ``Pdf``, ``Nifti``, ``Mesh``, ``Tiff``, ``JpegArray`` and
``Graph`` do the same for their kinds of data; their serializers need optional packages (see
``docs/plugins/serializers.md``). Wrappers are leaves of a sample, not containers.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "Audio",
    "File",
    "Graph",
    "Image",
    "Jpeg",
    "JpegArray",
    "Mesh",
    "Nifti",
    "Pdf",
    "Pil",
    "Tensor",
    "Text",
    "Tiff",
    "Video",
]


@dataclass
class _MediaRef:
    path: str | os.PathLike[str] | None = None
    bytes: builtins.bytes | bytearray | None = None

    def __post_init__(self) -> None:
        if self.path is not None:
            self.path = os.fspath(self.path)
        if self.bytes is not None and not isinstance(self.bytes, builtins.bytes | bytearray):
            raise TypeError(f"bytes= must be bytes or bytearray, got {type(self.bytes).__name__}")

    def read(self) -> builtins.bytes:
        """The referenced bytes (reading the file at ``path`` if needed)."""
        if self.bytes is not None:
            return builtins.bytes(self.bytes)
        if self.path is None:
            raise ValueError(f"{type(self).__name__}() needs path= or bytes=")
        with open(self.path, "rb") as handle:
            return handle.read()


@dataclass
class File(_MediaRef):
    """A file stored as its bytes; it streams back as ``bytes``."""


@dataclass
class Text(_MediaRef):
    """Text stored as UTF-8 (``text=``, or the bytes of ``path``/``bytes``); read as ``str``.

    Attributes:
        text: The text itself.
    """

    text: str | None = None


@dataclass
class _Pixels(_MediaRef):
    """An image given as a file (``path``/``bytes``), as pixels, or as a PIL image.

    Attributes:
        array: Pixels (``HxW`` or ``HxWxC``).
        image: A PIL image.
        mode: A PIL mode to convert to first (e.g. ``"RGB"``).
    """

    array: Any = None
    image: Any = None
    mode: str | None = None

    @property
    def needs_encoding(self) -> bool:
        """Whether pixels must be encoded (rather than stored as the given bytes)."""
        return any(value is not None for value in (self.array, self.image, self.mode))


@dataclass
class Image(_Pixels):
    """An image stored as encoded bytes; it streams back as a ``uint8`` RGB tensor ``(3, H, W)``.

    Attributes:
        format: The encoding (``"jpeg"``, ``"png"``, ``"webp"``...); PNG for arrays by default.
        quality: JPEG/WebP quality.
    """

    format: str | None = None
    quality: int | None = None

    @property
    def needs_encoding(self) -> bool:
        """Whether pixels must be encoded (rather than stored as the given bytes)."""
        return super().needs_encoding or self.format is not None or self.quality is not None


@dataclass
class Jpeg(_Pixels):
    """A JPEG image; streams back as a ``uint8`` RGB tensor ``(3, H, W)``.

    Given only ``path``/``bytes``, the bytes are stored as they are; otherwise (pixels, a
    ``mode`` or a ``quality``) the pixels are (re-)encoded.

    Attributes:
        quality: The JPEG quality; the ``jpeg`` serializer's default (95) when not given.
    """

    quality: int | None = None

    @property
    def needs_encoding(self) -> bool:
        """Whether pixels must be encoded (rather than stored as the given bytes)."""
        return super().needs_encoding or self.quality is not None


@dataclass
class Pil(_Pixels):
    """An image stored as raw pixels (LitData's ``pil`` layout); streams back as a PIL image."""


@dataclass
class Tensor(_MediaRef):
    """An array stored as a tensor; streams back as a ``torch.Tensor``.

    A 1-D array (or raw ``path``/``bytes`` with a ``dtype``) is stored without a header, as
    token streams are.

    Attributes:
        array: A numpy array or tensor.
        dtype: The dtype of raw ``path``/``bytes`` data (a numpy or torch dtype, or its name).
    """

    array: Any = None
    dtype: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.array is None and self.dtype is None:
            raise TypeError(
                "Tensor() needs array=, or path=/bytes= with dtype= (e.g. dtype='int16') to "
                "say how to read the raw data."
            )

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        if self.array is None:
            raise ValueError("Tensor.shape needs array=")
        return tuple(self.array.shape)


@dataclass
class Audio(_MediaRef):
    """Audio: a file (``path``/``bytes``, stored as it is) or a waveform (stored as 16-bit WAV).

    It streams back as a decoded-audio mapping with ``["array"]`` and ``["sampling_rate"]``.

    Attributes:
        array: Samples, ``(samples,)`` or ``(channels, samples)``, floats in ``[-1, 1]`` or
            integers.
        sampling_rate: Samples per second; required with ``array``.
        num_channels: Channels to decode to (torchcodec only).
        stream_index: The audio stream of a container to decode (torchcodec only).
    """

    array: Any = None
    sampling_rate: int | None = None
    num_channels: int | None = None
    stream_index: int | None = None


@dataclass
class Video(_MediaRef):
    """A video: a file (``path``/``bytes``, stored as it is) or frames (encoded as MP4).

    It streams back as a torchcodec ``VideoDecoder`` made with these decoding options.

    Attributes:
        array: Frames, ``(N, H, W, C)`` or ``(N, C, H, W)`` ``uint8``.
        fps: Frames per second of ``array``.
        stream_index: The video stream to decode.
        dimension_order: ``"NCHW"`` or ``"NHWC"`` frames from the decoder.
        num_ffmpeg_threads: Decoder threads.
        seek_mode: ``"approximate"`` or ``"exact"``.
        device: Where frames are decoded (``"cpu"``; ``"cuda"`` outside DataLoader workers).
    """

    array: Any = None
    fps: float = 25.0
    stream_index: int | None = None
    dimension_order: str = "NCHW"
    num_ffmpeg_threads: int = 1
    seek_mode: str = "approximate"
    device: str = "cpu"


@dataclass
class Pdf(_MediaRef):
    """A PDF document stored as its bytes; it streams back as a ``pypdf.PdfReader``.

    Attributes:
        pdf: An open document (``pypdf.PdfReader`` or ``pdfplumber.PDF``) to store instead.
    """

    pdf: Any = None


@dataclass
class Nifti(_MediaRef):
    """A NIfTI volume; it streams back as a ``nibabel.Nifti1Image``.

    Attributes:
        image: A nibabel image to store.
        array: Voxels to store as a NIfTI-1 image (with ``affine``).
        affine: The ``4x4`` voxel-to-world matrix of ``array`` (identity by default).
    """

    image: Any = None
    array: Any = None
    affine: Any = None


@dataclass
class Mesh(_MediaRef):
    """A 3-D mesh; it streams back as what ``trimesh.load`` returns for its file type.

    Attributes:
        mesh: A ``trimesh.Trimesh`` or ``trimesh.Scene`` to store (exported as ``file_type``).
        file_type: ``"glb"``, ``"ply"`` or ``"stl"``.
    """

    mesh: Any = None
    file_type: str = "glb"


@dataclass
class Tiff(_MediaRef):
    """A TIFF image; it streams back as a numpy array (as ``tifffile.imread`` reads it).

    Attributes:
        array: Pixels to store as a TIFF.
        image: A PIL image to store as a TIFF.
    """

    array: Any = None
    image: Any = None


@dataclass
class JpegArray:
    """Several JPEG images as one leaf; it streams back as a list of ``uint8`` ``(3, H, W)``.

    Attributes:
        images: PIL images (JPEG files keep their bytes), pixel arrays, or JPEG ``bytes``.
        quality: The JPEG quality of images that must be encoded (95 when not given).
    """

    images: list[Any] = field(default_factory=list)
    quality: int | None = None


#: The fields of a ``Graph`` that are PyG's standard attributes.
GRAPH_FIELDS = ("x", "edge_index", "edge_attr", "y", "pos", "batch")


@dataclass
class Graph:
    """A graph (PyG's attributes); it streams back as a PyG ``Data``, or a ``Graph`` without PyG.

    Attributes:
        x: Node features.
        edge_index: ``(2, E)`` edge list.
        edge_attr: Edge features.
        y: Targets.
        pos: Node positions.
        batch: Node-to-graph assignment.
        data: More attributes as a mapping, or any other graph object (e.g. a NetworkX graph,
            which is stored pickled).
    """

    x: Any = None
    edge_index: Any = None
    edge_attr: Any = None
    y: Any = None
    pos: Any = None
    batch: Any = None
    data: Any = None

    @property
    def is_opaque(self) -> bool:
        """Whether ``data`` is an object other than a mapping (stored pickled, as it is)."""
        return self.data is not None and not isinstance(self.data, Mapping)

    def to_mapping(self) -> dict[str, Any]:
        """The attributes as one mapping: ``data``'s, then the fields that are set.

        Raises:
            TypeError: ``data`` is an opaque object, not a mapping.
        """
        if self.is_opaque:
            raise TypeError(
                f"Graph(data=<{type(self.data).__qualname__}>) is an opaque object, not a "
                "mapping: it cannot be combined with other fields."
            )
        mapping = dict(self.data or {})
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name != "data" and value is not None:
                mapping[item.name] = value
        return mapping

    def to_pyg(self) -> Any:
        """A ``torch_geometric.data.Data`` with these attributes (needs torch-geometric).

        Raises:
            ImportError: torch-geometric is not installed; says which extra installs it.
        """
        from litdata.core.imports import require

        data_module = require("torch_geometric.data", extra="graph", purpose="Graph.to_pyg()")
        return data_module.Data.from_dict(self.to_mapping())
