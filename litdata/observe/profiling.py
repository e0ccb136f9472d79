"""Profiles of the data loader: a torch profiler trace and cProfile statistics.

``StreamingDataLoader(profile_batches=N)`` traces DataLoader worker 0 (or the main process
when ``num_workers=0``) with ``torch.profiler`` from batch ``profile_skip_batches`` for ``N``
batches (``True``: the whole epoch) into ``<profile_dir>/result.json`` (Chrome trace) and
``result.txt`` (a table of the most expensive operators). ``profile_cprofile=True`` writes
``cprofile_worker0.prof`` / ``.txt`` for worker 0 and ``cprofile_main.prof`` / ``.txt`` for the
training loop. One or the other per loader, as in LitData: both install a profiler. Only global
rank 0 profiles.
"""

from __future__ import annotations

import cProfile
import io
import logging
import os
import pstats
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ProfileSettings",
    "Profiler",
    "ProfilingCollate",
    "WorkerStart",
    "start_in_main",
    "stop_in_main",
]

logger = logging.getLogger(__name__)

_TABLE_ROWS = 40


@dataclass(frozen=True)
class ProfileSettings:
    """What to profile.

    Attributes:
        batches: Batches to trace with ``torch.profiler``; ``True`` for all; ``None`` or 0: none.
        skip_batches: Batches to let pass before tracing.
        directory: Where the files go.
        cprofile: Collect cProfile statistics of worker 0 and the training loop instead.
    """

    batches: int | bool | None
    skip_batches: int
    directory: str
    cprofile: bool

    @classmethod
    def create(
        cls,
        batches: int | bool | None,
        skip_batches: int | None,
        directory: str | os.PathLike[str] | None,
        cprofile: bool,
    ) -> ProfileSettings | None:
        """Validated settings, or ``None`` when nothing is profiled.

        Raises:
            ValueError: A count is negative, ``profile_batches`` is neither an int nor a bool,
                or both ``profile_batches`` and ``profile_cprofile`` are given.
        """
        if batches is not None and not isinstance(batches, int):
            raise ValueError(f"profile_batches must be an int or True, got {batches!r}.")
        if (batches is not None and batches < 0) or (skip_batches or 0) < 0:
            raise ValueError("profile_batches and profile_skip_batches cannot be negative.")
        if batches and cprofile:
            raise ValueError(
                "`profile_batches` (torch.profiler) and `profile_cprofile` both install a "
                "profiler; enable only one of them per loader, as in LitData: profile_batches=N "
                "traces N batches of worker 0, profile_cprofile=True collects Python call "
                "statistics of worker 0 and of the training loop."
            )
        if not batches and not cprofile:
            return None
        folder = os.fspath(directory) if directory is not None else os.getcwd()
        return cls(batches or None, skip_batches or 0, folder, cprofile)

    def describe(self) -> str:
        """A short description for ``repr()``."""
        parts = []
        if self.batches:
            count = "all" if self.batches is True else str(self.batches)
            parts.append(f"torch {count} batches after {self.skip_batches}")
        if self.cprofile:
            parts.append("cProfile")
        return f"{' + '.join(parts)} -> {self.directory}"


def _write_stats(profile: cProfile.Profile, path: Path) -> None:
    """``path`` (``.prof``, for snakeviz or pstats) and its text summary (``.txt``)."""
    profile.dump_stats(str(path))
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    stats.sort_stats("tottime").print_stats(_TABLE_ROWS)
    stats.sort_stats("cumulative").print_stats(_TABLE_ROWS)
    path.with_suffix(".txt").write_text(text.getvalue())
    logger.info("Saved %s and its summary %s", path, path.with_suffix(".txt"))


