"""``debatekit plan``: the certified planner for the human-judgement budget (docs/planner.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from debatekit.cli.logs_cmd import LogDirOption, NoLogOption, check_log_dir, start_log
from debatekit.cli.options import JsonOption, UserError
from debatekit.protocols.stochastic.params import Constants, Proof

if TYPE_CHECKING:
    from debatekit.protocols.stochastic.planner import Plan


class FixedConstants(StrEnum):
    """``plan --constants``: the constant choices reported as they are, not planned."""

    lean = Constants.lean.value
    paper = Constants.paper.value


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
        FixedConstants | None,
        typer.Option("--constants", help="Report Lean's or the paper's constants instead of planning."),
    ] = None,
    proof: Annotated[
        Proof | None,
        typer.Option(
            "--proof",
            help="direct (default): one-sided tails prove bob_complete/bob_sound's conclusions (docs/planner.md); "
            "lean: two-sided tails prove alice_pr_le's for every party, and Lean's lemmas do the rest.",
        ),
    ] = None,
    show_frontier: Annotated[
        bool,
        typer.Option(
            "--frontier", help="Verifier queries at 1, 3, 10, 30 and 100 times Lean's prover budget, both proofs."
        ),
    ] = False,
    json_out: JsonOption = False,
    log_dir: LogDirOption = None,
    no_log: NoLogOption = False,
) -> None:
    """Fewest verifier (human) queries for stochastic-oracle debate, certified by upper bounds on binomial tails;
    logged when done (see `debatekit logs`)."""
    import time

    from debatekit.cli.common import emit_json

    config = {"command": "plan", "K": K, "T": T, "completeness": completeness, "soundness": soundness,
              "prover_budget": prover_budget, "constants": constants and constants.value,
              "proof": proof and proof.value, "frontier": show_frontier}  # fmt: skip
    if not no_log:
        check_log_dir(log_dir)
    started = time.perf_counter()
    result = planned(K, T, completeness, soundness, prover_budget, constants, proof, show_frontier)
    if not no_log:  # logged once done: a mistake leaves no folder
        start_log(log_dir, config, None).finish(result.to_json(), time.perf_counter() - started)
    if json_out:
        emit_json(result.to_json())
    elif isinstance(result, Frontier):
        _print_frontier(result)
    else:
        _print_plan(result)


@dataclass(frozen=True)
class Frontier:
    """``plan --frontier``: planned plans at each multiple of Lean's prover budget under both proofs,
    beside Lean's and the paper's constants."""

    direct: list[Plan]
    lean_route: list[Plan]
    lean: Plan
    paper: Plan

    def multiplier(self, p: Plan) -> int:
        """A frontier row's budget as a multiple of Lean's per-step count for Alice."""
        assert p.prover_budget is not None
        return round(p.prover_budget[0] / self.lean.alice_queries_per_step)

    def to_json(self) -> dict[str, Any]:
        return {
            "K": self.lean.k,
            "T": self.lean.T,
            "frontier": [
                {"multiplier": self.multiplier(d), Proof.direct.value: d.to_json(), Proof.lean.value: r.to_json()}
                for d, r in zip(self.direct, self.lean_route, strict=True)
            ],
            Constants.lean.value: self.lean.to_json(),
            Constants.paper.value: self.paper.to_json(),
        }


def planned(
    K: float,
    T: int,
    completeness: float | None = None,
    soundness: float | None = None,
    prover_budget: int | None = None,
    constants: FixedConstants | None = None,
    proof: Proof | None = None,
    show_frontier: bool = False,
) -> Plan | Frontier:
    """What ``plan`` computes from its options (``UserError`` for a mistake)."""
    from debatekit.cli.common import progress
    from debatekit.protocols.stochastic import planner

    _check(K, T, completeness, soundness, prover_budget, constants, proof, show_frontier)
    c = 3 / 5 if completeness is None else completeness
    s = 3 / 5 if soundness is None else soundness
    try:
        if show_frontier:
            steps = len(planner.FRONTIER_MULTIPLIERS)
            with progress(2 * steps, "planning the frontier, both proofs") as advance:
                direct = planner.frontier(K, T, c, s, advance=advance)
                lean = planner.frontier(K, T, c, s, advance=lambda i: advance(steps + i), proof=Proof.lean)
            return Frontier(direct, lean, planner.lean_plan(K, T), planner.paper_plan(K, T))
        if constants is FixedConstants.lean:
            return planner.lean_plan(K, T)
        if constants is FixedConstants.paper:
            return planner.paper_plan(K, T)
        with progress(2, "searching, then certifying") as advance:
            return planner.plan(K, T, c, s, prover_budget, advance=advance, proof=proof or Proof.direct)
    except planner.PlanError as err:
        raise UserError(str(err)) from err


def _check(
    K: float,
    T: int,
    completeness: float | None,
    soundness: float | None,
    prover_budget: int | None,
    constants: FixedConstants | None,
    proof: Proof | None,
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
                ("--proof", proof is not None),
                ("--frontier", show_frontier),
            )
            if given
        ]
        if extra:
            raise UserError(f"--constants {constants.value} reports fixed constants; drop {', '.join(extra)}")
    if show_frontier and prover_budget is not None:
        raise UserError("--frontier sets the prover budgets itself; drop --prover-budget")
    if show_frontier and proof is not None:
        raise UserError("--frontier reports both proofs side by side; drop --proof")


def _print_plan(p: Plan) -> None:
    width = 30
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
            ("alice failure bound", f"{p.alice_failure:.4g} <= q (estimate off by >= c)"),
        ]
        if p.proof is Proof.lean:
            rows += [
                ("bob estimate failure bound", f"{p.bob_estimate_failure:.4g} <= q (off by >= (b-s)/2)"),
                ("vera estimate failure bound", f"{p.vera_estimate_failure:.4g} <= v (off by >= (s-c)/2)"),
            ]
        else:
            rows += [
                (
                    "bob failure bounds",
                    f"{p.bob_complete_failure:.4g} (reject, off <= s), {p.bob_sound_failure:.4g} <= q",
                ),
                (
                    "vera failure bounds",
                    f"{p.vera_complete_failure:.4g} (reject, off <= c), {p.vera_sound_failure:.4g} <= v",
                ),
            ]
        note = _LEAN_DEFAULTS_NOTE if p.constants is Constants.lean or p.proof is None else _PROOF_NOTE[p.proof]
        rows.append(("proof", note))
    print(f"{p.constants} constants for K = {p.k:g}, T = {p.T}")
    for name, value in rows:
        print(f"{name:<{width}}{value}")


_PROOF_NOTE = {
    Proof.direct: "direct: one-sided exact tails prove bob_complete/bob_sound's conclusions (docs/planner.md)",
    Proof.lean: "lean: two-sided exact tails prove alice_pr_le's conclusion per party; Lean's lemmas do the rest",
}
_LEAN_DEFAULTS_NOTE = "Lean's theorems as stated (Hoeffding's samples); the exact tails above are for comparison"


def _print_frontier(f: Frontier) -> None:
    """One table per proof (four columns each, so that an 80-column terminal shows every number)."""
    from rich.table import Table

    from debatekit.cli.common import stdout

    for proof, plans in ((Proof.direct, f.direct), (Proof.lean, f.lean_route)):
        table = Table(title=f"verifier queries against prover budget, {proof} proof (K = {f.lean.k:g}, T = {f.lean.T})")
        for name in ("prover budget", "verifier", "alice/step", "bob/step"):
            table.add_column(name, justify="right")
        for p in plans:
            table.add_row(f"{f.multiplier(p)}x Lean's", *_cells(p))
        for p in (f.lean, f.paper):
            table.add_row(f"{p.constants} constants", *_cells(p))
        table.caption = _PROOF_NOTE[proof]
        stdout.print(table)
    print("failure figures are certified upper bounds (binomial tails, computed exactly up to a 1e-9 relative margin)")


def _cells(p: Plan) -> list[str]:
    return [str(p.verifier_queries), str(p.alice_queries_per_step), str(p.bob_queries_per_step)]
