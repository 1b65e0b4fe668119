"""The prover-estimator paper's experiments, for the demo report (Sections 6-7, Theorem 6.1).

* Naive recursive debate against the obfuscating prover of Section 7, with bounded and unbounded
  challengers.
* Prover-estimator debate against the same prover: her mean payoff against Lemma A.4's bound.
* The honest prover's mean payoff against Lemma A.5's bound (1-ε)·r^(d+1), facing every estimator
  adversary, on the stable problem (Theorem 8.3's construction) where the lemma applies, and on
  the obfuscated problem, whose AND decomposition is not stable (no promise there).
* The obfuscator's win rate in naive recursion against every bounded challenger, per size b, on
  fresh instances (:func:`challenger_rates`): what the problem's default size is chosen by.
* The reward gap Δ = E[honest payoff] - E[obfuscator's payoff] against the depth d, exactly
  (:func:`gap_points`). Prover-estimator debate faces the truthful estimator (δ = 0), against which
  Δ = r^(d+1) (:func:`pe_payoffs`); naive recursion faces the bounded honest challenger and the
  uniformly random one, and Δ is the probability that the challenger walks to the false leaf
  (:func:`caught_probability`, a product along the one false path). Two parameter sets: the command
  line's q = 4, ε = 0.1, where r = ε/8 < 1/q and prover-estimator's gap, falling by r a level, stays
  below naive recursion's, which falls by at most 1/q; and q = 64, ε = 0.45, where r > 1/q (the
  regime of Theorem 6.1's q = O(c(8/ε)^c)) and it overtakes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.analysis.stats import wilson
from debatekit.ledger import Role
from debatekit.params import DEFAULTS, Settings
from debatekit.players.base import Seat
from debatekit.players.naive_recursive import Obfuscator
from debatekit.prob import Dist
from debatekit.problems import PROBLEMS
from debatekit.problems.obfuscated_primality import LEAF, FactorIntervals, random_prime
from debatekit.problems.registry import Instance
from debatekit.protocols.prover_estimator import Rules, decomposition_of
from debatekit.protocols.registry import PROTOCOLS


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
    reward_unit: float | None
    """r^(d+1) for prover-estimator debate (payoffs are reported in this unit too); None for naive
    recursion, whose payoffs are wins."""
    honest_win_rate: float
    promise: str
    """Why the theorem does or does not speak about this row."""
    holds: bool | None
    """The interval at the family-wise level (:data:`FAMILY`, Bonferroni over the rows) is
    consistent with the bound (None where the theorem promises nothing)."""
    bob_power: str
    """What B may compute (:func:`bob_power`): bounded, unbounded, or neither (a fixed rule)."""


@dataclass(frozen=True)
class GapPoint:
    width: int
    epsilon: float
    depth: int
    leaves: int
    """n = q^d, the leaves of the argument."""
    top_subclaims: int
    """Subclaims of the root about some candidate (the rest are padding above ⌊√N⌋)."""
    pe_honest: float
    pe_obfuscator: float
    pe_gap: float
    pe_gap_bound: float
    """Lemma A.5's floor less Lemma A.4's ceiling at δ = 0: (1-ε) r^(d+1)."""
    naive_gap: float
    """Against the bounded honest challenger."""
    naive_random_gap: float
    """Against the uniformly random challenger: q^-d."""


@dataclass(frozen=True)
class ChallengerRate:
    """The obfuscator's wins in naive recursion against one challenger at one size b."""

    size: int
    depth: int
    challenger: str
    debates: int
    wins: int
    win_ci: tuple[float, float]
    """Wilson's 95% interval for her win rate (the debates are independent: one per instance)."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.debates

    @property
    def obfuscation_wins(self) -> bool:
        """Her win rate is at least OBFUSCATION_WINS with 95% confidence."""
        return self.win_ci[0] >= OBFUSCATION_WINS


BOUNDED_B = "like for like: bounded B (2^10 operations)"
UNBOUNDED_B = "like for like: unbounded B"
BOUNDED_BOBS = {
    "naive-recursive": ("honest", "pollard-rho", "spot-check"),
    "prover-estimator": ("bounded", "bounded-rho"),
}
"""The B's that spend at most the problem's operation budget (2^10) a debate."""
UNBOUNDED_BOBS = {"naive-recursive": ("omniscient",), "prover-estimator": ("omniscient", "honest", "sampling")}
"""The B's that know the truth: naive recursion's omniscient challenger, prover-estimator's
truthful estimator (and its sampled mean) and Lemma A.4's (Algorithm 1 trained on the truth of A's proof on the one
instance played: on obfuscated-primality it puts 0 on the interval holding the factor, at every
level, so it has in effect factored N)."""


def bob_power(protocol: str, bob: str) -> str:
    """What ``bob`` may compute, for the tables: every table says which B is bounded."""
    if bob in BOUNDED_BOBS.get(protocol, ()):
        return "bounded (2^10 operations)"
    if bob in UNBOUNDED_BOBS.get(protocol, ()):
        return "unbounded"
    return "an adversary or a fixed rule"


EXPERIMENTS = [  # experiment, protocol, problem, (quick, full) size, truth, alice, bobs (None: every bob)
    # naive recursion at the problem's default b = 24; prover-estimator at b = 16, where Algorithm 1
    # trains about four times faster (depth 6 against 10)
    ("naive recursion vs obfuscation", "naive-recursive", "obfuscated-primality", (12, 24), False, "obfuscate", None),
    ("prover-estimator vs obfuscation", "prover-estimator", "obfuscated-primality", (12, 16), False, "obfuscate", None),
    ("prover-estimator vs obfuscation", "prover-estimator", "obfuscated-primality", (12, 16), False, "wrong-answer",
     ("honest", "omniscient")),
    ("honest prover's payoff", "prover-estimator", "evidence-majority", (1, 2), True, "honest", None),
    ("honest prover's payoff", "prover-estimator", "evidence-majority", (1, 2), False, "honest", None),
    ("honest prover's payoff", "prover-estimator", "obfuscated-primality", (12, 16), True, "honest", None),
    # Section 7 like for like, both protocols at one size: bounded B against bounded challengers
    # (2^10 operations, trial division or Pollard's rho), and unbounded against unbounded
    (BOUNDED_B, "naive-recursive", "obfuscated-primality", (12, 16), False, "obfuscate", ("honest", "pollard-rho")),
    (BOUNDED_B, "prover-estimator", "obfuscated-primality", (12, 16), False, "obfuscate", ("bounded", "bounded-rho")),
    (UNBOUNDED_B, "naive-recursive", "obfuscated-primality", (12, 16), False, "obfuscate", ("omniscient",)),
    (UNBOUNDED_B, "prover-estimator", "obfuscated-primality", (12, 16), False, "obfuscate", ("omniscient", "honest")),
]  # fmt: skip
GAP_FAMILIES = ((4, 0.1, range(1, 11)), (64, 0.45, range(1, 10)))
"""(q, ε, depths), every point exact. q = 64 stops at d = 9, where N's factors have 58 bits
(:func:`~debatekit.problems.obfuscated_primality.random_prime` draws at most 62)."""
BOUNDED_CHALLENGERS = ("honest", "spot-check", "pollard-rho", "random", "first")
"""Naive recursion's built-in challengers other than the unbounded ``omniscient`` (and ``malformed``)."""
CHALLENGER_SIZES = ((16, 24), (16, 20, 24, 28))
"""Sizes b at which :func:`challenger_rates` measures, (quick, full)."""
OBFUSCATION_WINS = 0.95
"""The win rate (Wilson lower end) at which obfuscation is said to win against a challenger."""


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


