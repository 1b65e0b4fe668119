"""The estimator of Lemma A.4: B built by Algorithm 1 against a committed A.

Soundness (Lemma A.4) fixes A's strategy and builds B round by round, from the top: for the
initial estimate, X is the input and Z = {0, 1}; for round k, X is the situations
(x, ŷ^k, y^k, p_k) that the fixed strategies of the rounds above lead to (the distribution μ_k)
and Z = {0,1}^q. On each, Algorithm 1 (:func:`~debatekit.players.indistinguishable.indistinguishable`)
makes h_k δ-indistinguishable from the correct answers g_k under tests built from A, and B plays
B^k_i = P_{z~h_k}[z_i = 1 | z_<i].

The correct answers are those of A's own committed proof ũ (:func:`proof_truth`,
:class:`~debatekit.protocols.proof.ProofTruth`): the proof of Lemma A.4 (eq. 10)
needs g_0 = O(ũ_S), the leaf answers on the context-free proof the verifier will read, and the
g_k above it consistent with them. The truth is used only to build h_k, as in the paper, where
the construction cannot be run but its result is a small circuit querying A.

The input distribution is the point mass at the instance, and μ_k is computed exactly: the
situations of round k with their probabilities, enumerated from A's moves (mixed ones with their
weights), B's rows h_(k+1) and the trusted coins (every answer vector z with h(z) > 0). On a point
mass the correct answers on a deterministic proof are vertices of the simplex, and Algorithm 1's
projections land on them exactly after a few steps, so a δ of 1e-9 costs seconds. Departure:
Algorithm 1 is stopped after STEP_BUDGET steps (far below T_max = 18|Z|/δ² at small δ); B then
plays the estimate reached, and ``delta`` reports its achieved advantage, which is what the
soundness bound uses. The tests, each in [-1, 1], query A:

* z_i, and (2a_i - 1)(2z_i - 1) with a_i = A's answer to y_i (calibration against her claims);
* A^k·(M_D(x, y^k, z) - p_k), the round's reward over r^k, and M_D(x, y^k, z) itself;
* the round below: A^(k-1)(y_j, B_j)·(z_j - B_j), with j A's recursion choice given the estimates
  h implies at z (a test that depends on h). Its cost is one call of A per answer vector, so it
  is kept while |X|·2^q ≤ SELECTION_LIMIT.

Everything A says is asked and parsed as the verifier does it
(:func:`~debatekit.protocols.prover_estimator.branches` on a typed call of her method, the
verifier's parsers, one catch-all);
a message the verifier refuses is one she forfeits on, so it leads to no situation below and is
a test value of 0 (1/2 for an answer): her garbage never breaks B's construction, and B's
situations are the verifier's. At play time a situation not met in training is evaluated by replaying
Algorithm 1's steps (Lemma A.3's circuit). The achieved δ (the largest final advantage over the
rounds) is ``delta``; the run reports the soundness bound r^(d+1)·P[A(x) = M_D(ũ)] + (2d+1)δ with
it. A trained estimator is kept with its instance, per A and rules, so that every debate of a run
plays the same B.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from debatekit.engine.play import each_move, raised
from debatekit.engine.trust import Unaffordable, charge
from debatekit.ledger import Malformed, Role
from debatekit.machine.decomposition import Decomposition, Query
from debatekit.players.base import Seat, Strategy, own_copies
from debatekit.players.indistinguishable import (
    CallableTests,
    Estimate,
    StepBoundExceeded,
    conditional,
    indistinguishable,
)
from debatekit.problems.registry import Instance
from debatekit.protocols.proof import CommittedProof, ProofTruth
from debatekit.protocols.prover_estimator import (
    Situation,
    decomposition_of,
    direction_of,
    gives_implicit_proof,
    rules_of,
)
from debatekit.protocols.recursive_engine import bit_of, branches, index_of, parse, split_of

MAX_WIDTH = 10
"""Algorithm 1 represents a distribution over all 2^q answer vectors (Lemma A.3's |Z|)."""
STEP_BUDGET = 20_000
"""Algorithm 1's steps per round before B settles for the estimate reached (module docstring)."""
SITUATION_LIMIT = 4096
"""The most situations μ_k may hold."""
SELECTION_LIMIT = 4096
PROOF_SEED = 0
"""The seed of the copies of A that B queries: the context-free copy her proof is committed from
and the copy Algorithm 1's tests ask while B is trained. So B is a function of the instance, the
committed A and the rules alone, whichever debate of a run (or of a range of its debates) builds it."""


def proof_key(alice: Strategy, rules: Any) -> tuple:
    """The key A's committed proof is kept under, with the instance (:func:`committed_proof`)."""
    return ("committed proof", alice.name, rules)


def committed_proof(instance: Instance, alice: Strategy, rules: Any) -> CommittedProof:
    """A's committed proof ũ on this instance (:class:`~debatekit.protocols.proof.CommittedProof`),
    made on first use and kept with the instance: once per run and input, as the paper's ũ is a
    function of x alone (Figure 2, step 3b). Every reader (the verifier's round 0 in every debate,
    B's training, the truthful estimator, the run's P[A(x) = M_D(ũ)]) reads it.

    Its bits are asked of one context-free copy of her strategy: seated on its own copy of the
    instance, with the generator seeded PROOF_SEED, no oracle access and no opponent, so its seat
    is the same whoever asks first and whatever debate is under way. Why once per run rather than
    per debate: B is trained once per run against one proof (Lemma A.4 fixes A, ũ included, and
    builds B for it); a proof per debate would let a later debate's bits differ from those B was
    trained on. A strategy whose bits depend on its generator commits to one random proof."""

    def make() -> CommittedProof:
        own = own_copies(instance, {Role.ALICE: alice})[Role.ALICE]
        try:
            source: Any = alice.factory(Seat(own, Role.ALICE, np.random.default_rng(PROOF_SEED), None, rules))
        except Exception as err:  # she cannot sit down: every bit she owes is a forfeit (a built-in's: a bug)
            charge(Role.ALICE, err, alice.trusted)
            reason = raised("a context-free copy for her proof", err)

            def refused(leaves: tuple[int, ...]) -> Any:
                raise Malformed(Role.ALICE, reason)

            return CommittedProof(refused)
        implicit = gives_implicit_proof(source, decomposition_of(own))
        return CommittedProof(lambda leaves: source.proof(leaves), implicit, alice.trusted)

    return instance.memo(proof_key(alice, rules), make)


def proof_truth(seat: Seat) -> ProofTruth:
    """The truth of A's committed proof ũ as B reads it (:func:`committed_proof`; the
    decomposition's own truth when the proof is known to be the implicit one). Without a committed
    A (no opponent in the seat) B reads the implicit proof u. Kept with the instance per A and
    rules: every debate of a run reads one proof."""
    D = decomposition_of(seat.instance)
    opponent = seat.opponent
    if opponent is None:
        return ProofTruth(D, None)
    rules = rules_of(seat)
    committed = committed_proof(seat.instance, opponent, seat.rules)
    return seat.instance.memo(
        ("proof truth", opponent.name, rules), lambda: ProofTruth(D, None if committed.implicit else committed)
    )


def _expected(parsed: list[tuple[float, Any]], default: float = 0.0) -> float:
    """A parsed message's value, averaged over a mixed move; garbage counts as ``default``."""
    return sum(w * (default if isinstance(v, Malformed) else float(v)) for w, v in parsed)


def _weighted(parsed: list[tuple[float, Any]]) -> list[tuple[float, Any]]:
    """A parsed message's (weight, value) pairs, garbage dropped (she forfeits on it)."""
    return [(w, v) for w, v in parsed if not isinstance(v, Malformed)]


@dataclass
class _Point:
    situation: Situation
    subqueries: tuple[Query, ...]
    static: np.ndarray
    """(2q + 2, 2^q): the tests that do not depend on h."""


class _RoundTests(CallableTests):
    """The tests of one round on registered points (integer indices into ``points``).

    The selection test asks A at every answer vector z, so its advantage is computed only where
    it can count: Adv_f = sum_x mu(x) sum_z (g - h)(x, z) f(x, z, h(x)) needs f only where
    g(x, z) ≠ h(x, z) (on a point mass g and a projected h, a handful of z). Its values at every z
    are computed only for a step that takes it (Algorithm 1, line 8)."""

    def __init__(self, owner: Indistinguishable, level: int, selection: bool):
        self.owner, self.level, self.selection = owner, level, selection
        q = owner.D.width
        super().__init__(self._values, 2 * q + 2 + int(selection))

    def _static(self, points: Any) -> np.ndarray:
        return np.stack([self.owner.points[int(i)].static for i in points], axis=1)  # (n_static, batch, 2^q)

    def _values(self, points: Any, h: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
        out = self._static(points)
        if not self.selection:
            return out
        chosen = self.owner.selection(
            [self.owner.points[int(i)] for i in points],
            h,
            None if where is None else [np.flatnonzero(w) for w in where],
        )
        return np.concatenate([out, chosen[None]], axis=0)

    def advantages(self, points: Any, mu: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
        gap = g - h
        return np.einsum("fxz,x,xz->f", self._values(points, h, gap != 0), mu, gap)

    def value(self, f: int, points: Any, h: np.ndarray) -> np.ndarray:
        if f < self.n - int(self.selection):
            return np.stack([self.owner.points[int(i)].static[f] for i in points])
        return self._values(points, h)[f]


def untrainable(why: str) -> Unaffordable:
    """Lemma A.4's B cannot be trained against this A here (``why``): the run stops, exit 2."""
    return Unaffordable(f"Lemma A.4's estimator cannot be trained against this A here: {why}; try --bob omniscient "
                        "(the truthful estimator) or a smaller --size")  # fmt: skip


class Indistinguishable:
    """B of Lemma A.4 against the committed A (``seat.opponent``)."""

    max_width: float = MAX_WIDTH

    def __init__(self, seat: Seat):
        if seat.opponent is None:
            raise ValueError("the indistinguishable estimator needs the committed A (seat.opponent)")
        self.D: Decomposition = decomposition_of(seat.instance)
        if self.D.width > self.max_width:
            raise ValueError(f"Algorithm 1 needs 2^q answer vectors; q = {self.D.width} > {MAX_WIDTH}")
        self.rules = rules_of(seat)
        self.truth = proof_truth(seat)
        own = own_copies(seat.instance, {Role.ALICE: seat.opponent})[Role.ALICE]
        a_seat = Seat(own, Role.ALICE, np.random.default_rng(PROOF_SEED), None, seat.rules)
        try:
            self.A: Any = seat.opponent.factory(a_seat)
        except Exception:  # A cannot sit down: she forfeits every debate, and every test of her is 0
            self.A = None
        self.points: list[_Point] = []
        self.index: dict[tuple[Situation, tuple[Query, ...]], int] = {}
        self.rows: dict[int, np.ndarray] = {}
        self.estimates: dict[int, Estimate] = {}
        self.training: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        """Round k's training points, their weights μ_k and the correct answers g_k."""
        self.delta = 0.0
        self._train()

    # -- A's messages, parsed -----------------------------------------------------------------

    def _read(self, what: str, move: Callable[[], Any], parser: Any, mixed: bool = True) -> list[tuple[float, Any]]:
        """A's message ``move()`` as the verifier reads it: (weight, parsed value or her Malformed)
        per outcome of a mixed move."""
        try:
            sent = branches(move, Role.ALICE, what, mixed)
        except Malformed as bad:
            return [(1.0, bad)]
        return [(w, parse(m, parser, Role.ALICE, what)) for w, m in sent]

    def _split(self, s: Situation) -> tuple[Query, ...] | None:
        ((_, ys),) = self._read(
            "queries", lambda: self.A.queries(s), lambda sent: split_of(self.D, s.query, s.level, sent), mixed=False
        )
        return None if isinstance(ys, Malformed) else ys

    def _choices(self, moves: list[Callable[[Any], Any]]) -> list[list[tuple[float, Any]]]:
        """A's choice j (weighted, when she mixes) for each of ``moves`` (her ``recurse``), asked at once."""
        q = self.D.width
        parser = lambda j: index_of(j, q, Role.ALICE, "j")  # noqa: E731
        return [_weighted(self._read("recurse", move, parser)) for move in each_move(self.A, moves)]

    def _answer(self, level: int, y: Query) -> float:
        """A's answer to ``y`` (Definition 5.2), averaged over a mixed one; garbage counts as 1/2."""
        return _expected(self._read("answer", lambda: self.A.answer(level, y), bit_of("answer")), 0.5)

    def _directions(self, situations: list[Situation]) -> list[float]:
        """A's A^k at each situation, asked at once, averaged over a mixed one; garbage counts as 0."""
        moves = each_move(self.A, [lambda a, b=b: a.direction(b) for b in situations])
        return [_expected(self._read("direction", move, direction_of)) for move in moves]

    # -- features -------------------------------------------------------------------------------

    def _register(self, s: Situation, ys: tuple[Query, ...]) -> int:
        key = (s, ys)
        if key not in self.index:
            q, k = self.D.width, s.level
            z = (np.arange(2**q)[:, None] >> np.arange(q - 1, -1, -1)) & 1  # (2^q, q), z_1 first
            M = np.array([self.D.combine(s.query, k, tuple(int(b) for b in row)) for row in z], dtype=float)
            answers = np.array([self._answer(k - 1, y) for y in ys])
            (direction,) = self._directions([s])
            static = np.concatenate(
                [z.T.astype(float), (2 * answers[:, None] - 1) * (2 * z.T - 1), [direction * (M - s.p)], [M]]
            )
            self.index[key] = len(self.points)
            self.points.append(_Point(s, ys, np.clip(static, -1, 1)))
        return self.index[key]

    def selection(self, points: list[_Point], rows: np.ndarray, where: list[np.ndarray] | None = None) -> np.ndarray:
        """A^(k-1)(y_j, B_j)·(z_j - B_j) at each point, for every z (or the z in ``where``; 0
        elsewhere), j being A's choice at the estimates its row of h gives (her most likely
        choice when she mixes). A is asked for all her choices at once, then for all her
        directions below them (:func:`each_move`): two batches, however many points and z."""
        q = self.D.width
        out = np.zeros((len(points), 2**q))
        asked: list[tuple[int, int, tuple[float, ...], tuple[int, ...]]] = []
        vectors = _answer_vectors(q)
        for n, row in enumerate(rows):
            every = _all_conditionals(row).tolist()
            indices = range(2**q) if where is None else where[n].tolist()
            asked += [(n, i, tuple(every[i]), vectors[i]) for i in indices]
        moves = [
            lambda a, p=points[n], e=e, z=z: a.recurse(p.situation, p.subqueries, e, z) for n, _, e, z in asked
        ]  # fmt: skip
        chosen, below = [], []
        for (n, index, estimates, z), choices in zip(asked, self._choices(moves), strict=True):
            if choices:
                j = max(choices, key=lambda c: c[0])[1]
                s = points[n].situation
                chosen.append((n, index, z[j] - estimates[j]))
                below.append(Situation(s.level - 1, points[n].subqueries[j], estimates[j], s.claim, s.p_root))
        for (n, index, gap), direction in zip(chosen, self._directions(below), strict=True):
            out[n, index] = direction * gap
        return np.clip(out, -1, 1)

    # -- training (top down, μ_k exact) ---------------------------------------------------------

    def _root_frontier(self) -> dict[Situation, float]:
        """Round d's situations and their weights: Algorithm 1 on the initial estimate p_d (the
        test r_init against A's claim), one situation per claim she may make."""
        D = self.D
        truth = self.truth.truth(D.root(), D.depth)
        claims = _weighted(self._read("claim", lambda: self.A.claim(), bit_of("claim")))
        claim_one = sum(w for w, c in claims if c == 1)
        tests = CallableTests(lambda pts, h: np.array([[[1 - claim_one, claim_one]], [[0.0, 1.0]]]), 2)
        init = self._algorithm1([0], np.ones(1), np.array([[1 - truth, truth]]), tests)
        self.p_root = float(init.h[0, 1])
        self.delta = init.advantage
        frontier: dict[Situation, float] = defaultdict(float)
        for w, c in claims:
            frontier[Situation(D.depth, D.root(), self.p_root, c, self.p_root)] += w
        return frontier

    def _round(self, frontier: dict[Situation, float], level: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Round ``level``'s training points (registered from the frontier's situations at A's
        split) and their weights μ_k, normalised; None where A forfeits at every split."""
        weights: dict[int, float] = defaultdict(float)
        for s, w in frontier.items():
            ys = self._split(s)
            if ys is not None:  # else A forfeits here: nothing below to estimate
                weights[self._training_point(s, ys, level)] += w
        if not weights:
            return None
        keys = np.array(sorted(weights))
        mu = np.array([weights[int(i)] for i in keys])
        return keys, mu / mu.sum()

    def _training_point(self, s: Situation, ys: tuple[Query, ...], level: int) -> int:
        """The point a training situation is registered as."""
        return self._register(s, ys)

    def _train(self) -> None:
        D = self.D
        frontier = self._root_frontier()
        for level in range(D.depth, 0, -1):
            trained = self._round(frontier, level)
            if trained is None:
                break
            keys, mu = trained
            g = np.stack([self.truth.answer_distribution(self.points[i].situation.query, level) for i in keys])
            selection = len(keys) * 2**D.width <= SELECTION_LIMIT
            estimate = self._algorithm1(keys, mu, g, _RoundTests(self, level, selection))
            self.estimates[level] = estimate
            self.training[level] = (keys, mu, g)
            for i, row in zip(keys, estimate.h, strict=True):
                self.rows[int(i)] = row
            self.delta = max(self.delta, estimate.advantage)
            if level > 1:
                frontier = self._below(keys, mu)

    def _algorithm1(self, points: Any, mu: np.ndarray, g: np.ndarray, tests: CallableTests) -> Estimate:
        try:
            return indistinguishable(points, mu, g, tests, self.rules.delta_at(self.D.depth), max_steps=STEP_BUDGET)
        except StepBoundExceeded as reached:
            return Estimate(reached.h, reached.steps, reached.advantage, STEP_BUDGET, tests)

    def _below(self, keys: np.ndarray, mu: np.ndarray) -> dict[Situation, float]:
        """μ_(k-1): every answer vector z with h_k(z) > 0, B's estimates at it and A's choice j."""
        q, below = self.D.width, defaultdict(float)
        for i, weight in zip(keys, mu, strict=True):
            point, row = self.points[int(i)], self.rows[int(i)]
            s = point.situation
            every, vectors = _all_conditionals(row).tolist(), _answer_vectors(q)
            indices = np.flatnonzero(row > 0).tolist()
            asked = [(tuple(every[i]), vectors[i]) for i in indices]
            ys = point.subqueries
            moves = [lambda a, e=e, z=z: a.recurse(s, ys, e, z) for e, z in asked]  # noqa: B023 (asked at once, here)
            for index, (estimates, _), choices in zip(indices, asked, self._choices(moves), strict=True):
                for w, j in choices:
                    child = Situation(s.level - 1, point.subqueries[j], estimates[j], s.claim, s.p_root)
                    below[child] += weight * row[index] * w
        if len(below) > SITUATION_LIMIT:
            raise untrainable(f"μ_k holds {len(below)} situations > {SITUATION_LIMIT}")
        return below

    def row(self, s: Situation, ys: tuple[Query, ...]) -> np.ndarray:
        """h_k at a situation: from training, or by replaying Algorithm 1's steps (Lemma A.3)."""
        i = self._register(s, ys)
        if i not in self.rows:
            estimate = self.estimates.get(s.level)
            self.rows[i] = (
                estimate.predict(np.array([i]))[0]
                if estimate is not None
                else np.full(2**self.D.width, 2.0**-self.D.width)
            )
        return self.rows[i]

    # -- play -----------------------------------------------------------------------------------

    def initial(self) -> float:
        return self.p_root

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        return _safe_conditional(self.row(s, subqueries), i, prefix)


def _safe_conditional(row: np.ndarray, i: int, prefix: tuple[int, ...]) -> float:
    """P[z_i = 1 | z_<i = prefix] (0-based i), 1/2 after a prefix h gives probability 0."""
    try:
        return float(conditional(row, i + 1, prefix))
    except ValueError:
        return 0.5


@functools.cache
def _answer_vectors(q: int) -> tuple[tuple[int, ...], ...]:
    """Every answer vector z ∈ {0,1}^q as a tuple of bits, z_1 first, in the order of h's columns."""
    return tuple(tuple((index >> (q - 1 - i)) & 1 for i in range(q)) for index in range(2**q))


def _all_conditionals(row: np.ndarray) -> np.ndarray:
    """B's estimates at every answer vector: entry [z, i] is P[z_i = 1 | z_<i] under ``row``
    (1/2 after a prefix of probability 0), as :func:`_safe_conditional` gives one at a time."""
    size = row.shape[0]
    q = size.bit_length() - 1
    out = np.empty((size, q))
    z = np.arange(size)
    for i in range(q):
        pairs = row.reshape(2**i, 2, 2 ** (q - i - 1)).sum(axis=2)  # (prefix, z_i)
        total = pairs.sum(axis=1)
        p1 = np.divide(pairs[:, 1], total, out=np.full(2**i, 0.5), where=total > 0)
        out[:, i] = p1[z >> (q - i)]
    return out
