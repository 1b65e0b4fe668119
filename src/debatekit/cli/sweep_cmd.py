"""``debatekit sweep``: every cell of a grid file, on this machine or a Ray cluster, resumable."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from debatekit.cli.options import JsonOption, ParamOption
from debatekit.experiments.backends import Backend
from debatekit.experiments.sweep import Records


def sweep(
    grid: Annotated[
        Path | None,
        typer.Argument(metavar="[GRID.toml]", help="The grid file (see examples/sweep.toml); none: --set alone."),
    ] = None,
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
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=V1,V2",
            help="An axis for every grid (protocol, problem, size, truth, alice, bob, constants, seed; trials one "
            "number), replacing the file's; repeatable; without a file the cells are these axes' product.",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="DIR", help="The sweep's folder (default debatekit-sweeps/GRID).")
    ] = None,
    prune: Annotated[
        bool, typer.Option("--prune", help="Remove cell folders in --out that the grid no longer makes (stale).")
    ] = False,
    records: Annotated[
        Records,
        typer.Option(
            "--records",
            help="Which debates each cell keeps in its debates.jsonl: none; failures (the first 10 debates and the "
            "first 100 the truth lost: a wrong or undecided verdict, or a forfeit; a record replay and show read); "
            "all (some 10 MB for 400 long debates).",
        ),
    ] = Records.failures,
    json_out: JsonOption = False,
) -> None:
    """Play every cell of GRID.toml (one `run` each; or of the --set axes alone), skipping cells
    already finished in --out, and write results.parquet (one row per cell) with each cell's
    debates beside it.

    Example: debatekit sweep examples/sweep.toml --backend local --workers 2 --json"""
    from debatekit.cli.common import emit_json, stdout
    from debatekit.engine.interrupts import Interrupted
    from debatekit.experiments.sweep import swept

    try:
        result, stopped = swept(grid, backend, workers, address, shard, param, out, sets, prune, records), None
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
        if result.stale:
            what = "removed" if result.pruned else "not in this grid (--prune removes them)"
            stdout.print(f"{len(result.stale)} stale cell folders {what}")
    if stopped is not None:
        raise stopped
