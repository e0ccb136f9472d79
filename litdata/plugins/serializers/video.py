"""``video``: video files as they are, frames encoded as MP4 (``video:<ext>``).

Reading gives a torchcodec ``VideoDecoder`` (lazy: frames are decoded when asked for), which
needs torchcodec and FFmpeg's shared libraries (``pip install '<litdata clone>[video]'``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from litdata.engine.items.wrappers import Video
from litdata.plugins.serializers._codecs import torchcodec_module
from litdata.plugins.serializers._paths import extension_of, media_path

__all__ = ["VIDEO_EXTENSIONS", "VideoSerializer"]

VIDEO_EXTENSIONS = frozenset(
    {"mp4", "ogv", "mjpeg", "avi", "mov", "h264", "mpg", "mpeg", "webm", "wmv", "mkv"}
)
_DECODES = ("decoder", "bytes")


def encode_mp4(frames: Any, fps: float) -> bytes:
    """MP4 bytes of ``uint8`` frames ``(N, C, H, W)`` or ``(N, H, W, C)``, with torchcodec.

    Raises:
        ImportError: torchcodec or FFmpeg is missing.
        ValueError: ``frames`` is not 4-D with 1 or 3 channels.
    """
    import torch

    tensor = torch.as_tensor(frames)
    if tensor.ndim != 4:  # noqa: PLR2004  (frames, channels, height, width)
        raise ValueError(f"Video(array=...) must be 4-D frames, got shape {tuple(tensor.shape)}")
    if tensor.shape[1] not in (1, 3) and tensor.shape[-1] in (1, 3):
        tensor = tensor.permute(0, 3, 1, 2)
    encoders: Any = torchcodec_module(
        "encoders", extra="video", purpose="Encoding Video(array=...)"
    )
    encoder = encoders.VideoEncoder(tensor.to(torch.uint8).contiguous(), frame_rate=fps)
    return bytes(encoder.to_tensor(format="mp4").numpy().tobytes())


class VideoSerializer:
    """``Video`` wrappers and paths to video files.

    Args:
        decode: ``"decoder"`` (a torchcodec ``VideoDecoder``) or ``"bytes"`` (the file).
        seek_mode: The decoder's ``"approximate"`` or ``"exact"`` seeking.
        device: Where frames are decoded; always ``"cpu"`` inside DataLoader workers.
        num_ffmpeg_threads: Decoder threads.
        dimension_order: ``"NCHW"`` or ``"NHWC"``.
        stream_index: The video stream to decode (the best one when ``None``).
    """

    name: ClassVar[str] = "video"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Video",
        "builtins.str",
    )
    priority: ClassVar[int] = 224

    def __init__(
        self,
        decode: str = "decoder",
        *,
        seek_mode: str = "approximate",
        device: str = "cpu",
        num_ffmpeg_threads: int = 1,
        dimension_order: str = "NCHW",
        stream_index: int | None = None,
    ) -> None:
        if decode not in _DECODES:
            raise ValueError(f"VideoSerializer(decode={decode!r}): choose one of {_DECODES}")
        self.decode = decode
        self.options: dict[str, Any] = {
            "seek_mode": seek_mode,
            "device": device,
            "num_ffmpeg_threads": num_ffmpeg_threads,
            "dimension_order": dimension_order,
            "stream_index": stream_index,
        }

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Video`` wrappers and existing files with a video extension."""
        return isinstance(item, Video) or media_path(item, VIDEO_EXTENSIONS) is not None

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The file's bytes, or frames encoded as MP4."""
        path = media_path(item, VIDEO_EXTENSIONS)
        if path is not None:
            item = Video(path=path)
        if not isinstance(item, Video):
            raise TypeError(f"expected a Video or a video file path, got {type(item).__qualname__}")
        if item.array is not None:
            return encode_mp4(item.array, item.fps), "video:mp4"
        data = item.read()
        return data, f"video:{extension_of(item.path) or 'mp4'}"  # LitData names bytes= so

    def deserialize(self, data: bytes | memoryview) -> Any:
        """A torchcodec ``VideoDecoder`` over the file, or its bytes (``decode="bytes"``)."""
        if self.decode == "bytes":
            return bytes(data)
        import torch.utils.data

        decoders: Any = torchcodec_module("decoders", extra="video", purpose="Decoding video")
        options = dict(self.options)
        if torch.utils.data.get_worker_info() is not None:
            options["device"] = "cpu"  # CUDA cannot be used from DataLoader worker processes
        return decoders.VideoDecoder(bytes(data), **options)

    def setup(self, data_format: str) -> None:
        """Nothing to prepare: the decoder reads the container's kind from its bytes."""
