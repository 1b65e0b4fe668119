"""Theorem 6.2 of the prover-estimator debate paper, executable on small instances: A leads, B follows.

The paper (Definition 3.4, Section 3.2): in a two-player game the leader commits to a strategy s_L,
the follower sees it and answers with s_F*(s_L). An **α-approximate Stackelberg equilibrium** is a
profile (s_L*, s_F*(·)) in which (1) for every s_L the follower's s_F*(s_L) is within α of its best
payoff against s_L, and (2) s_L* is within α of the leader's best payoff given that response
function. **A-leading** means A (the prover) is the leader and B (the estimator) the follower: B is
chosen after, and as a function of, A's committed strategy, which is how Lemma A.4 builds B (by
querying A). Theorem 6.2: if M_D is 𝒜-provable and (ε, 1/2)-stable each with probability
1 - ε/(4n) and α < ε/(2n), then every α-approximate A-leading Stackelberg equilibrium of the game of
Figure 2 has P_x~μ[A(x) = L(x)] > 1 - 4ε. The game is zero sum: A's payoff is E_x[V^{A,B}(x)], B's
its negative.

What is computed. A :class:`Game` is a finite input distribution μ (:class:`Case`: a weight and an
instance carrying its decomposition M_D and L(x)) under Figure 2's :class:`Rules`. A's strategy is
a :data:`Leader`: one A strategy (a :class:`~debatekit.players.base.Strategy` of the ``ALICE``
role) per input. B's best-response oracle (:data:`Follower`) maps a Leader to one B strategy per
input; :func:`best_of` is the built-in one: per input, the candidate B strategies (the players
table's, built against the committed A through ``seat.opponent``) that gives A the least exact
expected payoff. Every payoff is exact (:func:`~debatekit.protocols.prover_estimator.expected_rewards`,
the protocol's own ``Exact`` chance), so strategies must be functions of their arguments.
:func:`exhaustive` evaluates every Leader of an iterable against the follower's response to it and
keeps the best for A: the exact Stackelberg equilibrium of the restricted game (α = 0 for the
leader over the searched set). :func:`iterated` is for spaces too large to enumerate: iterated best
response in the leader's coordinates (one input's strategy at a time, all others fixed, every
candidate played against the follower's response to the whole Leader) until a sweep changes
nothing: a local optimum, whose α is unknown. Either returns an :class:`Equilibrium`.

What to expect. With the leader's best found exactly (α = 0) and the hypotheses holding on every
input, the proof of Theorem 6.2 gives more than its statement: (21) and (22) without the ε/(2n)
terms give P[A(x) ≠ L(x)] ≤ ε + (2d+1)δ/r^(d+1) ≤ 2ε at the theorem's δ. The inequality checked and
reported is the statement's, P[A(x) = L(x)] > 1 - 4ε.

Departures (recorded, not hidden):

* 𝒜 is finite: on each input, the named pure plans of :data:`PLANS` (a claim, what A believes the
  subclaims are, how she pushes B), Lemma A.5's A among them (declared ``honest``); A's strategy
  over μ is one plan per input, and the profile of honest plans is the single A that makes M_D
  𝒜-provable with probability 1. Theorem 6.2 holds for any set 𝒜 ("any set of functions"), so the
  restricted game is the theorem's game for that 𝒜. Splits and proof bits are the decomposition's
  own (the verifier accepts one split).
* ℬ's best response is the best of a finite set of B strategies, not a best response over all
  circuits. The proof of Theorem 6.2 uses the follower's condition (1) only through (21): the
  follower does at least as well as Lemma A.4's B' (Algorithm 1 against A). A follower set that
  holds Algorithm 1's estimator (the players table's ``honest`` B) satisfies (21) with α = 0, so
  the proof applies as written; :class:`Hypotheses` says whether it does. Ties go to the first
  candidate, for the follower and the leader alike.
* μ is finite and explicit, and stability is certified on every input exactly
  (:mod:`debatekit.analysis.stability`): probability 1 ≥ 1 - ε/(4n), so the ε/(2n) slack of the
  proof's (22) is not needed.
* δ: the theorem sets δ = ε r^(d+1)/(2d+1); :func:`theorem_rules` asks Algorithm 1 for exactly that,
  and :class:`Hypotheses` checks the δ Lemma A.4's estimator achieved against the equilibrium's A
  (Algorithm 1 may stop at its step budget, :mod:`debatekit.players.estimator`).
* B is trained on each input alone (the point mass, as :mod:`debatekit.players.estimator` does), so
  its best response separates over inputs; :class:`Game` caches players and values per (input,
  strategies), and an exhaustive search over the product of per-input plans trains one B per
  (input, plan, candidate). Algorithm 1 at the theorem's δ dominates the cost (seconds per
  training at q = 6).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Any

import numpy as np

from debatekit.engine.boundary import as_bit, mixed_branches
from debatekit.ledger import Role
from debatekit.machine.decomposition import Decomposition, LeafOracle, Query
from debatekit.players.base import Seat, Strategy
from debatekit.players.estimator import Indistinguishable
from debatekit.problems.registry import Instance
from debatekit.protocols.prover_estimator import HonestAlice, Rules, Situation, expected_rewards

Leader = tuple[Strategy, ...]
"""A's strategy over μ: one A strategy per input, in the order of :attr:`Game.cases`."""
Reply = tuple[Strategy, ...]
"""B's strategy over μ: one B strategy per input, each built against that input's A."""
Follower = Callable[["Game", Leader], Reply]
"""B's best-response oracle: the follower's strategy as a function of the leader's."""


