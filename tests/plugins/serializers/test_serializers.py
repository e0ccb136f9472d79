"""Every built-in serializer passes the same contract a third-party one does."""

import io
import tempfile
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image as PILImage

from litdata.engine.items.wrappers import File, Image, Jpeg, JpegArray, Pil, Tensor, Text
from litdata.plugins.serializers.arrays import NoHeaderNumpySerializer, NumpySerializer
from litdata.plugins.serializers.images import (
    JPEGArraySerializer,
    JPEGSerializer,
    PILSerializer,
    PNGSerializer,
    decode_image_tensor,
)
from litdata.plugins.serializers.json import JsonSerializer
from litdata.plugins.serializers.media import FileSerializer, ImageSerializer, TextSerializer
from litdata.plugins.serializers.pickle import PickleSerializer
from litdata.plugins.serializers.scalars import (
    BoolSerializer,
    BytesSerializer,
    FloatSerializer,
    IntSerializer,
    StrSerializer,
)
from litdata.plugins.serializers.tensors import NoHeaderTensorSerializer, TensorSerializer
from litdata.testing import SerializerContract


def _pixels(seed, shape=(6, 8, 3)):
    return np.random.default_rng(seed).integers(0, 255, size=shape, dtype=np.uint8)


def _encoded(fmt, seed=0):
    buffer = io.BytesIO()
    PILImage.fromarray(_pixels(seed)).save(buffer, format=fmt)
    return buffer.getvalue()


MEDIA = Path(tempfile.mkdtemp(prefix="litdata-media-"))


def _opened(fmt, seed=0):
    """An image opened from a real file, as users open them (PIL then knows its bytes)."""
    path = MEDIA / f"{seed}.{fmt.lower()}"
    path.write_bytes(_encoded(fmt, seed))
    image = PILImage.open(path)
    image.load()  # reads the pixels and closes the file; the image keeps its filename
    return image


class TestBool(SerializerContract):
    serializer_class = BoolSerializer
    samples = [True, False]
    bad_inputs = [1, None]


class TestInt(SerializerContract):
    serializer_class = IntSerializer
    samples = [0, -1, 2**63 - 1, -(2**63)]
    bad_inputs = [1.5, "1", True, 2**63]


class TestFloat(SerializerContract):
    serializer_class = FloatSerializer
    samples = [0.0, -1.5, 1e300, float("inf")]
    bad_inputs = [1, "1.0"]


class TestStr(SerializerContract):
    serializer_class = StrSerializer
    samples = ["", "hello", "é ünïcode ✓"]
    bad_inputs = [b"x", 1]


class TestBytes(SerializerContract):
    serializer_class = BytesSerializer
    samples = [b"", b"\x00\xff" * 100]
    bad_inputs = ["x", bytearray(b"x")]


class TestNumpy(SerializerContract):
    serializer_class = NumpySerializer
    samples = [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.ones((2, 2, 2), dtype=np.int64),
        np.zeros((0, 3), dtype=np.uint8),
        np.arange(6, dtype=">i4").reshape(3, 2).T,
    ]
    expected = [samples[0], samples[1], samples[2], samples[3].astype("<i4")]
    bad_inputs = [[1, 2], np.array([["a"]])]


class TestNoHeaderNumpy(SerializerContract):
    serializer_class = NoHeaderNumpySerializer
    samples = [
        np.arange(5, dtype=np.uint16),
        np.linspace(0, 1, 7),
        np.array([], dtype=np.int8),
        np.array([True, False]),
    ]
    bad_inputs = [np.zeros((2, 2)), [1, 2]]


class TestTensor(SerializerContract):
    serializer_class = TensorSerializer
    samples = [
        torch.arange(6.0).reshape(2, 3),
        torch.tensor(5, dtype=torch.int32),
        torch.ones(2, 2, dtype=torch.bfloat16),
        torch.zeros(0, 2),
    ]
    bad_inputs = [np.zeros((2, 2)), 3]


class TestNoHeaderTensor(SerializerContract):
    serializer_class = NoHeaderTensorSerializer
    samples = [
        torch.arange(5, dtype=torch.int64),
        torch.tensor([True, False]),
        torch.arange(3, dtype=torch.float16),
        torch.empty(0),
    ]
    bad_inputs = [torch.zeros(2, 2), np.zeros(3)]


