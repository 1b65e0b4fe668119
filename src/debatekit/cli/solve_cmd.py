"""``debatekit solve``: the honest side's exact value against the best adversary."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from debatekit.analysis.exact import ExactError
from debatekit.analysis.exact import solve as solve_exactly
from debatekit.cli.common import (
    Constants,
    Truth,
    UserError,
    emit_json,
    instance,
    positive,
    problem_for,
    progress,
    protocol,
    with_constants,
)
from debatekit.cli.run_cmd import JsonOption, SeedOption, SizeOption, TruthOption


def solve(
    protocol_name: Annotated[str, typer.Argument(metavar="PROTOCOL", help="A protocol name.")],
    problem: Annotated[str, typer.Option("--problem", help="A problem name (see `debatekit problems`).")],
    size: SizeOption = None,
    truth: TruthOption = Truth.yes,
    seed: SeedOption = 0,
    budget: Annotated[int, typer.Option("--budget", help="Most positions to search.")] = 5_000_000,
    constants: Annotated[
        Constants | None, typer.Option("--constants", help="Stochastic debate: planned (default), lean or paper.")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Search every adversary move on a small instance; report the honest side's win probability."""
    spec = with_constants(protocol(protocol_name), constants)
    found = problem_for(problem, spec)
    case = instance(found, size, truth, seed)
    try:
        with progress(positive(budget, "--budget"), "positions searched (of the budget)") as advance:
            solution = solve_exactly(spec, case, budget, advance)
    except ExactError as err:
        raise UserError(str(err)) from err
    if json_out:
        emit_json(asdict(solution))
        return
    print(
        f"{spec.name} on {found.name} (size {case.size}, truth {solution.truth}): honest "
        f"{solution.honest} wins with probability {solution.exact} against the best "
        f"{solution.adversary} ({solution.positions} positions searched; theorem: >= {solution.guarantee:g})"
    )
