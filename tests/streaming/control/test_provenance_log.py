"""provenance_dir= logs every batch's ids per rank; `litdata provenance DIR --step N` reads them."""

import json

import pytest

import litdata as ld
from litdata.cli import main
from litdata.streaming.control.provenance_log import find_step, read_log


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    a = tmp_path_factory.mktemp("a")
    b = tmp_path_factory.mktemp("b")
    ld.write_dataset(({"id": i} for i in range(600)), a, chunk_size=64)
    ld.write_dataset(({"id": 100_000 + i} for i in range(300)), b, chunk_size=50)
    return a, b


def mixture(pair):
    children = [ld.StreamingDataset(p, shuffle=True) for p in pair]
    return ld.CombinedStreamingDataset(children, weights=[0.5, 0.5], iterate_over_all=False)


def contents(batch):
    return [(1, i - 100_000) if i >= 100_000 else (0, i) for i in batch["id"].tolist()]


def test_the_log_holds_every_batch_of_every_epoch(pair, tmp_path):
    loader = ld.StreamingDataLoader(
        mixture(pair), batch_size=16, num_workers=2, provenance_dir=tmp_path / "ids"
    )
    held = {(epoch, step): contents(b) for epoch in (1, 2) for step, b in enumerate(loader)}
    logged = {(r.epoch, r.step): r.ids for r in read_log(tmp_path / "ids" / "rank-0.ids")}
    assert logged == held
    assert find_step(tmp_path / "ids", 3)[0].ids == held[2, 3]  # the last epoch by default
    assert find_step(tmp_path / "ids", 3, epoch=1)[0].ids == held[1, 3]


def test_a_resumed_run_logs_the_steps_after_the_resume(pair, tmp_path):
    def loader():
        return ld.StreamingDataLoader(
            mixture(pair), batch_size=16, num_workers=2, provenance_dir=tmp_path / "ids"
        )

    whole = [
        contents(b) for b in ld.StreamingDataLoader(mixture(pair), batch_size=16, num_workers=2)
    ]
    first = loader()
    for count, _ in enumerate(first, 1):
        if count == 6:
            break
    resumed = loader()
    resumed.load_state_dict(first.state_dict())
    list(resumed)
    steps = [(r.step, r.ids) for r in read_log(tmp_path / "ids" / "rank-0.ids")]
    assert steps == list(enumerate(whole))


def test_the_command_prints_a_step(pair, tmp_path, capsys):
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(pair[0], shuffle=True), batch_size=8, provenance_dir=tmp_path
    )
    batches = [b["id"].tolist() for b in loader]
    assert main(["provenance", str(tmp_path), "--step", "4", "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line == {"rank": 0, "epoch": 1, "step": 4, "ids": [[0, i] for i in batches[4]]}
    assert main(["provenance", str(tmp_path), "--step", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rank 0, epoch 1, step 4: 8 samples")
    assert f"(0, {batches[4][0]})" in out
    assert main(["provenance", str(tmp_path), "--step", "400"]) == 1
    assert "logs no step 400" in capsys.readouterr().err
    assert main(["provenance", str(tmp_path / "none"), "--step", "1"]) == 1
    assert "holds no provenance log" in capsys.readouterr().err
