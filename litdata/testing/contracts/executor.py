"""``ExecutorContract``: what every executor (local processes, a cluster...) must do.

Provide an ``executor`` fixture (a configured instance; for a cluster executor, one connected to
a running cluster)::

    class TestThreadExecutor(ExecutorContract):
        @pytest.fixture
        def executor(self):
            return ThreadExecutor()

Jobs and inputs cross to the workers by pickling; the jobs here are module-level classes so
that any executor can ship them.
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from litdata.core.errors import ProcessingError
from litdata.core.protocols import ClusterExecutor, Executor, protocol_members
from litdata.core.work import (
    Item,
    LiveQueue,
    Progress,
    Report,
    SharedInputs,
    Slices,
    WorkerEvent,
)
from litdata.engine.reader import DatasetReader

__all__ = ["ExecutorContract"]


@dataclass
class Squares:
    """A job: squares its inputs; returns them with the worker's rank."""

    fail_on: int | None = None

    def __call__(self, rank: int, inputs: Iterable[Item], report: Report) -> dict[str, Any]:
        """Square every input, reporting progress after each."""
        done = []
        for position, value in inputs:
            if value == self.fail_on:
                raise ValueError(f"input {value} is bad")
            done.append((position, value * value))
            report(Progress(rank, 1, 1))
        return {"rank": rank, "done": done}


def square_sample(value: int) -> dict[str, int]:
    """An ``optimize`` function."""
    return {"value": value, "square": value * value}


def _collect(executor: Any, source: Any, workers: int) -> tuple[list[dict[str, Any]], list[Any]]:
    events: list[WorkerEvent] = []
    summaries = executor.run(Squares(), source, workers, events.append)
    return summaries, events


class ExecutorContract:
    """What every executor must do. Provide the ``executor`` fixture."""

    @pytest.fixture
    def executor(self) -> Executor:
        """The executor under test (override)."""
        raise NotImplementedError("provide an `executor` fixture")

    def test_satisfies_the_protocol(self, executor: Any) -> None:
        for member in protocol_members(Executor):
            assert hasattr(executor, member), f"the executor lacks {member}"

    def test_slices_reach_their_workers_in_order(self, executor: Any) -> None:
        slices = [[(i, i) for i in range(10)], [(i, i) for i in range(10, 25)]]
        summaries, events = _collect(executor, Slices(slices), 2)
        assert [summary["rank"] for summary in summaries] == [0, 1]
        for part, summary in zip(slices, summaries, strict=True):
            assert summary["done"] == [(position, value * value) for position, value in part]
        assert sum(event.inputs for event in events if isinstance(event, Progress)) == 25

    def test_shared_inputs_are_each_processed_once(self, executor: Any) -> None:
        items = [(i, i) for i in range(200)]
        summaries, _ = _collect(executor, SharedInputs(items), 3)
        done = sorted(pair for summary in summaries for pair in summary["done"])
        assert done == [(i, i * i) for i in range(200)]

    def test_a_live_queue_is_drained_until_its_sentinel(self, executor: Any) -> None:
        feed: Any = multiprocessing.Manager().Queue()
        for value in range(30):
            feed.put(value)
        feed.put("ALL_DONE")
        summaries, _ = _collect(executor, LiveQueue(feed, "ALL_DONE"), 2)
        values = sorted(value for summary in summaries for _, value in summary["done"])
        assert values == [value * value for value in range(30)]

    def test_a_failure_names_the_input_and_stops_the_run(self, executor: Any) -> None:
        items = [(i, i) for i in range(50)]
        with pytest.raises(ProcessingError, match=r"input 7 is bad") as caught:
            executor.run(Squares(fail_on=7), SharedInputs(items), 2, lambda event: None)
        assert "Traceback" in str(caught.value)

    def test_a_cluster_executor_makes_between_one_task_and_one_per_input(
        self, executor: Any
    ) -> None:
        if not isinstance(executor, ClusterExecutor):
            pytest.skip("not a cluster executor")
        assert 1 <= executor.tasks(100, None, 1) <= 100
        assert executor.tasks(1, 4, 1) == 1

    def test_pickles(self, executor: Any) -> None:
        clone = pickle.loads(pickle.dumps(executor))
        summaries, _ = _collect(clone, Slices([[(0, 3)]]), 1)
        assert summaries[0]["done"] == [(0, 9)]

    def test_optimize_runs_on_it(self, executor: Any, tmp_path: Path) -> None:
        from litdata.processing.optimize import optimize

        optimize(
            square_sample,
            list(range(100)),
            str(tmp_path / "ds"),
            chunk_size=16,
            num_workers=2,
            executor=executor,
            verbose=False,
        )
        reader = DatasetReader(tmp_path / "ds")
        assert sorted(reader[i]["value"] for i in range(len(reader))) == list(range(100))
        assert all(reader[i]["square"] == reader[i]["value"] ** 2 for i in range(len(reader)))
