"""The estimator of Lemma A.4: B built by Algorithm 1 against a committed A.

Soundness (Lemma A.4) fixes A's strategy and builds B round by round, from the top: for the
initial estimate, X is the input and Z = {0, 1}; for round k, X is the situations
(x, ŷ^k, y^k, p_k) that the fixed strategies of the rounds above lead to (the distribution μ_k)
and Z = {0,1}^q. On each, Algorithm 1 (:func:`~debatekit.players.indistinguishable.indistinguishable`)
makes h_k δ-indistinguishable from the correct answers g_k under tests built from A, and B plays
B^k_i = P_{z~h_k}[z_i = 1 | z_<i].

Here μ_k is the empirical distribution of the situations reached in TRAINING_DEBATES debates
played with A and the rounds already built (one instance: the input distribution is its point
mass). The truth g_k is used only to build h_k, as in the paper, where the construction cannot
be run but its result is a small circuit querying A. The tests, each in [-1, 1], query A:

* z_i, and (2a_i - 1)(2z_i - 1) with a_i = A's answer to y_i (calibration against her claims);
* A^k·(M_D(x, y^k, z) - p_k), the round's reward over r^k, and M_D(x, y^k, z) itself;
* the round below: A^(k-1)(y_j, B_j)·(z_j - B_j), with j A's recursion choice given the estimates
  h implies at z (a test that depends on h). Its cost is one call of A per answer vector, so it
  is kept while |X|·2^q ≤ SELECTION_LIMIT.

At play time a situation not met in training is evaluated by replaying Algorithm 1's steps (Lemma
A.3's circuit). The achieved δ (the largest final advantage over the rounds) is ``delta``; the run
reports the soundness bound r^(d+1)·P[A(x)=L(x)] + (2d+1)δ with it. A trained estimator is kept
with its instance, per A, so that every debate of a run plays the same B.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.machine.decomposition import Decomposition, Query
from debatekit.players.base import Seat
from debatekit.players.indistinguishable import CallableTests, Estimate, conditional, indistinguishable
from debatekit.prob import Dist
from debatekit.protocols.prover_estimator import Situation, as_direction, decomposition_of, rules_of

MAX_WIDTH = 10
"""Algorithm 1 represents a distribution over all 2^q answer vectors (Lemma A.3's |Z|)."""
DELTA = 0.05
"""δ, the indistinguishability asked of Algorithm 1 in every round."""
TRAINING_DEBATES = 200
SELECTION_LIMIT = 4096


def _expected(move: Any, default: float = 0.0) -> float:
    """A message's value, averaged over a mixed move; garbage counts as ``default``."""
    if isinstance(move, Dist):
        return float(sum(float(w) * _expected(m, default) for m, w in move.items()))
    value = as_direction(move)
    return default if value is None else float(value)


@dataclass
class _Point:
    situation: Situation
    subqueries: tuple[Query, ...]
    static: np.ndarray
    """(2q + 2, 2^q): the tests that do not depend on h."""


class _RoundTests(CallableTests):
    """The tests of one round on registered points (integer indices into ``points``)."""

    def __init__(self, owner: Indistinguishable, level: int, selection: bool):
        self.owner, self.level, self.selection = owner, level, selection
        q = owner.D.width
        super().__init__(self._values, 2 * q + 2 + int(selection))

    def _values(self, points: Any, h: np.ndarray) -> np.ndarray:
        rows = [self.owner.points[int(i)] for i in points]
        out = np.stack([p.static for p in rows], axis=1)  # (n_static, batch, 2^q)
        if not self.selection:
            return out
        chosen = np.stack([self.owner.selection(p, row) for p, row in zip(rows, h, strict=True)])
        return np.concatenate([out, chosen[None]], axis=0)

    def value(self, f: int, points: Any, h: np.ndarray) -> np.ndarray:
        if f < self.n - int(self.selection):
            return np.stack([self.owner.points[int(i)].static[f] for i in points])
        return self._values(points, h)[f]


def estimator(seat: Seat) -> Indistinguishable:
    """The trained B for this seat's instance and committed A, built on first use and kept with
    the instance: every debate of a run plays the one built for its first debate (the
    construction is deterministic given that debate's seed)."""
    name = seat.opponent.name if seat.opponent else ""
    return seat.instance.memo(("indistinguishable estimator", name), lambda: Indistinguishable(seat))


class Indistinguishable:
    """B of Lemma A.4 against the committed A (``seat.opponent``)."""

    def __init__(self, seat: Seat):
        if seat.opponent is None:
            raise ValueError("the indistinguishable estimator needs the committed A (seat.opponent)")
        self.D: Decomposition = decomposition_of(seat.instance)
        if self.D.width > MAX_WIDTH:
            raise ValueError(f"Algorithm 1 needs 2^q answer vectors; q = {self.D.width} > {MAX_WIDTH}")
        self.rules = rules_of(seat)
        self.rng = seat.rng
        a_seat = Seat(seat.instance, Role.ALICE, np.random.default_rng(seat.rng.integers(2**63)), None, seat.rules)
        self.A = seat.opponent.factory(a_seat)
        self.points: list[_Point] = []
        self.index: dict[tuple[Situation, tuple[Query, ...]], int] = {}
        self.rows: dict[int, np.ndarray] = {}
        self.estimates: dict[int, Estimate] = {}
        self.training: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        """Round k's training points, their weights μ_k and the correct answers g_k."""
        self.delta = 0.0
        self._train()

    # -- features -------------------------------------------------------------------------------

    def _register(self, s: Situation, ys: tuple[Query, ...]) -> int:
        key = (s, ys)
        if key not in self.index:
            q, k = self.D.width, s.level
            z = (np.arange(2**q)[:, None] >> np.arange(q - 1, -1, -1)) & 1  # (2^q, q), z_1 first
            M = np.array([self.D.combine(s.query, k, tuple(int(b) for b in row)) for row in z], dtype=float)
            answers = np.array([_expected(self._call("answer", k - 1, y), 0.5) for y in ys])
            direction = _expected(self._call("direction", s))
            static = np.concatenate(
                [z.T.astype(float), (2 * answers[:, None] - 1) * (2 * z.T - 1), [direction * (M - s.p)], [M]]
            )
            self.index[key] = len(self.points)
            self.points.append(_Point(s, ys, np.clip(static, -1, 1)))
        return self.index[key]

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.A, method)(*args)
        except Exception:  # A's garbage is a test value of 0
            return None

    def selection(self, point: _Point, row: np.ndarray) -> np.ndarray:
        """A^(k-1)(y_j, B_j)·(z_j - B_j) for every z, j being A's choice at the estimates h gives."""
        q, s = self.D.width, point.situation
        out = np.zeros(2**q)
        for index in range(2**q):
            z = tuple(int(b) for b in np.binary_repr(index, q))
            estimates = tuple(_safe_conditional(row, i, z[:i]) for i in range(q))
            j = self._call("recurse", s, point.subqueries, estimates, z)
            if isinstance(j, Dist):
                j = max(j.items(), key=lambda item: item[1])[0]
            if not isinstance(j, int | np.integer) or not 0 <= j < q:
                continue
            below = Situation(s.level - 1, point.subqueries[j], estimates[j], s.claim, s.p_root)
            out[index] = _expected(self._call("direction", below)) * (z[j] - estimates[j])
        return np.clip(out, -1, 1)

    # -- training (top down) --------------------------------------------------------------------

    def _train(self) -> None:
        D = self.D
        truth = D.truth(D.root(), D.depth)
        claim_one = float(self._claim_probability())
        tests = CallableTests(lambda pts, h: np.array([[[1 - claim_one, claim_one]], [[0.0, 1.0]]]), 2)
        init = indistinguishable([0], np.ones(1), np.array([[1 - truth, truth]]), tests, DELTA)
        self.p_root = float(init.h[0, 1])
        self.delta = init.advantage
        for level in range(D.depth, 0, -1):
            reached = self._situations(level)
            if not reached:
                break
            keys, counts = np.unique(np.array(reached), return_counts=True)
            mu = counts / counts.sum()
            g = np.stack([D.answer_distribution(self.points[i].situation.query, level) for i in keys])
            selection = len(keys) * 2**D.width <= SELECTION_LIMIT
            estimate = indistinguishable(keys, mu, g, _RoundTests(self, level, selection), DELTA)
            self.estimates[level] = estimate
            self.training[level] = (keys, mu, g)
            for i, row in zip(keys, estimate.h, strict=True):
                self.rows[int(i)] = row
            self.delta = max(self.delta, estimate.advantage)

    def _claim_probability(self) -> float:
        claim = self._call("claim")
        if isinstance(claim, Dist):
            return float(claim.prob(lambda c: c == 1))
        return float(claim == 1)

    def _situations(self, level: int) -> list[int]:
        """The situations of round ``level`` reached in TRAINING_DEBATES debates with A and the
        rounds built so far (registered; their indices)."""
        D, found = self.D, []
        for _ in range(TRAINING_DEBATES):
            claim = self._call("claim")
            claim = claim.sample(self.rng) if isinstance(claim, Dist) else claim
            s = Situation(D.depth, D.root(), self.p_root, claim, self.p_root)
            while s is not None and s.level > level:
                s = self._descend(s)
            if s is not None:
                ys = self._call("queries", s)
                if D.valid_split(s.query, s.level, ys):
                    found.append(self._register(s, ys))
        return found

    def _descend(self, s: Situation) -> Situation | None:
        ys = self._call("queries", s)
        if not self.D.valid_split(s.query, s.level, ys):
            return None  # A forfeits this debate: nothing below to estimate
        row = self.row(s, ys)
        z: list[int] = []
        estimates = []
        for i in range(self.D.width):
            b = _safe_conditional(row, i, tuple(z))
            estimates.append(b)
            z.append(int(self.rng.random() < b))
        j = self._call("recurse", s, ys, tuple(estimates), tuple(z))
        j = j.sample(self.rng) if isinstance(j, Dist) else j
        if not isinstance(j, int | np.integer) or not 0 <= j < self.D.width:
            return None
        return Situation(s.level - 1, ys[j], estimates[j], s.claim, s.p_root)

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
