"""Which sample a transform is running on: the key random augmentations draw from.

A dataset sets the key (its seed, the epoch, the sample's position, its location) around the
transforms of each sample, in the thread that runs them. A transform that draws random numbers
from the key (``litdata.vision``'s crops) gives the same sample the same draws whichever worker,
worker count, resumed run or ``loader.replay`` reads it, and new draws in a new epoch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["SampleKey", "current", "replay_epoch", "replaying", "transforming"]


@dataclass(frozen=True)
class SampleKey:
    """The sample a transform runs on.

    Attributes:
        seed: The dataset's seed.
        epoch: The epoch the sample is read in (from 1).
        index: The sample's position in the dataset (``ds[index]``).
        source: The dataset's location, for error messages.
    """

    seed: int
    epoch: int
    index: int
    source: str

    def where(self) -> str:
        """``sample 12 of dataset /data/x (epoch 1)``, for error messages."""
        return f"sample {self.index} of dataset {self.source} (epoch {self.epoch})"


_KEY: ContextVar[SampleKey | None] = ContextVar("litdata_sample_key", default=None)
_REPLAY_EPOCH: ContextVar[int | None] = ContextVar("litdata_replay_epoch", default=None)


def current() -> SampleKey | None:
    """The key of the sample being transformed in this thread, or None outside a dataset."""
    return _KEY.get()


@contextmanager
def transforming(key: SampleKey) -> Iterator[None]:
    """Make ``key`` the current sample's key while the block runs."""
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)


@contextmanager
def replaying(epoch: int) -> Iterator[None]:
    """Read samples as ``epoch`` read them (``loader.replay``), whatever the current epoch."""
    token = _REPLAY_EPOCH.set(epoch)
    try:
        yield
    finally:
        _REPLAY_EPOCH.reset(token)


def replay_epoch() -> int | None:
    """The epoch a replay reads as, or None."""
    return _REPLAY_EPOCH.get()