class Profiler:
    """The profilers of one process (worker 0, or the main process without workers).

    Args:
        settings: What to profile.
        cprofile_name: The cProfile file's name (``cprofile_worker0.prof``...).
    """

    def __init__(self, settings: ProfileSettings, cprofile_name: str) -> None:
        self.settings = settings
        self.directory = Path(settings.directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._cprofile_name = cprofile_name
        self._cprofile: cProfile.Profile | None = None
        self._torch: Any = None
        self._batches = 0
        self._finished = False

    def start(self) -> None:
        """Start cProfile, and the torch profiler when no batch is to be skipped."""
        if self.settings.cprofile:
            self._cprofile = cProfile.Profile()
            self._cprofile.enable()
        if self.settings.batches and not self.settings.skip_batches:
            self._start_torch()

    def _start_torch(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        result = self.directory / "result.json"
        result.unlink(missing_ok=True)  # an old trace is never mistaken for this one
        self._torch = profile(activities=[ProfilerActivity.CPU])
        self._torch.start()

    def _stop_torch(self) -> None:
        if self._torch is None:
            return
        torch_profile, self._torch = self._torch, None
        torch_profile.stop()
        result = self.directory / "result.json"
        torch_profile.export_chrome_trace(str(result))
        table = torch_profile.key_averages().table(
            sort_by="self_cpu_time_total", row_limit=_TABLE_ROWS
        )
        result.with_suffix(".txt").write_text(table)
        logger.info("Saved %s; open it at https://ui.perfetto.dev or chrome://tracing", result)

    def batch_done(self) -> None:
        """Count a batch; start or stop the torch profiler at the configured batches."""
        self._batches += 1
        settings = self.settings
        if not settings.batches:
            return
        if self._batches == settings.skip_batches and self._torch is None:
            self._start_torch()
        elif settings.batches is not True and self._batches == (
            settings.skip_batches + settings.batches
        ):
            self._stop_torch()

    def finish(self) -> None:
        """Stop every profiler and write its files (once)."""
        if self._finished:
            return
        self._finished = True
        self._stop_torch()
        if self._cprofile is not None:
            self._cprofile.disable()
            _write_stats(self._cprofile, self.directory / self._cprofile_name)


#: The profiler of this process, when it is the one profiled.
_active: Profiler | None = None


def start_in_main(settings: ProfileSettings, num_workers: int, rank: int) -> Profiler | None:
    """Start the training loop's profiler (global rank 0): cProfile; and torch without workers."""
    global _active  # noqa: PLW0603  # one profiled process
    if rank != 0:
        return None
    if num_workers == 0:
        _active = Profiler(settings, "cprofile_main.prof")
        _active.start()
        return _active
    if not settings.cprofile:
        return None
    main = Profiler(ProfileSettings(None, 0, settings.directory, True), "cprofile_main.prof")
    main.start()
    return main


def stop_in_main(profiler: Profiler | None) -> None:
    """Write the training loop's profiles."""
    global _active  # noqa: PLW0603
    if profiler is not None:
        profiler.finish()
    _active = None


class WorkerStart:
    """A ``worker_init_fn`` that starts the profiler in worker 0 of rank 0, then calls ``then``.

    Args:
        settings: What to profile.
        then: The user's ``worker_init_fn``, if any.
        rank: The global rank of the training process whose workers these are.
    """

    def __init__(
        self, settings: ProfileSettings, then: Callable[[int], None] | None, rank: int
    ) -> None:
        self.settings = settings
        self.then = then
        self.rank = rank

    def __call__(self, worker_id: int) -> None:
        """Start profiling if this is worker 0 of rank 0; then the user's init."""
        global _active  # noqa: PLW0603
        if worker_id == 0 and self.rank == 0:
            from multiprocessing.util import Finalize

            _active = Profiler(self.settings, "cprofile_worker0.prof")
            _active.start()
            # The worker exits through multiprocessing's exit function, which runs this.
            Finalize(_active, _active.finish, exitpriority=100)
        if self.then is not None:
            self.then(worker_id)


class ProfilingCollate:
    """``collate`` that also tells the process's profiler a batch was made.

    Args:
        collate: The collate function.
    """

    def __init__(self, collate: Callable[[list[Any]], Any]) -> None:
        self.collate = collate

    def __call__(self, samples: list[Any]) -> Any:
        """The batch of ``samples``; counted by the profiler."""
        batch = self.collate(samples)
        if _active is not None:
            _active.batch_done()
        return batch
