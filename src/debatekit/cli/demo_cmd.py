"""``debatekit demo``: the main job, with a table on the terminal and a report folder."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.logs_cmd import LogDirOption, NoLogOption
from debatekit.cli.options import ParamOption
from debatekit.mistakes import UserError

if TYPE_CHECKING:
    from rich.table import Table

    from debatekit.experiments.demo import DemoResult
    from debatekit.params import Settings


def demo(
    quick: Annotated[bool, typer.Option("--quick", help="Smaller sizes and fewer trials.")] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Report folder; one that holds a report already is refused (default: report/ in the run's new "
            "log folder).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed for every instance and debate (>= 0).")] = 0,
    param: ParamOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    show_progress: Annotated[
        bool,
        typer.Option(
            "--progress", help="Progress on stderr also off a terminal (a line every 10 s: debates done, time left)."
        ),
    ] = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
) -> int:
    """Every protocol on built-in problems against every adversary, checked against its theorem.
    Each -P NAME=VALUE applies to every problem and protocol that declares NAME, in the
    prover-estimator paper's Monte Carlo experiments (the rest declare none; the exact reward-gap
    sweep keeps its own q and eps).

    The run is logged like `run`'s (run.json, and summary.json: what --json prints) in a new folder
    under --log-dir, and its report (report.html with the plots of `debatekit report`, report.md,
    results.json and the PNGs) goes to report/ inside it, so no report is ever overwritten. With
    --out the report goes there instead, into a folder that holds no report yet (checked before
    any debate is played); --no-log needs --out. Stopped by Ctrl-C or SIGTERM, it writes the rows
    and parts finished to results.json (and summary.json), marked interrupted.

    Example: debatekit demo --quick"""
    from debatekit.cli.common import conclude, stdout
    from debatekit.cli.logs_cmd import start_log
    from debatekit.engine.interrupts import Interrupted
    from debatekit.experiments.demo import nothing, plan, run_demo
    from debatekit.experiments.demo_report import to_json, write_report, write_results
    from debatekit.progress import progress

    chosen = settings(param)
    if out is not None:
        fresh(out)
    if no_log:
        if out is None:
            raise UserError("--no-log leaves no log folder for the report: give --out DIR")
        log, folder = None, out
    else:
        config = {"command": "demo", "quick": quick, "seed": seed, "params": param or [], "out": out and str(out)}
        log = start_log(log_dir, config, None)
        folder = out or log.folder / "report"
    started, stopped = time.perf_counter(), None
    with progress(plan(quick), "demo debates", lines=show_progress) as advance:
        try:
            result = run_demo(quick, seed, advance, chosen)
        except Interrupted as stop:  # a signal: what finished is written, marked interrupted; then 128 + its number
            stopped, result = stop, stop.result or replace(nothing(seed), interrupted=True)
    if stopped is None:
        write_report(result, folder)
    else:
        write_results(result, folder)

    def show() -> None:
        stdout.print(table(result))
        print(result.summary(str(folder / ("report.html" if stopped is None else "results.json"))))

    conclude({"report": str(folder), **to_json(result)}, log, started, json_out, show, stopped)
    return 0 if result.holds else 1


def fresh(out: Path) -> None:
    """``--out``: a folder that can be written and holds no report yet (created if need be)."""
    from debatekit.experiments.logs import LogError, writable_dir
    from debatekit.experiments.report.html import REPORT_FILE

    try:
        writable_dir(out)
    except LogError as err:
        raise UserError(f"--out: {err}") from err
    if any((out / name).exists() for name in (REPORT_FILE, "results.json", "report.md")):
        raise UserError(f"--out {str(out)!r} holds a report already (reports are never overwritten): choose another")


def settings(assignments: list[str] | None) -> Settings:
    """The ``-P`` values for every built-in problem and protocol."""
    from debatekit.params import ParamError, bind_everywhere
    from debatekit.problems import PROBLEMS
    from debatekit.protocols.registry import PROTOCOLS

    try:
        return bind_everywhere(
            assignments or (),
            {p.name: p.params for p in PROBLEMS.values()},
            {s.name: type(s.params) for s in PROTOCOLS.values()},
        )
    except ParamError as err:
        raise UserError(str(err)) from err


def table(result: DemoResult) -> Table:
    """The demo's rows, fitting an 80-column terminal: words wrap, numbers never do (each measure
    above its theorem's bound, ``<= bound``)."""
    from rich.table import Table

    out = Table(title="debatekit demo: honest side against every built-in adversary")
    out.add_column("debate (protocol on problem, T, truth)", ratio=3, overflow="fold")
    out.add_column("adversary", ratio=2, overflow="fold")
    for column in ("honest win", "V queries", "bits read", "holds"):
        out.add_column(column, justify="right", no_wrap=True, max_width=14)
    for r in result.rows:
        protocol = r.protocol if r.constants is None else f"{r.protocol} ({r.constants})"
        out.add_row(
            f"{protocol} on {r.problem}, T={r.T}, {r.truth}",
            r.adversary,
            f"{r.honest_win_rate:.3f}",
            f"{r.verifier_queries_max}\n<= {r.queries_bound}",
            f"{r.verifier_bits_read_max}\n<= {r.bits_bound}",
            "yes" if r.holds else "NO",
        )
    return out
