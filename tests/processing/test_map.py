import pytest
from support import fns

import litdata as ld
from litdata.core.errors import ProcessingError


def test_map_runs_fn_for_its_files(tmp_path):
    ld.map(fns.write_file, range(25), tmp_path / "out", num_workers=2, verbose=False)
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == sorted(f"item-{i}.txt" for i in range(25))
    assert (tmp_path / "out" / "item-7.txt").read_text() == "value 14"


def test_map_ordered_and_spawned(tmp_path):
    ld.map(
        fns.write_file,
        range(6),
        tmp_path,
        num_workers=2,
        keep_data_ordered=True,
        start_method="spawn",
        verbose=False,
    )
    assert len(list(tmp_path.iterdir())) == 6


def test_fn_must_return_none(tmp_path):
    with pytest.raises(ProcessingError, match="must write its outputs.*returned a int"):
        ld.map(fns.returns_value, range(3), tmp_path, num_workers=1, verbose=False)


def test_error_when_not_empty(tmp_path):
    (tmp_path / "existing.txt").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        ld.map(fns.write_file, range(3), tmp_path, error_when_not_empty=True, verbose=False)
    ld.map(fns.write_file, range(3), tmp_path, verbose=False)
    assert len(list(tmp_path.iterdir())) == 4


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="inputs is empty"):
        ld.map(fns.write_file, [], tmp_path)
    with pytest.raises(ValueError, match="fn must be callable"):
        ld.map("fn", [1], tmp_path)
