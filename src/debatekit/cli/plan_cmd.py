"""``debatekit plan``: the certified planner for the human-judgement budget (docs/planner.md)."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from debatekit.cli.common import UserError, emit_json, progress, stdout
from debatekit.cli.run_cmd import JsonOption

if TYPE_CHECKING:
    from debatekit.analysis.planner import Plan


class ConstantsChoice(StrEnum):
    lean = "lean"
    paper = "paper"


def plan(
    K: Annotated[float, typer.Option("--K", help="Lipschitz constant of the machine at the oracle (> 0).")],
    T: Annotated[int, typer.Option("--T", help="Steps of the machine (>= 1).")],
    completeness: Annotated[
        float | None, typer.Option("--completeness", help="Least P[honest Alice wins] (default 0.6).")
    ] = None,
    soundness: Annotated[
        float | None, typer.Option("--soundness", help="Least P[honest Bob wins] (default 0.6).")
    ] = None,
    prover_budget: Annotated[
        int | None,
        typer.Option("--prover-budget", help="Most queries per step for each honest prover (default: Lean's)."),
    ] = None,
    constants: Annotated[
        ConstantsChoice | None,
        typer.Option("--constants", help="Report Lean's or the paper's constants instead of planning."),
    ] = None,
    show_frontier: Annotated[
        bool, typer.Option("--frontier", help="Verifier queries at 1, 3, 10, 30 and 100 times Lean's prover budget.")
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Fewest verifier (human) queries for stochastic-oracle debate, certified by exact binomial tails."""
    from debatekit.analysis import planner  # deferred: scipy.stats takes most of a second to import

    _check(K, T, completeness, soundness, prover_budget, constants, show_frontier)
    c = 3 / 5 if completeness is None else completeness
    s = 3 / 5 if soundness is None else soundness
    try:
        if show_frontier:
            with progress(len(planner.FRONTIER_MULTIPLIERS), "planning the frontier") as advance:
                plans = planner.frontier(K, T, c, s, advance=advance)
            _print_frontier(plans, planner.lean_plan(K, T), planner.paper_plan(K, T), json_out)
            return
        if constants is ConstantsChoice.lean:
            result = planner.lean_plan(K, T)
        elif constants is ConstantsChoice.paper:
            result = planner.paper_plan(K, T)
        else:
            with progress(2, "searching, then certifying") as advance:
                result = planner.plan(K, T, c, s, prover_budget, advance=advance)
    except planner.PlanError as err:
        raise UserError(str(err)) from err
    if json_out:
        emit_json(result.to_json())
    else:
        _print_plan(result)


def _check(
    K: float,
    T: int,
    completeness: float | None,
    soundness: float | None,
    prover_budget: int | None,
    constants: ConstantsChoice | None,
    show_frontier: bool,
) -> None:
    if not (math.isfinite(K) and K > 0):
        raise UserError(f"--K must be a positive number, got {K:g}")
    if T < 1:
        raise UserError(f"--T must be at least 1, got {T}")
    for name, value in (("--completeness", completeness), ("--soundness", soundness)):
        if value is not None and not (0 < value < 1):
            raise UserError(f"{name} must be in (0, 1), got {value:g}")
    if prover_budget is not None and prover_budget < 1:
        raise UserError(f"--prover-budget must be at least 1, got {prover_budget}")
    if constants is not None:
        extra = [
            name
            for name, given in (
                ("--completeness", completeness is not None),
                ("--soundness", soundness is not None),
                ("--prover-budget", prover_budget is not None),
                ("--frontier", show_frontier),
            )
            if given
        ]
        if extra:
            raise UserError(f"--constants {constants.value} reports fixed constants; drop {', '.join(extra)}")
    if show_frontier and prover_budget is not None:
        raise UserError("--frontier sets the prover budgets itself; drop --prover-budget")


