"""Timing and the results table shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_time(
    fn: Callable[[], Any], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, Any]:
    """Median time of ``fn()`` over ``repeat`` calls (seconds; wall time unless ``clock`` is another, e.g.
    ``time.process_time`` for this process's CPU time), and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = clock()
        result = fn()
        times.append(clock() - start)
    return statistics.median(times), result


def print_table(rows: list[tuple[str, ...]]) -> None:
    """Rows of strings, all of one length (e.g. (measure, value, target)), in aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
