"""Prover-estimator soundness as the proof of Lemma A.4 needs it: B built against A's own
context-free proof, committed once and read by B and the verifier alike, garbage charged to its
sender, δ as a parameter with the bound in units of r^(d+1), and debates deeper than Python's
recursion limit."""

from __future__ import annotations

import numpy as np
import pytest

from debatekit.analysis import recursive
from debatekit.analysis.montecarlo import make_instance
from debatekit.analysis.stats import normal_ci
from debatekit.engine.summary import Summary
from debatekit.ledger import Role
from debatekit.machine.decomposition import Decomposition
from debatekit.players import estimator as est
from debatekit.players.base import Seat, Strategy
from debatekit.players.prover_estimator import Obfuscator
from debatekit.problems import PROBLEMS
from debatekit.protocols import naive_recursive as nr
from debatekit.protocols import prover_estimator as pe
from debatekit.protocols.proof import ProofTruth
from debatekit.protocols.registry import PROTOCOLS

STRATEGIES = PROTOCOLS["prover-estimator"].strategies
SEED = 9


def primality(truth: bool = False, size: int = 10):
    return make_instance(PROBLEMS["obfuscated-primality"], size, truth, 0)


def seat(instance, role: Role, opponent: Strategy | None, rules: pe.Rules | None = None) -> Seat:
    return Seat(instance, role, np.random.default_rng(0), None, rules, opponent)


def exact_against(instance, alice: Strategy, bob: str, rules: pe.Rules):
    """A's exact expected payoff against ``bob``, and Lemma A.4's bound for that B."""
    D = pe.decomposition_of(instance)
    a = alice.factory(seat(instance, Role.ALICE, STRATEGIES[Role.BOB][bob], rules))
    b = STRATEGIES[Role.BOB][bob].factory(seat(instance, Role.BOB, alice, rules))
    committed = est.committed_proof(instance, alice, rules)  # the proof B was trained on
    value = pe.expected_rewards(D, a, b, rules, committed).sum()
    delta = b.delta if isinstance(b, est.Indistinguishable) else 0.0
    truth = est.proof_truth(seat(instance, Role.BOB, alice, rules)).truth(D.root(), D.depth)
    p_right = truth if a.claim() == 1 else 1 - truth
    return value, rules.r ** (D.depth + 1) * p_right + (2 * D.depth + 1) * delta


@pytest.mark.parametrize("bob", ["omniscient", "honest"])
def test_bad_proof_is_held_to_the_bound_exactly(bob):
    """The issue's adversary (wrong claim, flipped proof, A^0 = -1 at a leaf B trusts) earned 1.0
    against estimators of the implicit proof; against estimators of her own proof her exact
    expected payoff is within r^(d+1)·P[A(x) = M_D(ũ)] + (2d+1)δ (Lemma A.4)."""
    instance, rules = primality(), pe.Rules(0.1, 0.5)
    value, bound = exact_against(instance, STRATEGIES[Role.ALICE]["bad-proof"], bob, rules)
    assert value <= bound + 1e-18
    if bob == "omniscient":
        assert value == 0.0  # δ = 0: every estimate is exact on her proof


def concluded(instance, alice: Strategy, bob: Strategy, debates: range, rules: pe.Rules | None = None):
    """Prover-estimator debates ``debates`` and the run's conclusions over them (the payoff bound)."""
    tally = recursive.simulate(recursive.PROVER_ESTIMATOR, instance, alice, bob, SEED, debates, rules=rules)
    played = Summary.of_tally(tally, instance.answer)
    return tally, recursive.conclusions(recursive.PROVER_ESTIMATOR, instance, alice, bob, played, rules).to_json()


def test_bad_proof_run_reports_payoff_within_bound():
    """Sampled debates through the runner: the payoff's normal interval (fixed seed) starts below
    the reported bound; against the truthful estimator every debate pays exactly 0."""
    instance = primality()
    alice = STRATEGIES[Role.ALICE]["bad-proof"]
    for bob in ("omniscient", "honest"):
        tally, bound = concluded(instance, alice, STRATEGIES[Role.BOB][bob], range(200))
        lo, _ = normal_ci(tally.rewarded.payoffs)
        assert lo <= bound["payoff_bound"], bob
        assert tally.forfeits == {Role.ALICE: 0, Role.BOB: 0}
    assert np.all(tally.rewarded.payoffs <= bound["payoff_bound"])


class PathAware(Obfuscator):
    """Remembers the leaf its debate reached and flips the proof bits there only: what a prover
    asked for ũ in context would do. A context-free copy has reached no leaf and gives the
    implicit proof."""

    reached: tuple[int, ...] = ()

    def direction(self, s: pe.Situation) -> int:
        if s.level == 0:
            self.reached = self.D.leaf(s.query)
            return -1
        return 0

    def recurse(self, s, subqueries, estimates, z) -> int:
        return max(range(len(estimates)), key=lambda i: estimates[i])

    def proof(self, leaves: tuple[int, ...]) -> np.ndarray:
        honest = super().proof(leaves)
        return np.array([1 - b if j in self.reached else b for j, b in zip(leaves, honest, strict=True)])


