"""``debatekit experiment``: the field's experiments over debatekit's runs; ``judge-accuracy``, the
judge's accuracy with and without debate (:mod:`debatekit.runs.experiment` computes it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from debatekit.cli.logs_cmd import LogDirOption, NoLogOption, check_log_dir, start_log
from debatekit.cli.options import GenerationOption, JsonOption, SeedOption
from debatekit.mistakes import UserError

app = typer.Typer(
    help="Experiments: the judge's accuracy with and without debate.",
    invoke_without_command=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def experiment(ctx: typer.Context) -> None:
    """Experiments: the judge's accuracy with and without debate."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


@app.command(
    "judge-accuracy",
    epilog="\b\nExamples:\n  debatekit experiment judge-accuracy --debaters honest --judge builtin\n"
    "  debatekit experiment judge-accuracy --dataset claims --debaters llm:local/smollm2 --judge llm:local/smollm2 "
    "--plot accuracy.png",
)
def judge_accuracy(
    debaters: Annotated[
        str,
        typer.Option(
            "--debaters",
            metavar="honest|llm:PROVIDER/MODEL",
            help="Who debates: the built-in players, or a model (its liar is llm-liar:PROVIDER/MODEL).",
        ),
    ],
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            metavar="builtin|llm:PROVIDER/MODEL",
            help="The judge: the items' ground truth, or a model of the judge.",
        ),
    ] = "builtin",
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            metavar="FILE.csv|FILE.jsonl",
            help="Claims with truth yes or no, each played as a one-step plan; 'claims' is the shipped "
            "dataset. Default: the built-in plans in both truths.",
        ),
    ] = None,
    protocols: Annotated[
        str,
        typer.Option(
            "--protocols",
            metavar="P,...",
            help="The protocols beside direct judging and consultancy (cross-exam, prover-estimator, "
            "naive-recursive, stochastic).",
        ),
    ] = "cross-exam,prover-estimator",
    trials: Annotated[int, typer.Option("--trials", help="Debates per item and arm.")] = 10,
    liar: Annotated[
        str | None,
        typer.Option(
            "--liar",
            metavar="NAME",
            help="Alice's built-in liar in every arm (default: each protocol's; see debatekit players).",
        ),
    ] = None,
    liar_bob: Annotated[
        str | None,
        typer.Option(
            "--liar-bob",
            metavar="NAME",
            help="Bob's built-in liar in every protocol's arm (default: each protocol's; see debatekit players).",
        ),
    ] = None,
    seed: SeedOption = 0,
    plot: Annotated[
        Path | None, typer.Option("--plot", metavar="FILE.png", help="Write a bar chart of accuracy per arm here.")
    ] = None,
    generation: GenerationOption = None,
    json_out: JsonOption = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
) -> None:
    """The judge's accuracy per arm, with Wilson intervals: direct judging (no debate), consultancy
    (one consultant, on the true side in half the debates on each item, a random spot-check) and each
    protocol, the debaters on the true and the false side by the item's truth; logged when done (see
    `debatekit logs`, `debatekit report`)."""
    import time

    from debatekit.cli.common import emit_json, stdout
    from debatekit.runs.experiment import judge_accuracy as measured
    from debatekit.runs.names import generation_file

    if plot is not None and plot.suffix.lower() != ".png":
        raise UserError(f"--plot writes a PNG: name a .png file, not {str(plot)!r}")
    names = [name.strip() for name in protocols.split(",") if name.strip()]
    chosen = () if generation is None else generation_file(generation)
    config = {"command": "judge-accuracy", "debaters": debaters, "judge": judge, "dataset": dataset,
              "protocols": names, "trials": trials, "seed": seed, "liar": liar, "liar_bob": liar_bob,
              "generation": dict(chosen)}  # fmt: skip
    if not no_log:
        check_log_dir(log_dir)
    started = time.perf_counter()
    result = measured(debaters, judge, dataset, names, trials, seed, liar, generation=chosen, liar_bob=liar_bob)
    if not no_log:  # logged once done: a mistake leaves no folder
        start_log(log_dir, config, None).finish(result.to_json(), time.perf_counter() - started)
    if plot is not None:
        from debatekit.experiments.report.draw import draw_accuracy
        from debatekit.experiments.report.read import accuracy_from

        try:
            draw_accuracy([accuracy_from(result.to_json(), "")], plot)
        except OSError as err:
            raise UserError(f"--plot: cannot write {str(plot)!r}: {err.strerror or err}") from None
    for arm in result.arms:
        if arm.skipped:
            print(f"note: {arm.name} left out {len(arm.skipped)} items, e.g. {arm.skipped[0][0]}: {arm.skipped[0][1]}",
                  file=sys.stderr)  # fmt: skip
        if arm.undecided:
            print(f"note: {arm.name}: {arm.undecided} debates undecided (a model not consulted), in no rate",
                  file=sys.stderr)  # fmt: skip
    if json_out:
        emit_json(result.to_json())
        return
    from rich.table import Table

    out = Table(title=f"judge {result.judge} on {result.dataset}, debaters {result.debaters}")
    for column in ("arm", "accuracy", "95% CI", "n"):
        out.add_column(column, justify="left" if column == "arm" else "right")
    for arm in result.arms:
        shown = "-" if not arm.n else f"{arm.accuracy:.3f}"
        out.add_row(arm.name, shown, f"[{arm.ci[0]:.3f}, {arm.ci[1]:.3f}]", str(arm.n))
    out.caption = ("Alice argues yes and Bob no: the true side's seat honest, the false side's the liar; "
                   "consultancy: the true side in half the debates; "
                   "direct: P\\[yes] > 1/2 on the top question")  # fmt: skip
    stdout.print(out)