FAMILY = 0.95
"""The family-wise confidence of the payoff rows' checks."""


def payoff_rows(
    quick: bool, seed: int, count: Callable[[int], None] = lambda k: None, settings: Settings = DEFAULTS
) -> Iterator[PayoffRow]:
    """The Monte Carlo experiments' rows, each as it finishes, each problem and protocol playing its
    ``settings``. A row holds when its interval at the family-wise level ``FAMILY`` (Bonferroni over
    every row) is consistent with the bound: a bound met with equality in expectation (Lemma A.5
    against some B) would otherwise fail one row in 40 by chance alone."""
    done, trials = 0, trials_for(quick)
    level = 1 - (1 - FAMILY) / sum(len(_bobs(p, b, problem)) for _, p, problem, _, _, _, b in EXPERIMENTS)
    for experiment, protocol, problem, sizes, truth, alice, bobs in EXPERIMENTS:
        spec = settings.protocol(PROTOCOLS[protocol])
        size = sizes[0 if quick else 1]
        instance = make_instance(PROBLEMS[problem], size, truth, seed, settings.problem(PROBLEMS[problem]))
        for bob in _bobs(protocol, bobs, problem):
            r = run(spec, instance, spec.strategies[Role.ALICE][alice], spec.strategies[Role.BOB][bob], trials, seed,
                    lambda k, start=done: count(start + k))  # fmt: skip
            done += trials
            payoffs = r.payoffs
            assert payoffs is not None, f"{protocol} concludes no payoffs"
            bound = payoffs.conclusions.bound
            yield PayoffRow(
                experiment, protocol, problem, size, r.truth, alice, bob, trials, payoffs.mean, payoffs.ci,
                bound.value, bound.kind.value, payoffs.conclusions.unit, r.honest_win_rate,
                payoffs.why_not_promised() or bound.statement, payoffs.holds(level), bob_power(protocol, bob),
            )  # fmt: skip


