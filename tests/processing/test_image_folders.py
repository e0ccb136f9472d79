"""A folder of mixed image files, optimized with workers, streams back as one type.

The task a new user tries first: ``{"image": Image.open(path), "label": y}`` over a folder of
JPEG, PNG and other files. Whatever file a worker meets first, every image streams back as a
``uint8`` RGB tensor; a real disagreement between workers stops the run at the worker's first
chunk, keeps what was written (``use_checkpoint``) and says which field and how to fix it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import litdata as ld
from litdata.core.errors import ProcessingError

FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "BMP")
_EXTENSIONS = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp", "GIF": "gif", "BMP": "bmp"}


def _folder(root: Path, count: int, formats: tuple[str, ...] = FORMATS) -> list[str]:
    """``count`` 12x16 images cycling through ``formats``, named by their number."""
    root.mkdir()
    paths = []
    for number in range(count):
        fmt = formats[number % len(formats)]
        pixels = np.random.default_rng(number).integers(0, 256, (12, 16, 3), dtype=np.uint8)
        path = root / f"{number:03d}.{_EXTENSIONS[fmt]}"
        Image.fromarray(pixels).save(path, format=fmt)
        paths.append(str(path))
    return paths


def _sample(path: str) -> dict[str, object]:
    number = int(Path(path).stem)
    return {"id": number, "image": Image.open(path), "label": number % 3}


def _decoded(path: str) -> torch.Tensor:
    with Image.open(path) as image:
        return torch.from_numpy(np.asarray(image.convert("RGB")).copy()).permute(2, 0, 1)


def _data_format(folder: Path) -> list[str]:
    return json.loads((folder / "index.json").read_text())["config"]["data_format"]


def test_a_mixed_folder_with_two_workers_streams_back_tensors(tmp_path):
    paths = _folder(tmp_path / "images", 20)
    ld.optimize(_sample, paths, str(tmp_path / "ds"), chunk_size=3, num_workers=2, verbose=False)
    assert _data_format(tmp_path / "ds") == ["int", "image", "int"]
    dataset = ld.StreamingDataset(str(tmp_path / "ds"))
    assert len(dataset) == len(paths)
    for sample in dataset:
        image = sample["image"]
        assert isinstance(image, torch.Tensor)
        assert image.dtype == torch.uint8
        assert torch.equal(image, _decoded(paths[sample["id"]]))
    loader = ld.StreamingDataLoader(dataset, batch_size=4, num_workers=2)
    batches = list(loader)
    assert [batch["image"].shape for batch in batches] == [(4, 3, 12, 16)] * 5
    assert sorted(torch.cat([batch["id"] for batch in batches]).tolist()) == list(range(20))


@pytest.mark.parametrize("first", ["JPEG", "PNG", "WEBP"])
def test_the_type_streamed_back_does_not_depend_on_the_first_file(tmp_path, first):
    rest = tuple(fmt for fmt in FORMATS if fmt != first)
    paths = _folder(tmp_path / "images", 10, (first, *rest))
    ld.optimize(_sample, paths, str(tmp_path / "ds"), chunk_size=4, num_workers=1, verbose=False)
    dataset = ld.StreamingDataset(str(tmp_path / "ds"))
    assert {type(sample["image"]) for sample in dataset} == {torch.Tensor}
    assert _data_format(tmp_path / "ds")[1] == "image"


def test_a_folder_of_jpeg_files_keeps_litdata_s_jpeg_format(tmp_path):
    paths = _folder(tmp_path / "images", 6, ("JPEG",))
    ld.optimize(_sample, paths, str(tmp_path / "ds"), chunk_size=2, num_workers=2, verbose=False)
    assert _data_format(tmp_path / "ds") == ["int", "jpeg", "int"]


def test_image_wrappers_of_mixed_files_are_accepted(tmp_path):
    paths = _folder(tmp_path / "images", 6, ("PNG", "JPEG"))

    def wrapped(path: str) -> dict[str, object]:
        return {"image": ld.Image(path=path)}

    ld.optimize(wrapped, paths, str(tmp_path / "ds"), chunk_size=2, num_workers=1, verbose=False)
    assert _data_format(tmp_path / "ds") == ["image"]
    images = [sample["image"] for sample in ld.StreamingDataset(str(tmp_path / "ds"))]
    assert all(
        torch.equal(image, _decoded(path)) for image, path in zip(images, paths, strict=True)
    )


def _int_then_str(number: int) -> dict[str, object]:
    if number == 100:  # worker 1 starts late: worker 0 has recorded its kinds by then
        time.sleep(3)
    elif number < 100:
        time.sleep(0.05)  # worker 0 would take 5 s: the disagreement stops it long before
    return {"id": number, "value": number if number < 100 else str(number)}


def _fixed(number: int) -> dict[str, object]:
    return {"id": number, "value": number}


def test_workers_that_disagree_stop_at_the_first_chunk_and_keep_their_work(tmp_path):
    output = str(tmp_path / "ds")
    options = {"chunk_size": 2, "num_workers": 2, "use_checkpoint": True, "verbose": False}
    with pytest.raises(ProcessingError) as raised:
        # worker 0 gets 0..99 (ints), worker 1 gets 100..199 (strs): disagree on "value"
        ld.optimize(_int_then_str, list(range(200)), output, **options)
    message = str(raised.value)
    assert "sample['value']" in message
    # worker 1 reaches its first chunk second: it sees worker 0's record and stops there,
    # before it has checkpointed a chunk of the wrong kind
    assert "'str' in worker 1 but 'int' in worker 0" in message
    assert "int(...)" in message
    assert "use_checkpoint=True" in message
    written = [name for name in os.listdir(output) if name.startswith("chunk-")]
    # stopped early: not all 100 chunks were written, and what was is kept
    assert 0 < len(written) < 100
    assert ".checkpoints" in os.listdir(output)
    assert ".claims" not in os.listdir(output)
    ld.optimize(_fixed, list(range(200)), output, **options)
    values = sorted(sample["value"] for sample in ld.StreamingDataset(output))
    assert values == list(range(200))
