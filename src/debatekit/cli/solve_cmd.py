"""``debatekit solve``: the honest side's exact value against the best adversary."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Annotated, Any

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
    Truth,
    TruthOption,
    UserError,
)
from debatekit.protocols.stochastic.params import Constants

if TYPE_CHECKING:
    from debatekit.analysis.exact import Solution
    from debatekit.problems import Problem
    from debatekit.protocols.spec import ProtocolSpec


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


@dataclass(frozen=True)
class Solved:
    """``solve`` on one instance: the exact solution, the names the command line prints, and the
    parameters in effect."""

    protocol: str
    problem: str
    size: int
    solution: Solution
    params: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return asdict(self.solution) | {"params": self.params}

    def sentence(self) -> str:
        s = self.solution
        return (
            f"{self.protocol} on {self.problem} (size {self.size}, truth {s.truth}): honest "
            f"{s.honest} wins with probability {s.exact} against the best "
            f"{s.adversary} ({s.positions} positions searched; theorem: >= {s.guarantee:g})"
        )


@dataclass(frozen=True)
class EveryInput:
    """``solve --all-inputs``: every input x (as a bit string) with its solution against its best adversary."""

    protocol: str
    problem: str
    size: int
    cases: list[tuple[str, Solution]]

    @property
    def worst(self) -> Solution:
        return min((solution for _, solution in self.cases), key=lambda solution: solution.value)

    @property
    def all_hold(self) -> bool:
        return all(solution.value >= solution.guarantee for _, solution in self.cases)

    @property
    def positions(self) -> int:
        return sum(solution.positions for _, solution in self.cases)

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "problem": self.problem,
            "size": self.size,
            "inputs": len(self.cases),
            "min_value": self.worst.value,
            "all_hold": self.all_hold,
            "positions": self.positions,
            "cases": [
                {"x": x, "truth": s.truth, "honest": s.honest, "value": s.value, "exact": s.exact}
                for x, s in self.cases
            ],
        }

    def sentence(self) -> str:
        return (
            f"{self.protocol} on {self.problem} (size {self.size}): on all {len(self.cases)} inputs the honest side "
            f"wins with probability >= {self.worst.exact} against the best adversary ({self.positions} positions "
            f"searched; theorem holds on every input: {'yes' if self.all_hold else 'NO'})"
        )


def solved(
    protocol_name: str,
    problem: str,
    size: int | None,
    truth: Truth,
    param: list[str] | None,
    seed: int,
    budget: int,
    constants: Constants | None,
    all_inputs: bool,
) -> Solved | EveryInput:
    """What ``solve`` computes, from the names the command line takes (``UserError`` for a mistake)."""
    from debatekit.analysis.exact import ExactError
    from debatekit.analysis.exact import solve as solve_exactly
    from debatekit.cli.common import (
        configure,
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
        return every_input(spec, found, found.default_size if size is None else size, budget)
    case = instance(found, size, truth, seed, problem_values)
    try:
        with progress(positive(budget, "--budget"), "positions searched (of the budget)") as advance:
            solution = solve_exactly(spec, case, budget, advance)
    except ExactError as err:
        raise UserError(str(err)) from err
    return Solved(spec.name, found.name, case.size, solution, params_json(spec, problem_values))


def every_input(spec: ProtocolSpec, found: Problem, size: int, budget: int) -> EveryInput:
    """``--all-inputs``: the exact value on every x of ``size`` bits, each against its best adversary."""
    from debatekit.analysis.exact import ExactError, solve_every_input
    from debatekit.cli.common import positive, progress

    if not found.min_size <= size <= found.max_size:
        raise UserError(f"{found.name} needs {found.min_size} <= --size <= {found.max_size}, got {size}")
    try:
        with progress(positive(budget, "--budget"), "positions searched (of the budget)") as advance:
            results = solve_every_input(spec, found, size, budget, advance)
    except ExactError as err:
        raise UserError(str(err)) from err
    return EveryInput(spec.name, found.name, size, results)