class TestPIL(SerializerContract):
    serializer_class = PILSerializer
    samples = [PILImage.fromarray(_pixels(1)), PILImage.fromarray(_pixels(2)[:, :, 0], "L")]
    bad_inputs = [_pixels(1), b"x"]


class TestJPEG(SerializerContract):
    serializer_class = JPEGSerializer
    samples = [_opened("JPEG", 1), _opened("JPEG", 2)]
    expected = [decode_image_tensor(_encoded("JPEG", 1)), decode_image_tensor(_encoded("JPEG", 2))]
    bad_inputs = [b"x", _pixels(1)]


class TestPNG(SerializerContract):
    serializer_class = PNGSerializer
    samples = [_opened("PNG", 1)]
    bad_inputs = [b"x"]


class TestImage(SerializerContract):
    serializer_class = ImageSerializer
    samples = [
        Image(bytes=_encoded("JPEG", 3)),
        Image(array=_pixels(4)),
        Image(image=PILImage.fromarray(_pixels(5)), format="jpeg", quality=90),
    ]
    expected = [
        decode_image_tensor(_encoded("JPEG", 3)),
        torch.from_numpy(_pixels(4)).permute(2, 0, 1),
        None,
    ]
    bad_inputs = ["not an image path", 3]

    def _expected(self):
        third = decode_image_tensor(ImageSerializer().serialize(self.samples[2])[0])
        return [*self.expected[:2], third]


class TestFile(SerializerContract):
    serializer_class = FileSerializer
    samples = [File(bytes=b"%PDF-1.4 hello"), File(bytes=b"")]
    expected = [b"%PDF-1.4 hello", b""]
    bad_inputs = [b"raw bytes", "a path"]


class TestText(SerializerContract):
    serializer_class = TextSerializer
    samples = [Text(text="é text"), Text(bytes="raw é".encode())]
    expected = ["é text", "raw é"]
    bad_inputs = ["plain str", Text()]


class TestJson(SerializerContract):
    serializer_class = JsonSerializer
    samples = [
        ["a", "é"],
        [1, -(2**63)],
        [0.5],
        [True, False],
        [],
        [{"k": 1, "v": "a"}, {"k": None, "v": 2.5}],
        [1, "a", None, [2]],
    ]
    bad_inputs = [{"a": 1}, [object()]]


class TestJPEGArray(SerializerContract):
    serializer_class = JPEGArraySerializer
    samples = [
        JpegArray(images=[_opened("JPEG", 1), _opened("JPEG", 2)]),
        JpegArray(images=[_encoded("JPEG", 3)]),
    ]
    expected = [
        [decode_image_tensor(_encoded("JPEG", 1)), decode_image_tensor(_encoded("JPEG", 2))],
        [decode_image_tensor(_encoded("JPEG", 3))],
    ]
    bad_inputs = [JpegArray(), [], "x"]


def test_jpeg_array_encodes_pixels_at_its_quality():
    pixels = _pixels(4, (16, 16, 3))
    low, _ = JPEGArraySerializer().serialize(JpegArray(images=[pixels], quality=10))
    high, _ = JPEGArraySerializer().serialize(JpegArray(images=[pixels], quality=100))
    assert len(low) < len(high)
    assert JPEGArraySerializer().deserialize(low)[0].shape == (3, 16, 16)


class TestPickle(SerializerContract):
    serializer_class = PickleSerializer
    samples = [
        None,
        complex(1, 2),
        {1, 2},
        np.int64(3),
        np.float32(0.5),
        Fraction(1, 3),
        (1, "a"),
        np.array(5),
        Counter("ab"),
    ]
    bad_inputs = [lambda: 0]

    def test_claims_its_samples(self):  # pickle is the fallback: it claims everything
        assert all(PickleSerializer().can_serialize(x) for x in [*self.samples, object()])

    @pytest.fixture(autouse=True)
    def _allow_classes(self, monkeypatch):
        monkeypatch.setenv("LITDATA_ALLOW_PICKLE", "1")  # Counter is a class: needs opt-in


def test_image_paths_are_stored_as_image_bytes(tmp_path):
    path = tmp_path / "photo.png"
    path.write_bytes(_encoded("PNG", 7))
    serializer = ImageSerializer()
    assert serializer.can_serialize(str(path))
    payload, name = serializer.serialize(str(path))
    assert (payload, name) == (path.read_bytes(), "image:png")
    assert not serializer.can_serialize(str(tmp_path / "missing.png"))
    assert not serializer.can_serialize(str(tmp_path))


