"""Lemma A.4's B over the counts M_D reads: the theorem's estimator for wide stable
decompositions (Theorem 8.3's evidence-majority, q = wκ = 34), where Algorithm 1 over all 2^q
answer vectors (:class:`~debatekit.players.estimator.Indistinguishable`) cannot run. The proof
that it covers the tests Lemma A.4 uses is docs/count-estimator.md.

Representation. The decomposition names groups of the split whose counts of ones M_D reads
(:class:`~debatekit.machine.decomposition.CountStatistic`: Appendix C's w majorities of κ). At a
situation of μ_k B splits each group into *cells* by the correct answers' marginals p_i (what
Algorithm 1 reads of g through the coordinate tests z_i of :mod:`debatekit.players.estimator`:
Adv_{z_i} = p_i - 1/2 at its uniform start), and ranges over the count space Z' = ∏_C [0, n_C]
(:class:`Cells`; 18² = 324 vectors for evidence-majority when a group's answers agree, at most
90² = 8100). A distribution H on Z' stands for the exchangeable h on {0,1}^q that spreads H(c)
evenly over the N(c) = ∏_C binom(n_C, c_C) answer vectors with those counts, and B plays Figure 2
by its conditionals B^k_i(z_<i) = P_h[z_i = 1 | z_<i], computed over Z' in O(|Z'|)
(:meth:`Cells.conditional`: a hypergeometric likelihood of the prefix per cell).

Training. Per situation, Algorithm 1 runs unchanged on X = {the situation}, Z = Z' (Lemma A.3
there: T ≤ 18|Z'|/δ'²) with the correct answers pushed to counts (G, per cell a Poisson-binomial
law by dynamic programming, O(Σ_C n_C²)) and tests that read counts: the thresholds
1[c_C ≥ t] (whose averages are the cell fractions, the orbit averages of z_i and of the
calibrations (2a_i - 1)(2z_i - 1)), A^k·(M_D - p_k) (r_k over r^k) and M_D. For a test f = φ∘c,
Adv_f(h) on {0,1}^q is Adv_φ(H) on Z' exactly; and since g is constant on every cell, every test f
in [-1, 1], Lemma A.4's f_(k+1) with any recursion rule of A included, has |Adv_f(h)| ≤
Σ_c |G - H|(c) (``Fit.bound``). ``delta`` is the largest μ-weighted such bound over the rounds (and
the initial round's advantage). Algorithm 1 runs at δ' = δ/(2q), which makes the bound below δ
when g is a point mass.

Departures: Algorithm 1 runs per situation (δ'-indistinguishable at each implies it on μ_k),
stopped after STEP_BUDGET steps as in :mod:`debatekit.players.estimator`; off μ's support B splits
groups by nothing and plays Algorithm 1's start (uniform on Z'), where no test weighs it. μ_(k-1)
is enumerated from every answer vector of the count vectors carrying all of H but less than δ'
(at most ORBIT_LIMIT per situation); the mass left out is charged to ``delta``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np

from debatekit.machine.decomposition import CountStatistic, Query
from debatekit.players.estimator import SITUATION_LIMIT, STEP_BUDGET, Indistinguishable, _Point, untrainable
from debatekit.players.indistinguishable import (
    Estimate,
    ProductTests,
    StepBoundExceeded,
    indistinguishable,
)
from debatekit.protocols.prover_estimator import Situation

COUNT_LIMIT = 1 << 16
"""The most count vectors one situation's B ranges over (|Z'|)."""
ORBIT_LIMIT = 4096
"""The most answer vectors μ_(k-1) is enumerated from at one situation."""


def _pascal(n: int) -> np.ndarray:
    """binom(a, b) for 0 ≤ a, b ≤ n as floats (0 where b > a)."""
    table = np.zeros((n + 1, n + 1))
    for a in range(n + 1):
        for b in range(a + 1):
            table[a, b] = math.comb(a, b)
    return table


def refine(statistic: CountStatistic, labels: Sequence[object]) -> tuple[tuple[int, ...], ...]:
    """The cells: each group of the statistic split by a label per answer (groups in order, then
    labels in order of first appearance; coordinates ascending)."""
    cells = []
    for group in statistic.groups:
        by_label: dict[object, list[int]] = {}
        for i in sorted(group):
            by_label.setdefault(labels[i], []).append(i)
        cells += [tuple(cell) for cell in by_label.values()]
    return tuple(cells)


class Cells:
    """A partition of the q answers into cells and its count space Z' = ∏_C [0, n_C] (index in C
    order, the first cell most significant), with the exchangeable lifting
    h(z) = H(c(z)) / N(c(z)), N(c) = ∏_C binom(n_C, c_C) (``multiplicity``)."""

    def __init__(self, cells: tuple[tuple[int, ...], ...], q: int):
        if sorted(i for cell in cells for i in cell) != list(range(q)):
            raise ValueError(f"cells must partition range({q}), got {cells}")
        self.cells, self.q = cells, q
        self.sizes = np.array([len(cell) for cell in cells])
        self.cell_of = np.empty(q, dtype=int)
        for index, cell in enumerate(cells):
            self.cell_of[list(cell)] = index
        self.shape = tuple(int(n) + 1 for n in self.sizes)
        self.size = math.prod(self.shape)
        if self.size > COUNT_LIMIT:
            raise ValueError(f"the count space has {self.size} > {COUNT_LIMIT} vectors")
        self.counts = np.indices(self.shape).reshape(len(cells), -1).T
        self.pascal = _pascal(q)
        self.multiplicity = np.prod(self.pascal[self.sizes, self.counts], axis=1)

    def index(self, z: Sequence[int]) -> int:
        """The count vector of an answer vector."""
        c = np.bincount(self.cell_of, weights=np.asarray(z, dtype=float), minlength=len(self.cells))
        return int(np.ravel_multi_index(tuple(c.astype(int)), self.shape))

    def representative(self, index: int) -> tuple[int, ...]:
        """One answer vector with these counts: the first c_C coordinates of each cell set."""
        z = [0] * self.q
        for cell, c in zip(self.cells, self.counts[index], strict=True):
            for i in cell[: int(c)]:
                z[i] = 1
        return tuple(z)

    def orbit(self, index: int) -> Iterator[tuple[int, ...]]:
        """Every answer vector with these counts (N(c) of them)."""
        choices = [combinations(cell, int(c)) for cell, c in zip(self.cells, self.counts[index], strict=True)]
        for ones in product(*choices):
            z = [0] * self.q
            for chosen in ones:
                for i in chosen:
                    z[i] = 1
            yield tuple(z)

    def pushforward(self, p: Sequence[float]) -> np.ndarray:
        """The law on Z' of independent answers z_i ~ Bernoulli(p_i): per cell the number of ones
        by dynamic programming (Poisson-binomial, O(n_C²)), the cells independent."""
        joint = np.ones(1)
        for cell in self.cells:
            law = np.ones(1)
            for i in cell:
                law = np.concatenate([law * (1 - p[i]), [0.0]]) + np.concatenate([[0.0], law * p[i]])
            joint = np.multiply.outer(joint, law).reshape(-1)
        return joint

    def _likelihood(self, prefix: Sequence[int]) -> np.ndarray:
        """P_h[z_<i = prefix | c] for every c: per cell, binom(n - m, c - o) / binom(n, c) for m
        coordinates seen of which o are ones."""
        i = len(prefix)
        seen = np.bincount(self.cell_of[:i], minlength=len(self.cells))
        ones = np.bincount(self.cell_of[:i], weights=np.asarray(prefix, dtype=float), minlength=len(self.cells))
        left = self.counts - ones.astype(int)
        room = self.sizes - seen
        possible = (left >= 0) & (left <= room)
        ways = np.where(possible, self.pascal[np.broadcast_to(room, left.shape), np.clip(left, 0, self.q)], 0.0)
        return np.prod(ways, axis=1) / self.multiplicity

    def conditional(self, H: np.ndarray, i: int, prefix: Sequence[int]) -> float:
        """B^k_i = P_h[z_i = 1 | z_<i = prefix] (``i`` from 0) under the lifting of H; 1/2 after
        a prefix of probability 0, as :mod:`debatekit.players.estimator` plays it."""
        if len(prefix) != i:
            raise ValueError(f"prefix must have {i} bits, got {len(prefix)}")
        weights = H * self._likelihood(prefix)
        total = weights.sum()
        if total <= 0:
            return 0.5
        cell = self.cell_of[i]
        seen = int(np.sum(self.cell_of[:i] == cell))
        ones = int(sum(int(b) for j, b in enumerate(prefix) if self.cell_of[j] == cell))
        chance = (self.counts[:, cell] - ones) / (self.sizes[cell] - seen)
        return float(np.clip((weights * chance).sum() / total, 0.0, 1.0))

    def conditionals(self, H: np.ndarray, z: Sequence[int]) -> tuple[float, ...]:
        """B's estimates along an answer vector: B^k_i(z_<i) for every i."""
        return tuple(self.conditional(H, i, z[:i]) for i in range(self.q))