class Search(Enum):
    """How the leader's strategy was found: every candidate, or iterated best response."""

    EXHAUSTIVE = "exhaustive"
    ITERATED = "iterated"


@dataclass(frozen=True)
class Case:
    """One input x of μ: its probability and the instance (x, M_D, L(x))."""

    weight: float
    instance: Instance

    @property
    def decomposition(self) -> Decomposition:
        found = self.instance.recursive_decomposition()
        if found is None:
            raise ValueError(f"input {self.instance.problem!r} has no recursive decomposition")
        return found


def case(weight: float, decomposition: Decomposition, name: str = "input") -> Case:
    """An input of μ made from a bare decomposition: L(x) is its root's correct answer."""
    truth = decomposition.truth(decomposition.root(), decomposition.depth)
    if truth not in (0.0, 1.0):
        raise ValueError(f"{name}: L(x) must be a bit (a deterministic decomposition), got P = {truth}")
    instance = Instance(
        name, decomposition.depth, bool(truth), np.zeros(0, dtype=np.uint8), oracle=LeafOracle(decomposition),
        decomposition=decomposition,
    )  # fmt: skip
    return Case(weight, instance)


def theorem_rules(epsilon: float, depth: int, rho: float = 0.5) -> Rules:
    """Figure 2's rules with Theorem 6.2's choices: ρ = 1/2 and δ = ε r^(d+1)/(2d+1) (its proof)."""
    r = epsilon * (1 - rho) / 4
    return Rules(epsilon, rho, epsilon * r ** (depth + 1) / (2 * depth + 1))


