"""Strategies for prover-estimator debate (Figure 2): the honest prover of Lemma A.5, the
estimators for B and the adversaries of each role.

Alice's adversaries:

* ``obfuscate``: the obfuscating prover of Section 7. She claims the wrong answer and stands by it
  everywhere, answering every query with her claim; she runs rule (13) against her own answers
  and recurses where B's estimate is furthest from them. She knows no more than her claim, so her
  choices carry no information about where the flaw is. Her proof bits are the implicit proof's
  (for the built-in problems each costs her one division or one step).
* ``wrong-answer``: the wrong claim A(x), then honest play.
* ``random-direction``: honest claim and split, A^k and j uniformly at random (mixed moves).
* ``bad-proof``: the wrong claim, silent (A^k = 0) until round 0, recursion to the subclaim B
  believes most, every proof bit flipped and A^0 = -1: the leaf she reaches is false on her own
  proof, so an estimator of the implicit proof u pays her A^0·(O(ũ_S) - p_0) = 1.
* ``malformed``: garbage in every message.

Bob's estimators: ``honest`` (Algorithm 1 against the committed A, the estimator of Lemma A.4:
see :mod:`debatekit.players.estimator`; trained on the truth of her proof on the one instance, so
unbounded in effect), ``omniscient`` (the truthful estimator: the correct conditional probabilities
on A's committed proof ũ, :class:`ProofTruth`; unbounded), ``bounded`` and ``bounded-rho`` (naive
recursion's challenger budget, :mod:`debatekit.players.bounded_estimator`), ``sampling``
(the mean of R samples of them), and the adversaries ``constant`` (1/2 everywhere), ``inverted``
(1 - the truth), ``shifted`` (the truth moved ε towards 1/2, where rule (13) says nothing) and
``malformed``.
B reads A's committed proof (:func:`~debatekit.players.estimator.proof_truth`).

Declared metadata (:class:`~debatekit.players.base.Strategy`): A's ``honest`` is ``honest``
(Lemma A.5's completeness covers her), B's ``honest`` is ``honest`` (Lemma A.4's estimator, with
the δ it achieves) and B's ``omniscient`` is ``truthful`` (δ = 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.machine.decomposition import Query
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.players.bounded_estimator import bounded, bounded_rho
from debatekit.players.count_estimator import CountEstimator
from debatekit.players.estimator import MAX_WIDTH, Indistinguishable, proof_truth
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.protocols.prover_estimator import (
    HonestAlice,
    Situation,
    TruthfulBob,
    decomposition_of,
    rules_of,
)

SAMPLES = 16
"""R, the samples behind each estimate of the ``sampling`` estimator."""


def honest_alice(seat: Seat) -> HonestAlice:
    return HonestAlice(decomposition_of(seat.instance), rules_of(seat))


class Obfuscator(HonestAlice):
    """Section 7's prover: the wrong claim, defended with her own answers throughout."""

    def __init__(self, seat: Seat):
        super().__init__(decomposition_of(seat.instance), rules_of(seat))
        self.lie = 1 - super().claim()

    def claim(self) -> int:
        return self.lie

    def answer(self, level: int, query: Query) -> int:
        return self.lie

    def direction(self, s: Situation) -> int:
        if abs(s.p_root - s.claim) <= self.epsilon:
            return 0
        gap = self.lie - s.p
        return 1 if gap > self.epsilon else -1 if gap < -self.epsilon else 0

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int:
        return max(range(len(estimates)), key=lambda i: abs(estimates[i] - self.lie))


class WrongAnswer(HonestAlice):
    """The wrong claim A(x) = 1 - L(x), then Lemma A.5's play."""

    def __init__(self, seat: Seat):
        super().__init__(decomposition_of(seat.instance), rules_of(seat))

    def claim(self) -> int:
        return 1 - super().claim()


class RandomDirection(HonestAlice):
    """Honest claim and split; A^k and the recursion index uniformly at random (mixed)."""

    def __init__(self, seat: Seat):
        super().__init__(decomposition_of(seat.instance), rules_of(seat))

    def direction(self, s: Situation) -> Dist:
        return Dist.uniform([-1, 0, 1])

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> Dist:
        return Dist.uniform(list(range(len(subqueries))))


GARBAGE: tuple[Any, ...] = (2, None, float("nan"), "1", -7, (), 1.5)


class BadProof(Obfuscator):
    """The wrong claim, A^k = 0 until round 0 and A^0 = -1 there, recursion to the subclaim with
    the highest estimate, and the complement of the implicit proof as her proof bits."""

    def direction(self, s: Situation) -> int:
        return -1 if s.level == 0 else 0

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int:
        return max(range(len(estimates)), key=lambda i: estimates[i])

    def proof(self, leaves: tuple[int, ...]) -> np.ndarray:
        return 1 - super().proof(leaves)


class MalformedAlice:
    """Garbage in every message, chosen by position (no hidden coins)."""

    def __init__(self, seat: Seat):
        self.calls = 0

    def _junk(self) -> Any:
        self.calls += 1
        return GARBAGE[self.calls % len(GARBAGE)]

    def claim(self) -> Any:
        return 1

    def answer(self, level: int, query: Query) -> Any:
        return self._junk()

    def direction(self, s: Situation) -> Any:
        return self._junk()

    def queries(self, s: Situation) -> Any:
        return self._junk()

    def recurse(self, s: Situation, subqueries: Any, estimates: Any, z: Any) -> Any:
        return self._junk()

    def proof(self, leaves: tuple[int, ...]) -> Any:
        return self._junk()


