"""``debatekit logs``: the runs a log folder holds; and the run log's options, shared with ``run``."""

from __future__ import annotations

import sys
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.mistakes import UserError

if TYPE_CHECKING:
    from debatekit.experiments.logs import RunLog

LogDirOption = Annotated[
    Path | None,
    typer.Option(
        "--log-dir",
        metavar="DIR",
        envvar="DEBATEKIT_LOG_DIR",
        help="Where runs are logged, one new folder each (default ./debatekit-logs).",
    ),
]
NoLogOption = Annotated[bool, typer.Option("--no-log", help="Keep no log of this run.")]
LogRecordsOption = Annotated[
    bool,
    typer.Option(
        "--log-records",
        help="Keep every debate's record in the log folder too (debates.jsonl; large for long debates).",
    ),
]
command_line: ContextVar[tuple[str, ...]] = ContextVar("command_line", default=())
"""The arguments ``main`` was given, for the log (``sys.argv`` is not them when called in-process)."""


def start_log(log_dir: Path | None, config: dict[str, Any], record: Path | None, keep: bool = False) -> RunLog:
    """A new run folder for this command line (an unwritable log folder is the user's mistake)."""
    from debatekit.experiments.logs import DEFAULT_LOG_DIR, LogError, RunLog

    try:
        return RunLog.start(log_dir or DEFAULT_LOG_DIR, ["debatekit", *command_line.get()], config, record, keep)
    except LogError as err:
        raise UserError(f"--log-dir: {err}") from err


def check_log_dir(log_dir: Path | None) -> None:
    """Fail now, before the work, if the log folder cannot be written (for commands logged when done)."""
    from debatekit.experiments.logs import DEFAULT_LOG_DIR, LogError, writable_dir

    try:
        writable_dir(log_dir or DEFAULT_LOG_DIR)
    except LogError as err:
        raise UserError(f"--log-dir: {err}") from err


def logs(log_dir: LogDirOption = None) -> None:
    """List the logged commands (run, solve, plan, demo): folder, what, problem, size, players, trials, outcome."""
    from rich.table import Table

    from debatekit.cli.common import stdout
    from debatekit.experiments.logs import DEFAULT_LOG_DIR, runs
    from debatekit.files import FileMistake

    folder = log_dir or DEFAULT_LOG_DIR
    try:
        found = runs(folder)
    except FileMistake as err:
        raise UserError(str(err)) from None
    if not found:
        print(f"no runs logged in {str(folder)!r}", file=sys.stderr)
        return
    table = Table(title=f"runs in {folder} (each folder is named by its start, UTC)")
    table.add_column("folder", no_wrap=True)
    table.add_column("what", overflow="fold")
    table.add_column("outcome", justify="right", no_wrap=True)
    for one in found:
        what = [one.command, one.protocol, f"on {one.problem}" if one.problem else ""]
        what += [f"size {one.size}" if one.size is not None else ""]
        if one.command == "run":
            what += [f"{one.alice} vs {one.bob},", f"{one.trials} trials"]
        table.add_row(one.folder.name, " ".join(part for part in what if part), one.outcome or "unfinished")
    stdout.print(table)