@dataclass(frozen=True)
class Game:
    """G of Theorem 6.2 on a finite μ: the inputs and Figure 2's rules. Players and exact values are
    cached per (input, strategies): a strategy is a function of its seat, so one copy serves."""

    cases: tuple[Case, ...]
    rules: Rules
    _players: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _values: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.cases:
            raise ValueError("μ needs at least one input")
        weights = [c.weight for c in self.cases]
        if not all(math.isfinite(w) and w > 0 for w in weights) or abs(math.fsum(weights) - 1) > 1e-9:
            raise ValueError(f"the inputs' weights must be positive and sum to 1, got {weights}")
        depths = {c.decomposition.depth for c in self.cases}
        if len(depths) != 1:
            raise ValueError(
                f"every input's decomposition must have one depth d (r^(d+1) scales payoffs), got {depths}"
            )

    @property
    def depth(self) -> int:
        return self.cases[0].decomposition.depth

    @property
    def honest_floor(self) -> float:
        """Lemma A.5: Lemma A.5's A earns at least (1 - ε) r^(d+1) on a stable, provable input."""
        return (1 - self.rules.epsilon) * self.rules.r ** (self.depth + 1)

    def alice(self, i: int, a: Strategy) -> Any:
        """A's player on input ``i`` (built once: strategies must be functions of their arguments)."""
        key = ("alice", i, a)
        if key not in self._players:
            self._players[key] = a.factory(self._seat(i, Role.ALICE, None))
        return self._players[key]

    def bob(self, i: int, b: Strategy, a: Strategy) -> Any:
        """B's player on input ``i``, built against the committed A ``a`` (Lemma A.4: B follows)."""
        key = ("bob", i, b, a)
        if key not in self._players:
            self._players[key] = b.factory(self._seat(i, Role.BOB, a))
        return self._players[key]

    def _seat(self, i: int, role: Role, opponent: Strategy | None) -> Seat:
        return Seat(self.cases[i].instance, role, np.random.default_rng(0), None, self.rules, opponent)

    def value(self, i: int, a: Strategy, b: Strategy) -> float:
        """E[V^{A,B}(x)] on input ``i``, exactly (every coin and mixed move enumerated)."""
        key = (i, a, b)
        if key not in self._values:
            D = self.cases[i].decomposition
            self._values[key] = float(expected_rewards(D, self.alice(i, a), self.bob(i, b, a), self.rules).sum())
        return self._values[key]

    def payoff(self, leader: Leader, reply: Reply) -> float:
        """A's payoff E_x~μ[V^{A,B}(x)] (B's is its negative)."""
        return math.fsum(
            c.weight * self.value(i, a, b) for i, (c, a, b) in enumerate(zip(self.cases, leader, reply, strict=True))
        )

    def correct(self, i: int, a: Strategy) -> float:
        """P[A(x) = L(x)] on input ``i``: her claim as the verifier reads it (a mixed claim by its
        weights; a claim that is not a bit is never correct)."""
        try:
            sent = mixed_branches(self.alice(i, a).claim())
        except Exception:  # a user's garbage or raising claim: she forfeits, never claiming L(x)
            if a.trusted:  # a built-in's is a bug
                raise
            return 0.0
        truth = int(self.cases[i].instance.truth)
        return math.fsum(w for w, claim in sent if as_bit(claim) == truth)

    def accuracy(self, leader: Leader) -> float:
        """P_x~μ[A(x) = L(x)]."""
        return math.fsum(c.weight * self.correct(i, a) for i, (c, a) in enumerate(zip(self.cases, leader, strict=True)))

    def delta(self, i: int, b: Strategy, a: Strategy) -> float | None:
        """The δ B achieved on input ``i``: Algorithm 1's largest final advantage, 0 for the truthful
        estimator (declared ``truthful``), None when unknown."""
        if b.truthful:
            return 0.0
        player = self.bob(i, b, a)
        return float(player.delta) if isinstance(player, Indistinguishable) else None


def best_of(*bobs: Strategy) -> Follower:
    """The follower that, on each input, plays whichever of ``bobs`` gives A the least exact
    payoff against her committed strategy there (ties: the first). The best response over the
    finite ℬ = ``bobs``."""
    if not bobs:
        raise ValueError("the follower needs at least one B strategy")

    def follow(game: Game, leader: Leader) -> Reply:
        return tuple(min(bobs, key=lambda b, i=i, a=a: game.value(i, a, b)) for i, a in enumerate(leader))

    return follow


@dataclass(frozen=True)
class Equilibrium:
    """The leader's best strategy found, with the follower's response and Theorem 6.2's bound."""

    leader: Leader
    reply: Reply
    accuracy: float
    """P_x~μ[A(x) = L(x)] under the leader's strategy."""
    leader_payoff: float
    follower_payoff: float
    epsilon: float
    bound: float
    """1 - 4ε."""
    holds: bool
    """accuracy > 1 - 4ε."""
    search: Search
    searched: int
    """Leader strategies evaluated, each against the follower's response to it."""
    violator_payoff: float | None
    """The best payoff among the searched strategies with P[A(x) = L(x)] ≤ 1 - 4ε (the ones the
    theorem says cannot lead); None when no searched strategy violates the bound."""

    def to_json(self) -> dict[str, Any]:
        return {
            "leader": [a.name for a in self.leader],
            "reply": [b.name for b in self.reply],
            "accuracy": self.accuracy,
            "leader_payoff": self.leader_payoff,
            "follower_payoff": self.follower_payoff,
            "epsilon": self.epsilon,
            "bound": self.bound,
            "holds": self.holds,
            "search": self.search.value,
            "searched": self.searched,
            "violator_payoff": self.violator_payoff,
        }


