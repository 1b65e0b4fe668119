"""The prover-estimator paper's experiments, for the demo report (Sections 6-7, Theorem 6.1).

* Naive recursive debate against the obfuscating prover of Section 7, with bounded and unbounded
  challengers.
* Prover-estimator debate against the same prover: her mean payoff against Lemma A.4's bound.
* The honest prover's mean payoff against Lemma A.5's bound (1-ε)·r^(d+1), facing every estimator
  adversary, on the stable problem (Theorem 8.3's construction) where the lemma applies, and on
  the obfuscated problem, whose AND decomposition is not stable (no promise there).
* The reward gap Δ as n grows: Δ = E[honest payoff] - E[obfuscator's payoff] on instances of the
  same size, computed exactly by enumeration. Prover-estimator debate faces the truthful
  estimator (Lemma A.4 with δ = 0); naive recursion faces the bounded honest challenger, who
  decides a claim about at most budget/q candidates and otherwise picks uniformly. n counts the
  leaves q^d of the argument. Two parameter sets: the command line's q = 4, ε = 0.1, where
  r = ε/8 < 1/q, and q = 32, ε = 0.45, where r > 1/q as Theorem 6.1's q = O(c(8/ε)^c) demands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.analysis.stability import check
from debatekit.catalog import PROTOCOLS
from debatekit.ledger import Role
from debatekit.players.base import Seat
from debatekit.problems import PROBLEMS
from debatekit.problems.recursive import DIVISION_BUDGET, LEAF, FactorIntervals, random_prime
from debatekit.problems.registry import Instance
from debatekit.protocols import naive_recursive
from debatekit.protocols.prover_estimator import Rules, expected_rewards, rules_for

NAIVE_EXACT_NODES = 50_000
"""Naive recursion is enumerated exactly while the challenger's tree has at most this many nodes."""


@dataclass(frozen=True)
class PayoffRow:
    experiment: str
    protocol: str
    problem: str
    size: int
    truth: str
    alice: str
    bob: str
    trials: int
    payoff_mean: float
    payoff_ci: tuple[float, float]
    payoff_bound: float
    bound_kind: str
    reward_unit: float
    """r^(d+1) for prover-estimator debate (payoffs are reported in this unit too), 1 for naive."""
    honest_win_rate: float
    promise: str
    """Why the theorem does or does not speak about this row."""
    holds: bool | None
    """The 95% interval is consistent with the bound (None where the theorem promises nothing)."""


@dataclass(frozen=True)
class GapPoint:
    width: int
    epsilon: float
    depth: int
    leaves: int
    pe_honest: float
    pe_obfuscator: float
    pe_gap: float
    pe_gap_bound: float
    """Lemma A.5's floor less Lemma A.4's ceiling at δ = 0: (1-ε) r^(d+1)."""
    naive_gap: float


EXPERIMENTS = [  # experiment, protocol, problem, (quick, full) size, truth, alice, bobs (None: every bob)
    ("naive recursion vs obfuscation", "naive-recursive", "obfuscated-primality", (12, 16), False, "obfuscate", None),
    ("prover-estimator vs obfuscation", "prover-estimator", "obfuscated-primality", (12, 16), False, "obfuscate", None),
    ("prover-estimator vs obfuscation", "prover-estimator", "obfuscated-primality", (12, 16), False, "wrong-answer",
     ("honest", "omniscient")),
    ("honest prover's payoff", "prover-estimator", "evidence-majority", (1, 2), True, "honest", None),
    ("honest prover's payoff", "prover-estimator", "evidence-majority", (1, 2), False, "honest", None),
    ("honest prover's payoff", "prover-estimator", "obfuscated-primality", (12, 16), True, "honest", None),
]  # fmt: skip
GAP_FAMILIES = ((4, 0.1, range(1, 9)), (32, 0.45, range(1, 5)))
"""(q, ε, depths), every point exact: q = 32 stops at d = 4, where the challenger's tree has 32^3
nodes."""
MALFORMED = "malformed"


def trials_for(quick: bool) -> int:
    return 100 if quick else 400


def planned(quick: bool) -> int:
    """Debates :func:`payoff_rows` plays (for a progress bar)."""
    return sum(len(_bobs(protocol, bobs, problem)) for _, protocol, problem, _, _, _, bobs in EXPERIMENTS) * trials_for(
        quick
    )


def _bobs(protocol: str, bobs: tuple[str, ...] | None, problem: str) -> list[str]:
    names = list(PROTOCOLS[protocol].strategies[Role.BOB]) if bobs is None else list(bobs)
    if problem == "evidence-majority":  # q = 34: Algorithm 1 would need 2^34 answer vectors
        names = [n for n in names if n != "honest"]
    return names


