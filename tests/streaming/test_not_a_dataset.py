"""Opening what is not a dataset (a folder of photos, a script) says what it is and what to do."""

import pytest

import litdata as ld
from litdata.core.errors import DatasetNotFoundError


def _touch(path, data=b"\xff\xd8 not really a jpeg"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def test_a_folder_of_labelled_image_folders_points_to_raw_reading(tmp_path):
    for name in ("cats/a.jpg", "cats/b.jpg", "dogs/c.png"):
        _touch(tmp_path / "photos" / name)
    with pytest.raises(DatasetNotFoundError) as caught:
        ld.StreamingDataset(str(tmp_path / "photos"))
    message = str(caught.value)
    assert "It holds image files in subfolders (cats/, dogs/), not a dataset" in message
    assert f"litdata.StreamingRawDataset({str(tmp_path / 'photos')!r})" in message
    assert "litdata.list_media_folder(" in message
    assert "Nothing is there" not in message


def test_a_flat_folder_of_images_points_to_raw_reading_not_to_optimize(tmp_path):
    for name in ("a.jpg", "b.webp", "notes.csv"):
        _touch(tmp_path / "flat" / name)
    with pytest.raises(DatasetNotFoundError, match="It holds image files, not a dataset") as caught:
        ld.StreamingDataset(str(tmp_path / "flat"))
    assert "did optimize() finish?" not in str(caught.value)
    _touch(tmp_path / "other" / "notes.csv")
    with pytest.raises(DatasetNotFoundError, match=r"did optimize\(\) finish\?"):
        ld.StreamingDataset(str(tmp_path / "other"))


def test_a_script_is_a_file_no_format_reads_not_a_pattern_that_matches_nothing(
    tmp_path, monkeypatch
):
    _touch(tmp_path / "e7.py", b"print('hello')\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DatasetNotFoundError) as caught:
        ld.StreamingDataset("e7.py")
    message = str(caught.value)
    assert "it is a file that no installed format reads as a dataset" in message
    assert "matches" not in message
    assert "Pass the folder of a dataset" in message