def exhaustive(game: Game, strategies: Iterable[Leader], follower: Follower) -> Equilibrium:
    """The leader's best strategy among ``strategies`` (an iterable or a generator of Leaders),
    each played against ``follower``'s response to it; ties go to the first."""
    tally = _Tally(game, follower)
    for leader in strategies:
        tally.evaluate(leader)
    return tally.result(Search.EXHAUSTIVE)


def profiles(options: Sequence[Sequence[Strategy]]) -> Iterable[Leader]:
    """Every Leader with input i's strategy from ``options[i]``: the product, lazily."""
    return itertools.product(*options)


def iterated(
    game: Game, options: Sequence[Sequence[Strategy]], follower: Follower, max_sweeps: int = 20
) -> Equilibrium:
    """Iterated best response in the leader's coordinates: starting from the first option on every
    input, replace input i's strategy by the best of ``options[i]`` with the others fixed (each
    candidate against the follower's response to the whole Leader), inputs in turn, until a sweep
    changes nothing or ``max_sweeps`` sweeps are done. A local optimum: its α is not known.
    ``searched`` counts every evaluation, repeats included (Σ_i |options[i]| per sweep)."""
    if len(options) != len(game.cases) or not all(options):
        raise ValueError("iterated search needs a non-empty list of options per input")
    tally = _Tally(game, follower)
    current: Leader = tuple(o[0] for o in options)
    for _ in range(max_sweeps):
        before = current
        for i, choices in enumerate(options):
            values = [(tally.evaluate((*current[:i], a, *current[i + 1 :])), a) for a in choices]
            best = max(v for v, _ in values)
            current = (*current[:i], next(a for v, a in values if v == best), *current[i + 1 :])
        if current == before:
            break
    return tally.result(Search.ITERATED, current)


class _Tally:
    """The leader strategies evaluated so far: the best for A, the count, and the best payoff of a
    strategy that violates Theorem 6.2's bound."""

    def __init__(self, game: Game, follower: Follower):
        self.game, self.follower = game, follower
        self.bound = 1 - 4 * game.rules.epsilon
        self.searched = 0
        self.best: tuple[float, Leader, Reply] | None = None
        self.violator: float | None = None

    def evaluate(self, leader: Leader) -> float:
        if len(leader) != len(self.game.cases):
            raise ValueError(
                f"a leader strategy needs one A strategy per input ({len(self.game.cases)}), got {len(leader)}"
            )
        reply = self.follower(self.game, leader)
        value = self.game.payoff(leader, reply)
        self.searched += 1
        if self.best is None or value > self.best[0]:
            self.best = (value, leader, reply)
        if self.game.accuracy(leader) <= self.bound and (self.violator is None or value > self.violator):
            self.violator = value
        return value

    def result(self, search: Search, leader: Leader | None = None) -> Equilibrium:
        if self.best is None:
            raise ValueError("the leader's strategy space is empty")
        value, best, reply = self.best
        if leader is not None:  # iterated: the point the sweeps stopped at
            best, reply = leader, self.follower(self.game, leader)
            value = self.game.payoff(best, reply)
        game = self.game
        accuracy = game.accuracy(best)
        return Equilibrium(
            leader=best,
            reply=reply,
            accuracy=accuracy,
            leader_payoff=value,
            follower_payoff=-value,
            epsilon=game.rules.epsilon,
            bound=self.bound,
            holds=accuracy > self.bound,
            search=search,
            searched=self.searched,
            violator_payoff=self.violator,
        )


# -- A's pure strategies ---------------------------------------------------------------------------


class Belief(Enum):
    """What A takes the subclaims' answers to be."""

    TRUTH = "truth"
    """The correct answers g (what an 𝒜-provable A knows, Definition 5.2)."""
    CLAIM = "claim"
    """Her claim, for every subclaim (Section 7's obfuscator)."""


