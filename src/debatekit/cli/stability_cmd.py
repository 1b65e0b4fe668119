"""``debatekit stability``: (ε, ρ)-stability of a problem's recursive decomposition (Definition 5.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.options import JsonOption, ProblemOption, SizeOption, TruthOption
from debatekit.mistakes import UserError
from debatekit.runs.spec import Truth

if TYPE_CHECKING:
    from rich.table import Table

    from debatekit.machine.decomposition import Decomposition
    from debatekit.problems import Instance

DEFAULT_EPSILON = 0.1
DEFAULT_WIDTH = 2


def stability(
    problem: ProblemOption,
    size: SizeOption = None,
    truth: TruthOption = Truth.yes,
    epsilon: Annotated[
        float | None,
        typer.Option("--epsilon", help="0 < epsilon < 1/2 (default: the decomposition's own, else 0.1)."),
    ] = None,
    rho: Annotated[float, typer.Option("--rho", help="0 < rho < 1; a node is stable iff sup|change| < rho*eps.")] = 0.5,
    width: Annotated[
        int | None,
        typer.Option("--width", help="Width q of the natural decomposition (problems without their own; default 2)."),
    ] = None,
    probability: Annotated[
        float | None,
        typer.Option("--probability", help="Check at the constant p_i = P in [0, 1] instead of the correct answers."),
    ] = None,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", help="Check at most this many queries; beyond, a random sample per level.")
    ] = 2000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed for the instance and the node sample (>= 0).")] = 0,
    json_out: JsonOption = False,
) -> None:
    """Check Definition 5.3 at every query of the decomposition (levels d..1): the exact supremum of
    |P_p[M_D = 1] - P_q[M_D = 1]| over conditionals q within epsilon of p, against rho*epsilon
    (see debatekit.analysis.stability and docs/stability.md)."""
    import numpy as np

    from debatekit.analysis import stability as analysis
    from debatekit.cli.common import emit_json, stdout
    from debatekit.problems import PROBLEMS
    from debatekit.progress import progress
    from debatekit.runs.names import instance
    from debatekit.runs.spec import positive

    if problem not in PROBLEMS:
        raise UserError(f"unknown problem {problem!r}; choose from: {', '.join(PROBLEMS)}")
    positive(max_nodes, "--max-nodes")
    if probability is not None and not 0.0 <= probability <= 1.0:
        raise UserError(f"--probability must be in [0, 1], got {probability}")
    case = instance(PROBLEMS[problem], size, truth, seed)
    decomposition, source = _decomposition(case, width)
    if epsilon is None:
        own = getattr(decomposition, "epsilon", None)
        epsilon = DEFAULT_EPSILON if own is None else float(own)
    try:
        analysis.validate(epsilon, rho)
        d, q = decomposition.depth, decomposition.width
        total = sum(q ** (d - k) for k in range(d, 0, -1))
        with progress(min(total, max_nodes), f"stability of {problem}") as advance:
            result = analysis.survey(
                decomposition, epsilon, rho, max_nodes, np.random.default_rng(seed), probability, advance
            )
    except ValueError as err:
        raise UserError(str(err)) from err
    data: dict[str, Any] = {
        "problem": problem,
        "size": case.size,
        "truth": truth.value,
        "decomposition": source,
        "probabilities": "correct" if probability is None else probability,
        "seed": seed,
        "max_nodes": max_nodes,
    } | result.to_json()
    if json_out:
        emit_json(data)
    else:
        stdout.print(table(data))


def _decomposition(case: Instance, width: int | None) -> tuple[Decomposition, str]:
    """The problem's own decomposition (a natural one rebuilt at ``--width`` if given), else the
    natural one of its deterministic transcript machine; with a name for the output."""
    from debatekit.machine.decomposition import NaturalDecomposition, natural
    from debatekit.machine.transcript import TranscriptMachine

    own = case.recursive_decomposition()
    try:
        if isinstance(own, NaturalDecomposition):
            if width is not None and width != own.width:
                own = natural(own.machine, own.x, own.oracle, width)
            return own, "natural"
        if own is not None:
            if width is not None and width != own.width:
                raise UserError(
                    f"--width applies to natural decompositions; problem {case.problem!r} has its own "
                    f"({type(own).__name__}), of width {own.width}"
                )
            return own, type(own).__name__
        machine = case.machine
        if not isinstance(machine, TranscriptMachine) or not machine.deterministic:
            raise UserError(
                f"problem {case.problem!r} has no recursive decomposition and no deterministic transcript machine "
                "to decompose"
            )
        return natural(machine, case.x, case.oracle, DEFAULT_WIDTH if width is None else width), "natural"
    except ValueError as err:
        raise UserError(f"problem {case.problem!r}: no natural decomposition: {err}") from err


def table(data: dict[str, Any]) -> Table:
    """One row per level: nodes checked, the largest sup|change|, the smallest margin, the unstable count."""
    from rich.table import Table

    out = Table(
        title=f"(eps, rho)-stability of {data['problem']} (size {data['size']}, truth {data['truth']}): "
        f"{data['decomposition']} decomposition, depth {data['depth']}, width {data['width']}"
    )
    for name in ("level", "nodes", "checked", "max sup|change| (checked)", "min margin", "unstable", "stable fraction"):
        out.add_column(name, justify="right")
    for level in data["levels"]:
        low, high = level["stable_ci"]
        out.add_row(
            str(level["level"]),
            str(level["nodes"]),
            str(level["checked"]) + (" (sampled)" if level["sampled"] else ""),
            f"{level['max_sup_change']:.4g}",
            f"{level['min_margin']:+.4g}",
            str(level["unstable"]),
            f"[{low:.3f}, {high:.3f}] (95% Wilson)" if level["sampled"] else f"{low:.3f} (exact)",
        )
    at = "the correct answers" if data["probabilities"] == "correct" else f"p_i = {data['probabilities']:g}"
    checked = f"{data['nodes_checked']} of {data['nodes_total']} nodes"
    if data["sampled"]:
        checked = f"sampled {checked} (seed {data['seed']})"
    verdict = {True: "stable", False: "NOT stable", None: "no unstable node in the sample"}[data["stable"]]
    lines = [
        f"eps = {data['epsilon']:g}, rho = {data['rho']:g}: a node is stable iff sup|change| < rho*eps = "
        f"{data['bound']:.4g} (Definition 5.3)",
        f"{verdict} at {at}: {data['stable_fraction']:.1%} of {checked} stable; method {data['method']}",
    ]
    worst = data["worst"]
    if worst is not None:
        relation = "<" if worst["stable"] else ">="
        lines.append(
            f"worst: level {worst['level']} query {worst['query']}: sup|change| = {worst['sup_change']:.4g} "
            f"{relation} rho*eps = {worst['bound']:.4g}"
        )
    out.caption = "\n".join(lines)
    return out