def _print_plan(p: Plan) -> None:
    width = 24
    rows: list[tuple[str, str]] = [("verifier_queries", f"{p.verifier_queries}")]
    if p.prover_budget is None:
        rows += [
            ("alice_queries_per_step", f"{p.alice_queries_per_step}"),
            ("bob_queries_per_step", f"{p.bob_queries_per_step}"),
        ]
    else:
        rows += [
            ("alice_queries_per_step", f"{p.alice_queries_per_step} (cap {p.prover_budget[0]})"),
            ("bob_queries_per_step", f"{p.bob_queries_per_step} (cap {p.prover_budget[1]})"),
        ]
    if p.params is None:
        rows += [
            ("completeness", f"{p.completeness:.6g} (Theorem 6.2)"),
            ("soundness", f"{p.soundness:.6g} (Theorem 6.2: P[V = 1] <= {1 - p.soundness:.6g})"),
            ("parameters", "d = ceil(150 K); the paper's r and R samples"),
        ]
    elif p.alice_failure is None:
        q = p.params
        rows += [
            ("completeness", f"{p.completeness:.6g} = (1-v)(w - K c - q T) (target {q.completeness:g})"),
            ("soundness", f"{p.soundness:.6g} = (1-v)(1 - q T)(w - K b) (target {q.soundness:g})"),
            ("parameters", f"v={q.v:.6g} c={q.c:.6g} s={q.s:.6g} b={q.b:.6g} q={q.q:.6g} w=2/3"),
        ]
    else:
        q = p.params
        rows += [
            ("completeness", f"{p.completeness:.6g} = (1-v)(w - K c - q T) (target {q.completeness:g})"),
            ("soundness", f"{p.soundness:.6g} = (1-v)(1 - q T)(w - K b) (target {q.soundness:g})"),
            ("parameters", f"v={q.v:.6g} c={q.c:.6g} s={q.s:.6g} b={q.b:.6g} q={q.q:.6g} w=2/3"),
            ("alice failure", f"{p.alice_failure:.4g} <= q (estimate off by >= c)"),
            ("bob failures", f"{p.bob_complete_failure:.4g} (reject, off <= s), {p.bob_sound_failure:.4g} <= q"),
            ("vera failures", f"{p.vera_complete_failure:.4g} (reject, off <= c), {p.vera_sound_failure:.4g} <= v"),
        ]
    print(f"{p.constants} constants for K = {p.k:g}, T = {p.T}")
    for name, value in rows:
        print(f"{name:<{width}}{value}")


def _print_frontier(plans: list[Plan], lean: Plan, paper: Plan, json_out: bool) -> None:
    base = lean.alice_queries_per_step
    if json_out:
        emit_json(
            {
                "K": lean.k,
                "T": lean.T,
                "frontier": [{"multiplier": _multiplier(p, base), **p.to_json()} for p in plans],
                "lean": lean.to_json(),
                "paper": paper.to_json(),
            }
        )
        return
    table = Table(title=f"verifier queries against prover budget (K = {lean.k:g}, T = {lean.T})")
    for name in ("prover budget", "alice/step", "bob/step", "verifier_queries", "completeness", "soundness", "v", "q"):
        table.add_column(name, justify="right")
    for p in plans:
        assert p.params is not None
        table.add_row(
            f"{_multiplier(p, base)}x Lean's",
            str(p.alice_queries_per_step),
            str(p.bob_queries_per_step),
            str(p.verifier_queries),
            f"{p.completeness:.4f}",
            f"{p.soundness:.4f}",
            f"{p.params.v:.4g}",
            f"{p.params.q:.3g}",
        )
    for p in (lean, paper):
        v, q = ("-", "-") if p.params is None else (f"{p.params.v:.4g}", f"{p.params.q:.3g}")
        table.add_row(
            f"{p.constants} constants",
            str(p.alice_queries_per_step),
            str(p.bob_queries_per_step),
            str(p.verifier_queries),
            f"{p.completeness:.4f}",
            f"{p.soundness:.4f}",
            v,
            q,
        )
    table.caption = "planned rows: certified by exact binomial tails; Lean: Hoeffding; paper: Theorem 6.2"
    stdout.print(table)


def _multiplier(p: Plan, base: int) -> int:
    """The frontier row's budget as a multiple of Lean's per-step count for Alice."""
    assert p.prover_budget is not None
    return round(p.prover_budget[0] / base)
