"""A transient progress bar on stderr, for what the commands and the Python API compute (runs,
exact searches, plans). Imports rich, so it is imported when a command runs, not when the app is
built."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

stderr = Console(stderr=True)


@contextmanager
def progress(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """A transient progress bar on stderr (shown on a terminal) with the time elapsed and an
    estimate of the time left (at the current rate, to ``total``), each labelled
    (``412/2000 0:02:07 elapsed, 0:06:22 left``); yields ``advance(done)``. Off a
    terminal, nothing (rich before 13.9 writes a blank line on stopping even a disabled bar)."""
    if not stderr.is_terminal:
        yield lambda done: None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("elapsed,"),
        TimeRemainingColumn(),
        TextColumn("left"),
        console=stderr,
        transient=True,
    )
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)
