"""Prover-estimator debate: Figure 2 of the prover-estimator debate paper (Theorem 6.1).

A (Alice) claims A(x); B (Bob) estimates p_d = P[L(x) = 1] and a trusted coin ẑ ~ p_d pays A
the initial reward r^(d+1)·1(ẑ = A(x)), with the reward ratio r = ε(1-ρ)/4. In round k = d..1, A
says whether B's p_k is over-, about right or under-estimated (A^k ∈ {-1, 0, +1}) and sends the
split y^k of the current query ŷ^k; B gives each answer's conditional probability B^k_i(z_<i),
the trusted coin draws z^k_i from it, and A earns r^k·A^k·(M_D(x, y^k, z^k) - p_k). A names a
subquery j to recurse on: ŷ^(k-1) = y^k_j, p_(k-1) = B^k_j. In round 0 the verifier asks A, with
no other context, for the proof bits ũ_S the leaf names, queries the human-judgement oracle once
on them, and A earns A^0·(O(ũ_S) - p_0). A's payoff is the sum; B's is its negative.

The verifier is the security boundary. Every message is parsed before use: a claim that is not
a bit, a direction outside {-1, 0, 1}, a split M_D is not defined on
(:meth:`~debatekit.machine.decomposition.Decomposition.valid_split`), an index outside [q) or a
proof bit that is not a bit loses for A; a probability that is not a finite number in [0, 1]
loses for B; so does a player that raises. Losing means the rest of the debate pays the sender
its worst: every later reward at its extreme (-r^k for A's forfeit, +r^k for B's), so a forfeit
is never better for its sender than any way of playing on.

The same rules serve play and exact analysis: randomness (the trusted coins, mixed moves) goes
through a :class:`Chance`, which either samples (:class:`Sampled`) or sums over outcomes with
their probabilities and memoises rounds by their situation (:class:`Exact`; strategies must then
be functions of their arguments, as Figure 2's are). Values are vectors of per-round rewards
(index 0 the initial reward, index 1 + d - k round k), so one pass yields the reward ledger.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from debatekit.engine.boundary import as_bit, as_index
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Decomposition, Query, check_stability_parameters
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.reader import word_width

PROBABILITY_BITS = 64
"""A probability is read as one float64."""


@dataclass(frozen=True)
class Rules:
    """Stability parameters (ε, ρ) of Definition 5.3; the reward ratio follows from them."""

    epsilon: float = 0.1
    rho: float = 0.5

    def __post_init__(self) -> None:
        check_stability_parameters(self.epsilon, self.rho)

    @property
    def r(self) -> float:
        """The reward ratio r = ε(1-ρ)/4 (Figure 2, initialisation step 1)."""
        return self.epsilon * (1 - self.rho) / 4


@dataclass(frozen=True)
class Situation:
    """The public state at the start of round ``level``: the query ŷ^k, B's p_k for it, A's claim
    A(x) and B's initial estimate p_d."""

    level: int
    query: Query
    p: float
    claim: int
    p_root: float


class Alice(Protocol):
    def claim(self) -> int:
        """A(x) ∈ {0, 1}."""

    def answer(self, level: int, query: Query) -> int:
        """A(x, y): her answer to a query (Definition 5.2); the tests of Algorithm 1 query it."""

    def direction(self, s: Situation) -> int | Dist:
        """A^k ∈ {-1, 0, 1}: p_k is over-estimated, about right, under-estimated."""

    def queries(self, s: Situation) -> tuple[Query, ...]:
        """y^k, the split of ŷ^k (rounds k ≥ 1)."""

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int | Dist:
        """j ∈ [q], the subquery to recurse on, having seen B's estimates and the coins z."""

    def proof(self, j: int) -> int:
        """ũ_j, asked with no other context (Figure 2, step 3b)."""


class Bob(Protocol):
    def initial(self) -> float:
        """p_d = B(x), the probability that L(x) = 1."""

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float | Dist:
        """B^k_i(x, y^k, z_<i): the probability that z_i = 1 (``i`` counts from 0 here)."""


class Chance(Protocol):
    """Where the debate's randomness goes: a trusted coin, or a player's mixed move."""

    def coin(self, p: float, then: Callable[[int], np.ndarray]) -> np.ndarray: ...

    def mixed(self, role: Role, move: Any, then: Callable[[Any], np.ndarray]) -> np.ndarray: ...

    def round(self, s: Situation, play: Callable[[], np.ndarray]) -> np.ndarray: ...


