"""Trace-log conversion: LitData's one-line events into a Chrome / Perfetto JSON trace.

Matched ``B``/``E`` lines (same process, thread, name, category and chunk) become complete
spans (``ph: X``); unmatched ones are kept as they are and counted. Each process gets a track
named after its role (loader, DataLoader worker, optimize worker) and each thread a track
named after what it did. Open the result at https://ui.perfetto.dev or ``chrome://tracing``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TraceSummary", "convert_trace", "parse_line", "to_chrome"]

_FIELDS = {"ts", "PID", "TID", "name", "ph", "cat", "cname"}
_CONTEXT = (
    "dist_world_size",
    "dist_global_rank",
    "dist_num_nodes",
    "worker_world_size",
    "worker_rank",
)


#: What a category's total time is, in the summary line.
_MEANING = {
    "batch": " (training loop waiting)",
    "read": " (workers decoding)",
    "download": " (fetching)",
    "epoch": " (whole epochs)",
}


@dataclass
class TraceSummary:
    """What a converted trace holds.

    Attributes:
        events: Lines read.
        spans: Complete spans made from matched ``B``/``E`` pairs.
        seconds: Total span time per category (``download``, ``read``, ``batch``...).
        unmatched_begin: ``B`` lines without their ``E`` (a process ended mid-span).
        unmatched_end: ``E`` lines without their ``B``.
        crashes: ``crash`` events.
        bad_lines: Lines that are not trace events (skipped).
        processes: Processes seen.
    """

    events: int = 0
    spans: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    unmatched_begin: int = 0
    unmatched_end: int = 0
    crashes: int = 0
    bad_lines: int = 0
    processes: int = 0

    def line(self) -> str:
        """One line: time per category, then what did not match."""
        times = ", ".join(
            f"{category}{_MEANING.get(category, '')} {seconds:.3f}s"
            for category, seconds in sorted(self.seconds.items(), key=lambda kv: -kv[1])
        )
        return (
            f"{self.events} events from {self.processes} processes, {self.spans} spans "
            f"({times or 'none'}); unmatched: {self.unmatched_begin} begin, "
            f"{self.unmatched_end} end; crashes: {self.crashes}"
            + (f"; {self.bad_lines} lines skipped" if self.bad_lines else "")
        )


def _value(text: str) -> Any:
    """A field's value: an int or a float when it is one, else the text."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_line(line: str) -> dict[str, Any] | None:
    """One log line as ``{"ts", "pid", "tid", "name", "ph", "cat", "args", "context"}``.

    Returns ``None`` for a line that is not a trace event.
    """
    fields: dict[str, str] = {}
    for part in line.strip().split(";"):
        key, separator, value = part.partition(":")
        if separator:
            fields[key.strip()] = value.strip()
    if not fields.keys() >= _FIELDS or fields["ph"] not in {"B", "E", "I", "i"}:
        return None
    try:
        ts, pid, tid = float(fields["ts"]), int(fields["PID"]), int(fields["TID"])
    except ValueError:
        return None
    extra = {key: _value(value) for key, value in fields.items() if key not in _FIELDS}
    context = {key: extra.pop(key) for key in _CONTEXT if key in extra}
    return {
        "ts": ts,
        "pid": pid,
        "tid": tid,
        "name": fields["name"],
        "ph": fields["ph"].upper(),
        "cat": fields["cat"],
        "cname": fields["cname"],
        "args": extra,
        "context": context,
    }


def _process_name(pid: int, context: dict[str, Any], names: set[str]) -> str:
    rank = context.get("dist_global_rank", 0)
    if "optimize" in names:
        return f"optimize worker {context.get('worker_rank', 0)} (pid {pid})"
    if "dataloader" in names:
        return f"rank {rank} training loop (pid {pid})"
    workers = context.get("worker_world_size", 1)
    return f"rank {rank} worker {context.get('worker_rank', 0)}/{workers} (pid {pid})"


def _metadata(
    pids: dict[int, dict[str, Any]],
    process_names: dict[int, set[str]],
    threads: dict[tuple[int, int], set[str]],
) -> Iterator[dict[str, Any]]:
    for pid, context in pids.items():
        name = _process_name(pid, context, process_names[pid])
        yield {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}
    for (pid, tid), names in threads.items():
        label = "+".join(sorted(names))
        yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": label}}


