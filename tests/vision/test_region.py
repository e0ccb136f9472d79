"""The region decoder (litdata/vision/region.c): exact pixels, hostile bytes, and its absence."""

import io
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import litdata as ld
from litdata.vision import region
from tests.vision.photos import jpeg, photo

pytestmark = pytest.mark.skipif(not region.available(), reason="the region decoder is not built")
BUDGET = 1 << 26


def full(data: bytes, scale: int = 1) -> np.ndarray:
    """The whole image at ``1/scale``, through the region decoder."""
    header = region.jpeg_header(data)
    width, height = -(-header.width // scale), -(-header.height // scale)
    pixels, left, top = region.decode_region(data, scale, (0, width), (0, height), BUDGET)
    assert (left, top) == (0, 0)
    return pixels


@pytest.mark.skipif(
    not Path("/usr/include/jpeglib.h").exists() or shutil.which("cc") is None,
    reason="no C compiler or libjpeg headers here",
)
def test_the_decoder_is_built_where_a_compiler_and_libjpeg_headers_are():
    assert region.LIBRARY.exists()
    assert region.available()


@pytest.mark.parametrize("subsampling", [0, 1, 2])  # 4:4:4, 4:2:2, 4:2:0
@pytest.mark.parametrize("scale", [1, 2, 4, 8])
def test_a_box_decodes_bit_for_bit_as_in_the_full_image(subsampling, scale):
    rng = np.random.default_rng(subsampling * 10 + scale)
    data = jpeg(517, 389, seed=scale, subsampling=subsampling)
    whole = full(data, scale)
    height, width = whole.shape[:2]
    for _ in range(25):
        x0, y0 = int(rng.integers(0, width - 1)), int(rng.integers(0, height - 1))
        x1, y1 = int(rng.integers(x0 + 1, width + 1)), int(rng.integers(y0 + 1, height + 1))
        columns = (max(0, x0 - 1), min(width, x1 + 1))  # the margin decoding.py asks for
        pixels, left, top = region.decode_region(data, scale, columns, (y0, y1), BUDGET)
        assert left <= columns[0]
        assert top == y0
        assert pixels.shape[0] == y1 - y0
        assert left + pixels.shape[1] >= columns[1]
        box = pixels[:, x0 - left : x1 - left]
        np.testing.assert_array_equal(box, whole[y0:y1, x0:x1])


def test_full_decodes_match_pillow_and_grey_images_come_out_as_rgb():
    data = jpeg(300, 200, seed=4)
    with Image.open(io.BytesIO(data)) as image:
        reference = np.asarray(image.convert("RGB")).astype(int)
    assert np.abs(full(data).astype(int) - reference).max() <= 2  # libjpeg-turbo builds differ
    buffer = io.BytesIO()
    Image.fromarray(photo(120, 80, seed=2)).convert("L").save(buffer, "JPEG", quality=90)
    grey = full(buffer.getvalue())
    assert grey.shape == (80, 120, 3)
    np.testing.assert_array_equal(grey[..., 0], grey[..., 2])
    assert region.jpeg_header(buffer.getvalue()).colourspace == "Gray"


def test_headers_say_progressive_and_colour_space():
    plain = region.jpeg_header(jpeg(64, 48, seed=1))
    progressive = region.jpeg_header(jpeg(64, 48, seed=1, progressive=True))
    assert (plain.width, plain.height, plain.colourspace, plain.progressive) == (
        64,
        48,
        "YCbCr",
        False,
    )
    assert progressive.progressive


def test_a_file_cut_below_the_box_is_refused():
    data = jpeg(400, 300, seed=3)
    cut = data[: len(data) * 2 // 3]
    whole = full(data)
    with pytest.raises(region.RegionError, match="end marker"):
        region.decode_region(cut, 1, (0, 400), (0, 16), BUDGET)  # rows the cut did not touch
    with pytest.raises(region.RegionError, match="[Pp]remature end"):
        region.decode_region(cut, 1, (0, 400), (0, 300), BUDGET)
    pixels, _, _ = region.decode_region(data, 1, (0, 400), (0, 16), BUDGET)
    np.testing.assert_array_equal(pixels, whole[:16])


def test_oversized_images_are_refused_before_any_pixel():
    data = bytearray(jpeg(64, 48, seed=1))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = (20000).to_bytes(2, "big") * 2  # 400 M pixels, libjpeg takes it
    with pytest.raises(region.RegionError) as caught:
        region.decode_region(bytes(data), 1, (0, 64), (0, 48), BUDGET)
    assert caught.value.too_large
    assert "20000 x 20000" in str(caught.value)


@pytest.mark.parametrize(
    ("columns", "rows"),
    [
        ((0, 65), (0, 48)),
        ((0, 64), (0, 49)),
        ((10, 10), (0, 48)),
        ((-1, 5), (0, 5)),
        ((0, 64), (30, 20)),
    ],
)
def test_regions_outside_the_image_are_refused(columns, rows):
    with pytest.raises(region.RegionError, match="not inside"):
        region.decode_region(jpeg(64, 48, seed=1), 1, columns, rows, BUDGET)


def test_a_corrupt_huffman_table_is_an_error():
    data = bytearray(jpeg(64, 48, seed=1))
    table = data.index(b"\xff\xc4")
    data[table + 5 : table + 21] = b"\xff" * 16  # code counts no Huffman table can have
    with pytest.raises(region.RegionError):
        region.decode_region(bytes(data), 1, (0, 64), (0, 48), BUDGET)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8))