def debates_for(quick: bool) -> int:
    """Debates per (size, challenger) in :func:`challenger_rates`: at least 73, the fewest whose
    Wilson interval can reach above OBFUSCATION_WINS = 0.95."""
    return 80 if quick else 200


def challenger_rates(
    sizes: tuple[int, ...],
    debates: int,
    seed: int,
    count: Callable[[int], None] = lambda k: None,
    settings: Settings = DEFAULTS,
    challengers: tuple[str, ...] = BOUNDED_CHALLENGERS,
) -> Iterator[ChallengerRate]:
    """The obfuscator against each challenger in naive recursion at each size b, each rate as it
    finishes: debate i plays on the composite instance of seed ``seed + i`` (the same instances for
    every challenger), so the debates are independent draws over instances and the challenger's coins."""
    problem, spec = PROBLEMS["obfuscated-primality"], settings.protocol(PROTOCOLS["naive-recursive"])
    done = 0
    obfuscate = spec.strategies[Role.ALICE]["obfuscate"]
    for size in sizes:
        instances = [make_instance(problem, size, False, seed + i, settings.problem(problem)) for i in range(debates)]
        for name in challengers:
            bob = spec.strategies[Role.BOB][name]
            wins = 0
            for i, instance in enumerate(instances):
                wins += int(run(spec, instance, obfuscate, bob, 1, seed + i).accept_rate == 1.0)
                done += 1
                count(done)
            depth = decomposition_of(instances[0]).depth
            yield ChallengerRate(size, depth, name, debates, wins, wilson(wins, debates))


def pe_payoffs(depth: int, rules: Rules) -> tuple[float, float]:
    """Prover-estimator debate's exact expected payoffs against the truthful estimator on
    obfuscated-primality: (honest A on a prime, the obfuscator on N = p·p'). The honest A gets
    the initial reward r^(d+1) (p_d = 1 = A(x)) and says A^k = 0 throughout (Lemma A.5, as
    |p_d - A(x)| ≤ ε). Against the obfuscator p_d = 0, so her initial reward is 0; every answer
    is deterministic, so the truthful estimator's conditionals are point masses on the correct
    answers, z^k is the correct answer vector, M_D(x, y^k, z^k) = g(ŷ^k) = p_k and round k pays
    0; in round 0 her proof bits are the implicit proof's, so O(ũ_S) = p_0 and it pays 0 too.
    Tests check both against the engine's exact enumeration."""
    return rules.r ** (depth + 1), 0.0


