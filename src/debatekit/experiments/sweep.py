"""A sweep: every cell of a grid played as one ``run``, resumable, sliceable, into one table.

The out folder holds, per finished cell, ``cells/<id>/debates.jsonl`` (its per-debate records),
``summary.json`` (the cell's parameters, what ``run --json`` prints, its wall time ``elapsed_s``
and ``debates_path``) and ``summary.parquet`` (the same as one flat row: nested fields joined by
``_``), written last and atomically: a cell is finished exactly when its ``summary.parquet``
exists, so a killed sweep loses only the cells in flight. Each invocation merges the grid's
finished rows, in cell-id order, into ``results.parquet``. Cells draw only from their own seed,
so the table does not depend on the backend or the number of workers.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from debatekit.engine.interrupts import Interrupted
from debatekit.experiments.backends import Mapper
from debatekit.experiments.grid import Cell
from debatekit.files import FileMistake, read_json

RESULTS_FILE = "results.parquet"


class CellError(ValueError):
    """A cell that cannot be played (an instance its problem cannot make, a strategy that refuses it)."""


@dataclass(frozen=True)
class CellResult:
    """A finished cell as a worker hands it back: its summary and its records (JSON lines)."""

    cell: Cell
    summary: dict[str, Any]
    records: str
    elapsed_s: float


@dataclass(frozen=True)
class SweepResult:
    """One invocation: the grid's size, cells run now, cells found finished, and every finished
    cell's summary in id order."""

    cells: int
    ran: int
    skipped: int
    results: list[dict[str, Any]]
    results_path: Path
    interrupted: bool = False
    """A signal stopped the sweep: ``ran`` counts the cells it finished."""

    def to_json(self) -> dict[str, Any]:
        stopped = {"interrupted": True} if self.interrupted else {}
        return {"cells": self.cells, "ran": self.ran, "skipped": self.skipped, "results": self.results,
                "results_path": str(self.results_path)} | stopped  # fmt: skip


def play_cell(cell: Cell) -> CellResult:
    """Play ``cell``'s debates (as ``debatekit run`` would) and return its summary and records."""
    from debatekit.cli.options import Truth, UserError
    from debatekit.cli.run_cmd import play, prepare
    from debatekit.protocols.stochastic.params import Constants

    started = time.perf_counter()
    try:
        ready = prepare(cell.protocol, cell.problem, cell.size, Truth(cell.truth), cell.assignments(), cell.alice,
                        cell.bob, cell.trials, None if cell.constants is None else Constants(cell.constants),
                        cell.seed)  # fmt: skip
        spec = ready.spec
        with tempfile.TemporaryDirectory(prefix="debatekit-cell-") as scratch:
            record = Path(scratch) / "debates.jsonl" if spec.debate is not None or spec.replay is not None else None
            result = play(ready, cell.trials, cell.seed, record=record)
            records = record.read_text(encoding="utf-8") if record is not None else ""
    except UserError as err:
        raise CellError(f"cell {cell.id}: {err}") from None
    summary = cell.fields() | result.to_json()
    return CellResult(cell, json.loads(json.dumps(summary, default=_plain)), records, time.perf_counter() - started)


def _plain(value: Any) -> Any:
    """numpy scalars and enums in a summary, as JSON values."""
    return value.item() if hasattr(value, "item") else getattr(value, "value", str(value))


def cell_dir(out: Path, cell: Cell) -> Path:
    return out / "cells" / cell.id


def finished(out: Path, cell: Cell) -> bool:
    return (cell_dir(out, cell) / "summary.parquet").exists()


def shard_of(cells: list[Cell], shard: tuple[int, int] | None) -> list[Cell]:
    """Slice i of n: the cells whose index, in id order, is i mod n."""
    if shard is None:
        return cells
    index, count = shard
    return [cell for k, cell in enumerate(cells) if k % count == index]


def run_sweep(
    cells: list[Cell],
    out: Path,
    mapper: Mapper,
    shard: tuple[int, int] | None = None,
    done: Callable[[CellResult], None] | None = None,
) -> SweepResult:
    """Run the cells of ``cells`` (in id order) that are in ``shard`` and not finished in
    ``out``, through ``mapper``, saving each as it finishes (``done(result)`` after), then merge
    every finished cell into ``results.parquet`` (also when a signal stops the sweep: the
    :class:`~debatekit.engine.interrupts.Interrupted` raised then carries the result)."""
    chosen = shard_of(cells, shard)
    todo = [cell for cell in chosen if not finished(out, cell)]
    ran, stopped = 0, None
    try:
        for result in mapper(play_cell, todo):
            save(out, result)
            ran += 1
            if done is not None:
                done(result)
    except Interrupted as stop:  # a signal: the cells finished are merged, and ``stop.result`` says so
        stopped = stop
    finally:
        results = merge(cells, out)
    swept = SweepResult(len(cells), ran, len(chosen) - len(todo), results, out / RESULTS_FILE, stopped is not None)
    if stopped is not None:
        stopped.result = swept
        raise stopped
    return swept


def save(out: Path, result: CellResult) -> None:
    """A finished cell's records, ``summary.json`` and, last, its row ``summary.parquet``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = cell_dir(out, result.cell)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "debates.jsonl").write_text(result.records, encoding="utf-8")
    summary = result.summary | {"elapsed_s": result.elapsed_s, "debates_path": str(folder / "debates.jsonl")}
    (folder / "summary.json").write_text(json.dumps(summary) + "\n", encoding="utf-8")
    partial = folder / "summary.parquet.partial"
    pq.write_table(pa.Table.from_pylist([flat(summary)]), partial)
    os.replace(partial, folder / "summary.parquet")


def flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as columns, their names joined by ``_`` (``guarantee_soundness``); lists stay lists."""
    row: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            row |= flat(value, f"{prefix}{key}_")
        else:
            row[prefix + key] = value
    return row


def merge(cells: list[Cell], out: Path) -> list[dict[str, Any]]:
    """Write the finished cells' rows, in id order, to ``results.parquet``; their summaries, each
    read through the bounded reader (a folder on disk is untrusted: a file that is not a cell's is
    a :class:`~debatekit.files.FileMistake` naming it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ready = [cell for cell in cells if finished(out, cell)]
    if not ready:
        return []
    summaries = [_summary(cell_dir(out, cell) / "summary.json") for cell in ready]
    tables = []
    for cell in ready:
        path = cell_dir(out, cell) / "summary.parquet"
        try:
            tables.append(pq.read_table(path))
        except (pa.ArrowException, OSError) as err:
            raise FileMistake(path, None, f"not a cell's row ({type(err).__name__})") from None
    table = pa.concat_tables(tables, promote_options="permissive")
    partial = out / (RESULTS_FILE + ".partial")
    pq.write_table(table, partial)
    os.replace(partial, out / RESULTS_FILE)
    return summaries


def _summary(path: Path) -> dict[str, Any]:
    """A finished cell's ``summary.json`` (:func:`save`), a JSON object."""
    summary = read_json(path)
    if not isinstance(summary, dict):
        raise FileMistake(path, 1, "not a cell's summary (a JSON object)")
    return summary