@dataclass
class Sampled:
    """One debate: coins from the verifier's generator, mixed moves from the mover's."""

    rngs: dict[Role, np.random.Generator]

    def coin(self, p: float, then: Callable[[int], np.ndarray]) -> np.ndarray:
        return then(int(self.rngs[Role.VERIFIER].random() < p))

    def mixed(self, role: Role, move: Any, then: Callable[[Any], np.ndarray]) -> np.ndarray:
        return then(move.sample(self.rngs[role]) if isinstance(move, Dist) else move)

    def round(self, s: Situation, play: Callable[[], np.ndarray]) -> np.ndarray:
        return play()


@dataclass
class Exact:
    """Expected values: every outcome weighted by its probability; rounds memoised."""

    memo: dict[Hashable, np.ndarray] = field(default_factory=dict)

    def coin(self, p: float, then: Callable[[int], np.ndarray]) -> np.ndarray:
        if p >= 1:
            return then(1)
        if p <= 0:
            return then(0)
        return p * then(1) + (1 - p) * then(0)

    def mixed(self, role: Role, move: Any, then: Callable[[Any], np.ndarray]) -> np.ndarray:
        if not isinstance(move, Dist):
            return then(move)
        return sum(float(w) * then(m) for m, w in move.items())  # type: ignore[return-value]

    def round(self, s: Situation, play: Callable[[], np.ndarray]) -> np.ndarray:
        if s not in self.memo:
            self.memo[s] = play()
        return self.memo[s]


@dataclass
class Record:
    """What one sampled debate left behind, beside the query ledger."""

    forfeit: Role | None = None
    reason: str = ""
    claim: int | None = None


def as_probability(value: Any) -> float | None:
    """A finite real in [0, 1], or None."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        return None
    value = float(value)
    return value if math.isfinite(value) and 0 <= value <= 1 else None


def as_direction(value: Any) -> int | None:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        return None
    return int(value) if value in (-1, 0, 1) else None


def ask(player: Any, role: Role, method: str, *args: Any) -> Any:
    """A player's message; a player that raises has sent garbage."""
    try:
        return getattr(player, method)(*args)
    except Exception as err:  # untrusted code: an LLM, a person, a user's strategy
        raise Malformed(role, f"{method} raised {type(err).__name__}: {err}") from err


def reward_scale(depth: int, rules: Rules) -> np.ndarray:
    """The most each entry of the reward vector can be worth: r^(d+1), r^d, ..., r^0 = 1."""
    r = rules.r
    return np.array([r ** (depth + 1)] + [r**k for k in range(depth, -1, -1)])


def forfeit_values(sender: Role, depth: int, rules: Rules, level: int | None) -> np.ndarray:
    """The rest of the debate at its worst for ``sender``, from round ``level`` down (and the
    initial reward when ``level`` is None): -r^k to A for her forfeit, +r^k for B's. A's initial
    reward is never negative, so her forfeit before it costs her nothing there."""
    scale = reward_scale(depth, rules)
    start = 0 if level is None else 1 + depth - level
    values = np.zeros(depth + 2)
    values[start:] = scale[start:] * (-1.0 if sender is Role.ALICE else 1.0)
    if level is None and sender is Role.ALICE:
        values[0] = 0.0
    return values


