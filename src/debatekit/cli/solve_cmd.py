"""``debatekit solve``: the honest side's exact value against the best adversary."""

from __future__ import annotations

from typing import Annotated

import typer

from debatekit.cli.logs_cmd import LogDirOption, NoLogOption, check_log_dir, start_log
from debatekit.cli.options import (
    ConstantsOption,
    JsonOption,
    ParamOption,
    ProblemOption,
    ProtocolArgument,
    SeedOption,
    SizeOption,
    TruthOption,
)
from debatekit.runs.spec import Truth


def solve(
    protocol_name: ProtocolArgument,
    problem: ProblemOption,
    size: SizeOption = None,
    truth: TruthOption = Truth.yes,
    param: ParamOption = None,
    seed: SeedOption = 0,
    budget: Annotated[int, typer.Option("--budget", help="Most positions to search.")] = 5_000_000,
    constants: ConstantsOption = None,
    all_inputs: Annotated[
        bool,
        typer.Option("--all-inputs", help="Solve every input x of --size bits (ignores --truth and --seed)."),
    ] = False,
    json_out: JsonOption = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
) -> None:
    """Search every adversary move on a small instance; report the honest side's win probability
    (it stops cleanly at --budget); logged when done (see `debatekit logs`)."""
    import time

    from debatekit.cli.common import emit_json
    from debatekit.runs.solve import solved

    config = {"command": "solve", "protocol": protocol_name, "problem": problem, "size": size, "truth": truth.value,
              "seed": seed, "budget": budget, "constants": constants and constants.value, "all_inputs": all_inputs,
              "params": param or []}  # fmt: skip
    if not no_log:
        check_log_dir(log_dir)
    started = time.perf_counter()
    result = solved(protocol_name, problem, size, truth, param, seed, budget, constants, all_inputs)
    if not no_log:  # logged once done: a mistake leaves no folder
        start_log(log_dir, config, None).finish(result.to_json(), time.perf_counter() - started)
    if json_out:
        emit_json(result.to_json())
    else:
        print(result.sentence())
