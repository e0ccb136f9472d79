"""``ShuffleContract``: what every shuffle strategy, built-in or not, must do.

Subclass it, name the class and its options, and say whether it changes the order::

    class TestBlockShuffle(ShuffleContract):
        shuffle_class = BlockShuffle
        options = {"size": 4}
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any, ClassVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litdata.core.protocols import ShuffleStrategy, protocol_members
from litdata.streaming.epoch.plan import Topology, epoch_plan
from litdata.streaming.epoch.shuffles import CheckedShuffle

__all__ = ["ShuffleContract"]

_SEEDS = st.integers(0, 2**31 - 1)
# Every subclass runs these tests on its own strategy: differing executors are the point.
_PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.differing_executors]
)
_EPOCHS = st.integers(1, 50)


def _is_permutation(order: Sequence[int], of: Sequence[int]) -> bool:
    return sorted(int(value) for value in order) == sorted(of)


class ShuffleContract:
    """What every shuffle strategy must do.

    Attributes:
        shuffle_class: The class under test.
        options: Its constructor's keyword arguments.
        reorders: Whether it changes the order from one epoch to the next (``False`` only for
            strategies that keep index order).
    """

    shuffle_class: ClassVar[type]
    options: ClassVar[dict[str, Any]] = {}
    reorders: ClassVar[bool] = True

    def _strategy(self) -> Any:
        return self.shuffle_class(**self.options)

    def test_satisfies_the_protocol(self) -> None:
        strategy = self._strategy()
        for member in protocol_members(ShuffleStrategy):
            assert hasattr(strategy, member), f"the strategy lacks {member}"
        assert isinstance(getattr(self.shuffle_class, "name", None), str)
        assert isinstance(getattr(self.shuffle_class, "whole_chunks", None), bool)

    @_PROPERTY
    @given(num_chunks=st.integers(0, 300), seed=_SEEDS, epoch=_EPOCHS)
    def test_chunk_order_is_a_permutation(self, num_chunks: int, seed: int, epoch: int) -> None:
        order = self._strategy().chunk_order(num_chunks, seed, epoch)
        assert _is_permutation(order, range(num_chunks))

    @_PROPERTY
    @given(num_items=st.integers(0, 5000), seed=_SEEDS, epoch=_EPOCHS, chunk=st.integers(0, 99))
    def test_item_order_is_a_permutation(
        self, num_items: int, seed: int, epoch: int, chunk: int
    ) -> None:
        order = self._strategy().item_order(chunk, num_items, seed, epoch)
        assert _is_permutation(order, range(num_items))

    @_PROPERTY
    @given(
        chunks=st.lists(st.integers(0, 10_000), unique=True, max_size=100),
        seed=_SEEDS,
        epoch=_EPOCHS,
        worker=st.integers(0, 63),
    )
    def test_worker_chunk_order_is_a_permutation_of_its_chunks(
        self, chunks: list[int], seed: int, epoch: int, worker: int
    ) -> None:
        order = self._strategy().worker_chunk_order(chunks, seed, epoch, worker)
        assert _is_permutation(order, chunks)

    @_PROPERTY
    @given(seed=_SEEDS, epoch=_EPOCHS)
    def test_the_same_seed_and_epoch_give_the_same_order(self, seed: int, epoch: int) -> None:
        first, second = self._strategy(), self._strategy()
        assert list(first.chunk_order(50, seed, epoch)) == list(second.chunk_order(50, seed, epoch))
        assert list(first.item_order(3, 500, seed, epoch)) == list(
            second.item_order(3, 500, seed, epoch)
        )

    def test_epochs_differ(self) -> None:
        strategy = self._strategy()
        orders = [
            (
                list(strategy.chunk_order(200, 7, epoch)),
                list(strategy.item_order(0, 2000, 7, epoch)),
                list(strategy.worker_chunk_order(list(range(200)), 7, epoch, 0)),
            )
            for epoch in (1, 2)
        ]
        assert (orders[0] != orders[1]) is self.reorders

    def test_plans_cover_every_item_once_with_one_and_many_chunks(self) -> None:
        strategy = CheckedShuffle(self._strategy())
        for sizes in ([37], [10] * 23, [1, 500, 3, 64, 64, 7]):
            for topology in (Topology(1, 1, 1), Topology(2, 3, 4)):
                plan = epoch_plan(
                    sizes, topology, seed=3, epoch=2, drop_last=False, strategy=strategy
                )
                seen = [
                    (
                        segment.region,
                        strategy.item_order(segment.region, sizes[segment.region], 3, 2)[
                            segment.offset + i
                        ],
                    )
                    for segments in plan
                    for segment in segments
                    for i in range(segment.count)
                ]
                assert sorted(seen) == [(r, i) for r, size in enumerate(sizes) for i in range(size)]

    def test_pickles(self) -> None:
        strategy = self._strategy()
        clone = pickle.loads(pickle.dumps(strategy))
        assert list(clone.item_order(1, 100, 5, 3)) == list(strategy.item_order(1, 100, 5, 3))
