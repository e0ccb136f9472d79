"""Our messages start with LitData's phrase where code and tests match on it, then explain."""

import pytest

import litdata as ld


def _fn(item):
    return {"id": item}


def _fails(item):
    raise ValueError(f"boom {item}")


def test_a_missing_dataset_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"^The provided dataset path `.*nowhere` does"):
        ld.StreamingDataset(str(tmp_path / "nowhere"))


def test_weights_of_another_length_than_the_inputs(tmp_path):
    with pytest.raises(ValueError, match=r"^The provided weights length should match the inputs"):
        ld.optimize(_fn, [1, 2, 3], str(tmp_path / "o"), chunk_size=2, weights=[1, 2])
    with pytest.raises(ValueError, match=r"should match .*: weights has 2 entries for 3 inputs"):
        ld.map(_fn, [1, 2, 3], str(tmp_path / "m"), weights=[1, 2])


def test_an_existing_output(tmp_path):
    ld.optimize(_fn, [1, 2], str(tmp_path / "o"), chunk_size=2, num_workers=1)
    with pytest.raises(RuntimeError) as caught:
        ld.optimize(_fn, [1, 2], str(tmp_path / "o"), chunk_size=2, num_workers=1)
    assert "HINT: If you want to append/overwrite to the existing dataset, use mode='append'" in (
        str(caught.value)
    )


def test_a_failing_fn(tmp_path):
    with pytest.raises(
        RuntimeError,
        match=r"^We found the following error on input 0 \(1\) in worker 0: ValueError: boom 1",
    ):
        ld.optimize(_fails, [1, 2], str(tmp_path / "o"), chunk_size=2, num_workers=1)
