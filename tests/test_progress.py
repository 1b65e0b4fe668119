"""Progress that tells the truth (issue 24): a run's bar labels the time elapsed and the time left (it
read "0:02:07 left" for the time elapsed); the time left comes from the work finished, a sweep's
cells weighed by their trials and size; off a terminal, lines when asked."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Task, TaskID

import debatekit.progress as progress_module


def test_the_bar_labels_elapsed_and_left(monkeypatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(progress_module, "stderr", Console(file=screen, force_terminal=True, width=120))
    with progress_module.progress(10, "run") as advance:
        advance(4)
        progress_module.stderr.file.flush()
    text = screen.getvalue()
    assert "4/10" in text and "elapsed," in text and "left" in text
    assert text.index("elapsed,") < text.index("left")


def test_the_time_left_is_the_work_left_at_the_average_rate_so_far() -> None:
    left = progress_module.left
    assert left(127.0, 412, 2000) == pytest.approx(127.0 * 1588 / 412)  # the run: 0:08:10, not 0:02:07
    assert left(60.0, 1, 4) == pytest.approx(3 * left(20.0, 1, 4))  # slower so far, slower to come
    assert left(0.0, 0, 10) is None and left(5.0, 0, 10) is None  # no work done: no rate to go by
    assert left(5.0, 10, 10) == 0.0
    assert progress_module.clock(489.6) == "0:08:10" and progress_module.clock(None) == "-:--:--"


def test_the_left_column_reads_the_tasks_elapsed_time_and_work_done() -> None:
    task = Task(TaskID(0), "run", 2000, 412, _get_time=lambda: 127.0)
    task.start_time = 0.0
    assert str(progress_module.Left().render(task)) == "0:08:10 left"


def test_off_a_terminal_lines_when_asked(monkeypatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(progress_module, "stderr", Console(file=screen, force_terminal=False, width=200))
    with progress_module.progress(10, "demo debates") as advance:
        advance(3)
    assert screen.getvalue() == ""  # not asked: nothing
    advance = progress_module.written(10, "demo debates", every=0.0)
    for done in (3, 10):
        advance(done)
    first, last = screen.getvalue().splitlines()
    assert first.startswith("demo debates 3/10, 0:00:00 elapsed, ") and first.endswith(" left")
    assert last == "demo debates 10/10, 0:00:00 elapsed, 0:00:00 left"
    quiet = progress_module.written(10, "x", every=3600.0)
    quiet(5)  # within the interval: no line until the end
    assert len(screen.getvalue().splitlines()) == 2


def test_a_sweeps_progress_weighs_cells_by_trials_and_size(monkeypatch) -> None:
    from debatekit.experiments import sweep
    from debatekit.experiments.sweep import CellResult, RunSpec, _progress
    from debatekit.runs.spec import Truth

    made = []

    def bar(*columns):
        made.append(progress_module.Progress(*columns, console=progress_module.stderr))
        return made[-1]

    monkeypatch.setattr(progress_module, "stderr", Console(file=io.StringIO(), force_terminal=True, width=120))
    monkeypatch.setattr(progress_module, "bar", bar)
    small = RunSpec("cross-exam", "parity", 8, Truth.yes, "honest", "honest", None, (), 0, 2)
    big = RunSpec("cross-exam", "parity", 64, Truth.yes, "honest", "honest", None, (), 0, 100)
    with _progress([small, big]) as done:
        done(CellResult(small, {}, "", 0.1))
        (task,) = made[0].tasks
        assert (task.completed, task.total) == (2 * 8, 2 * 8 + 100 * 64)  # a cell of two: 1/401 of the work
        assert task.fields["cells"] == "1/2"
    assert sweep.weight(big) == 6400
