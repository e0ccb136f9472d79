"""``LoaderPosition``: where a loader stands in its epoch, which its ``state_dict()`` records."""

from __future__ import annotations

from dataclasses import dataclass, field

from litdata.streaming.epoch.schedule import Clock

__all__ = ["LoaderPosition"]


@dataclass
class LoaderPosition:
    """A loader's counters: what it delivered this epoch, and how the epoch began.

    Attributes:
        restoring: A loaded state will shape the next iteration.
        epoch_finished: The last iteration ran to the epoch's end.
        broken_off: The last iteration stopped early (``break``).
        base_samples: Samples delivered before the state this epoch resumed from.
        counts: Samples each worker delivered, per source, since the iteration began.
        batches: Batches each worker delivered since the iteration began.
        latest_worker: The worker whose batch came last (-1: none yet).
        clock: Where training stood when this run of the loader began.
        epoch_clocks: Where it stood as each epoch began.
    """

    restoring: bool = False
    epoch_finished: bool = False
    broken_off: bool = False
    base_samples: int = 0
    counts: list[list[int]] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)
    latest_worker: int = -1
    clock: Clock = field(default_factory=Clock)
    epoch_clocks: dict[int, Clock] = field(default_factory=dict)