def caught_probability(instance: Instance, bob: Any) -> float:
    """P[the obfuscator loses] in naive recursion on obfuscated-primality with N = p·p', exactly.
    She claims N prime and every subclaim true, so exactly one subclaim per round is false (the
    interval holding p) and every other one is true, and below a true claim all her answers are
    right and she wins. So she loses iff ``bob`` picks the false subclaim in every round (then the
    leaf's divisions find p): the product along that one path of the probability of his move on
    it. ``bob`` must be a function of its arguments (its own state aside), as exact analysis asks."""
    D = decomposition_of(instance)
    alice = Obfuscator(Seat(instance, Role.ALICE, np.random.default_rng(0), None))
    level, query, claimed = D.depth, D.root(), alice.claim()
    mass = 1.0
    while level > 0:
        subqueries, answers = alice.decompose(level, query, claimed)
        false = [j for j, (y, a) in enumerate(zip(subqueries, answers, strict=True)) if D.truth(y, level - 1) != a]
        if len(false) != 1:
            raise ValueError(f"expected one false subclaim of {query}, found {len(false)}: is N = p·p'?")
        (j,) = false
        move = bob.challenge(level, query, claimed, subqueries, answers)
        mass *= float(move.prob(lambda i, j=j: i == j)) if isinstance(move, Dist) else float(move == j)
        level, query, claimed = level - 1, subqueries[j], answers[j]
    bits = tuple(int(b) for b in alice.proof(D.leaf(query)))
    return mass * (1 - D.judge(query, bits))


def _composite(width: int, depth: int, rng: np.random.Generator) -> tuple[Instance, FactorIntervals]:
    """N = p·p' for two random primes of log2(LEAF·q^d) bits, so ⌊√N⌋ lies in [LEAF·q^d/2, LEAF·q^d)
    and most of the argument's q^d leaves hold candidates; redrawn until the root's subclaim
    holding p holds no padding, so that every false claim on the path is a whole interval (where
    p sits in the last, partly padded one, a bounded challenger may decide it outright)."""
    bits = (LEAF * width**depth).bit_length() - 1
    while True:
        p, p2 = sorted((random_prime(bits, rng), random_prime(bits, rng)))
        if p == p2:
            continue
        D = FactorIntervals(p * p2, (p, p2), width=width)
        holder = next(y for y in D.split(D.root(), D.depth) if y[0] <= p < y[1])
        if D.depth == depth and holder[1] <= D.sqrt_n + 1:
            return Instance("obfuscated-primality", bits, False, np.zeros(1, dtype=np.uint8), decomposition=D), D


def gap_points(seed: int) -> list[GapPoint]:
    """Δ against d for both parameter families, exactly: :func:`pe_payoffs` and
    :func:`caught_probability` (the honest A wins every naive debate)."""
    rng = np.random.default_rng(seed)
    bobs = PROTOCOLS["naive-recursive"].strategies[Role.BOB]
    points = []
    for width, epsilon, depths in GAP_FAMILIES:
        rules = Rules(epsilon, 0.5)
        for depth in depths:
            instance, D = _composite(width, depth, rng)
            seat = Seat(instance, Role.BOB, np.random.default_rng(0), None)
            honest, obfuscator = pe_payoffs(depth, rules)
            live = sum(bool(D.candidates(y)) for y in D.split(D.root(), depth))
            points.append(GapPoint(
                width, epsilon, depth, width**depth, live, honest, obfuscator, honest - obfuscator,
                (1 - epsilon) * rules.r ** (depth + 1), caught_probability(instance, bobs["honest"].factory(seat)),
                caught_probability(instance, bobs["random"].factory(seat)),
            ))  # fmt: skip
    return points


def crossing(points: list[GapPoint], random: bool = False) -> int | None:
    """The least d from which prover-estimator's gap exceeds naive recursion's (against the bounded
    challenger, or the random one) at every larger depth of ``points`` (one family), or None."""
    found = None
    for g in sorted(points, key=lambda g: g.depth, reverse=True):
        if g.pe_gap <= (g.naive_random_gap if random else g.naive_gap):
            break
        found = g.depth
    return found
