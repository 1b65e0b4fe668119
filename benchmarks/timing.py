"""Timing and the results table shared by the benchmark scripts."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
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


def paired_times(
    fns: Sequence[Callable[[], Any]], repeat: int, clock: Callable[[], float] = time.perf_counter, least: float = 0.005
) -> tuple[list[float], list[Any]]:
    """Median seconds per call of each of ``fns``, and the last result of each, timed in turn: each
    round runs every one once, so what drifts while they are measured (a CPU's clock rising from
    idle, a neighbour's load) falls on all alike. A run is as many calls as take about ``least``
    seconds (counted from a first, untimed call of each, which also warms it), so a call of a few
    microseconds is not timed alone."""
    results, numbers = [], []
    for fn in fns:
        start = clock()
        results.append(fn())
        numbers.append(max(1, math.ceil(least / max(clock() - start, 1e-7))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = clock()
            for _ in range(numbers[i]):
                results[i] = fn()
            times[i].append((clock() - start) / numbers[i])
    return [statistics.median(each) for each in times], results


def print_table(rows: list[tuple[str, ...]]) -> None:
    """Rows of strings, all of one length (e.g. (measure, value, target)), in aligned columns."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
