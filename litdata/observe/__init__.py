"""Debugging and profiling the data pipeline: the tracer, trace conversion, loader profiles.

``enable_tracer()`` records the pipeline's events (download, decompress, read, batch...) in a
log, one line per event, from every process; ``convert_trace()`` (``litdata trace convert``)
turns that log into a Chrome / Perfetto trace.
"""

from __future__ import annotations

from litdata.observe.convert import TraceSummary, convert_trace
from litdata.observe.enable import enable_tracer

__all__ = ["TraceSummary", "convert_trace", "enable_tracer"]