def test_a_path_aware_prover_gains_nothing():
    """Asked of the player that walked the path, the tailored bits pay A^0·(O - p_0) = 1 at the
    leaf; committed from a context-free copy (Figure 2, step 3b) she is held to that proof, u."""
    instance, rules = primality(), pe.Rules(0.1, 0.5)
    strategy = Strategy("path-aware", Role.ALICE, "tailors its proof to the leaf", PathAware)
    D = pe.decomposition_of(instance)
    bob = STRATEGIES[Role.BOB]["omniscient"].factory(seat(instance, Role.BOB, strategy, rules))
    stateful = pe.expected_rewards(D, PathAware(seat(instance, Role.ALICE, None)), bob, rules)
    assert stateful.sum() == pytest.approx(1.0)  # the hole step 3b closes
    value, bound = exact_against(instance, strategy, "omniscient", rules)
    assert value == 0.0 == bound
    tally = recursive.simulate(
        recursive.PROVER_ESTIMATOR, instance, strategy, STRATEGIES[Role.BOB]["omniscient"], SEED, range(50)
    )
    assert np.all(tally.rewarded.payoffs == 0.0)


class GarbageClaim(pe.HonestAlice):
    """Claims a list: unparseable, and unhashable where B's construction keys situations."""

    def __init__(self, seat: Seat):
        super().__init__(pe.decomposition_of(seat.instance), pe.rules_of(seat))

    def claim(self):
        return [1]


def test_garbage_is_charged_to_its_sender():
    """A's garbage while B is being built (Lemma A.4's B queries A) is A's forfeit, never B's."""
    instance = primality(truth=True)
    strategy = Strategy("garbage-claim", Role.ALICE, "claims a list", GarbageClaim)
    tally = recursive.simulate(
        recursive.PROVER_ESTIMATOR, instance, strategy, STRATEGIES[Role.BOB]["honest"], SEED, range(20)
    )
    assert tally.forfeits == {Role.ALICE: 20, Role.BOB: 0}
    assert np.all(tally.rewarded.payoffs <= 0)


def test_delta_is_a_parameter_and_the_bound_says_when_it_is_vacuous():
    """δ reaches Algorithm 1; the bound comes raw, in units of r^(d+1) and flagged vacuous when it
    is not below the honest prover's (1-ε) r^(d+1)."""
    instance = primality()
    alice, bob = STRATEGIES[Role.ALICE]["bad-proof"], STRATEGIES[Role.BOB]["honest"]
    coarse = pe.Rules(0.1, 0.5, 0.05)
    built = est.Indistinguishable(seat(instance, Role.BOB, alice, coarse))
    assert 0 <= built.delta < 0.05 and built.rules.delta == 0.05
    for rules, vacuous in ((coarse, True), (pe.Rules(0.1, 0.5), False)):
        _, x = concluded(instance, alice, bob, range(20), rules)
        unit = rules.r ** (x["depth"] + 1)
        assert x["delta"] == rules.delta_at(x["depth"])
        assert x["payoff_bound_units"] == pytest.approx(x["payoff_bound"] / unit)
        assert x["payoff_bound_vacuous"] is vacuous
        assert ("vacuous" in x["payoff_bound_note"]) is vacuous
        assert x["payoff_bound"] >= x["estimator_delta"] * (2 * x["depth"] + 1)


class WideAnd(Decomposition):
    """AND of q subclaims at every node, depth d, every leaf true (no proof bits): q^d leaves,
    never materialised."""

    def __init__(self, width: int, depth: int):
        self.width, self.depth = width, depth

    def root(self):
        return ()

    def split(self, query, level):
        return tuple((*query, i) for i in range(self.width))

    def combine(self, query, level, answers):
        return int(all(answers))

    def leaf(self, query):
        return ()

    def judge(self, query, bits):
        return 1.0

    def proof(self, j):
        raise IndexError(j)

    def truth(self, query, level):
        return 1.0


class Claimer:
    """Naive recursion's honest A on :class:`WideAnd`: every subclaim true."""

    def __init__(self, D):
        self.D = D

    def claim(self):
        return 1

    def decompose(self, level, query, claimed):
        return self.D.split(query, level), (1,) * self.D.width


def test_debates_deeper_than_the_recursion_limit():
    """q = 64, d = 8: 64 coins a round, 8 rounds, sampled and exact, for both recursive protocols."""
    D = WideAnd(64, 8)
    rules = pe.Rules(0.1, 0.5)
    alice, bob = pe.HonestAlice(D, rules), pe.TruthfulBob(ProofTruth(D, None))
    rngs = {role: np.random.default_rng(1) for role in Role}
    unit = rules.r ** (D.depth + 1)
    assert np.sum(pe.sampled(D, alice, bob, rules, rngs).rewards) == pytest.approx(unit)
    assert pe.expected_rewards(D, alice, bob, rules).sum() == pytest.approx(unit)
    assert nr.win_probability(D, Claimer(D), nr.Omniscient(ProofTruth(D, None))) == 1.0