class Debate:
    """Figure 2 on one decomposition, between two players, under given rules."""

    def __init__(
        self,
        decomposition: Decomposition,
        alice: Alice,
        bob: Bob,
        rules: Rules,
        chance: Chance,
        ledger: Ledger | None = None,
        record: Record | None = None,
    ):
        self.d, self.q = decomposition.depth, decomposition.width
        self.D, self.alice, self.bob, self.rules, self.chance = decomposition, alice, bob, rules, chance
        self.ledger, self.record = ledger or Ledger(), record or Record()
        self.scale = reward_scale(self.d, rules)

    def index(self, level: int) -> int:
        return 1 + self.d - level

    def forfeit(self, bad: Malformed, level: int | None) -> np.ndarray:
        if self.record.forfeit is None:
            self.record.forfeit, self.record.reason = bad.sender, bad.reason
        return forfeit_values(bad.sender, self.d, self.rules, level)

    def ask(self, role: Role, method: str, *args: Any) -> Any:
        return ask(self.alice if role is Role.ALICE else self.bob, role, method, *args)

    def value(self) -> np.ndarray:
        """The per-round rewards to A: realised (Sampled) or expected (Exact)."""
        try:
            move = self.ask(Role.ALICE, "claim")
        except Malformed as bad:
            return self.forfeit(bad, None)
        return self.chance.mixed(Role.ALICE, move, self._claimed)

    def _claimed(self, sent: Any) -> np.ndarray:
        """B's p_d, the trusted coin ẑ ~ p_d and the initial reward r^(d+1)·1(ẑ = A(x))."""
        self.ledger.count_read(1)
        claim = as_bit(sent)
        if claim is None:
            return self.forfeit(Malformed(Role.ALICE, f"the claim A(x) = {sent!r} is not a bit"), None)
        self.record.claim = claim
        try:
            p_d = as_probability(self.ask(Role.BOB, "initial"))
            self.ledger.count_read(PROBABILITY_BITS)
            if p_d is None:
                raise Malformed(Role.BOB, "p_d is not a probability in [0, 1]")
        except Malformed as bad:
            return self.forfeit(bad, None)
        root = Situation(self.d, self.D.root(), p_d, claim, p_d)

        def initial(z_hat: int) -> np.ndarray:
            values = self.round(root).copy()  # memoised rounds are shared: never edit them
            values[0] += self.scale[0] * (z_hat == claim)
            return values

        return self.chance.coin(p_d, initial)

    def round(self, s: Situation) -> np.ndarray:
        return self.chance.round(s, lambda: self._round(s))

    def _direction(self, s: Situation) -> Any:
        return self.ask(Role.ALICE, "direction", s)

    def _round(self, s: Situation) -> np.ndarray:
        try:
            move = self._direction(s)
        except Malformed as bad:
            return self.forfeit(bad, s.level)
        return self.chance.mixed(Role.ALICE, move, lambda m: self._directed(s, m))

    def _directed(self, s: Situation, move: Any) -> np.ndarray:
        self.ledger.count_read(2)
        direction = as_direction(move)
        if direction is None:
            return self.forfeit(Malformed(Role.ALICE, f"direction {move!r} is not -1, 0 or 1"), s.level)
        if s.level == 0:
            return self._final(s, direction)
        try:
            subqueries = self.ask(Role.ALICE, "queries", s)
            if not self.D.valid_split(s.query, s.level, subqueries):
                raise Malformed(Role.ALICE, f"queries {subqueries!r:.80} are not a split of {s.query!r:.80}")
        except Malformed as bad:
            return self.forfeit(bad, s.level)
        return self._answers(s, direction, subqueries, (), ())

    def _answers(
        self, s: Situation, direction: int, ys: tuple[Query, ...], z: tuple[int, ...], estimates: tuple[float, ...]
    ) -> np.ndarray:
        """Draw z_i from B's conditional probabilities, one at a time (Figure 2, step 4)."""
        if len(z) == self.q:
            return self._settle(s, direction, ys, z, estimates)
        try:
            move = self.ask(Role.BOB, "conditional", s, ys, len(z), z)
        except Malformed as bad:
            return self.forfeit(bad, s.level)

        def estimated(sent: Any) -> np.ndarray:
            self.ledger.count_read(PROBABILITY_BITS)
            b = as_probability(sent)
            if b is None:
                return self.forfeit(Malformed(Role.BOB, f"B^k_{len(z) + 1} = {sent!r} is not a probability"), s.level)
            return self.chance.coin(b, lambda zi: self._answers(s, direction, ys, (*z, zi), (*estimates, b)))

        return self.chance.mixed(Role.BOB, move, estimated)

    def _settle(
        self, s: Situation, direction: int, ys: tuple[Query, ...], z: tuple[int, ...], estimates: tuple[float, ...]
    ) -> np.ndarray:
        """Round k's reward r^k·A^k·(M_D - p_k), then A's choice of subquery (steps 5-7)."""
        reward = np.zeros(self.d + 2)
        reward[self.index(s.level)] = (
            self.scale[self.index(s.level)] * direction * (self.D.combine(s.query, s.level, z) - s.p)
        )
        try:
            move = self.ask(Role.ALICE, "recurse", s, ys, estimates, z)
        except Malformed as bad:
            return reward + self.forfeit(bad, s.level - 1)

        def chosen(sent: Any) -> np.ndarray:
            self.ledger.count_read(word_width(self.q))
            j = as_index(sent, self.q)
            if j is None:
                return reward + self.forfeit(
                    Malformed(Role.ALICE, f"recursion index {sent!r} is not in [0, {self.q})"), s.level - 1
                )
            return reward + self.round(Situation(s.level - 1, ys[j], estimates[j], s.claim, s.p_root))

        return self.chance.mixed(Role.ALICE, move, chosen)

    def _final(self, s: Situation, direction: int) -> np.ndarray:
        """Round 0: A's proof bits with no context, one oracle query, A^0·(O(ũ_S) - p_0)."""
        try:
            bits = []
            for j in self.D.leaf(s.query):
                bit = as_bit(self.ask(Role.ALICE, "proof", j))
                self.ledger.count_read(1)
                if bit is None:
                    raise Malformed(Role.ALICE, f"proof bit {j} is not a bit")
                bits.append(bit)
        except Malformed as bad:
            return self.forfeit(bad, 0)
        p_true = self.D.judge(s.query, tuple(bits))
        self.ledger.count_queries(Role.VERIFIER)
        final = self.index(0)

        def judged(o: int) -> np.ndarray:
            reward = np.zeros(self.d + 2)
            reward[final] = direction * (o - s.p)
            return reward

        return self.chance.coin(p_true, judged)