class Push(Enum):
    """How A says B's estimates are off (A^k) and where she recurses."""

    RULE_13 = "rule (13)"
    """Rule (13) against her belief, silent throughout when |p_d - A(x)| ≤ ε (Lemma A.5); recurse
    where B's estimate is furthest from her belief."""
    SILENT = "silent"
    """A^k = 0 in every round (the initial reward only)."""
    DOWN = "down"
    """A^k = -1 in every round; recurse on B's highest estimate."""
    UP = "up"
    """A^k = +1 in every round; recurse on B's lowest estimate."""


@dataclass(frozen=True)
class Plan:
    """A pure strategy of A on one input: her claim A(x), her belief and her push. The split and
    the proof bits are the decomposition's own (splits are forced: M_D is defined on one)."""

    claim: int
    belief: Belief
    push: Push

    @property
    def name(self) -> str:
        return f"claim {self.claim}, {self.push.value}" + (
            f" on {self.belief.value}" if self.push is Push.RULE_13 else ""
        )

    def honest(self, truth: int) -> bool:
        """Whether this is Lemma A.5's A on an input with L(x) = ``truth``."""
        return self.claim == truth and self.belief is Belief.TRUTH and self.push is Push.RULE_13


PLANS = tuple(
    Plan(claim, belief, push)
    for claim in (0, 1)
    for push in Push
    for belief in (Belief if push is Push.RULE_13 else (Belief.TRUTH,))
)
"""2 claims × (rule (13) on the truth or on her claim, silence, down, up): 10 plans. Silence on the
other belief is left out: it differs only in where she recurses, and a silent A earns the initial
reward alone whatever B answers below."""


class PureAlice(HonestAlice):
    """A :class:`Plan` played: a function of its arguments, as exact values need."""

    def __init__(self, seat: Seat, plan: Plan):
        super().__init__(seat.instance.recursive_decomposition(), seat.rules)
        self.plan = plan

    def _belief(self, query: Query, level: int) -> float:
        return self.D.truth(query, level) if self.plan.belief is Belief.TRUTH else float(self.plan.claim)

    def claim(self) -> int:
        return self.plan.claim

    def answer(self, level: int, query: Query) -> int:
        return int(self._belief(query, level) >= 0.5)

    def direction(self, s: Situation) -> int:
        push = self.plan.push
        if push is not Push.RULE_13:
            return {Push.SILENT: 0, Push.DOWN: -1, Push.UP: 1}[push]
        if abs(s.p_root - s.claim) <= self.epsilon:
            return 0
        gap = self._belief(s.query, s.level) - s.p
        return 1 if gap > self.epsilon else -1 if gap < -self.epsilon else 0

    def recurse(
        self, s: Situation, subqueries: tuple[Query, ...], estimates: tuple[float, ...], z: tuple[int, ...]
    ) -> int:
        if self.plan.push is Push.DOWN:
            return int(np.argmax(estimates))
        if self.plan.push is Push.UP:
            return int(np.argmin(estimates))
        errors = [abs(b - self._belief(y, s.level - 1)) for b, y in zip(estimates, subqueries, strict=True)]
        return int(np.argmax(errors))


def pure_strategies(truth: int, plans: Sequence[Plan] = PLANS) -> tuple[Strategy, ...]:
    """A's pure strategies on an input with L(x) = ``truth``, as players-table strategies; Lemma
    A.5's is declared ``honest`` (the theorem's 𝒜-provability needs it in 𝒜)."""
    return tuple(
        Strategy(plan.name, Role.ALICE, f"pure plan: {plan.name}", partial(PureAlice, plan=plan), trusted=True,
                 honest=plan.honest(truth))
        for plan in plans
    )  # fmt: skip


def space(game: Game, plans: Sequence[Plan] = PLANS) -> tuple[tuple[Strategy, ...], ...]:
    """:func:`pure_strategies` on every input of ``game``: the leader's space is their product."""
    return tuple(pure_strategies(int(c.instance.truth), plans) for c in game.cases)


# -- the theorem's hypotheses ----------------------------------------------------------------------


