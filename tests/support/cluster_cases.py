"""What the dask and ray executors must do on a real cluster; each engine's test file runs it.

Subclass ``ClusterCases`` with an ``engine`` fixture returning ``(executor name,
executor_options)`` for a running cluster (see ``tests/plugins/test_dask_executor.py``).
"""

from __future__ import annotations

import functools
import os
import re
import signal
import threading

import pytest

import litdata as ld
from litdata.core.errors import ProcessingError
from litdata.engine.boundary.resolve import resolve
from support import fns
from support.helpers import wait_for


def _ids(url, options=None):
    reader = ld.DatasetReader(url, storage_options=options)
    return sorted(reader[i]["id"] for i in range(len(reader)))


class ClusterCases:
    """optimize to S3 while a worker is killed, ordered runs, checkpoints, map."""

    @pytest.fixture
    def engine(self):
        """``(executor name, executor_options)`` with the cluster running (override)."""
        raise NotImplementedError

    def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(
        self, engine, s3_server, tmp_path, capsys
    ):
        name, executor_options = engine
        options = s3_server.storage_options
        url = s3_server.url(s3_server.new_bucket(), "ds")
        markers = tmp_path / "markers"
        markers.mkdir()

        killed: list[int] = []

        def kill_the_victim():  # kill -9 the worker process that runs input 31, once
            wait_for(lambda: list(markers.glob("victim-*")), timeout=60, what="input 31")
            victim = int(next(markers.glob("victim-*")).name.split("-")[1])
            (markers / "killed").touch()
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

        killer = threading.Thread(target=kill_the_victim)
        killer.start()
        ld.optimize(
            fns.waits_to_be_killed,
            [(i, str(markers)) for i in range(100)],
            url,
            chunk_size=4,
            num_workers=2,
            executor=name,
            executor_options=executor_options,
            storage_options=options,
        )
        killer.join()
        assert killed, "no worker was killed"
        assert _ids(url, options) == list(range(100))
        index = ld.DatasetReader(url, storage_options=options).index
        listed = {chunk.filename for chunk in index.chunks}
        names = set(resolve(url, storage_options=options).storage.list(url))
        # no chunk of the lost attempt, no stray index
        assert names == listed | {"index.json", "index.compact"}, sorted(names ^ listed)
        assert len({name.split("-")[1] for name in listed}) == 8  # 4 tasks per worker, a rank each
        shown = [int(n) for n in re.findall(r"(\d+)/100 \[", capsys.readouterr().err)]
        assert max(shown) == 100, shown  # the progress bar counted every input once

    def test_an_ordered_run_keeps_the_input_order_across_tasks(self, engine, tmp_path):
        name, executor_options = engine
        ld.optimize(
            fns.record,
            range(50),
            tmp_path / "ds",
            chunk_size=4,
            keep_data_ordered=True,
            executor=name,
            executor_options=executor_options,
            verbose=False,
        )
        reader = ld.DatasetReader(tmp_path / "ds")
        assert [reader[i]["id"] for i in range(len(reader))] == list(range(50))

    def test_use_checkpoint_resumes_on_the_cluster(self, engine, tmp_path):
        name, executor_options = engine
        first, second = tmp_path / "first", tmp_path / "second"
        first.mkdir()
        second.mkdir()
        run = functools.partial(
            ld.optimize,
            inputs=range(100),
            output_dir=tmp_path / "ds",
            chunk_size=4,
            use_checkpoint=True,
            executor=name,
            executor_options=executor_options,
            verbose=False,
        )
        with pytest.raises(ProcessingError, match="input 17 is cursed"):
            run(functools.partial(fns.noted, str(first), 17))
        run(functools.partial(fns.noted, str(second), None))
        assert _ids(tmp_path / "ds") == list(range(100))
        redone = {int(path.name) for path in second.iterdir()}
        assert 17 in redone
        assert len(redone) < 100  # the tasks' checkpoints were resumed
        assert not (tmp_path / "ds" / ".checkpoints").exists()

    def test_a_task_whose_fn_failed_runs_again_when_asked(self, engine, tmp_path, caplog):
        name, executor_options = engine
        ld.optimize(
            functools.partial(fns.fails_once, str(tmp_path)),
            range(40),
            tmp_path / "ds",
            chunk_size=4,
            executor=name,
            executor_options={**executor_options, "retries": 1},
            verbose=False,
        )
        assert _ids(tmp_path / "ds") == list(range(40))
        assert "running it again (1 of 1)" in caplog.text

    def test_map_writes_every_file(self, engine, tmp_path):
        name, executor_options = engine
        ld.map(
            fns.write_file,
            range(30),
            tmp_path / "out",
            executor=name,
            executor_options=executor_options,
            verbose=False,
        )
        assert sorted(os.listdir(tmp_path / "out")) == sorted(f"item-{i}.txt" for i in range(30))
