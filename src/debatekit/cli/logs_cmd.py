"""``debatekit logs``: the runs a log folder holds; and the run log's options, shared with ``run``."""

from __future__ import annotations

import sys
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.options import PROBLEM_NAMES
from debatekit.mistakes import UserError
from debatekit.protocols import registry

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


def logs(
    log_dir: LogDirOption = None,
    command: Annotated[
        str | None, typer.Option(help="Only this command's logs (run, solve, plan, demo, judge-accuracy).")
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option(metavar="PROTOCOL", help=f"Only runs of this protocol ({', '.join(registry.names())})."),
    ] = None,
    problem: Annotated[
        str | None,
        typer.Option(metavar="PROBLEM", help=f"Only runs on this problem ({', '.join(PROBLEM_NAMES)}, or a plan's)."),
    ] = None,
    unfinished: Annotated[bool, typer.Option("--unfinished", help="Only commands that did not finish.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each as JSON: folder, version, commit, whole configuration, outcome.")
    ] = False,
) -> None:
    """List the logged commands (run, solve, plan, demo, judge-accuracy): folder, what (protocol, problem, size,
    truth, players, trials, constants, parameters), outcome."""
    from rich.table import Table

    from debatekit.cli.common import emit_json, stdout
    from debatekit.experiments.logs import DEFAULT_LOG_DIR, runs
    from debatekit.files import FileMistake

    folder = log_dir or DEFAULT_LOG_DIR
    try:
        found = runs(folder)
    except FileMistake as err:
        raise UserError(str(err)) from None
    wanted = [
        one
        for one in found
        if command in (None, one.command)
        and protocol in (None, one.protocol)
        and problem in (None, one.problem)
        and not (unfinished and one.outcome is not None)
    ]
    if as_json:
        emit_json([one.to_json() for one in wanted])
        return
    if not wanted:
        print(f"no runs logged in {str(folder)!r}{' that match' if found else ''}", file=sys.stderr)
        return
    table = Table(title=f"runs in {folder} (each folder is named by its start, UTC)")
    table.add_column("folder", no_wrap=True)
    table.add_column("what", overflow="fold")
    table.add_column("outcome", justify="right", no_wrap=True)
    for one in wanted:
        table.add_row(one.folder.name, one.described(), one.outcome or "unfinished")
    stdout.print(table)