def to_chrome(  # noqa: PLR0915  # one pass that matches, counts and names
    lines: Iterable[str], *, categories: Iterable[str] | None = None, complete: bool = True
) -> tuple[dict[str, Any], TraceSummary]:
    """Convert trace-log lines into a Chrome trace object, and summarise it.

    Args:
        lines: The log's lines.
        categories: Keep only these categories (all when ``None``).
        complete: Turn matched ``B``/``E`` pairs into ``X`` spans (else keep them as they are).
    """
    keep = None if categories is None else set(categories)
    summary = TraceSummary()
    parsed = []
    for line in lines:
        if not line.strip():
            continue
        event = parse_line(line)
        if event is None:
            summary.bad_lines += 1
        elif keep is None or event["cat"] in keep:
            parsed.append(event)
    parsed.sort(key=lambda event: event["ts"])
    summary.events = len(parsed)
    pids: dict[int, dict[str, Any]] = {}
    process_names: dict[int, set[str]] = defaultdict(set)
    thread_ids: dict[tuple[int, int], int] = {}
    threads: dict[tuple[int, int], set[str]] = defaultdict(set)
    open_spans: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    seconds: dict[str, float] = defaultdict(float)
    out: list[dict[str, Any]] = []
    for event in parsed:
        pid = event["pid"]
        pids.setdefault(pid, {}).update(event["context"])
        process_names[pid].add(event["name"])
        tid = thread_ids.setdefault((pid, event["tid"]), len(thread_ids) + 1)
        threads[pid, tid].add(event["name"])
        chrome = {
            "name": event["name"],
            "cat": event["cat"],
            "ph": event["ph"],
            "ts": event["ts"],
            "pid": pid,
            "tid": tid,
            "cname": event["cname"],
            "args": event["args"],
        }
        if event["ph"] in {"I", "i"}:
            summary.crashes += event["name"] == "crash"
            out.append({**chrome, "ph": "i", "s": "t"})
            continue
        if not complete:
            out.append(chrome)
            continue
        key = (pid, tid, event["name"], event["cat"], event["args"].get("chunk"))
        if event["ph"] == "B":
            open_spans[key].append(chrome)
            continue
        stack = open_spans.get(key)
        if not stack:
            summary.unmatched_end += 1
            out.append(chrome)
            continue
        begin = stack.pop()
        duration = max(0.0, event["ts"] - begin["ts"])
        seconds[event["cat"]] += duration / 1e6
        summary.spans += 1
        out.append(
            {**begin, "ph": "X", "dur": duration, "args": {**begin["args"], **chrome["args"]}}
        )
    for stack in open_spans.values():
        summary.unmatched_begin += len(stack)
        out.extend(stack)
    summary.seconds = dict(seconds)
    summary.processes = len(pids)
    trace = {
        "traceEvents": [*_metadata(pids, process_names, threads), *out],
        "displayTimeUnit": "ms",
        "otherData": {"source": "litdata trace convert", "summary": summary.line()},
    }
    return trace, summary


def convert_trace(
    log: str | os.PathLike[str],
    output: str | os.PathLike[str] = "litdata_trace.json.gz",
    *,
    categories: Iterable[str] | None = None,
    complete: bool = True,
) -> TraceSummary:
    """Convert the trace log ``log`` (from ``enable_tracer``) into a Chrome / Perfetto trace.

    Args:
        log: The log file.
        output: The trace to write; gzip-compressed when it ends with ``.gz``.
        categories: Keep only these categories (``["download", "read"]``).
        complete: Turn matched begin/end pairs into complete spans.

    Returns:
        What the trace holds (``summary.line()`` is a one-line summary).

    Raises:
        FileNotFoundError: There is no such log.
        ValueError: The log holds no trace event (it is not a trace log, or the categories
            kept none); nothing is written.
    """
    with open(log, encoding="utf-8", errors="replace") as handle:
        trace, summary = to_chrome(handle, categories=categories, complete=complete)
    if not summary.events:
        raise ValueError(
            f"{log} holds no trace events (is it a log of litdata.observe.enable_tracer()?); "
            f"nothing was written to {output}."
        )
    data = json.dumps(trace, separators=(",", ":")).encode()
    target = Path(output)
    if target.parent != Path():
        target.parent.mkdir(parents=True, exist_ok=True)
    if target.name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6)
    target.write_bytes(data)
    return summary
