"""optimize and map take LitData's other arguments: weights, reader, downloaders, uploaders..."""

from __future__ import annotations

import json

import pytest

import litdata as ld
from litdata.engine.boundary.resolve import resolve

fns = pytest.importorskip("support.fns")


def _ids(path):
    reader = ld.DatasetReader(path)
    return [reader[i]["id"] for i in range(len(reader))]


def _rank_samples(path):
    index = json.loads((path / "index.json").read_text())
    counts: dict[int, int] = {}
    for chunk in index["chunks"]:
        rank = int(chunk["filename"].split("-")[1])
        counts[rank] = counts.get(rank, 0) + chunk["chunk_size"]
    return counts


def test_weights_balance_ordered_workers(tmp_path):
    weights = [100] + [1] * 99  # one heavy input: its worker gets nothing else of weight
    ld.optimize(
        fns.record,
        list(range(100)),
        str(tmp_path),
        chunk_size=10,
        num_workers=2,
        weights=weights,
        keep_data_ordered=True,
        verbose=False,
    )
    assert sorted(_ids(tmp_path)) == list(range(100))
    assert _rank_samples(tmp_path) == {0: 1, 1: 99}


def test_weights_are_checked(tmp_path):
    with pytest.raises(ValueError, match="2 entries for 3 inputs"):
        ld.optimize(fns.record, [1, 2, 3], str(tmp_path), chunk_size=2, weights=[1, 2])
    with pytest.raises(ValueError, match="positive numbers"):
        ld.optimize(fns.record, [1, 2], str(tmp_path), chunk_size=2, weights=[1, 0])


@pytest.mark.parametrize("other", ["batch_size", "reader"])
@pytest.mark.parametrize("function", ["optimize", "map"])
def test_weights_refuse_regrouped_inputs(tmp_path, function, other):
    value = 2 if other == "batch_size" else fns.SquaringReader()
    with pytest.raises(ValueError, match=f"cannot be combined with {other}=; drop one"):
        getattr(ld, function)(fns.record, [1, 2], str(tmp_path), weights=[1, 1], **{other: value})
    assert not (tmp_path / "index.json").exists()


def test_a_reader_feeds_fn_and_skips_none(tmp_path):
    ld.optimize(
        fns.record,
        list(range(20)),
        str(tmp_path),
        chunk_size=4,
        num_workers=2,
        reader=fns.SquaringReader(),
        verbose=False,
    )
    assert sorted(_ids(tmp_path)) == sorted(i * i for i in range(20) if i % 5)


def test_machine_is_refused_with_the_alternative(tmp_path):
    with pytest.raises(ValueError, match="Lightning AI Studio.*executor='dask'"):
        ld.optimize(fns.record, [1], str(tmp_path), chunk_size=1, machine="A10G")


def test_lightning_only_flags_are_accepted(tmp_path):
    ld.optimize(
        fns.record,
        list(range(10)),
        str(tmp_path),
        chunk_size=5,
        num_workers=1,
        reorder_files=False,
        optimize_dns=True,
        broadcast_paths=False,
        verbose=False,
    )
    assert sorted(_ids(tmp_path)) == list(range(10))


def test_map_gives_is_last_and_device(tmp_path):
    ld.map(
        fns.notes_last,
        list(range(6)),
        str(tmp_path),
        num_workers=2,
        keep_data_ordered=True,
        verbose=False,
    )
    notes = {int(path.stem): path.read_text() for path in tmp_path.glob("*.txt")}
    assert notes == {i: f"{i in (2, 5)} cpu" for i in range(6)}  # slices [0, 1, 2], [3, 4, 5]


def test_downloaders_and_uploaders_on_s3(s3_server, tmp_path):
    options = s3_server.storage_options
    bucket = s3_server.url(s3_server.new_bucket())
    raw = resolve(f"{bucket}/raw", storage_options=options)
    for i in range(6):
        raw.write(f"{i}.bin", bytes(i + 1))
    inputs = [[f"{bucket}/raw/{i}.bin", f"{bucket}/raw/{(i + 1) % 6}.bin"] for i in range(6)]
    ld.optimize(
        fns.file_sizes,
        inputs,
        f"{bucket}/out",
        chunk_size=2,
        num_workers=2,
        input_dir=f"{bucket}/raw",
        num_downloaders=4,
        num_uploaders=3,
        storage_options=options,
        verbose=False,
    )
    reader = ld.DatasetReader(f"{bucket}/out", storage_options=options)
    assert sorted(tuple(reader[i]["sizes"]) for i in range(len(reader))) == sorted(
        (i + 1, (i + 1) % 6 + 1) for i in range(6)
    )
    with pytest.raises(ValueError, match="num_uploaders must be a positive integer"):
        ld.optimize(fns.record, [1], str(tmp_path), chunk_size=1, num_uploaders=0)
