"""``debatekit report``: an HTML report with plots of a log folder, a run folder or a sweep folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from debatekit.mistakes import UserError


def report(
    path: Annotated[
        Path, typer.Argument(metavar="LOGDIR_OR_SWEEP", help="A log folder, one run's folder or a sweep's --out.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", help="Where report.html and its PNGs go (default PATH/report)."),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Also print the runs and each plot's series (the data it draws) as JSON.")
    ] = False,
) -> None:
    """Write report.html (plots embedded, PNGs beside it) and a table of every run; print its path.

    Example: debatekit report debatekit-logs  or  debatekit report sweep-out --out /tmp/report"""
    from debatekit.cli.common import emit_json
    from debatekit.experiments.logs import LogError, writable_dir
    from debatekit.experiments.report.html import series_json, write
    from debatekit.experiments.report.read import ReportError, read

    if not path.is_dir():
        raise UserError(f"no such folder: {str(path)!r}")
    folder = out or path / "report"
    try:
        writable_dir(folder)
    except LogError as err:
        raise UserError(f"--out: {err}") from err
    try:
        found = read(path)
    except ReportError as err:
        raise UserError(str(err)) from err
    written = write(found, folder)
    if json_out:
        emit_json({"report": str(written)} | series_json(found))
    else:
        print(written)
