"""Ctrl-C is held in a worker process from its start until torch's worker loop can take it."""

import os
import signal

import pytest

import litdata as ld


def _blocked() -> bool:
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


#: (the watching process, the folder its forked children note their mask in), while a test
#: watches; the hook below runs in every child this test process forks, for good.
_WATCHING: list[tuple[int, object]] = []


def _note_fork() -> None:
    for parent, folder in _WATCHING:
        if os.getppid() == parent:
            (folder / f"fork-{os.getpid()}").write_text(str(_blocked()))


os.register_at_fork(after_in_child=_note_fork)


def _note_init(folder):
    def init(worker_id):
        (folder / f"init-{worker_id}").write_text(str(_blocked()))

    return init


def test_a_forked_worker_starts_with_ctrl_c_held_and_lets_it_in_before_the_users_init(tmp_path):
    ld.write_dataset(({"i": i} for i in range(32)), tmp_path / "ds", chunk_size=8)
    notes = tmp_path / "notes"
    notes.mkdir()
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(tmp_path / "ds"),
        batch_size=4,
        num_workers=2,
        worker_init_fn=_note_init(notes),
    )
    _WATCHING.append((os.getpid(), notes))
    try:
        got = sorted(int(i) for batch in loader for i in batch["i"])
    finally:
        _WATCHING.clear()
    assert got == list(range(32))
    forks = [p.read_text() for p in notes.glob("fork-*")]
    assert len(forks) == 2  # the loader's two workers, right after their fork
    assert set(forks) == {"True"}  # held through Python's start-up of the worker
    inits = sorted(p.read_text() for p in notes.glob("init-*"))
    assert inits == ["False", "False"]  # let in before the user's worker_init_fn runs
    assert not _blocked()  # and in the training process once the workers started


def _spawn_init(worker_id):
    path = os.environ["LITDATA_TEST_NOTES"]
    with open(os.path.join(path, f"init-{worker_id}"), "w") as out:
        out.write(str(_blocked()))


@pytest.mark.parametrize("method", ["spawn"])
def test_a_spawned_worker_lets_ctrl_c_in_too(tmp_path, monkeypatch, method):
    ld.write_dataset(({"i": i} for i in range(16)), tmp_path / "ds", chunk_size=8)
    monkeypatch.setenv("LITDATA_TEST_NOTES", str(tmp_path))
    loader = ld.StreamingDataLoader(
        ld.StreamingDataset(tmp_path / "ds"),
        batch_size=4,
        num_workers=2,
        worker_init_fn=_spawn_init,
        multiprocessing_context=method,
    )
    assert sorted(int(i) for batch in loader for i in batch["i"]) == list(range(16))
    assert sorted(p.read_text() for p in tmp_path.glob("init-*")) == ["False", "False"]