@pytest.mark.parametrize("dtype", ["int16", np.int16, np.dtype("int16"), torch.int16])
def test_raw_tensor_wrappers_store_their_bytes_as_they_are(dtype):
    raw = np.arange(4, dtype=np.int16).tobytes()
    serializer = NoHeaderTensorSerializer()
    wrapper = Tensor(bytes=raw, dtype=dtype)
    assert serializer.can_serialize(wrapper)
    assert not TensorSerializer().can_serialize(wrapper)
    payload, name = serializer.serialize(wrapper)
    assert (payload, name) == (raw, "no_header_tensor:14")
    serializer.setup(name)
    assert torch.equal(serializer.deserialize(payload), torch.arange(4, dtype=torch.int16))


def test_an_empty_raw_tensor_wrapper_is_an_empty_tensor(tmp_path):
    path = tmp_path / "empty.bin"
    path.write_bytes(b"")
    serializer = NoHeaderTensorSerializer()
    for wrapper in (Tensor(bytes=b"", dtype="int16"), Tensor(path=path, dtype="bfloat16")):
        payload, name = serializer.serialize(wrapper)
        assert payload == b""
        serializer.setup(name)
        assert serializer.deserialize(payload).numel() == 0


def test_a_raw_tensor_wrapper_without_a_dtype_is_refused():
    with pytest.raises(TypeError, match="needs array=, or path=/bytes= with dtype="):
        Tensor(bytes=b"\x00\x01")


def test_raw_tensor_wrapper_errors_name_the_dtype_and_the_size():
    serializer = NoHeaderTensorSerializer()
    with pytest.raises(TypeError, match=r"Tensor\(dtype='>i2'\): the dtype has no LitData"):
        serializer.serialize(Tensor(bytes=b"\x00\x01", dtype=">i2"))
    with pytest.raises(ValueError, match="3 bytes are not a whole number of 2-byte items"):
        serializer.serialize(Tensor(bytes=b"abc", dtype="int16"))
    with pytest.raises(TypeError, match="raw 1-D data, stored by no_header_tensor"):
        TensorSerializer().serialize(Tensor(bytes=b"ab", dtype="int16"))


def test_a_jpeg_wrapper_keeps_its_bytes_unless_asked_to_re_encode():
    original = _encoded("JPEG", 8)
    serializer = JPEGSerializer()
    assert serializer.serialize(Jpeg(bytes=original)) == (original, None)
    at_95, _ = serializer.serialize(Jpeg(bytes=original, quality=95))
    at_60, _ = serializer.serialize(Jpeg(bytes=original, quality=60))
    assert at_95 != original  # an explicit quality re-encodes, even the default one
    assert len(at_60) < len(at_95)
    assert decode_image_tensor(at_95).shape == (3, 6, 8)


def test_image_wrappers_convert_to_their_mode_before_storing():
    gray = JPEGSerializer().serialize(Jpeg(array=_pixels(9), mode="L"))[0]
    assert PILImage.open(io.BytesIO(gray)).mode == "L"
    payload, _ = PILSerializer().serialize(Pil(bytes=_encoded("PNG", 9), mode="L"))
    assert PILSerializer().deserialize(payload).mode == "L"
    payload, name = ImageSerializer().serialize(Image(bytes=_encoded("JPEG", 9), mode="L"))
    assert name == "image:jpg"  # the source's format is kept when only the mode changes
    assert PILImage.open(io.BytesIO(payload)).mode == "L"


@pytest.mark.parametrize("serializer", [NoHeaderNumpySerializer, NoHeaderTensorSerializer])
def test_no_header_serializers_learn_their_dtype_from_the_format(serializer):
    fresh = serializer()
    with pytest.raises(RuntimeError, match=r"setup\(\) must be called"):
        fresh.deserialize(b"\0" * 8)
    data, data_format = serializer().serialize(
        np.arange(3, dtype=np.int16) if serializer is NoHeaderNumpySerializer else torch.arange(3)
    )
    fresh.setup(data_format)
    assert fresh.element_size() == (2 if serializer is NoHeaderNumpySerializer else 8)
    assert list(fresh.deserialize(data)) == [0, 1, 2]
