"""``enable_tracer``: turn the pipeline tracer on for this process and the ones it starts."""

from __future__ import annotations

from collections.abc import Iterable

from litdata.core import config
from litdata.observe import tracer as tracing

__all__ = ["enable_tracer"]


def enable_tracer(
    level: str = "chunk",
    log_file: str = "litdata_debug.log",
    categories: Iterable[str] | None = None,
    *,
    iterating_dataset: bool = True,
    item_loader: bool = True,
    getitem_dataset_for_chunk_index: bool = True,
) -> tracing.Tracer | None:
    """Record the data pipeline's events in ``log_file``, one line per event.

    Call it once, before building the DataLoader (or calling ``optimize``): the settings are
    exported as ``LITDATA_TRACE_LEVEL``, ``LITDATA_TRACE_CATEGORIES`` and ``LITDATA_LOG_FILE``,
    so DataLoader workers and optimize workers trace too, into the same file. The file is
    appended to: delete an old log before tracing again. Convert it with
    ``litdata trace convert LOG -o trace.json.gz`` and open it at https://ui.perfetto.dev.

    Args:
        level: ``"batch"`` (epochs, batches, crashes), ``"chunk"`` (and downloads, reads,
            deletes, decompression, chunk writes), ``"sample"`` (and every sample, a lot of
            lines), ``"debug"`` (everything) or ``"off"``.
        log_file: The log to append to.
        categories: Record exactly these categories instead of the level's.
        iterating_dataset: ``False`` leaves out epoch events (LitData's option).
        item_loader: ``False`` leaves out sample events (LitData's option).
        getitem_dataset_for_chunk_index: ``False`` leaves out sample events (LitData's option).

    Returns:
        This process's tracer, or ``None`` when nothing is recorded.

    Raises:
        ValueError: The level or a category is unknown.
    """
    chosen = set(tracing.categories_for(level, categories))
    if not iterating_dataset:
        chosen.discard("epoch")
    if not (item_loader and getitem_dataset_for_chunk_index):
        chosen.discard("sample")
    # Nothing chosen is "off": an empty category list would leave the level in charge.
    config.set_trace_settings(level if chosen else "off", ",".join(sorted(chosen)), log_file)
    return tracing.reload()
