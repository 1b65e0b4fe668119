"""A progress bar on stderr, for what the commands and the Python API compute (runs, exact
searches, plans, sweeps), whose time left comes from the work finished (:func:`left`). Imports
rich, so it is imported when a command runs, not when the app is built."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

if TYPE_CHECKING:
    from rich.progress import Task

stderr = Console(stderr=True)
EVERY = 10.0
"""Seconds between the lines progress writes off a terminal (when asked to: ``--progress``)."""


def left(elapsed: float, done: float, total: float) -> float | None:
    """Seconds left at the average rate so far: the work not done times the time each unit of the
    work done took. None before any is done (no rate to go by); 0 once all is."""
    if done >= total:
        return 0.0
    if done <= 0 or elapsed <= 0:
        return None
    return elapsed * (total - done) / done


def clock(seconds: float | None) -> str:
    """``H:MM:SS``, or ``-:--:--`` for a time not known yet."""
    return "-:--:--" if seconds is None else str(timedelta(seconds=round(seconds)))


class Left(ProgressColumn):
    """The time left by :func:`left`, from the task's elapsed time and the work it has finished
    (rich's own column goes by the speed of the last 30 seconds, which says ``0:00:02`` while a
    long sweep cell runs)."""

    def render(self, task: Task) -> Text:
        return Text(f"{clock(left(task.elapsed or 0.0, task.completed, task.total or 0.0))} left")


def bar(*columns: ProgressColumn | str) -> Progress:
    """A transient bar on stderr: ``columns``, then the time elapsed and the time left, each labelled."""
    return Progress(*columns, TimeElapsedColumn(), TextColumn("elapsed,"), Left(), console=stderr, transient=True)


@contextmanager
def progress(total: int, description: str, lines: bool = False) -> Iterator[Callable[[int], None]]:
    """Progress to ``total`` (``412/2000 0:02:07 elapsed, 0:06:22 left``); yields ``advance(done)``.
    On a terminal, a transient bar; off one, with ``lines``, a line every :data:`EVERY` seconds and
    one at the end; else nothing (rich before 13.9 writes a blank line on stopping even a disabled bar)."""
    if not stderr.is_terminal:
        yield written(total, description) if lines else lambda done: None
        return
    shown = bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with shown:
        task = shown.add_task(description, total=total)
        yield lambda done: shown.update(task, completed=done)


def written(total: int, description: str, every: float = EVERY) -> Callable[[int], None]:
    """``advance(done)`` that writes ``description done/total, T elapsed, T left`` on stderr, at
    most one line each ``every`` seconds, and the last when all is done."""
    started = last = time.perf_counter()

    def advance(done: int) -> None:
        nonlocal last
        now = time.perf_counter()
        if now - last < every and done < total:
            return
        last = now
        spent = now - started
        stderr.print(f"{description} {done}/{total}, {clock(spent)} elapsed, {clock(left(spent, done, total))} left",
                     markup=False, highlight=False, soft_wrap=True)  # fmt: skip

    return advance
