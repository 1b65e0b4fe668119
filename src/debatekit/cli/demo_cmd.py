"""``debatekit demo``: the main job, with a table on the terminal and a report folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.options import ParamOption, UserError

if TYPE_CHECKING:
    from rich.table import Table

    from debatekit.demo import DemoResult
    from debatekit.params import Settings


def demo(
    quick: Annotated[bool, typer.Option("--quick", help="Smaller sizes and fewer trials.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Report folder.")] = Path("debatekit-report"),
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed for every instance and debate (>= 0).")] = 0,
    param: ParamOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
) -> int:
    """Every protocol on built-in problems against every adversary, checked against its theorem.
    Each -P NAME=VALUE applies to every problem and protocol that declares NAME, in the
    prover-estimator paper's Monte Carlo experiments (the rest declare none; the exact reward-gap
    sweep keeps its own q and eps)."""
    from debatekit.cli.common import emit_json, progress, stdout
    from debatekit.demo import plan, run_demo
    from debatekit.report import to_json, write_report

    chosen = settings(param)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the report folder {out}: {err.strerror or err}") from err
    with progress(plan(quick), "demo debates") as advance:
        result = run_demo(quick, seed, advance, chosen)
    folder = write_report(result, out)
    if json_out:
        emit_json({"report": str(folder), **to_json(result)})
    else:
        stdout.print(table(result))
        print(f"report written to {folder}/ (report.md, bits_read.png, reward_gap.png, results.json)")
    return 0 if result.holds else 1


def settings(assignments: list[str] | None) -> Settings:
    """The ``-P`` values for every built-in problem and protocol."""
    from debatekit.catalog import PROTOCOLS
    from debatekit.params import ParamError, bind_everywhere
    from debatekit.problems import PROBLEMS

    try:
        return bind_everywhere(
            assignments or (),
            {p.name: p.params for p in PROBLEMS.values()},
            {s.name: type(s.params) for s in PROTOCOLS.values()},
        )
    except ParamError as err:
        raise UserError(str(err)) from err


def table(result: DemoResult) -> Table:
    from rich.table import Table

    out = Table(title="debatekit demo: honest side against every built-in adversary")
    for column in (
        "protocol",
        "problem",
        "T",
        "truth",
        "adversary",
        "honest win",
        "V queries",
        "bits read",
        "theorem's bound",
        "holds",
    ):
        out.add_column(column, justify="right" if column in ("T", "honest win", "V queries", "bits read") else "left")
    for r in result.rows:
        out.add_row(
            r.protocol if r.constants is None else f"{r.protocol} ({r.constants})",
            r.problem,
            str(r.T),
            r.truth,
            r.adversary,
            f"{r.honest_win_rate:.3f}",
            str(r.verifier_queries_max),
            str(r.verifier_bits_read_max),
            f"<= {r.queries_bound} queries, <= {r.bits_bound} bits",
            "yes" if r.holds else "NO",
        )
    return out
