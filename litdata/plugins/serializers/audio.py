"""``audio``: audio files as they are, waveforms as 16-bit WAV (``audio:<ext>``).

Reading gives a :class:`DecodedAudio` (``x["array"]``, ``x["sampling_rate"]``), decoded by
torchcodec when it works here, else, for WAV, by the standard library's ``wave`` module.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from litdata.engine.items.wrappers import Audio
from litdata.plugins.serializers._codecs import torchcodec_module
from litdata.plugins.serializers._paths import extension_of, media_path

__all__ = ["AUDIO_EXTENSIONS", "AudioSerializer", "DecodedAudio", "encode_wav"]

AUDIO_EXTENSIONS = frozenset({"wav", "mp3", "flac", "ogg", "opus", "m4a", "aac", "wma", "pcm"})
_DECODES = ("decoder", "samples", "bytes")


def encode_wav(samples: Any, sampling_rate: int) -> bytes:
    """A 16-bit PCM WAV file of ``samples`` (``(n,)`` or ``(channels, n)``).

    Floats are taken as ``[-1, 1]`` (clipped); integers as 16-bit values.

    Raises:
        ValueError: ``samples`` has more than two dimensions, or the rate is not positive.
    """
    array = np.asarray(samples.numpy() if hasattr(samples, "numpy") else samples)
    if array.ndim not in (1, 2):
        raise ValueError(
            f"Audio(array=...) must be (samples,) or (channels, samples), got {array.shape}"
        )
    if not isinstance(sampling_rate, int) or sampling_rate <= 0:
        raise ValueError(
            f"Audio(array=...) needs a positive int sampling_rate=, got {sampling_rate!r}"
        )
    channels = array.reshape(1, -1) if array.ndim == 1 else array
    if channels.dtype.kind == "f":
        pcm = np.round(np.clip(channels, -1.0, 1.0) * 32767.0).astype("<i2")
    else:
        pcm = np.clip(channels, -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(pcm.shape[0])
        writer.setsampwidth(2)
        writer.setframerate(sampling_rate)
        writer.writeframes(np.ascontiguousarray(pcm.T).tobytes())
    return buffer.getvalue()


def _read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """``(channels, samples)`` float32 in ``[-1, 1)`` and the rate, read with ``wave``."""
    with wave.open(io.BytesIO(data), "rb") as reader:
        width, channels = reader.getsampwidth(), reader.getnchannels()
        rate, raw = reader.getframerate(), reader.readframes(reader.getnframes())
    if width == 1:  # 8-bit WAV is unsigned
        values = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width in (2, 4):
        integers = np.frombuffer(raw, f"<i{width}")
        values = integers.astype(np.float32) / float(2 ** (8 * width - 1))
    else:
        raise ValueError(f"{8 * width}-bit WAV needs torchcodec to decode")
    return values.reshape(-1, channels).T.copy(), rate


class DecodedAudio(Mapping[str, Any]):
    """Stored audio, decoded on first access: ``x["array"]`` and ``x["sampling_rate"]``.

    ``array`` is float32 ``(samples,)`` for mono, ``(channels, samples)`` otherwise. The
    encoded file stays in ``data``; the object pickles as those bytes.

    Args:
        data: The encoded file.
        extension: Its kind (``"wav"``, ``"mp3"``...).
        options: torchcodec ``AudioDecoder`` options (``sample_rate``, ``num_channels``,
            ``stream_index``); any of them needs torchcodec, even for WAV.
    """

    def __init__(
        self, data: bytes, extension: str = "wav", options: Mapping[str, Any] | None = None
    ) -> None:
        self.data = data
        self.extension = extension
        self.options = {key: value for key, value in (options or {}).items() if value is not None}
        self._decoded: tuple[np.ndarray, int] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_decoded": None}

    def samples(self) -> tuple[np.ndarray, int]:
        """``(channels, samples)`` float32 and the sampling rate.

        Raises:
            ImportError: Decoding this kind of file needs torchcodec, which does not work here.
        """
        if self._decoded is None:
            decoders: Any = torchcodec_module(
                "decoders",
                extra="audio",
                purpose="Decoding audio" + (f" with {self.options}" if self.options else ""),
                required=bool(self.options) or not self._is_wav(),
            )
            if decoders is None:
                self._decoded = _read_wav(self.data)
            else:
                decoded = decoders.AudioDecoder(self.data, **self.options).get_all_samples()
                self._decoded = decoded.data.numpy(), int(decoded.sample_rate)
        return self._decoded

    def _is_wav(self) -> bool:
        return self.data[:4] == b"RIFF" and self.data[8:12] == b"WAVE"

    def __getitem__(self, key: str) -> Any:
        if key == "array":
            array = self.samples()[0]
            return array[0] if array.shape[0] == 1 else array
        if key == "sampling_rate":
            return self.samples()[1]
        raise KeyError(f"{key!r}: decoded audio has 'array' and 'sampling_rate'")

    def __iter__(self) -> Iterator[str]:
        return iter(("array", "sampling_rate"))

    def __len__(self) -> int:
        return 2

    def __repr__(self) -> str:
        return f"DecodedAudio({self.extension}, {len(self.data)} bytes)"


class AudioSerializer:
    """``Audio`` wrappers and paths to audio files.

    Args:
        decode: What reading gives: ``"decoder"`` (a :class:`DecodedAudio`), ``"samples"``
            (``(float32 tensor (channels, samples), rate)``) or ``"bytes"`` (the file).
        sampling_rate: Resample to this rate when decoding (torchcodec).
        num_channels: Mix to this many channels when decoding (torchcodec).
        stream_index: The audio stream of a container to decode (torchcodec).
    """

    name: ClassVar[str] = "audio"
    types: ClassVar[tuple[str, ...]] = (
        "litdata.engine.items.wrappers.Audio",
        "builtins.str",
    )
    priority: ClassVar[int] = 222

    def __init__(
        self,
        decode: str = "decoder",
        sampling_rate: int | None = None,
        num_channels: int | None = None,
        stream_index: int | None = None,
    ) -> None:
        if decode not in _DECODES:
            raise ValueError(f"AudioSerializer(decode={decode!r}): choose one of {_DECODES}")
        self.decode = decode
        self.options = {
            "sample_rate": sampling_rate,
            "num_channels": num_channels,
            "stream_index": stream_index,
        }
        self._extension = "wav"

    @property
    def sampling_rate(self) -> int | None:
        """The rate decoded audio is resampled to (``None``: the file's own), as given."""
        return self.options["sample_rate"]

    @property
    def num_channels(self) -> int | None:
        """The channels decoded audio is mixed to (``None``: the file's own), as given."""
        return self.options["num_channels"]

    def can_serialize(self, item: Any) -> bool:
        """Claims ``Audio`` wrappers and existing files with an audio extension."""
        return isinstance(item, Audio) or media_path(item, AUDIO_EXTENSIONS) is not None

    def serialize(self, item: Any) -> tuple[bytes, str]:
        """The file's bytes (raw ``.pcm`` becomes WAV), or a waveform as WAV."""
        path = media_path(item, AUDIO_EXTENSIONS)
        if path is not None:
            item = Audio(path=path)
        if not isinstance(item, Audio):
            raise TypeError(
                f"expected an Audio or an audio file path, got {type(item).__qualname__}"
            )
        if item.array is not None:
            if item.sampling_rate is None:
                raise ValueError("Audio(array=...) needs sampling_rate= (samples per second)")
            return encode_wav(item.array, item.sampling_rate), "audio:wav"
        data = item.read()
        extension = extension_of(item.path) or "wav"  # LitData names bytes= audio so
        if extension == "pcm":
            if item.sampling_rate is None:
                raise ValueError(
                    f"Audio(path={item.path!r}) is raw 16-bit PCM: give sampling_rate= to store it"
                )
            samples = np.frombuffer(data[: len(data) // 2 * 2], "<i2")
            return encode_wav(samples, item.sampling_rate), "audio:wav"
        return data, f"audio:{extension}"

    def deserialize(self, data: bytes | memoryview) -> Any:
        """A :class:`DecodedAudio`, samples or bytes, as ``decode`` says."""
        decoded = DecodedAudio(bytes(data), self._extension, self.options)
        if self.decode == "bytes":
            return decoded.data
        if self.decode == "samples":
            import torch

            array, rate = decoded.samples()
            return torch.from_numpy(array), rate
        return decoded

    def setup(self, data_format: str) -> None:
        """Learn the file's kind from ``audio:<ext>``."""
        self._extension = data_format.partition(":")[2] or "wav"
