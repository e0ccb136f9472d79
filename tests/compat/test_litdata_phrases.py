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


# LitData's own tests match these phrases (tests/interop/litdata_suite.py runs them here).
def _keyed(item):
    return {"id": f"k{item}", "value": item}


def _key(sample):
    return sample["id"]


def test_optimize_refuses_unordered_checkpoints_and_alignment(tmp_path):
    with pytest.raises(ValueError, match=r"^Checkpoint feature is not supported"):
        ld.optimize(
            _fn,
            [1, 2],
            str(tmp_path / "a"),
            chunk_size=2,
            use_checkpoint=True,
            keep_data_ordered=False,
        )
    with pytest.raises(ValueError, match=r"^align_chunking requires keep_data_ordered=True"):
        ld.optimize(
            _fn,
            [1, 2],
            str(tmp_path / "b"),
            chunk_size=2,
            align_chunking=True,
            keep_data_ordered=False,
        )
    with pytest.raises(ValueError, match=r"`chunk_size` needs to be defined"):
        ld.optimize(_fn, [1, 2], str(tmp_path / "c"), chunk_bytes="1MB", align_chunking=True)


def test_dataset_update_phrases(tmp_path):
    ld.optimize(_fn, [1, 2], str(tmp_path / "plain"), chunk_size=2, num_workers=1)
    with pytest.raises(FileNotFoundError, match=r"has no keys/"):
        ld.dataset_update(str(tmp_path / "plain"))
    keyed = str(tmp_path / "keyed")
    ld.optimize(_keyed, [1, 2], keyed, chunk_size=2, num_workers=1, key_fn=_key)
    with ld.dataset_update(keyed) as update:
        update["nobody"] = {"id": "nobody", "value": 0}
        with pytest.raises(KeyError, match=r"Unknown dataset key 'nobody'"):
            update.commit()
        with pytest.raises(RuntimeError, match=r"after commit"):
            update["k1"] = {"id": "k1", "value": 0}


def test_raw_dataset_phrases(tmp_path):
    from litdata.raw import StreamingRawDataset
    from litdata.raw.indexer import FileIndexer

    with pytest.raises(ValueError, match=r"^Unsupported input directory scheme: `http`"):
        FileIndexer().discover_files("http://unsupported/path", {})

    class OneFile(StreamingRawDataset):
        def setup(self, files):
            return files[0]

    (tmp_path / "a.txt").write_text("a")
    with pytest.raises(TypeError, match=r"^The setup method must return a list"):
        OneFile(input_dir=str(tmp_path))


def test_media_wrapper_phrases():
    from litdata.streaming.serializers import GraphSerializer, JPEGArraySerializer

    with pytest.raises(ValueError, match="non-empty"):
        JPEGArraySerializer().serialize(ld.JpegArray(images=[]))
    with pytest.raises(TypeError, match="opaque"):
        GraphSerializer().serialize(ld.Graph(x=[[1.0]], data=object()))