@dataclass(frozen=True)
class Hypotheses:
    """Theorem 6.2's hypotheses on a computed equilibrium, each checked or reported unknown."""

    stable: bool | None
    """M_D is (ε, ρ)-stable at every query of every input (Definition 5.3, exactly; None when a
    survey had to sample)."""
    provable: bool
    """Every input's strategies hold Lemma A.5's A (declared ``honest``): 𝒜-provable."""
    estimator: bool
    """The follower's set holds Lemma A.4's estimator (a B declared ``honest``), so (21) holds."""
    delta: float | None
    """δ that estimator achieved against the leader's strategy (max over inputs; None without it)."""
    delta_needed: float
    """The theorem's δ = ε r^(d+1)/(2d+1)."""
    exact: bool
    """The leader's strategy is the best of the space (exhaustive: α = 0); iterated: α unknown."""

    @property
    def hold(self) -> bool | None:
        """All of them: False when one fails, None when none fails but one is unknown (sampled
        stability, δ not known, or an iterated search's unknown α)."""
        too_coarse = self.delta is not None and self.delta > self.delta_needed
        if self.stable is False or not self.provable or not self.estimator or too_coarse:
            return False
        return None if self.stable is None or self.delta is None or not self.exact else True

    def to_json(self) -> dict[str, Any]:
        return {
            "stable": self.stable,
            "provable": self.provable,
            "estimator": self.estimator,
            "delta": self.delta,
            "delta_needed": self.delta_needed,
            "exact": self.exact,
            "hold": self.hold,
        }


def hypotheses(
    game: Game,
    space: Sequence[Sequence[Strategy]],
    bobs: Sequence[Strategy],
    equilibrium: Equilibrium,
    max_nodes: int = 2000,
) -> Hypotheses:
    """Theorem 6.2's hypotheses for ``equilibrium``, found in the per-input strategies ``space``
    against the best of ``bobs``."""
    from debatekit.analysis.stability import survey

    rules, d = game.rules, game.depth
    verdicts = [
        survey(c.decomposition, rules.epsilon, rules.rho, max_nodes, np.random.default_rng(0)).stable
        for c in game.cases
    ]
    stable = False if False in verdicts else None if None in verdicts else True
    lemma_a4 = [b for b in bobs if b.honest]
    deltas = [
        game.delta(i, lemma_a4[0], a) for i, a in enumerate(equilibrium.leader)
    ] if lemma_a4 else []  # fmt: skip
    return Hypotheses(
        stable=stable,
        provable=all(any(a.honest for a in choices) for choices in space),
        estimator=bool(lemma_a4),
        delta=None if not deltas or None in deltas else max(x for x in deltas if x is not None),
        delta_needed=rules.epsilon * rules.r ** (d + 1) / (2 * d + 1),
        exact=equilibrium.search is Search.EXHAUSTIVE,
    )


# -- a small stable decomposition ------------------------------------------------------------------