@dataclass
class _CountPoint(_Point):
    cells: Cells


@dataclass(frozen=True)
class Fit:
    """Algorithm 1 at one situation: its estimate over Z', the correct answers pushed to Z'
    (``truth``), and ``bound`` = Σ_c |G - H|(c), the most any test in [-1, 1] on {0,1}^q can tell
    the lifted h from g there (the correct answers are constant on every cell)."""

    estimate: Estimate
    truth: np.ndarray
    bound: float


class CountEstimator(Indistinguishable):
    """Lemma A.4's B over the counts M_D reads (module docstring); needs ``D.statistic``."""

    max_width = math.inf

    def _train(self) -> None:
        if self.D.statistic is None:
            raise ValueError("the count estimator needs the decomposition's statistic (Decomposition.statistic)")
        self.fits: dict[int, Fit] = {}
        """Algorithm 1 at each training situation (by point index)."""
        self.rounds: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        """Round k's training situations and their weights μ_k."""
        D = self.D
        frontier = self._root_frontier()
        for level in range(D.depth, 0, -1):
            trained = self._round(frontier, level)
            if trained is None:
                break
            keys, mu = trained
            for i in keys:
                self.fits[int(i)] = fit = self._fit(int(i), level)
                self.rows[int(i)] = fit.estimate.h[0]
            self.rounds[level] = (keys, mu)
            bound = float(sum(m * self.fits[int(i)].bound for i, m in zip(keys, mu, strict=True)))
            if level > 1:
                frontier, left_out = self._below(keys, mu)
                bound += 2 * left_out
            self.delta = max(self.delta, bound)

    def _training_point(self, s: Situation, ys: tuple[Query, ...], level: int) -> int:
        """A training situation's point, its cells split by the correct answers' marginals."""
        return self._register(s, ys, [self.truth.truth(y, level - 1) for y in ys])

    def _register(self, s: Situation, ys: tuple[Query, ...], marginals: Sequence[float] | None = None) -> int:
        """The situation's point: its cells (the statistic's groups, split by the correct answers'
        marginals p_i on training situations) and the count tests on them."""
        key = (s, ys)
        if key not in self.index:
            labels = [0.0] * self.D.width if marginals is None else list(marginals)
            cells = Cells(refine(self.D.statistic, labels), self.D.width)  # type: ignore[arg-type]
            M = np.array([self.D.combine(s.query, s.level, cells.representative(c)) for c in range(cells.size)])
            thresholds = [cells.counts[:, C] >= t for C, n in enumerate(cells.sizes) for t in range(1, n + 1)]
            static = np.concatenate([np.array(thresholds, dtype=float), [self._directions([s])[0] * (M - s.p)], [M]])
            self.index[key] = len(self.points)
            self.points.append(_CountPoint(s, ys, np.clip(static, -1, 1), cells))
        return self.index[key]

    def _fit(self, i: int, level: int) -> Fit:
        """Algorithm 1 on Z' at one situation, at δ' = δ/(2q), and the bound on every test."""
        point = self.points[i]
        cells: Cells = point.cells  # type: ignore[attr-defined]
        p = [self.truth.truth(y, level - 1) for y in point.subqueries]
        G = cells.pushforward(p)
        n = len(point.static)
        tests = ProductTests(lambda pts: np.ones((n, len(pts))), point.static)
        target = self.rules.delta_at(self.D.depth) / (2 * self.D.width)
        try:
            estimate = indistinguishable([0], np.ones(1), G[None], tests, target, max_steps=STEP_BUDGET)
        except StepBoundExceeded as reached:
            estimate = Estimate(reached.h, reached.steps, reached.advantage, STEP_BUDGET, tests)
        return Fit(estimate, G, float(np.abs(G - estimate.h[0]).sum()))

    def _below(self, keys: np.ndarray, mu: np.ndarray) -> tuple[dict[Situation, float], float]:
        """μ_(k-1): every answer vector of the count vectors that carry all of H but less than
        δ' (the most likely first), B's estimates at it and A's choice j; and the μ-weighted mass
        left out. Below a situation A's rewards total less than Σ_j r^j < 2 in absolute value, so
        leaving mass τ untrained moves her expected payoff by less than 2τ, which ``delta`` adds."""
        below: dict[Situation, float] = defaultdict(float)
        left_out, tolerance = 0.0, self.rules.delta_at(self.D.depth) / (2 * self.D.width)
        for i, weight in zip(keys, mu, strict=True):
            point, H = self.points[int(i)], self.rows[int(i)]
            cells: Cells = point.cells  # type: ignore[attr-defined]
            s = point.situation
            order = np.argsort(-H, kind="stable")
            kept = int(np.searchsorted(np.cumsum(H[order]), 1 - tolerance)) + 1
            support = order[: min(kept, len(order))]
            support = support[H[support] > 0]
            left_out += weight * max(0.0, 1.0 - float(H[support].sum()))
            if cells.multiplicity[support].sum() > ORBIT_LIMIT:
                raise untrainable(f"B spreads over more than {ORBIT_LIMIT} answer vectors")
            shares, asked = [], []
            for c in support:
                for z in cells.orbit(int(c)):
                    shares.append(weight * H[c] / cells.multiplicity[c])
                    asked.append((cells.conditionals(H, z), z))
            ys = point.subqueries
            moves = [lambda a, e=e, z=z: a.recurse(s, ys, e, z) for e, z in asked]  # noqa: B023 (asked at once, here)
            for share, (estimates, _), choices in zip(shares, asked, self._choices(moves), strict=True):
                for w, j in choices:
                    child = Situation(s.level - 1, point.subqueries[j], estimates[j], s.claim, s.p_root)
                    below[child] += share * w
        if len(below) > SITUATION_LIMIT:
            raise untrainable(f"μ_k holds {len(below)} situations > {SITUATION_LIMIT}")
        return below, left_out

    def row(self, s: Situation, ys: tuple[Query, ...]) -> np.ndarray:
        """H at a situation: from training, else Algorithm 1's start (uniform on Z'), off μ's support."""
        i = self._register(s, ys)
        if i not in self.rows:
            size = self.points[i].cells.size  # type: ignore[attr-defined]
            self.rows[i] = np.full(size, 1.0 / size)
        return self.rows[i]

    def conditional(self, s: Situation, subqueries: tuple[Query, ...], i: int, prefix: tuple[int, ...]) -> float:
        H = self.row(s, subqueries)
        return self.points[self.index[(s, subqueries)]].cells.conditional(H, i, prefix)  # type: ignore[attr-defined]
