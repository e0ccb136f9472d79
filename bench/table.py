"""Markdown tables of benchmark medians and ratios."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from rows import Metric, Row

PEERS_FOR_RATIO = (
    "litdata",
    "mosaic",
    "webdataset",
    "baseline",
    "ours-noverify",
    "ours-verifyall",
    "s3fs-raw",
)


@dataclass
class Cell:
    """All repeats of one (row, workload, variant, system)."""

    values: dict[str, list[float]] = field(default_factory=dict)
    status: str = "ok"  # ok | unsupported: ... | error: ... | WRONG: ...
    note: str = ""

    def add(self, metrics: dict[str, Any]) -> None:
        """Record one repeat's metrics."""
        for key, value in metrics.items():
            if isinstance(value, (int, float)):
                self.values.setdefault(key, []).append(float(value))

    def median(self, key: str) -> float | None:
        """Median over repeats, or None."""
        vals = self.values.get(key)
        return statistics.median(vals) if vals else None

    def spread(self, key: str) -> float | None:
        """max/min over repeats (None with fewer than 2 repeats or a zero)."""
        vals = self.values.get(key)
        if not vals or len(vals) < 2 or min(vals) <= 0:
            return None
        return max(vals) / min(vals)


def _fmt(value: float, digits: int) -> str:
    if value >= 1_000_000 and digits == 0:
        return f"{value / 1e6:.1f}M"
    if value >= 10_000 and digits == 0:
        return f"{value / 1000:.1f}k"
    return f"{value:,.{digits}f}"


def cell_text(cell: Cell | None, metric: Metric) -> str:
    """Median (with a ``±`` mark when max/min of repeats ≥ 1.3), or the failure status."""
    if cell is None:
        return "-"
    if cell.status != "ok":
        return cell.status.split(":", 1)[0]
    value = cell.median(metric.key)
    if value is None:
        return "-"
    text = _fmt(value, metric.digits)
    spread = cell.spread(metric.key)
    if spread is not None and spread >= 1.3:
        text += f" (±{spread:.1f}x)"
    return text


def ratio(ours: Cell | None, peer: Cell | None, metric: Metric) -> str:
    """How much better ours is than ``peer`` on ``metric`` (>1 = ours better), e.g. ``1.25x``."""
    if not metric.compare:
        return ""
    if ours is None or peer is None or ours.status != "ok" or peer.status != "ok":
        return "-"
    a, b = ours.median(metric.key), peer.median(metric.key)
    if a is None or b is None or a <= 0 or b <= 0:
        return "-"
    return f"{(a / b if metric.higher_is_better else b / a):.2f}x"


def render(row: Row, cells: dict[tuple[str, str, str], Cell], systems: list[str]) -> str:
    """One Markdown table for ``row``; ``cells`` is keyed by (workload, variant label, system)."""
    ratio_peers = (
        [p for p in PEERS_FOR_RATIO if p in systems and p != "ours"] if "ours" in systems else []
    )
    header = ["workload", "metric", *systems, *[f"ours vs {p}" for p in ratio_peers]]
    lines = [
        f"### {row.name}: {row.description}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * 2 + "---:|" * (len(systems) + len(ratio_peers)),
    ]
    seen: list[tuple[str, str]] = []
    for workload, variant, _ in cells:
        if (workload, variant) not in seen:
            seen.append((workload, variant))
    for workload, variant in seen:
        name = f"{workload} {variant}".strip()
        for metric in row.metrics:
            by_system = {s: cells.get((workload, variant, s)) for s in systems}
            if all(
                c is None or (c.status == "ok" and c.median(metric.key) is None)
                for c in by_system.values()
            ):
                continue
            parts = [name, metric.label, *[cell_text(by_system[s], metric) for s in systems]]
            parts += [ratio(by_system.get("ours"), by_system.get(p), metric) for p in ratio_peers]
            lines.append("| " + " | ".join(parts) + " |")
    problems = []
    for system in systems:
        mine = {(w, v): c.status for (w, v, s), c in cells.items() if s == system}
        failed = {k: status for k, status in mine.items() if status != "ok"}
        if failed and len(set(failed.values())) == 1 and len(failed) == len(mine) > 1:
            problems.append(f"- {system} (every cell): {next(iter(failed.values()))}")
            continue
        problems += [
            f"- {w} {v} {system}: {status}".replace("  ", " ") for (w, v), status in failed.items()
        ]
    notes = [f"- {s}: {row.notes[s]}" for s in systems if s in row.notes]
    for (_, _, s), c in cells.items():
        if c.note and f"- {s}: {c.note}" not in notes:
            notes.append(f"- {s}: {c.note}")
    if notes:
        lines += ["", "Notes:", *notes]
    if problems:
        lines += ["", "Not measured / failed:", *problems]
    lines += [
        "",
        "Ratios: >1 means ours is better (faster, or less memory); "
        "`±` marks max/min of repeats ≥ 1.3.",
    ]
    return "\n".join(lines)
