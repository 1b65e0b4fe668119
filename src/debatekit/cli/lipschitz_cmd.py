"""``debatekit lipschitz``: the Lipschitz constant K of a problem's machine (Definition 6.1)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from debatekit.cli.options import JsonOption, SeedOption, SizeOption, TruthOption
from debatekit.mistakes import UserError
from debatekit.runs.spec import Truth


def lipschitz(
    problem: Annotated[str, typer.Option("--problem", help="A stochastic problem (see `debatekit problems`).")],
    size: SizeOption = None,
    truth: TruthOption = Truth.yes,
    seed: SeedOption = 0,
    json_out: JsonOption = False,
) -> None:
    """K of the problem's machine: exact lower and upper bounds by enumeration when T <= 18,
    beside the closed-form K the problem declares (see debatekit.analysis.lipschitz)."""
    from debatekit.analysis.lipschitz import MAX_ENUMERATED_STEPS, LipschitzBounds, enumerate_bounds
    from debatekit.cli.common import emit_json
    from debatekit.problems import PROBLEMS
    from debatekit.runs.names import instance

    if problem not in PROBLEMS:
        raise UserError(f"unknown problem {problem!r}; choose from: {', '.join(PROBLEMS)}")
    case = instance(PROBLEMS[problem], size, truth, seed)
    if case.lipschitz is None or case.machine is None:
        raise UserError(f"problem {problem!r} is deterministic; K applies to stochastic problems")
    steps = case.machine.length
    if steps <= MAX_ENUMERATED_STEPS:
        bounds = enumerate_bounds(case)
    else:
        bounds = LipschitzBounds(
            problem,
            case.size,
            steps,
            case.lipschitz,
            float("nan"),
            case.lipschitz,
            f"closed form declared by the problem (enumeration needs T <= {MAX_ENUMERATED_STEPS})",
        )
    if json_out:
        emit_json({k: (None if isinstance(v, float) and v != v else v) for k, v in asdict(bounds).items()})
        return
    if bounds.lower != bounds.lower:  # nothing computed: only the problem's declared closed form
        print(
            f"{problem} (size {case.size}, T = {steps}): K declared {case.lipschitz:.4g} (closed form, not "
            f"computed: enumeration needs T <= {MAX_ENUMERATED_STEPS})"
        )
        return
    print(
        f"{problem} (size {case.size}, T = {steps}): K declared {case.lipschitz:.4g}; "
        f"exact bounds {bounds.lower:.4g} <= K <= {bounds.upper:.4g} ({bounds.method})"
    )
