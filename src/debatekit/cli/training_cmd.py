"""``debatekit training``: recorded debates as a dataset a trainer reads (issue 22, point 7;
:mod:`debatekit.experiments.training`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from debatekit.cli.options import JsonOption


def training(
    paths: Annotated[list[Path], typer.Argument(metavar="RECORD.jsonl...", help="Files written by `run --record`.")],
    out: Annotated[Path, typer.Option("--out", metavar="FILE", help="The dataset: .jsonl, or .parquet (pyarrow).")],
    context: Annotated[
        int, typer.Option("--context", min=0, metavar="N", help="Earlier events shown in each move's prompt.")
    ] = 40,
    json_out: JsonOption = False,
) -> None:
    """Write every debater move of the recorded debates as (prompt, completion, reward, side) rows,
    with the LLM players' model calls, for TRL and similar trainers: the reward is the mover's
    outcome in the protocol's game (win 1 / lose 0; the recursive protocols' payoff, per round too)."""
    from debatekit.cli.common import emit_json, stdout
    from debatekit.experiments.training import export

    rows, debates = export(paths, out, context)
    if json_out:
        emit_json({"rows": rows, "debates": debates, "out": str(out)})
        return
    stdout.print(f"{rows} rows from {debates} debates in {len(paths)} file(s): {out}")