def test_flipped_bytes_give_an_error_or_an_image_never_a_crash(flips):
    data = bytearray(_SMALL)
    for place, value in flips:
        data[place % len(data)] = value
    try:
        header = region.jpeg_header(bytes(data))
        pixels, _, _ = region.decode_region(
            bytes(data), 1, (0, header.width), (0, header.height), 1 << 20
        )
    except region.RegionError:
        return
    assert pixels.shape == (header.height, header.width, 3)


_SMALL = jpeg(48, 40, seed=9)


def test_threads_decode_side_by_side_with_the_same_pixels():
    images = [jpeg(320, 240, seed=seed) for seed in range(8)]
    expected = [full(data) for data in images]
    got: dict[int, list[np.ndarray]] = {}

    def work(thread: int) -> None:
        got[thread] = [full(data) for data in images for _ in range(3)][::3]

    threads = [threading.Thread(target=work, args=(thread,)) for thread in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for pixels in got.values():
        for one, want in zip(pixels, expected, strict=True):
            np.testing.assert_array_equal(one, want)


def test_without_the_decoder_crops_decode_whole_images_with_the_same_result(monkeypatch):
    data = jpeg(500, 375, seed=6)
    crop = ld.vision.RandomResizedCrop(224, seed=11)
    with_region = [crop(data).numpy() for _ in range(20)]
    monkeypatch.setattr(region, "LIBRARY", region.LIBRARY.with_name("missing.so"))
    region._library.cache_clear()
    try:
        assert not region.available()
        crop = ld.vision.RandomResizedCrop(224, seed=11)
        without = [crop(data).numpy() for _ in range(20)]
    finally:
        region._library.cache_clear()
    for one, other in zip(with_region, without, strict=True):
        assert np.abs(one.astype(int) - other).max() <= 2  # simplejpeg's libjpeg-turbo differs


def test_the_environment_can_turn_the_decoder_off(monkeypatch):
    monkeypatch.setenv("LITDATA_VISION_REGION", "0")
    region._library.cache_clear()
    try:
        assert not region.available()
        assert ld.vision.RandomResizedCrop(64, seed=1)(jpeg(96, 80, seed=1)).shape == (3, 64, 64)
    finally:
        monkeypatch.delenv("LITDATA_VISION_REGION")
        region._library.cache_clear()
    assert region.available()
