"""``debatekit sweep``: every cell of a grid file, on this machine or a Ray cluster, resumable."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.options import JsonOption, ParamOption, UserError

if TYPE_CHECKING:
    from debatekit.experiments.sweep import CellResult, SweepResult


class Backend(StrEnum):
    local = "local"
    ray = "ray"


def sweep(
    grid: Annotated[Path, typer.Argument(metavar="GRID.toml", help="The grid file (see examples/sweep.toml).")],
    backend: Annotated[Backend, typer.Option("--backend", help="local: a process pool; ray: a Ray cluster.")] = (
        Backend.local
    ),
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Processes (local) or CPUs of a new Ray cluster, 1 to 256 (default: cores)."),
    ] = None,
    address: Annotated[
        str | None, typer.Option("--address", metavar="ADDR", help="Join this Ray cluster (default: start one).")
    ] = None,
    shard: Annotated[
        str | None, typer.Option("--shard", metavar="i/n", help="Run only the cells whose index is i mod n.")
    ] = None,
    param: ParamOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="DIR", help="The sweep's folder (default debatekit-sweeps/GRID).")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Play every cell of GRID.toml (one `run` each), skipping cells already finished in --out, and
    write results.parquet (one row per cell) with each cell's debates beside it.

    Example: debatekit sweep examples/sweep.toml --backend local --workers 2 --json"""
    from debatekit.cli.common import emit_json, stdout
    from debatekit.engine.interrupts import Interrupted

    try:
        result, stopped = swept(grid, backend, workers, address, shard, param, out), None
    except Interrupted as stop:  # the cells finished are saved: say so, then exit 128 + the signal
        result, stopped = stop.result, stop
        if result is None:
            raise
    if json_out:
        emit_json(result.to_json())
    else:
        how = "INTERRUPTED after running" if result.interrupted else "ran"
        stdout.print(f"{result.cells} cells: {how} {result.ran}, {result.skipped} finished before; "
                     f"{result.results_path}")  # fmt: skip
    if stopped is not None:
        raise stopped


def swept(
    grid: Path | Mapping[str, Any],
    backend: Backend = Backend.local,
    workers: int | None = None,
    address: str | None = None,
    shard: str | None = None,
    param: list[str] | None = None,
    out: Path | None = None,
) -> SweepResult:
    """What ``sweep`` does, from its options: ``grid`` is a grid file or its parsed table (which
    then needs ``out``); ``UserError`` for a mistake."""
    from debatekit.cli.common import pool_size
    from debatekit.experiments.backends import BackendError, local, ray_cluster
    from debatekit.experiments.grid import GridError, expand, fixed, load
    from debatekit.experiments.logs import LogError, writable_dir
    from debatekit.experiments.sweep import CellError, finished, run_sweep, shard_of
    from debatekit.files import FileMistake

    workers = pool_size(workers)
    if address is not None and backend is not Backend.ray:
        raise UserError("--address is for --backend ray")
    slice_ = _shard(shard)
    try:
        cells = load(grid, param) if isinstance(grid, Path) else expand(dict(grid), fixed(param))
    except GridError as err:
        raise UserError(str(err)) from err
    if out is not None:
        folder = out
    elif isinstance(grid, Path):
        folder = Path("debatekit-sweeps") / grid.stem
    else:
        raise UserError("a grid given as a table needs --out, the sweep's folder")
    try:
        writable_dir(folder)
    except LogError as err:
        raise UserError(f"--out: {err}") from err
    try:
        import pyarrow  # noqa: F401
    except ImportError as err:
        raise UserError("sweep needs pyarrow: pip install 'debatekit[sweep]'") from err
    opened = local(workers) if backend is Backend.local else ray_cluster(address, workers, folder / "ray")
    try:
        todo = sum(not finished(folder, cell) for cell in shard_of(cells, slice_))
        with opened as mapper, _progress(todo) as done:
            return run_sweep(cells, folder, mapper, slice_, done)
    except BackendError as err:
        raise UserError(str(err)) from err
    except (CellError, FileMistake) as err:  # a cell that cannot be played, a cell's file that is not one
        raise UserError(str(err)) from err


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    index, sep, count = text.partition("/")
    try:
        parsed = int(index), int(count)
    except ValueError:
        parsed = (-1, 0)
    if not sep or not 0 <= parsed[0] < parsed[1]:
        raise UserError(f"--shard: expected i/n with 0 <= i < n, got {text!r}")
    return parsed


@contextmanager
def _progress(total: int) -> Iterator[Callable[[CellResult], None]]:
    """A transient progress bar on stderr (on a terminal): cells done, debates per second, time left.
    Off a terminal, nothing (rich before 13.9 writes a blank line on stopping even a disabled bar)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from debatekit.cli.common import stderr

    if not stderr.is_terminal:
        yield lambda result: None
        return

    shown = Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cells, {task.fields[rate]} debates/s,"),
        TimeRemainingColumn(),
        TextColumn("left"),
        console=stderr,
        transient=True,
    )
    started, debates = time.perf_counter(), 0
    with shown:
        task = shown.add_task("sweep", total=total, rate="0")

        def done(result: CellResult) -> None:
            nonlocal debates
            debates += result.cell.trials
            shown.update(task, advance=1, rate=f"{debates / max(time.perf_counter() - started, 1e-9):,.0f}")

        yield done
