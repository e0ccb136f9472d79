"""bound_resolution: images stored at most N px on a side, small ones kept byte for byte."""

import io

import pytest
from PIL import Image

import litdata as ld
from litdata.vision import ImageDecodeError
from tests.vision.photos import jpeg, photo


def size_of(data):
    with Image.open(io.BytesIO(data)) as image:
        return image.size, image.format


@pytest.mark.parametrize(
    ("width", "height", "side", "bound", "want"),
    [
        (800, 600, "short", 256, (341, 256)),
        (600, 800, "short", 256, (256, 341)),
        (800, 600, "long", 400, (400, 300)),
        (1000, 250, "short", 200, (800, 200)),
    ],
)
def test_larger_images_are_resized_keeping_their_shape(width, height, side, bound, want):
    data = jpeg(width, height, seed=1, quality=95)
    out = ld.vision.bound_resolution(data, bound, side=side, quality=85)
    assert size_of(out) == (want, "JPEG")
    assert len(out) < len(data)


def test_images_within_the_bound_are_kept_as_they_are(tmp_path):
    data = jpeg(300, 200, seed=2)
    assert ld.vision.bound_resolution(data, 200) == data
    path = tmp_path / "a.jpg"
    path.write_bytes(data)
    assert ld.vision.bound_resolution(path, 256) == data


def test_png_and_pil_inputs_become_bounded_jpegs():
    png = io.BytesIO()
    Image.fromarray(photo(640, 480, seed=3)).save(png, "PNG")
    assert size_of(ld.vision.bound_resolution(png.getvalue(), 240)) == ((320, 240), "JPEG")
    pil = Image.fromarray(photo(640, 480, seed=3))
    assert size_of(ld.vision.bound_resolution(pil, 240)) == ((320, 240), "JPEG")


def test_bad_arguments_and_bad_images_are_refused():
    with pytest.raises(ValueError, match="max_side > 0"):
        ld.vision.bound_resolution(b"", 0)
    with pytest.raises(ValueError, match="side in"):
        ld.vision.bound_resolution(b"", 10, side="wide")
    with pytest.raises(ImageDecodeError, match="not a readable image"):
        ld.vision.bound_resolution(b"not an image", 10)
