"""The progress bar of ``optimize`` and ``map``: inputs done, samples/s, time left."""

from __future__ import annotations

import time
from types import TracebackType

from tqdm.auto import tqdm

from litdata.core.work import Finished, Progress, WorkerEvent

__all__ = ["ProgressBar"]


class ProgressBar:
    """A tqdm bar fed with worker events (silent when ``enabled`` is false).

    Args:
        total: The number of inputs, or ``None`` when unknown (queue inputs).
        description: The bar's label.
        enabled: Whether to show it.
    """

    def __init__(self, total: int | None, description: str, enabled: bool) -> None:
        self._bar = tqdm(
            total=total,
            desc=description,
            unit="input",
            disable=not enabled,
            dynamic_ncols=True,
            smoothing=0.1,
        )
        self.samples = 0
        self._start = time.monotonic()

    def __call__(self, event: WorkerEvent) -> None:
        """Count an event's progress."""
        if isinstance(event, Progress):
            self.samples += event.samples
            elapsed = max(time.monotonic() - self._start, 1e-9)
            self._bar.set_postfix(
                samples=self.samples, rate=f"{self.samples / elapsed:,.0f}/s", refresh=False
            )
            self._bar.update(event.inputs)
        elif isinstance(event, Finished):
            self._bar.refresh()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._bar.close()
