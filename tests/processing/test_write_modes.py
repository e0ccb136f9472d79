"""``write_dataset(mode=...)`` as ``optimize``'s, and failed runs leave no empty folder behind."""

import pytest

import litdata as ld
from litdata.core.errors import DatasetExistsError, DatasetFormatError


def _ids(path):
    return [sample["id"] for sample in ld.StreamingDataset(str(path))]


def test_rerunning_an_example_with_a_mode_appends_or_overwrites(tmp_path):
    out = tmp_path / "ds"
    ld.write_dataset(({"id": i} for i in range(5)), out, chunk_size=2)
    with pytest.raises(DatasetExistsError, match="HINT: If you want to append/overwrite"):
        ld.write_dataset(({"id": i} for i in range(5)), out, chunk_size=2)
    ld.write_dataset(({"id": i} for i in range(5, 8)), out, chunk_size=2, mode="append")
    assert _ids(out) == list(range(8))
    ld.write_dataset(({"id": i} for i in range(100, 103)), out, chunk_size=2, mode="overwrite")
    assert _ids(out) == [100, 101, 102]
    ld.write_dataset(({"id": i} for i in range(3)), out, chunk_size=2, mode="overwrite")
    assert _ids(out) == [0, 1, 2]


def test_an_append_with_other_settings_or_samples_is_refused_and_changes_nothing(tmp_path):
    out = tmp_path / "ds"
    ld.write_dataset(({"id": i} for i in range(4)), out, chunk_size=2)
    before = sorted(path.name for path in out.iterdir())
    with pytest.raises(DatasetFormatError, match=r"chunk_size=3 \(the dataset has 2\)"):
        ld.write_dataset(({"id": i} for i in range(2)), out, chunk_size=3, mode="append")
    with pytest.raises(DatasetFormatError):
        ld.write_dataset(({"name": "x"} for _ in range(2)), out, chunk_size=2, mode="append")
    assert sorted(path.name for path in out.iterdir()) == before
    assert _ids(out) == [0, 1, 2, 3]


def test_a_remote_append(tmp_path):
    url = "memory://write-modes/ds"
    ld.write_dataset(({"id": i} for i in range(3)), url, chunk_size=2)
    ld.write_dataset(({"id": i} for i in range(3, 5)), url, chunk_size=2, mode="append")
    assert _ids(url) == list(range(5))


def _failing(count):
    for i in range(count):
        yield {"id": i}
    raise RuntimeError("the generator failed")


def test_a_failed_write_leaves_no_folder_it_created(tmp_path):
    with pytest.raises(RuntimeError, match="the generator failed"):
        ld.write_dataset(_failing(5), tmp_path / "new", chunk_size=2)
    assert not (tmp_path / "new").exists()
    with pytest.raises(ValueError, match="No samples were given"):
        ld.write_dataset([], tmp_path / "empty", chunk_size=2)
    assert not (tmp_path / "empty").exists()
    (tmp_path / "mine").mkdir()  # a folder the user made is kept, empty as it was
    with pytest.raises(RuntimeError):
        ld.write_dataset(_failing(3), tmp_path / "mine", chunk_size=2)
    assert list((tmp_path / "mine").iterdir()) == []


def _boom(item):
    raise ValueError(f"boom {item}")


def _sample(item):
    return {"id": item}


def test_a_failed_optimize_leaves_no_folder_it_created(tmp_path):
    with pytest.raises(RuntimeError, match="We found the following error on input 0"):
        ld.optimize(_boom, [0, 1], str(tmp_path / "out"), chunk_size=2, num_workers=1)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["missing", "file"])
def test_optimize_refuses_an_input_dir_that_is_not_a_folder(tmp_path, where):
    input_dir = tmp_path / "raw"
    if where == "file":
        input_dir.write_text("x")
    with pytest.raises(FileNotFoundError, match=r"input_dir='.*raw' (does not exist|is a file)"):
        ld.optimize(_sample, [0, 1], str(tmp_path / "out"), chunk_size=2, input_dir=str(input_dir))
    assert not (tmp_path / "out").exists()
    with pytest.raises(FileNotFoundError, match="input_dir="):
        ld.map(_sample, [0, 1], str(tmp_path / "mapped"), input_dir=str(input_dir))
    input_dir.unlink(missing_ok=True)
    input_dir.mkdir()
    ld.optimize(_sample, [0, 1], str(tmp_path / "out"), chunk_size=2, input_dir=str(input_dir))
    assert sorted(_ids(tmp_path / "out")) == [0, 1]


def test_write_dataset_says_what_it_wrote_when_asked(tmp_path, capsys):
    ld.write_dataset(range(7), tmp_path / "ds", chunk_size=5, verbose=True)
    out, err = capsys.readouterr()
    assert out.startswith(f"Wrote 7 samples in 2 chunks to {tmp_path / 'ds'} in ")
    assert "write_dataset -> ds" in err  # the progress bar
    assert "7/7" in err
    ld.write_dataset([1], tmp_path / "ds", chunk_size=5, mode="append", verbose=True)
    assert capsys.readouterr().out.startswith("Wrote 1 sample in 1 chunk to ")  # the new ones
    ld.write_dataset(range(3), tmp_path / "quiet", chunk_size=5)  # not a terminal: quiet
    assert capsys.readouterr() == ("", "")
