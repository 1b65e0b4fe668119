"""What ``debatekit plan`` and :func:`debatekit.plan` compute from their options: the certified plan
for stochastic debate (:mod:`debatekit.protocols.stochastic.planner`), Lean's or the paper's constants, the
frontier of plans against the prover budget, or the strongest guarantee a verifier budget certifies."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from debatekit.mistakes import UserError
from debatekit.protocols.stochastic.params import Constants, Proof

if TYPE_CHECKING:
    from debatekit.protocols.stochastic.planner import Plan


class FixedConstants(StrEnum):
    """``plan --constants``: the constant choices reported as they are, not planned."""

    lean = Constants.lean.value
    paper = Constants.paper.value


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


@dataclass(frozen=True)
class Strongest:
    """``plan --verifier-budget R``: the strongest guarantee certifiable with at most R verifier queries
    per debate, under each proof; ``chosen`` (``--proof``, default direct) gives the top-level keys."""

    verifier_budget: int
    direct: Plan
    lean_route: Plan
    chosen: Proof

    @property
    def plan(self) -> Plan:
        return self.direct if self.chosen is Proof.direct else self.lean_route

    def to_json(self) -> dict[str, Any]:
        by_proof = {Proof.direct.value: self.direct, Proof.lean.value: self.lean_route}
        return self.plan.to_json() | {
            "verifier_budget": self.verifier_budget,
            "gap": gap(self.plan),
            "proofs": {name: p.to_json() | {"gap": gap(p)} for name, p in by_proof.items()},
        }


def gap(p: Plan) -> float:
    """P[V = 1] on yes-instances less P[V = 1] on no-instances, at worst: completeness + soundness - 1."""
    return p.completeness + p.soundness - 1


def planned(
    K: float,
    T: int,
    completeness: float | None = None,
    soundness: float | None = None,
    prover_budget: int | None = None,
    constants: FixedConstants | None = None,
    proof: Proof | None = None,
    show_frontier: bool = False,
    verifier_budget: int | None = None,
) -> Plan | Frontier | Strongest:
    """What ``plan`` computes from its options (``UserError`` for a mistake)."""
    from debatekit.progress import progress
    from debatekit.protocols.stochastic import planner

    _check(K, T, completeness, soundness, prover_budget, constants, proof, show_frontier, verifier_budget)
    c = 3 / 5 if completeness is None else completeness
    s = 3 / 5 if soundness is None else soundness
    try:
        if verifier_budget is not None:
            steps = planner.strongest_steps()
            with progress(2 * steps, f"the strongest guarantee with {verifier_budget} verifier queries") as advance:
                plans = []
                for base, route in ((0, Proof.direct), (steps, Proof.lean)):
                    plans.append(
                        planner.strongest(K, T, verifier_budget, prover_budget, completeness, soundness,
                                          advance=lambda i, base=base: advance(base + i), proof=route)
                    )  # fmt: skip
            return Strongest(verifier_budget, *plans, proof or Proof.direct)
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
    verifier_budget: int | None,
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
    if verifier_budget is not None:
        if verifier_budget < 1:
            raise UserError(f"--verifier-budget must be at least 1, got {verifier_budget}")
        if completeness is not None and soundness is not None:
            raise UserError("--verifier-budget finds the strongest targets: give at most one of --completeness, "
                            "--soundness")  # fmt: skip
        if show_frontier:
            raise UserError("--verifier-budget and --frontier are different questions: give one")
    if constants is not None:
        extra = [
            name
            for name, given in (
                ("--completeness", completeness is not None),
                ("--soundness", soundness is not None),
                ("--prover-budget", prover_budget is not None),
                ("--proof", proof is not None),
                ("--frontier", show_frontier),
                ("--verifier-budget", verifier_budget is not None),
            )
            if given
        ]
        if extra:
            raise UserError(f"--constants {constants.value} reports fixed constants; drop {', '.join(extra)}")
    if show_frontier and prover_budget is not None:
        raise UserError("--frontier sets the prover budgets itself; drop --prover-budget")
    if show_frontier and proof is not None:
        raise UserError("--frontier reports both proofs side by side; drop --proof")
