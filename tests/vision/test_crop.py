"""ld.vision.RandomResizedCrop: pixels against full decode + crop + resize, inputs, outputs."""

import io
import math

import numpy as np
import pytest
import torch
from PIL import Image

import litdata as ld
from litdata.streaming.epoch.sample_key import SampleKey, transforming
from litdata.vision import Draws, sample_box
from tests.vision.photos import jpeg, photo

SIZES = [(500, 375), (375, 500), (1000, 750), (640, 480), (250, 200), (900, 600), (320, 320)]


def reference(data, box, size):
    """Full decode (Pillow), crop the box, antialiased bilinear resize, flip: the plain recipe."""
    with Image.open(io.BytesIO(data)) as image:
        rgb = image.convert("RGB")
    out = rgb.resize(
        (size, size),
        Image.BILINEAR,
        box=(box.left, box.top, box.left + box.width, box.top + box.height),
    )
    if box.flip:
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
    return np.asarray(out).transpose(2, 0, 1)


def psnr(a, b):
    error = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * math.log10(255**2 / max(error, 1e-12))


def test_pixels_are_within_30_db_of_full_decode_crop_resize():
    crop = ld.vision.RandomResizedCrop(224)
    values, scaled = [], 0
    for i in range(140):
        width, height = SIZES[i % len(SIZES)]
        data = jpeg(width, height, seed=i)
        key = SampleKey(seed=5, epoch=1, index=i, source="psnr")
        with transforming(key):
            got = crop(data).numpy()
        box = sample_box(width, height, Draws(5, 1, i, 0))
        scaled += min(box.width, box.height) >= 448
        values.append(psnr(got, reference(data, box, 224)))
    assert scaled > 5  # some boxes were decoded at a reduced DCT scale
    assert min(values) >= 30, sorted(values)[:5]


def test_inputs_bytes_dict_tensor_pil_and_png_give_uint8_chw():
    data = jpeg(400, 300, seed=1)
    crop = ld.vision.RandomResizedCrop((96, 128), seed=3)
    out = crop({"image": data, "label": 7})
    assert out["label"] == 7
    assert out["image"].shape == (3, 96, 128)
    assert out["image"].dtype == torch.uint8
    assert out["image"].is_contiguous()
    pixels = photo(200, 150, seed=2)
    png = io.BytesIO()
    Image.fromarray(pixels).save(png, "PNG")
    tensor = torch.from_numpy(pixels).permute(2, 0, 1)
    for image in (png.getvalue(), tensor, Image.fromarray(pixels), pixels, memoryview(data)):
        assert crop(image).shape == (3, 96, 128)


def test_progressive_and_cmyk_jpegs_decode_in_full_with_the_same_crop():
    crop = ld.vision.RandomResizedCrop(64)
    rgb = photo(300, 200, seed=4)
    for save in ({"progressive": True}, {}):
        buffer = io.BytesIO()
        image = Image.fromarray(rgb)
        (image if save else image.convert("CMYK")).save(buffer, "JPEG", quality=95, **save)
        key = SampleKey(seed=1, epoch=1, index=0, source="x")
        with transforming(key):
            got = crop(buffer.getvalue()).numpy()
        box = sample_box(300, 200, Draws(1, 1, 0, 0))
        assert psnr(got, reference(buffer.getvalue(), box, 64)) >= 30


def test_outside_a_dataset_a_seed_repeats_and_flip_zero_never_flips():
    data = jpeg(300, 300, seed=9)
    first = [ld.vision.RandomResizedCrop(32, seed=1)(data) for _ in range(2)]
    assert torch.equal(first[0], first[1])
    crop = ld.vision.RandomResizedCrop(32, scale=(1, 1), ratio=(1, 1), flip=0.0)
    full = crop(data).numpy()
    plain = np.asarray(Image.open(io.BytesIO(data)).convert("RGB").resize((32, 32), Image.BILINEAR))
    assert psnr(full, plain.transpose(2, 0, 1)) >= 30


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="positive size"):
        ld.vision.RandomResizedCrop(0)
    with pytest.raises(ValueError, match="scale and ratio"):
        ld.vision.RandomResizedCrop(8, scale=(0.5, 0.1))
    with pytest.raises(KeyError, match="field="):
        ld.vision.RandomResizedCrop(8)({"img": b""})


def test_jpeg_leaves_read_encoded_take_the_fused_path(tmp_path):
    path = tmp_path / "a.jpg"
    path.write_bytes(jpeg(400, 300, seed=5))
    images = [Image.open(path) for _ in range(3)]  # as LitData's image examples write them
    ld.write_dataset(
        ({"image": im, "id": i} for i, im in enumerate(images)), tmp_path / "ds", chunk_size=2
    )
    for image in images:
        image.close()
    assert ld.StreamingDataset(tmp_path / "ds")[0]["image"].shape == (3, 300, 400)  # decoded
    raw = ld.StreamingDataset(tmp_path / "ds", serializers=ld.vision.ENCODED)[0]["image"]
    assert raw == path.read_bytes()
    crop = ld.vision.RandomResizedCrop(64)
    ds = ld.StreamingDataset(tmp_path / "ds", serializers=ld.vision.ENCODED, transform=crop)
    assert ds[1]["image"].shape == (3, 64, 64)
