"""Prover-estimator debate: Figure 2 of the prover-estimator debate paper (Theorem 6.1).

A (Alice) claims A(x); B (Bob) estimates p_d = P[L(x) = 1] and a trusted coin ẑ ~ p_d pays A
the initial reward r^(d+1)·1(ẑ = A(x)), with the reward ratio r = ε(1-ρ)/4. In round k = d..1, A
says whether B's p_k is over-, about right or under-estimated (A^k ∈ {-1, 0, +1}) and sends the
split y^k of the current query ŷ^k; B gives each answer's conditional probability B^k_i(z_<i),
the trusted coin draws z^k_i from it, and A earns r^k·A^k·(M_D(x, y^k, z^k) - p_k). A names a
subquery j to recurse on: ŷ^(k-1) = y^k_j, p_(k-1) = B^k_j. In round 0 the verifier asks A, with
no other context, for the proof bits ũ_S the leaf names, queries the human-judgement oracle once
on them, and A earns A^0·(O(ũ_S) - p_0). A's payoff is the sum; B's is its negative.

A's proof is committed once, context-free (step 3b, :class:`~debatekit.protocols.proof.CommittedProof`);
B's training and round 0 read the same bits, whose truth is :class:`~debatekit.protocols.proof.ProofTruth`;
the truthful estimator (:class:`TruthfulBob`) plays it.

The rules are stated once, as :mod:`debatekit.engine.nodes` (:func:`debate`): each message a
:class:`~debatekit.engine.nodes.Move` asked by a typed call of the player's method and committed by
the parsers of :mod:`~debatekit.protocols.recursive_engine` (``commit``), with ``lose`` paying
the forfeit; the trusted coins ẑ and z^k_i :meth:`~debatekit.engine.nodes.Chance.coin`; each
round's reward :class:`~debatekit.engine.nodes.Paid`; round 0's oracle query a
:class:`~debatekit.engine.nodes.Judge` ending in a :class:`~debatekit.engine.nodes.Payoff`.
A claim that is not a bit,
a direction outside {-1, 0, 1}, a split that is not plain data
(:func:`~debatekit.engine.boundary.commit_plain`) M_D is defined on
(:meth:`~debatekit.machine.decomposition.Decomposition.valid_split`), an index outside [q) or a
proof bit that is not a bit loses for A; a probability that is not a finite number in [0, 1]
loses for B; so does a player that raises, or sends a mixed move whose weights are not a
distribution. Players see only parsed data: the situation is an immutable tuple, splits are
rebuilt tuples, estimates and coins tuples of floats and ints. Losing means the rest of the
debate pays the sender its worst: every later reward at its extreme (-r^k for A's forfeit, +r^k
for B's), so a forfeit is never better for its sender than any way of playing on.

The engine's interpreters read the same nodes: :func:`~debatekit.engine.play.play` plays one
debate (:func:`sampled`, and :func:`debatekit.analysis.recursive.simulate` for a run),
:func:`~debatekit.engine.record.walked` replays and resumes it, and
:func:`~debatekit.analysis.exact.expectation` sums every outcome with its probability, memoising
rounds on their situation (:func:`expected_rewards`; strategies must then be functions of their
arguments, as Figure 2's are). Payoffs are vectors of per-round rewards (index 0 the initial
reward, index 1 + d - k round k), so one pass yields the reward ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from debatekit.engine.boundary import commit_probability, plain_int, safe_repr
from debatekit.engine.nodes import Chance, Judge, Move, Node, Paid, Payoff
from debatekit.engine.nodes import Query as Asked
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Decomposition, LeafOracle, Query, check_stability_parameters
from debatekit.oracle import Oracle
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.protocols.proof import CommittedProof, ProofTruth, implicit_proof, proof_move
from debatekit.protocols.recursive_engine import Seen, bit_of, commit_of, index_of, split_of
from debatekit.reader import Reader, word_width

PROBABILITY_BITS = 64
"""A probability is read as one float64."""


DEFAULT_DELTA = 1e-15
"""δ asked of Algorithm 1 by default: the least δ float64 resolves, so that Lemma A.4's slack
(2d+2)δ (:func:`soundness_slack`) stays below the honest floor (1-ε)·r^(d+1) to the greatest depth
affordable. At the default ε = 0.1, ρ = 1/2 (r = 0.0125) that is d ≤ 6: at d = 6 (parity's and
obfuscated-primality's b = 16) the slack is 14·1e-15 = 1.4e-14 against the floor 4.29e-14
(r^7 = 4.77e-14); at d = 7 the floor is 5.4e-16, below any slack float64 can resolve, and the bound
is reported vacuous (``no promise``). The old 1e-9 gave 1.4e-8 at d = 6, 2.9·10^5 floors.

Cost (measured, ``Indistinguishable`` trained on one instance, two shared cores): Algorithm 1's
step bound is O(|Z|/δ²), but on a point mass the correct answers are vertices of the simplex and
its projections approach them geometrically, so steps grow with log(1/δ): obfuscated-primality
b = 16 (d = 6, q = 4) against ``obfuscate``, 1562 steps at δ = 1e-9, 2070 at 1e-12, 2574 at 1e-15
(9-10 s each); parity b = 64 (d = 6, q = 2), 198 steps at 1e-9 and 318 at 1e-15 (0.6 s). At
δ = 1e-16 the advantage is below float64's rounding of probabilities near 1: Algorithm 1 never
reaches it (advantage 2.5e-3 after its 20,000-step budget, 380 s at b = 12), so 1e-15 is the floor."""


COARSE_DELTA = 1e-9
"""The default δ where the bound is vacuous at any δ (:meth:`Rules.delta_at`): the earlier default,
which Algorithm 1 reaches at every built-in size."""


def soundness_slack(depth: int, delta: float) -> float:
    """(2d+2)·δ: what Lemma A.4 adds to r^(d+1)·P[A(x) = L(x)] against an estimator whose rounds
    are each δ-indistinguishable from the truth.

    Departure: the paper states (2d+1)δ; its proof sums to (2d+2)δ. The proof bounds the initial
    reward by r^(d+1)·P + δ (eq. 5), and each round's reward by eq. 11, E[r_k] < 2δ: one δ from the
    round's own indistinguishability (eq. 6, h_k against g_k) and one from the test f_(k+1) on the
    round above (eq. 8-9; for k = 0, eq. 10). "Summing over the d rounds" counts k = 1..d, but A is
    paid in d+1 rounds, k = d..0 (Figure 2: R = Σ_(k=0..d) r_k). Round 0 draws no coin from B
    (O(ũ_S) is the verifier's query on A's proof bits, so E_(h_0) = E_(g_0) and eq. 6 costs
    nothing there), which leaves E[r_0] < δ by eq. 10 alone. So the total is δ (eq. 5) + 2δ·d
    (rounds d..1) + δ (round 0) = (2d+2)δ; reading eq. 11 literally at k = 0 as well would give
    (2d+3)δ. Theorem 6.1's δ = η/(2d+1) then yields η(2d+2)/(2d+1), not η."""
    return (2 * depth + 2) * delta


@dataclass(frozen=True)
class Rules:
    """Figure 2's parameters: the stability parameters (ε, ρ) of Definition 5.3, which fix the
    reward ratio r = ε(1-ρ)/4, and δ, the indistinguishability Lemma A.4's estimator is built to
    (Algorithm 1's accuracy; the soundness bound carries (2d+2)δ, :func:`soundness_slack`)."""

    epsilon: float = 0.1
    rho: float = 0.5
    delta: float = DEFAULT_DELTA

    def __post_init__(self) -> None:
        check_stability_parameters(self.epsilon, self.rho)
        if not 0 < self.delta <= 2:  # NaN fails too
            raise ValueError(f"delta must satisfy 0 < delta <= 2 (Algorithm 1's accuracy), got {self.delta}")

    @property
    def r(self) -> float:
        """The reward ratio r = ε(1-ρ)/4 (Figure 2, initialisation step 1)."""
        return self.epsilon * (1 - self.rho) / 4

    def delta_at(self, depth: int) -> float:
        """The δ Algorithm 1 is asked for at depth d. A δ given with ``-P`` is kept. The default
        (:data:`DEFAULT_DELTA`) asks for the coarsest of :data:`COARSE_DELTA` and DEFAULT_DELTA
        whose slack (2d+2)δ is below the honest floor (1-ε)·r^(d+1), so the bound is informative
        at the least cost (evidence-majority's d = 2: 1e-9; obfuscated-primality's b = 12 to 16,
        d = 4 to 6: 1e-15), and COARSE_DELTA where neither is (d ≥ 7 at the default ε, ρ): there
        the bound is vacuous whatever δ, and at 1e-15 Algorithm 1 stops at its step budget short
        of δ, its estimates spreading B's coins over more situations than B trains on (3^8 at
        obfuscated-primality's default b = 24, d = 10, against 4096)."""
        if self.delta != DEFAULT_DELTA:
            return self.delta
        floor = (1 - self.epsilon) * self.r ** (depth + 1)
        return next((d for d in (COARSE_DELTA, DEFAULT_DELTA) if soundness_slack(depth, d) < floor), COARSE_DELTA)


class Situation(NamedTuple):
    """The public state at the start of round ``level``: the query ŷ^k, B's p_k for it, A's claim
    A(x) and B's initial estimate p_d. A tuple, so a player it is shown to cannot write into the
    verifier's copy (a frozen dataclass yields to ``object.__setattr__``)."""

    level: int
    query: Query
    p: float
    claim: int
    p_root: float


class Alice(Protocol):
    def claim(self) -> int | Dist:
        """A(x) ∈ {0, 1}."""

    def answer(self, level: int, query: Query) -> int:
        """A(x, y): her answer to a query (Definition 5.2); the tests of Algorithm 1 query it."""

    def direction(self, s: Situation) -> int | Dist:
        """A^k ∈ {-1, 0, 1}: p_k is over-estimated, about right, under-estimated."""

    def queries(self, s: Situation) -> tuple[Query, ...]:
        """y^k, the split of ŷ^k (rounds k ≥ 1), as plain data: ints, strings and tuples of them."""

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int | Dist:
        """j ∈ [q], the subquery to recurse on, having seen B's estimates and the coins z."""

    def proof(self, leaves: tuple[int, ...]) -> Any:
        """ũ at the proof positions ``leaves`` (Figure 2, step 3b): a sequence of as many bits
        (a uint8 array, say), asked of a context-free copy once per position (:class:`CommittedProof`)."""


class Bob(Protocol):
    def initial(self) -> float | Dist:
        """p_d = B(x), the probability that L(x) = 1."""

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float | Dist:
        """B^k_i(x, y^k, z_<i): the probability that z_i = 1 (``i`` counts from 0 here)."""


def as_direction(value: Any) -> int | None:
    """A^k ∈ {-1, 0, 1} as a plain int (bools excluded), or None."""
    if type(value) is bool or type(value) is np.bool_:
        return None
    number = plain_int(value)
    return number if number in (-1, 0, 1) else None


def direction_of(sent: Any) -> int:
    """A's A^k, else her forfeit."""
    direction = as_direction(sent)
    if direction is None:
        raise Malformed(Role.ALICE, f"direction {safe_repr(sent)} is not -1, 0 or 1")
    return direction


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


def debate(
    decomposition: Decomposition, rules: Rules, reader: Reader, prover: CommittedProof | None, seen: Seen | None = None
) -> Node:
    """Figure 2 on one decomposition under ``rules``, as nodes (module docstring). ``prover`` is A's
    committed proof that round 0 reads (step 3b, :class:`CommittedProof`; None where its bits come
    from a record: replay); ``reader`` counts the proof bits read; ``seen`` notes A's claim. Each
    step is built when the one before ends (closures), so the depth d and width q are bounded by
    nothing but the interpreters' loops. Payoffs are vectors of per-round rewards (index 0 the
    initial reward, index 1 + d - k round k); a round's direction is keyed on its situation, whose
    rewards from there on depend on nothing else."""
    D, d, q = decomposition, decomposition.depth, decomposition.width
    scale = reward_scale(d, rules)

    def loser(level: int | None) -> Callable[[Role, str], Payoff]:
        """A forfeit from round ``level`` down (None: before the initial reward): the rest at its worst."""
        return lambda sender, reason: Payoff(tuple(forfeit_values(sender, d, rules, level).tolist()), sender, reason)

    def paid(level: int | None, value: float) -> tuple[float, ...]:
        """``value`` paid at round ``level`` (None: the initial reward)."""
        rewards = [0.0] * (d + 2)
        rewards[0 if level is None else 1 + d - level] = float(value)
        return tuple(rewards)

    def claimed(claim: int) -> Node:
        """Initialisation: B's p_d, the trusted coin ẑ ~ p_d (drawn before the rounds) and the
        initial reward r^(d+1)·1(ẑ = A(x))."""
        if seen is not None:
            seen.claim = claim

        def coin(p_d: float) -> Node:
            root = Situation(d, D.root(), p_d, claim, p_d)
            return Chance.coin("z_hat", p_d, lambda z_hat: Paid(paid(None, scale[0] * (z_hat == claim)), round_(root)))

        return Move(
            Role.BOB, lambda bob: bob.initial(), commit_of(_estimate("p_d"), Role.BOB, "initial"), coin,
            lose=loser(None), what="initial", bits=PROBABILITY_BITS,
        )  # fmt: skip

    def round_(s: Situation) -> Node:
        """Round ``s.level``: A^k (steps 1-2), keyed on the situation."""
        return Move(
            Role.ALICE, lambda alice: alice.direction(s), commit_of(direction_of, Role.ALICE, "direction"),
            lambda direction: directed(s, direction), key=s, lose=loser(s.level), what="direction", bits=2,
        )  # fmt: skip

    def directed(s: Situation, direction: int) -> Node:
        """Step 3: the split y^k (round 0: the leaf's proof bits and the oracle query)."""
        if s.level == 0:
            return final(s, direction)
        return Move(
            Role.ALICE, lambda alice: alice.queries(s),
            commit_of(lambda sent: split_of(D, s.query, s.level, sent), Role.ALICE, "queries"),
            lambda ys: answered(s, direction, ys, (), ()), lose=loser(s.level), what="queries",
        )  # fmt: skip

    def answered(
        s: Situation, direction: int, ys: tuple[Query, ...], z: tuple[int, ...], estimates: tuple[float, ...]
    ) -> Node:
        """Step 4: B's B^k_i(z_<i) and the trusted coin z_i drawn from it, one i at a time."""
        i = len(z)
        if i == q:
            return settled(s, direction, ys, z, estimates)

        def coin(b: float) -> Node:
            return Chance.coin(
                f"z^{s.level}_{i + 1}", b, lambda zi: answered(s, direction, ys, (*z, zi), (*estimates, b))
            )

        return Move(
            Role.BOB, lambda bob: bob.conditional(s, ys, i, z),
            commit_of(_estimate(f"B^k_{i + 1}"), Role.BOB, "conditional"), coin,
            lose=loser(s.level), what="conditional", bits=PROBABILITY_BITS,
        )  # fmt: skip

    def settled(
        s: Situation, direction: int, ys: tuple[Query, ...], z: tuple[int, ...], estimates: tuple[float, ...]
    ) -> Node:
        """Steps 5-7: round k's reward r^k·A^k·(M_D(x, y^k, z^k) - p_k), then A's subquery j."""
        reward = paid(s.level, scale[1 + d - s.level] * direction * (D.combine(s.query, s.level, z) - s.p))
        recurse = Move(
            Role.ALICE, lambda alice: alice.recurse(s, ys, estimates, z),
            commit_of(lambda sent: index_of(sent, q, Role.ALICE, "recursion index"), Role.ALICE, "recurse"),
            lambda j: round_(Situation(s.level - 1, ys[j], estimates[j], s.claim, s.p_root)),
            lose=loser(s.level - 1), what="recurse", bits=word_width(q),
        )  # fmt: skip
        return Paid(reward, recurse)

    def final(s: Situation, direction: int) -> Node:
        """Round 0: A's proof bits with no context (step 3b), one oracle query, A^0·(O(ũ_S) - p_0)."""

        def judged(bits: tuple[int, ...]) -> Judge:
            def check() -> Any:
                o = yield Asked((s.query, bits))
                return Payoff(paid(0, direction * (o - s.p)))

            return Judge(check)

        return proof_move(D.leaf(s.query), reader, prover, judged, loser(0))

    return Move(
        Role.ALICE, lambda alice: alice.claim(), commit_of(bit_of("the claim A(x) ="), Role.ALICE, "claim"),
        claimed, lose=loser(None), what="claim", bits=1,
    )  # fmt: skip


def _estimate(what: str) -> Callable[[Any], float]:
    return lambda sent: commit_probability(sent, Role.BOB, what)


def decomposition_of(instance: Instance) -> Decomposition:
    found = instance.recursive_decomposition()
    if found is None:
        raise ValueError(f"problem {instance.problem} has no recursive decomposition")
    return found


def rules_for(instance: Instance) -> Rules:
    """ε from the decomposition when it was built for one (Theorem 8.3), else 0.1; ρ = 1/2 as in
    Theorem 6.1; δ the default."""
    epsilon = getattr(decomposition_of(instance), "epsilon", None)
    return Rules(epsilon if epsilon is not None else 0.1, 0.5)


def rules_of(seat: Any) -> Rules:
    """The rules a player's seat carries, else the instance's (:func:`rules_for`)."""
    return seat.rules if isinstance(seat.rules, Rules) else rules_for(seat.instance)


def expected_rewards(
    decomposition: Decomposition,
    alice: Alice,
    bob: Bob,
    rules: Rules,
    prover: CommittedProof | None = None,
    oracle: Oracle | None = None,
) -> np.ndarray:
    """A's exact expected reward per round (index 0 initial, 1 + d - k round k), by summing over
    every trusted coin and mixed move (:func:`~debatekit.analysis.exact.expectation`; strategies
    must be functions of their arguments, as Figure 2's are); ``prover`` A's committed proof (by
    default committed from ``alice``, context-free only for such strategies), ``oracle`` the
    leaves' judge (by default the decomposition's, :class:`~debatekit.machine.decomposition.LeafOracle`)."""
    from debatekit.analysis.exact import expectation  # here: the protocol is stated without its analysis

    prover = prover if prover is not None else CommittedProof(lambda leaves: alice.proof(leaves))
    root = debate(decomposition, rules, Reader(Ledger()), prover)
    return expectation(root, {Role.ALICE: alice, Role.BOB: bob}, oracle or LeafOracle(decomposition))


def sampled(
    decomposition: Decomposition,
    alice: Alice,
    bob: Bob,
    rules: Rules,
    rngs: dict[Role, np.random.Generator],
    ledger: Ledger | None = None,
    prover: CommittedProof | None = None,
    oracle: Oracle | None = None,
) -> Payoff:
    """One debate played by the engine (:func:`~debatekit.engine.play.play`): the trusted coins
    from ``rngs[VERIFIER]``, which also answers the verifier's query, mixed moves from the mover's
    generator; the players are not trusted (what they raise is their forfeit), as outside a run;
    counts and, when it keeps them, events in ``ledger``; ``prover`` and ``oracle`` as in
    :func:`expected_rewards`. Its end: A's reward vector, with the forfeit and its reason."""
    import asyncio

    from debatekit.engine.play import Seated, play, verifier_answer

    ledger = ledger if ledger is not None else Ledger()
    prover = prover if prover is not None else CommittedProof(lambda leaves: alice.proof(leaves))
    root = debate(decomposition, rules, Reader(ledger), prover)
    seats = {Role.ALICE: Seated(alice, rngs[Role.ALICE]), Role.BOB: Seated(bob, rngs[Role.BOB])}
    answer = verifier_answer(oracle or LeafOracle(decomposition), ledger, rngs[Role.VERIFIER])
    end = asyncio.run(play(root, seats, answer, ledger, 1, None, rng=rngs[Role.VERIFIER]))
    assert isinstance(end, Payoff), end
    return end


# -- honest A (Lemma A.5) and the truthful estimator ---------------------------------------------


class HonestAlice:
    """Lemma A.5: claim L(x); if |p_d - A(x)| ≤ ε say A^k = 0 throughout; else the correct split
    in every round, A^k by rule (13) from the correct answer g, and recurse on the subquery whose
    estimate is furthest from its correct answer. Proof bits are the implicit proof's. Knowing
    every correct answer is Definition 5.2's A-provability."""

    def __init__(self, decomposition: Decomposition, rules: Rules):
        self.D, self.epsilon = decomposition, rules.epsilon
        self._truths: dict[tuple[tuple[Query, ...], int], list[float]] = {}
        """The correct answers to a split's subqueries (asked again at every answer vector z)."""

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
        key = (subqueries, s.level - 1)
        if key not in self._truths:
            self._truths[key] = [self.D.truth(y, s.level - 1) for y in subqueries]
        errors = [abs(b - g) for b, g in zip(estimates, self._truths[key], strict=True)]
        return errors.index(max(errors))  # the first furthest, as argmax

    proof = implicit_proof


def gives_implicit_proof(player: Any, decomposition: Decomposition) -> bool:
    """Whether ``player``'s proof bits are the implicit proof u of ``decomposition``: its class keeps
    :func:`~debatekit.protocols.proof.implicit_proof` (an honest A's of either recursive protocol)
    and it holds this decomposition. Then ProofTruth(ũ) is the decomposition's own truth, and no
    bit need be read (the bits the verifier reads are committed from the same player, so both are
    u). A player whose attributes raise is not."""
    try:
        return type(player).proof is implicit_proof and player.D is decomposition
    except Exception:  # no such attributes, or hostile ones
        return False


class TruthfulBob:
    """The truthful estimator (δ = 0 in Lemma A.4): the correct conditional probabilities on A's
    committed proof ũ, the g_k of the proof of Lemma A.4 (:class:`ProofTruth`)."""

    def __init__(self, truth: ProofTruth):
        self.truth, self.D = truth, truth.D

    def initial(self) -> float:
        return self.truth.truth(self.D.root(), self.D.depth)

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return self.truth.conditional(s.query, s.level, i, prefix)
