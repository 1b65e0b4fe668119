"""What ``debatekit solve`` and :func:`debatekit.solve` compute: the honest side's exact value against
the best adversary on one instance, or on every input of a size, from the names the command line takes."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from debatekit.mistakes import UserError
from debatekit.protocols.stochastic.params import Constants
from debatekit.runs.spec import Truth, positive

if TYPE_CHECKING:
    from debatekit.analysis.exact import Solution
    from debatekit.problems import Problem
    from debatekit.protocols.spec import ProtocolSpec


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
    from debatekit.progress import progress
    from debatekit.runs.names import configure, instance, params_json, problem_for, protocol, with_constants

    spec = protocol(protocol_name)
    found = problem_for(problem, spec)
    spec, problem_values = configure(spec, found, with_constants(spec, param, constants))
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
    from debatekit.progress import progress

    if not found.min_size <= size <= found.max_size:
        raise UserError(f"{found.name} needs {found.min_size} <= --size <= {found.max_size}, got {size}")
    try:
        with progress(positive(budget, "--budget"), "positions searched (of the budget)") as advance:
            results = solve_every_input(spec, found, size, budget, advance)
    except ExactError as err:
        raise UserError(str(err)) from err
    return EveryInput(spec.name, found.name, size, results)