class OneJudgement(Decomposition):
    """Appendix C's C' for one judgement (the formula L(x) = x_1, fan-in w = 1): a tree of
    κ-majorities of depth d over κ^d pieces of evidence. A level-k query (k, i) is the i-th majority
    of layer k, its split the κ queries (k - 1, iκ + c) below it, M_D their majority; a level-0
    query is one piece of evidence, judged by the oracle (no proof bits: m = 0). It is
    :class:`~debatekit.problems.evidence_majority.EvidenceMajority` with w = 1, which that class's
    constructor refuses (its w ≥ 2 is for AND/OR trees)."""

    def __init__(self, evidence: np.ndarray, kappa: int, epsilon: float):
        depth = 1
        while kappa > 1 and kappa**depth < len(evidence):
            depth += 1
        if kappa < 1 or kappa % 2 == 0 or kappa**depth != len(evidence):
            raise ValueError(
                f"a majority tree needs an odd κ and κ^d pieces of evidence, got κ = {kappa}, {len(evidence)}"
            )
        self.evidence = np.array(evidence, dtype=np.uint8)
        self.evidence.flags.writeable = False
        self.kappa, self.epsilon, self.depth, self.width = kappa, epsilon, depth, kappa
        layers = [self.evidence.astype(bool)]
        for _ in range(depth):
            layers.append(layers[-1].reshape(-1, kappa).sum(axis=1) > kappa // 2)
        self.layers = layers

    def root(self) -> Query:
        return (self.depth, 0)

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        _, i = query  # type: ignore[misc]
        return tuple((level - 1, i * self.kappa + c) for c in range(self.kappa))

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        return int(sum(answers) > self.kappa // 2)

    def leaf(self, query: Query) -> tuple[int, ...]:
        return ()

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        return float(self.evidence[query[1]])  # type: ignore[index]

    def proof(self, j: int) -> int:
        raise IndexError(f"a majority tree has no implicit proof (m = 0), asked for u_{j}")

    def truth(self, query: Query, level: int) -> float:
        return float(self.layers[level][query[1]])  # type: ignore[index]


def evidence_majority_game(epsilon: float, depth: int = 1, kappa: int = 3, fan_in: int = 2) -> Game:
    """Appendix C's stable decomposition (:class:`~debatekit.problems.evidence_majority.EvidenceMajority`)
    made small: fan-in w (w = 1: :class:`OneJudgement`), κ copies under each majority, depth d; μ
    uniform over every judgement vector x ∈ {0,1}^(w^d), each with clean evidence (every piece equal
    to its judgement: Definition 8.1's noise left out, so that every input is stable where any is).
    Rules: :func:`theorem_rules`."""
    from debatekit.problems.evidence_majority import EvidenceMajority

    n, s = fan_in**depth, kappa**depth
    vectors = list(itertools.product((0, 1), repeat=n))

    def made(x: tuple[int, ...]) -> Decomposition:
        evidence = np.repeat(np.array(x, dtype=np.uint8), s)
        return (
            OneJudgement(evidence, kappa, epsilon)
            if fan_in == 1
            else EvidenceMajority(evidence, fan_in, kappa, epsilon)
        )

    cases = tuple(case(1 / len(vectors), made(x), "x=" + "".join(map(str, x))) for x in vectors)
    return Game(cases, theorem_rules(epsilon, depth))


# -- Theorem 6.2 on one game -----------------------------------------------------------------------

MAX_PROFILES = 100_000
"""The largest product of per-input strategy counts searched exhaustively when the search is not
named; beyond it, :func:`iterated`."""


@dataclass(frozen=True)
class Check:
    """Theorem 6.2 on one game: the equilibrium found, its hypotheses and Lemma A.5's floor."""

    inputs: tuple[str, ...]
    equilibrium: Equilibrium
    hypotheses: Hypotheses
    honest_floor: float
    """(1 - ε) r^(d+1): what Lemma A.5's A is promised on every stable, provable input."""

    @property
    def verdict(self) -> bool | None:
        """False when the hypotheses hold and the inequality fails (a bug); True when both hold;
        None when a hypothesis fails or is unknown (the theorem promises nothing)."""
        if self.hypotheses.hold:
            return self.equilibrium.holds
        return None

    def to_json(self) -> dict[str, Any]:
        return (
            {"inputs": list(self.inputs)}
            | self.equilibrium.to_json()
            | {"hypotheses": self.hypotheses.to_json(), "honest_floor": self.honest_floor, "verdict": self.verdict}
        )


def check_theorem(
    game: Game,
    bobs: Sequence[Strategy],
    plans: Sequence[Plan] = PLANS,
    search: Search | None = None,
    max_profiles: int = MAX_PROFILES,
) -> Check:
    """A's best strategy as leader among the pure ``plans`` on every input (:func:`space`) against
    the best of ``bobs`` as follower, found exhaustively (or by :func:`iterated` when ``search``
    says so, or when it is None and the product exceeds ``max_profiles``), with the hypotheses."""
    leader_space = space(game, plans)
    if search is None:
        search = Search.EXHAUSTIVE if math.prod(map(len, leader_space)) <= max_profiles else Search.ITERATED
    follower = best_of(*bobs)
    found = (
        exhaustive(game, profiles(leader_space), follower)
        if search is Search.EXHAUSTIVE
        else iterated(game, leader_space, follower)
    )
    return Check(
        tuple(c.instance.problem for c in game.cases),
        found,
        hypotheses(game, leader_space, bobs, found),
        game.honest_floor,
    )