def _promise(protocol: str, instance: Instance, alice: str, covered: bool) -> str | None:
    """None when the theorem speaks about the row, else why not."""
    if protocol == "naive-recursive":
        return None if covered else "no promise against a bounded challenger (the point of Section 7)"
    if alice == "honest":
        D = instance.recursive_decomposition()
        rules = rules_for(instance)
        if not check(D, D.root(), D.depth, rules.epsilon, rules.rho).stable:  # type: ignore[union-attr]
            return "no promise: the decomposition is not (eps, 1/2)-stable here (Lemma A.5 needs it)"
        return None
    return None if covered else "no promise: Lemma A.4 bounds A against an indistinguishable estimator"


def payoff_rows(quick: bool, seed: int, count: Callable[[int], None] = lambda k: None) -> list[PayoffRow]:
    rows, done, trials = [], 0, trials_for(quick)
    for experiment, protocol, problem, sizes, truth, alice, bobs in EXPERIMENTS:
        spec = PROTOCOLS[protocol]
        size = sizes[0 if quick else 1]
        instance = make_instance(PROBLEMS[problem], size, truth, seed)
        for bob in _bobs(protocol, bobs, problem):
            r = run(spec, instance, spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob], trials, seed,
                    lambda k, start=done: count(start + k))  # fmt: skip
            done += trials
            x = r.extra
            unit = x.get("reward_unit", 1.0)
            why = _promise(protocol, instance, alice, x["payoff_bound_covers_bob"])
            lo, hi = x["payoff_ci"]
            bound = x["payoff_bound"]
            holds = None if why else bool(hi >= bound if x["payoff_bound_kind"] == "completeness" else lo <= bound)
            rows.append(PayoffRow(
                experiment, protocol, problem, size, r.truth, alice, bob, trials, x["payoff_mean"], (lo, hi),
                x["payoff_bound"], x["payoff_bound_kind"], unit, r.honest_win_rate, why or x["payoff_bound_statement"],
                holds,
            ))  # fmt: skip
    return rows


def _instance(width: int, depth: int, truth: bool, rng: np.random.Generator) -> tuple[Instance, FactorIntervals]:
    """A prime (truth) or a product of two primes whose factor intervals have the given depth."""
    bits = 4 + round(np.log2(width) * (depth - 0.5))  # ⌊√N⌋ ≈ 2^bits ≈ 16·q^(d-1/2)
    while True:
        if truth:
            p = random_prime(2 * bits, rng)
            factors: tuple[int, ...] = (p,)
        else:
            p, p2 = random_prime(bits, rng), random_prime(bits, rng)
            if p == p2:
                continue
            factors = (p, p2)
        D = FactorIntervals(int(np.prod(np.array(factors, dtype=object))), factors, width=width)
        if D.depth == depth:
            x = np.zeros(1, dtype=np.uint8)
            return Instance("obfuscated-primality", bits, truth, x, decomposition=D), D


def gap_points(seed: int) -> list[GapPoint]:
    """Δ against n for both parameter families, exactly."""
    rng = np.random.default_rng(seed)
    pe, nr = PROTOCOLS["prover-estimator"].strategies, PROTOCOLS["naive-recursive"].strategies
    points = []
    for width, epsilon, depths in GAP_FAMILIES:
        rules = Rules(epsilon, 0.5)
        for depth in depths:
            values = {}
            for truth, alice in ((True, "honest"), (False, "obfuscate")):
                instance, D = _instance(width, depth, truth, rng)
                seats = {role: Seat(instance, role, np.random.default_rng(0), None, rules) for role in Role}
                a = pe[Role.ALICE][alice].factory(seats[Role.ALICE])
                b = pe[Role.BOB]["omniscient"].factory(seats[Role.BOB])
                values[truth] = float(expected_rewards(D, a, b, rules).sum())
                if not truth:
                    naive_a = nr[Role.ALICE][alice].factory(seats[Role.ALICE])
                    naive_b = nr[Role.BOB]["honest"].factory(seats[Role.BOB])
                    if width ** max(depth - _decided_rounds(width), 0) > NAIVE_EXACT_NODES:
                        raise ValueError(f"naive recursion at q = {width}, d = {depth} is too large to enumerate")
                    caught = 1 - naive_recursive.win_probability(D, naive_a, naive_b)
            unit = rules.r ** (depth + 1)
            points.append(GapPoint(
                width, epsilon, depth, width**depth, values[True], values[False], values[True] - values[False],
                (1 - epsilon) * unit, caught,
            ))  # fmt: skip
    return points


def _decided_rounds(width: int) -> int:
    """K: in rounds k <= K the bounded challenger decides every subclaim (each spans LEAF·q^(k-1)
    <= budget/q candidates); above them it picks among the undecided ones at random, so its
    tree, which exact enumeration walks, has about q^(d-K) nodes."""
    rounds = 0
    while LEAF * width**rounds <= DIVISION_BUDGET // width:
        rounds += 1
    return rounds