def decomposition_of(instance: Instance) -> Decomposition:
    found = instance.recursive_decomposition()
    if found is None:
        raise ValueError(f"problem {instance.problem} has no recursive decomposition")
    return found


def rules_for(instance: Instance) -> Rules:
    """ε from the decomposition when it was built for one (Theorem 8.3), else 0.1; ρ = 1/2 as in
    Theorem 6.1."""
    epsilon = getattr(decomposition_of(instance), "epsilon", None)
    return Rules(epsilon if epsilon is not None else 0.1, 0.5)


def rules_of(seat: Any) -> Rules:
    """The rules a player's seat carries, else the instance's (:func:`rules_for`)."""
    return seat.rules if isinstance(seat.rules, Rules) else rules_for(seat.instance)


def expected_rewards(decomposition: Decomposition, alice: Alice, bob: Bob, rules: Rules) -> np.ndarray:
    """A's exact expected reward per round (index 0 initial, 1 + d - k round k), by summing over
    every trusted coin and mixed move (strategies must be functions of their arguments)."""
    return Debate(decomposition, alice, bob, rules, Exact()).value()


# -- honest A (Lemma A.5) and the truthful estimator ---------------------------------------------


class HonestAlice:
    """Lemma A.5: claim L(x); if |p_d - A(x)| ≤ ε say A^k = 0 throughout; else the correct split
    in every round, A^k by rule (13) from the correct answer g, and recurse on the subquery whose
    estimate is furthest from its correct answer. Proof bits are the implicit proof's. Knowing
    every correct answer is Definition 5.2's A-provability."""

    def __init__(self, decomposition: Decomposition, rules: Rules):
        self.D, self.epsilon = decomposition, rules.epsilon

    def claim(self) -> int:
        return int(self.D.truth(self.D.root(), self.D.depth) >= 0.5)

    def answer(self, level: int, query: Query) -> int:
        return int(self.D.truth(query, level) >= 0.5)

    def direction(self, s: Situation) -> int:
        if abs(s.p_root - s.claim) <= self.epsilon:
            return 0
        gap = self.D.truth(s.query, s.level) - s.p
        return 1 if gap > self.epsilon else -1 if gap < -self.epsilon else 0

    def queries(self, s: Situation) -> tuple[Query, ...]:
        return self.D.split(s.query, s.level)

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int:
        errors = [abs(b - self.D.truth(y, s.level - 1)) for b, y in zip(estimates, subqueries, strict=True)]
        return int(np.argmax(errors))

    def proof(self, j: int) -> int:
        return self.D.proof(j)


class TruthfulBob:
    """The unbounded estimator: the correct conditional probabilities g (the g_k of Lemma A.4)."""

    def __init__(self, decomposition: Decomposition):
        self.D = decomposition

    def initial(self) -> float:
        return self.D.truth(self.D.root(), self.D.depth)

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return self.D.conditional(s.query, s.level, i, prefix)