def truthful_bob(seat: Seat) -> TruthfulBob:
    return TruthfulBob(proof_truth(seat))


class Sampling(TruthfulBob):
    """The mean of R = SAMPLES draws of the correct answer (B with sampled access to the truth)."""

    def __init__(self, seat: Seat):
        super().__init__(proof_truth(seat))
        self.rng = seat.rng

    def _mean(self, p: float) -> float:
        return float(self.rng.binomial(SAMPLES, p)) / SAMPLES

    def initial(self) -> float:
        return self._mean(super().initial())

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return self._mean(super().conditional(s, subqueries, i, prefix))


class Constant:
    """1/2 for every estimate."""

    def __init__(self, seat: Seat):
        pass

    def initial(self) -> float:
        return 0.5

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return 0.5


class Inverted(TruthfulBob):
    """1 - the correct probability, everywhere."""

    def __init__(self, seat: Seat):
        super().__init__(proof_truth(seat))

    def initial(self) -> float:
        return 1 - super().initial()

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return 1 - super().conditional(s, subqueries, i, prefix)


class Shifted(TruthfulBob):
    """The correct probability moved ε towards 1/2: as wrong as possible while rule (13) stays
    silent (|g - p| > ε is needed for A^k ≠ 0)."""

    def __init__(self, seat: Seat):
        super().__init__(proof_truth(seat))
        self.epsilon = rules_of(seat).epsilon

    def _shift(self, p: float) -> float:
        return min(p + self.epsilon, 0.5) if p < 0.5 else max(p - self.epsilon, 0.5)

    def initial(self) -> float:
        return self._shift(super().initial())

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return self._shift(super().conditional(s, subqueries, i, prefix))


class MalformedBob:
    """NaN, -0.5, 2, None, "0.5" by position."""

    JUNK: tuple[Any, ...] = (float("nan"), -0.5, 2, None, "0.5", float("inf"))

    def __init__(self, seat: Seat):
        self.calls = 0

    def _junk(self) -> Any:
        self.calls += 1
        return self.JUNK[self.calls % len(self.JUNK)]

    def initial(self) -> Any:
        return self._junk()

    def conditional(self, s: Situation, subqueries: Any, i: int, prefix: Any) -> Any:
        return self._junk()


def _too_wide(instance: Instance) -> str | None:
    D = decomposition_of(instance)
    q = D.width
    if q > MAX_WIDTH and D.statistic is None:  # else B ranges over the counts M_D reads
        return f"Algorithm 1 needs all 2^q answer vectors and q = {q} > {MAX_WIDTH}; try --bob omniscient or sampling"
    return None


def estimator(seat: Seat) -> Indistinguishable:
    """The trained B for this seat's instance, committed A and rules, built on first use and kept
    with the instance: every debate of a run plays the same B (its construction draws nothing
    from the debate's seed, :data:`~debatekit.players.estimator.PROOF_SEED`). Over the counts M_D reads
    (:class:`~debatekit.players.count_estimator.CountEstimator`) where the decomposition exposes
    them, else over all 2^q answer vectors."""
    name = seat.opponent.name if seat.opponent else ""
    kind = Indistinguishable if decomposition_of(seat.instance).statistic is None else CountEstimator
    return seat.instance.memo(("indistinguishable estimator", name, rules_of(seat)), lambda: kind(seat))


STRATEGIES: dict[Role, dict[str, Strategy]] = {
    Role.ALICE: by_name(
        Strategy(
            "honest",
            Role.ALICE,
            "Lemma A.5: claim L(x), rule (13), recurse on B's worst estimate",
            honest_alice,
            honest=True,
        ),
        Strategy("obfuscate", Role.ALICE, "Section 7: the wrong claim, every subclaim answered alike", Obfuscator),
        Strategy("wrong-answer", Role.ALICE, "claim 1 - L(x), then honest play", WrongAnswer),
        Strategy("random-direction", Role.ALICE, "honest claim; A^k and j uniformly at random", RandomDirection),
        Strategy("bad-proof", Role.ALICE, "the wrong claim, flipped proof bits, A^0 = -1 at a leaf B trusts", BadProof),
        Strategy("malformed", Role.ALICE, "garbage messages", MalformedAlice),
    ),
    Role.BOB: by_name(
        Strategy(
            "honest",
            Role.BOB,
            "Algorithm 1 against the committed A (Lemma A.4's estimator)",
            estimator,
            _too_wide,
            honest=True,
        ),
        Strategy("omniscient", Role.BOB, "the true conditionals on A's proof (unbounded)", truthful_bob, truthful=True),
        Strategy("bounded", Role.BOB, "2^10 operations on trial division (naive honest)", bounded),
        Strategy("bounded-rho", Role.BOB, "2^10 operations on Pollard's rho (naive pollard-rho)", bounded_rho),
        Strategy("sampling", Role.BOB, f"the mean of {SAMPLES} samples of the correct answer", Sampling),
        Strategy("constant", Role.BOB, "1/2 everywhere", Constant),
        Strategy("inverted", Role.BOB, "1 - the correct probability", Inverted),
        Strategy("shifted", Role.BOB, "the correct probability moved epsilon towards 1/2", Shifted),
        Strategy("malformed", Role.BOB, "NaN, negative, > 1, None, strings", MalformedBob),
    ),
}
