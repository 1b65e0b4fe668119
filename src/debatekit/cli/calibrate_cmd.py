"""``debatekit calibrate``: how well a model of the judge matches the ground truth."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from debatekit.cli.options import GenerationOption, JsonOption
from debatekit.mistakes import UserError


def calibrate(
    judge: Annotated[str, typer.Option("--judge", metavar="llm:PROVIDER/MODEL", help="The model of the judge.")],
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            metavar="FILE.csv|FILE.jsonl",
            help="Claims with known answers (question, truth or p_yes, optional context and id); 'claims' is "
            "the shipped dataset. Default: every built-in plan's questions.",
        ),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", metavar="FILE.png", help="Write the reliability diagram here.")
    ] = None,
    generation: GenerationOption = None,
    json_out: JsonOption = False,
) -> None:
    """Ask the model of the judge every claim and score its P[yes] against the ground truth: Brier
    score, expected calibration error and log-loss, beside the always-0.5 baseline."""
    from debatekit.cli.common import emit_json, stdout
    from debatekit.runs.calibrate import calibrated
    from debatekit.runs.names import generation_file

    if plot is not None and plot.suffix.lower() != ".png":
        raise UserError(f"--plot writes a PNG: name a .png file, not {str(plot)!r}")
    result = calibrated(judge, dataset, () if generation is None else generation_file(generation))
    if plot is not None:
        from debatekit.experiments.report.draw import draw_reliability

        try:
            draw_reliability(result.model, result.chance, result.judge, plot)
        except OSError as err:
            raise UserError(f"--plot: cannot write {str(plot)!r}: {err.strerror or err}") from None
    for ident, why in result.unanswered[:1]:
        print(f"note: {len(result.unanswered)} claims unanswered (left out of the scores), e.g. {ident}: {why}",
              file=sys.stderr)  # fmt: skip
    if json_out:
        emit_json(result.to_json())
        return
    from rich.table import Table

    out = Table(title=f"{result.judge} on {result.dataset} ({result.model.n} claims)")
    for column in ("score", result.judge, "always 0.5"):
        out.add_column(column, justify="left" if column == "score" else "right")
    for name, key in (("Brier score", "brier"), ("expected calibration error", "ece"), ("log-loss", "log_loss")):
        out.add_row(name, f"{getattr(result.model, key):.3f}", f"{getattr(result.chance, key):.3f}")
    notes = ["worse than chance (a higher Brier score than always 0.5)"] if result.worse_than_chance else []
    if result.dropped is not None:
        notes.append(f"first-token mass on neither yes nor no, renormalised away: {result.dropped:.3f} on average")
    out.caption = "\n".join(notes) or None
    stdout.print(out)
