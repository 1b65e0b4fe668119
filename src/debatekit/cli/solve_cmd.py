"""``debatekit solve``: the honest side's exact value against the best adversary."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

from debatekit.cli.options import (
    Constants,
    JsonOption,
    ParamOption,
    SeedOption,
    SizeOption,
    Truth,
    TruthOption,
    UserError,
)

if TYPE_CHECKING:
    from debatekit.problems import Problem
    from debatekit.protocols.spec import ProtocolSpec


def solve(
    protocol_name: Annotated[str, typer.Argument(metavar="PROTOCOL", help="A protocol name.")],
    problem: Annotated[str, typer.Option("--problem", help="A problem name (see `debatekit problems`).")],
    size: SizeOption = None,
    truth: TruthOption = Truth.yes,
    param: ParamOption = None,
    seed: SeedOption = 0,
    budget: Annotated[int, typer.Option("--budget", help="Most positions to search.")] = 5_000_000,
    constants: Annotated[
        Constants | None, typer.Option("--constants", help="Stochastic debate: planned (default), lean or paper.")
    ] = None,
    all_inputs: Annotated[
        bool,
        typer.Option("--all-inputs", help="Solve every input x of --size bits (ignores --truth and --seed)."),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Search every adversary move on a small instance; report the honest side's win probability."""
    from debatekit.analysis.exact import ExactError
    from debatekit.analysis.exact import solve as solve_exactly
    from debatekit.cli.common import (
        configure,
        emit_json,
        instance,
        params_json,
        positive,
        problem_for,
        progress,
        protocol,
        with_constants,
    )

    spec = with_constants(protocol(protocol_name), constants)
    found = problem_for(problem, spec)
    spec, problem_values = configure(spec, found, param)
    if all_inputs:
        if problem_values != found.params():
            raise UserError("--all-inputs takes the problem's default parameters; drop its -P settings")
        every_input(spec, found, found.default_size if size is None else size, budget, json_out)
        return
    case = instance(found, size, truth, seed, problem_values)
    try:
        with progress(positive(budget, "--budget"), "positions searched (of the budget)") as advance:
            solution = solve_exactly(spec, case, budget, advance)
    except ExactError as err:
        raise UserError(str(err)) from err
    if json_out:
        emit_json(asdict(solution) | {"params": params_json(spec, problem_values)})
        return
    print(
        f"{spec.name} on {found.name} (size {case.size}, truth {solution.truth}): honest "
        f"{solution.honest} wins with probability {solution.exact} against the best "
        f"{solution.adversary} ({solution.positions} positions searched; theorem: >= {solution.guarantee:g})"
    )


def every_input(spec: ProtocolSpec, found: Problem, size: int, budget: int, json_out: bool) -> None:
    """``--all-inputs``: the exact value on every x of ``size`` bits, each against its best adversary."""
    from debatekit.analysis.exact import ExactError, solve_every_input
    from debatekit.cli.common import emit_json, positive, progress

    if not found.min_size <= size <= found.max_size:
        raise UserError(f"{found.name} needs {found.min_size} <= --size <= {found.max_size}, got {size}")
    try:
        with progress(positive(budget, "--budget"), "positions searched (of the budget)") as advance:
            results = solve_every_input(spec, found, size, budget, advance)
    except ExactError as err:
        raise UserError(str(err)) from err
    worst_case = min((solution for _, solution in results), key=lambda solution: solution.value)
    worst = worst_case.value
    holds = all(solution.value >= solution.guarantee for _, solution in results)
    positions = sum(solution.positions for _, solution in results)
    if json_out:
        emit_json(
            {
                "protocol": spec.name,
                "problem": found.name,
                "size": size,
                "inputs": len(results),
                "min_value": worst,
                "all_hold": holds,
                "positions": positions,
                "cases": [
                    {"x": x, "truth": s.truth, "honest": s.honest, "value": s.value, "exact": s.exact}
                    for x, s in results
                ],
            }
        )
        return
    print(
        f"{spec.name} on {found.name} (size {size}): on all {len(results)} inputs the honest side wins with "
        f"probability >= {worst_case.exact} against the best adversary ({positions} positions searched; "
        f"theorem holds on every input: {'yes' if holds else 'NO'})"
    )
