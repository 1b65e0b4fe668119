"""A sweep: every cell of a grid played as one ``run``, resumable, sliceable, into one table.

The out folder holds, per finished cell, ``cells/<id>/debates.jsonl`` (its per-debate records),
``summary.json`` (the cell's parameters, what ``run --json`` prints, its wall time ``elapsed_s``
and ``debates_path``) and ``summary.parquet`` (the same as one flat row: nested fields joined by
``_``), written last and atomically: a cell is finished exactly when its ``summary.parquet``
exists, so a killed sweep loses only the cells in flight. Each invocation merges the grid's
finished rows, in cell-id order, into ``results.parquet``. Cells draw only from their own seed,
so the table does not depend on the backend or the number of workers. Beside them, ``sweep.json``
says what the folder is a sweep of (the grid file's path, ``-P`` and ``--set``, every cell's
``RunSpec``, debatekit's version and the source's commit) and ``grid.toml`` is a copy of the grid
file; cell folders that the grid no longer makes are stale: reported, and removed with ``prune``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from debatekit.engine.interrupts import Interrupted
from debatekit.experiments import backends
from debatekit.experiments.backends import Backend, BackendError, Mapper, pool_size
from debatekit.experiments.grid import GridError, expand, fixed, load, settings
from debatekit.experiments.logs import LogError, git_commit, version, writable_dir
from debatekit.files import FileMistake, read_json
from debatekit.mistakes import UserError
from debatekit.runs.spec import RunSpec

RESULTS_FILE, SWEEP_FILE, GRID_COPY = "results.parquet", "sweep.json", "grid.toml"
SAMPLE = 10
"""``--records failures`` keeps the first 10 debates of every cell, whatever their outcome."""
MOST_FAILURES = 100
"""``--records failures`` keeps at most this many failures (the first by debate number) beside them:
a cell's records stay under some 3 MB where all of them (stochastic debate's long transcripts, 400
debates) take 10 MB or more."""


class Records(StrEnum):
    """Which debates a cell keeps in ``debates.jsonl`` (``--records``)."""

    none = "none"
    failures = "failures"
    all = "all"


class CellError(ValueError):
    """A cell that cannot be played (an instance its problem cannot make, a strategy that refuses it)."""


@dataclass(frozen=True)
class CellResult:
    """A finished cell as a worker hands it back: its summary and its records (JSON lines)."""

    cell: RunSpec
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
    stale: tuple[str, ...] = ()
    """The ids of cell folders the grid does not make (left from an earlier grid)."""
    pruned: bool = False
    """Whether the stale folders were removed."""

    def to_json(self) -> dict[str, Any]:
        stopped = {"interrupted": True} if self.interrupted else {}
        return {"cells": self.cells, "ran": self.ran, "skipped": self.skipped, "results": self.results,
                "results_path": str(self.results_path), "stale": list(self.stale),
                "pruned": self.pruned} | stopped  # fmt: skip


def play_cell(cell: RunSpec, records: Records = Records.all) -> CellResult:
    """Play ``cell``'s debates (as ``debatekit run`` would) and return its summary and the records
    ``records`` keeps (:func:`kept`)."""
    from debatekit.runs.prepare import play, prepare

    started = time.perf_counter()
    try:
        ready = prepare(cell)
        spec = ready.spec
        with tempfile.TemporaryDirectory(prefix="debatekit-cell-") as scratch:
            record = Path(scratch) / "debates.jsonl" if spec.debate is not None or spec.batch is not None else None
            result = play(ready, record=record)
            text = record.read_text(encoding="utf-8") if record is not None else ""
    except UserError as err:
        raise CellError(f"cell {cell.id}: {err}") from None
    summary = cell.fields() | result.to_json()
    return CellResult(cell, json.loads(json.dumps(summary, default=_plain)), kept(text, records),
                      time.perf_counter() - started)  # fmt: skip


def kept(text: str, records: Records) -> str:
    """What a cell keeps of its records' ``text`` (a header, then a debate a line): ``all`` of it;
    ``none``; or, for ``failures``, the first :data:`SAMPLE` debates and the first
    :data:`MOST_FAILURES` failures (the verdict not the truth, undecided, or a forfeit), in debate
    order and chained again (:func:`~debatekit.engine.record.rechained`): still a record replay reads."""
    if records is Records.all or not text:
        return text
    if records is Records.none:
        return ""
    from debatekit.engine.record import rechained

    header, *lines = text.splitlines(keepends=True)
    debates = sorted(((json.loads(line), line) for line in lines), key=lambda pair: pair[0]["debate"])
    failures = [number for number, (debate, _) in enumerate(debates) if failed(debate)][:MOST_FAILURES]
    chosen = set(failures) | set(range(min(SAMPLE, len(debates))))
    return rechained([header, *(line for number, (_, line) in enumerate(debates) if number in chosen)])


def failed(debate: dict[str, Any]) -> bool:
    """A debate the truth did not win: its verdict is not the instance's truth or is undecided, or
    a player forfeited."""
    return debate["verdict"] != (debate["truth"] == "yes") or debate["forfeit"] is not None


def _plain(value: Any) -> Any:
    """numpy scalars and enums in a summary, as JSON values."""
    return value.item() if hasattr(value, "item") else getattr(value, "value", str(value))


def cell_dir(out: Path, cell: RunSpec) -> Path:
    return out / "cells" / cell.id


def finished(out: Path, cell: RunSpec) -> bool:
    return (cell_dir(out, cell) / "summary.parquet").exists()


def stale(out: Path, cells: list[RunSpec]) -> list[str]:
    """The cell folders in ``out`` that none of ``cells`` owns, by name (sorted)."""
    folder, ids = out / "cells", {cell.id for cell in cells}
    found = folder.iterdir() if folder.is_dir() else ()
    return sorted(path.name for path in found if path.is_dir() and path.name not in ids)


def prune(out: Path, names: list[str]) -> None:
    """Remove the cell folders ``names`` (:func:`stale`) from ``out``."""
    for name in names:
        shutil.rmtree(out / "cells" / name)


def describe(
    out: Path, grid: Path | Mapping[str, Any] | None, cells: list[RunSpec], param: list[str], sets: list[str]
) -> None:
    """Write ``sweep.json`` (what the folder is a sweep of, with the version and commit that played
    it) and, for a grid file, its copy ``grid.toml``; a table given as data is kept in ``sweep.json``."""
    if isinstance(grid, Path):
        _replace(out / GRID_COPY, grid.read_bytes())
    described = {
        "grid": str(grid) if isinstance(grid, Path) else None,
        "table": dict(grid) if isinstance(grid, Mapping) else None,
        "params": param,
        "sets": sets,
        "version": version(),
        "git_commit": git_commit(),
        "cells": [cell.fields() for cell in cells],
    }
    _replace(out / SWEEP_FILE, (json.dumps(described, indent=1, default=str) + "\n").encode())


def _replace(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, written beside it first (shards writing at once never leave half a file)."""
    partial = path.with_name(f"{path.name}.{secrets.token_hex(4)}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def shard_of(cells: list[RunSpec], shard: tuple[int, int] | None) -> list[RunSpec]:
    """Slice i of n: the cells whose index, in id order, is i mod n."""
    if shard is None:
        return cells
    index, count = shard
    return [cell for k, cell in enumerate(cells) if k % count == index]


def run_sweep(
    cells: list[RunSpec],
    out: Path,
    mapper: Mapper,
    shard: tuple[int, int] | None = None,
    done: Callable[[CellResult], None] | None = None,
    stale_cells: Sequence[str] = (),
    pruned: bool = False,
    records: Records = Records.failures,
) -> SweepResult:
    """Run the cells of ``cells`` (in id order) that are in ``shard`` and not finished in
    ``out``, through ``mapper``, saving each as it finishes (``done(result)`` after), then merge
    every finished cell into ``results.parquet`` (also when a signal stops the sweep: the
    :class:`~debatekit.engine.interrupts.Interrupted` raised then carries the result);
    ``stale_cells`` and ``pruned`` are for the result to say (:func:`stale`); ``records``: which
    debates each cell keeps (:func:`kept`)."""
    chosen = shard_of(cells, shard)
    todo = [cell for cell in chosen if not finished(out, cell)]
    ran, stopped = 0, None
    try:
        for result in mapper(partial(play_cell, records=records), todo):
            save(out, result, records)
            ran += 1
            if done is not None:
                done(result)
    except Interrupted as stop:  # a signal: the cells finished are merged, and ``stop.result`` says so
        stopped = stop
    finally:
        results = merge(cells, out)
    swept = SweepResult(len(cells), ran, len(chosen) - len(todo), results, out / RESULTS_FILE, stopped is not None,
                        tuple(stale_cells), pruned)  # fmt: skip
    if stopped is not None:
        stopped.result = swept
        raise stopped
    return swept


def save(out: Path, result: CellResult, records: Records = Records.all) -> None:
    """A finished cell's records (none for ``Records.none``), ``summary.json`` (saying which
    ``records`` it kept) and, last, its row ``summary.parquet``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = cell_dir(out, result.cell)
    folder.mkdir(parents=True, exist_ok=True)
    path = None if records is Records.none else folder / "debates.jsonl"
    if path is not None:
        path.write_text(result.records, encoding="utf-8")
    summary = result.summary | {"elapsed_s": result.elapsed_s, "debates_path": path and str(path),
                                "records": records.value}  # fmt: skip
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


def merge(cells: list[RunSpec], out: Path) -> list[dict[str, Any]]:
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
    partial = out / f"{RESULTS_FILE}.{secrets.token_hex(4)}.partial"  # a job array's shards merge into one folder
    pq.write_table(table, partial)
    os.replace(partial, out / RESULTS_FILE)
    return summaries


def _summary(path: Path) -> dict[str, Any]:
    """A finished cell's ``summary.json`` (:func:`save`), a JSON object."""
    summary = read_json(path)
    if not isinstance(summary, dict):
        raise FileMistake(path, 1, "not a cell's summary (a JSON object)")
    return summary


def swept(
    grid: Path | Mapping[str, Any] | None,
    backend: Backend = Backend.local,
    workers: int | None = None,
    address: str | None = None,
    shard: str | None = None,
    param: list[str] | None = None,
    out: Path | None = None,
    sets: list[str] | None = None,
    prune_stale: bool = False,
    records: Records = Records.failures,
) -> SweepResult:
    """What ``debatekit sweep`` and :func:`debatekit.sweep` do, from the command's options: ``grid``
    is a grid file, its parsed table (which then needs ``out``) or None (a grid of ``sets`` alone,
    its folder named by them); ``sets`` (``KEY=V1,V2``) replace an axis in every grid;
    ``prune_stale`` removes the cell folders the grid does not make; ``records``: which debates each
    cell keeps (:func:`kept`); ``UserError`` for a mistake."""
    workers = pool_size(workers)
    if address is not None and backend is not Backend.ray:
        raise UserError("--address is for --backend ray")
    slice_ = _shard(shard)
    try:
        if isinstance(grid, Mapping):
            cells = expand(dict(grid), fixed(param), settings(sets))
        else:
            cells = load(grid, param, sets)
    except GridError as err:
        raise UserError(str(err)) from err
    if out is not None:
        folder = out
    elif isinstance(grid, Path):
        folder = Path("debatekit-sweeps") / grid.stem
    elif grid is None:  # the same settings, the same folder: a sweep given on the command line resumes
        named = hashlib.sha256(json.dumps(sorted([*(sets or ()), *(f"-P {p}" for p in param or ())])).encode())
        folder = Path("debatekit-sweeps") / f"set-{named.hexdigest()[:8]}"
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
    try:
        describe(folder, grid, cells, list(param or ()), list(sets or ()))
    except OSError as err:
        raise UserError(f"--out: cannot write {str(folder / SWEEP_FILE)!r}: {err.strerror or err}") from err
    left = stale(folder, cells)
    if prune_stale:
        prune(folder, left)
    if backend is Backend.local:
        opened = backends.local(workers)
    else:
        opened = backends.ray_cluster(address, workers, folder / "ray")
    try:
        todo = [cell for cell in shard_of(cells, slice_) if not finished(folder, cell)]
        with opened as mapper, _progress(todo) as done:
            return run_sweep(cells, folder, mapper, slice_, done, left, prune_stale, records)
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


def weight(cell: RunSpec) -> int:
    """A cell's share of a sweep's work, for its time left: its debates times its size (cells of
    one sweep differ in both by orders of magnitude; counting cells said ``0:00:02 left`` for
    minutes)."""
    return cell.trials * (cell.size or 1)


@contextmanager
def _progress(cells: list[RunSpec]) -> Iterator[Callable[[CellResult], None]]:
    """A transient progress bar on stderr (on a terminal): cells done, debates per second, and the
    time left from the work done, each cell weighed by :func:`weight`. Off a terminal, nothing
    (rich before 13.9 writes a blank line on stopping even a disabled bar)."""
    from rich.progress import BarColumn, TextColumn

    from debatekit.progress import bar, stderr

    if not stderr.is_terminal:
        yield lambda result: None
        return
    shown = bar(
        TextColumn("sweep"), BarColumn(), TextColumn("{task.fields[cells]} cells, {task.fields[rate]} debates/s,")
    )
    started, debates, count = time.perf_counter(), 0, 0
    with shown:
        task = shown.add_task("sweep", total=sum(map(weight, cells)), cells=f"0/{len(cells)}", rate="0")

        def done(result: CellResult) -> None:
            nonlocal debates, count
            debates, count = debates + result.cell.trials, count + 1
            shown.update(task, advance=weight(result.cell), cells=f"{count}/{len(cells)}",
                         rate=f"{debates / max(time.perf_counter() - started, 1e-9):,.0f}")  # fmt: skip

        yield done
