"""Indistinguishable estimates by online gradient descent: Algorithm 1 and Lemma A.3 of the
prover-estimator debate paper (Appendix A.1).

Setting (Definition A.1). X is a finite batch of points with weights ``mu`` (a distribution), Z a
finite set of answers (``|Z| = 2^q`` answer vectors in the paper, any size here), the truth ``g``
an array of shape ``(|X|, |Z|)`` whose rows lie on the simplex, and F a finite class of tests
``f(x, z, h(x))`` in [-1, 1]. For an estimate ``h`` (rows on the simplex)

    Adv_f(h) = E_{x~mu, z~g(x)} f(x, z, h(x)) - E_{x~mu, z~h(x)} f(x, z, h(x))
             = sum_x mu(x) sum_z (g(x, z) - h(x, z)) f(x, z, h(x)),

and ``h`` is (delta, F)-indistinguishable from ``g`` iff ``|Adv_f(h)| < delta`` for every f.

Algorithm 1. Start from the uniform ``h_1 = 1/|Z|``. While some f has ``|Adv_f(h_t)| >= delta``,
take one (here: the f with the largest ``|Adv_f|``, the smallest index among ties), step
``h_{t+1}(x, z) = h_t(x, z) + eta_t sign(Adv_f) f(x, z, h_t(x))`` for all x, z, and project every
row onto the simplex (Euclidean projection, Duchi, Shalev-Shwartz, Singer and Chandra 2008, the
sort-based algorithm). Otherwise return ``h_t``.

Constants (Theorem A.2, Zinkevich 2003). In the embedding ``Psi h(x, z) = sqrt(mu(x)) h(x, z)``
the algorithm is projected online gradient descent on the losses
``l_t(v) = |<Psi g, Psi F_t> - <v, Psi F_t>|`` with ``F_t(x, z) = f_t(x, z, h_t(x))``, and
``l_t(Psi g) = 0``.

- Diameter: ``||Psi h - Psi h'||^2 = E_x sum_z (h - h')^2 <= E_x 2 = 2`` (two points of the simplex
  are at most sqrt(2) apart, attained by distinct vertices), so ``D = sqrt(2)``.
- Gradient: the paper's bound ``G = 2 sqrt(|Z|)``. (The subgradient is ``-sign(Adv) Psi F``, of norm
  at most ``sqrt(|Z|)``, so the paper's factor 2 is loose; any upper bound is valid in Theorem
  A.2, and we keep the paper's, which halves the step size.)
- Step size: ``eta_t = D / (G sqrt(t)) = 1 / sqrt(2 |Z| t)``.
- Step bound: the average regret against ``Psi g`` is at most ``3 D G / (2 sqrt(T)) =
  3 sqrt(2 |Z|) / sqrt(T)``, and every step has ``l_t(Psi h_t) = |Adv_{f_t}(h_t)| >= delta``, so
  ``delta <= 3 sqrt(2 |Z| / T)``, that is ``T <= 18 |Z| / delta^2``: at most
  ``T_max = floor(18 |Z| / delta^2)`` steps are taken (``step_bound``). The paper's (A.1) writes
  ``3 sqrt(|Z|) / sqrt(T)``, which is D = 1; with the true D = sqrt(2) the constant is 18, not 9.

The cap is a check, not a silent cut: finding a distinguisher after ``T_max`` steps would
contradict Lemma A.3, and :func:`indistinguishable` raises :class:`StepBoundExceeded`.

Lemma A.3, part 2: ``h`` is a circuit of size ``O(T |Z|)`` that queries the tests. The recorded
steps ``(eta_t, sign_t, f_t)`` replayed from the uniform start evaluate ``h`` on any points, also
points outside the training batch (:meth:`Estimate.predict`). Departure: each replayed projection
sorts, ``O(|Z| log |Z|)``, where the paper counts Duchi et al.'s linear-time variant.

Tests are vectorised objects (:class:`Tests`): :class:`ProductTests` for separable tests
``a_f(x) b_f(z)``, whose advantages are matrix products in ``O(|X| |Z| + n (|X| + |Z|))`` memory, and
:class:`CallableTests` for general ``f(x, z, h(x))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

SIMPLEX_TOL = 1e-9
"""Tolerance for ``mu`` and the rows of ``g`` to count as distributions."""


class StepBoundExceeded(RuntimeError):
    """Algorithm 1 still found a distinguisher after its step budget. At ``T_max`` this contradicts
    Lemma A.3; at a smaller ``max_steps`` it is the caller's budget. Carries the state reached:
    ``h``, ``steps`` and the current ``advantage`` (max |Adv_f|, still >= delta)."""

    def __init__(self, message: str, h: np.ndarray, steps: tuple[Step, ...], advantage: float):
        super().__init__(message)
        self.h, self.steps, self.advantage = h, steps, advantage


class Step(NamedTuple):
    """One gradient step of Algorithm 1: ``h <- proj(h + eta * sign * f(., ., h))``."""

    eta: float
    sign: int
    f: int


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``v`` (2-D), or of ``v`` itself (1-D), onto the
    probability simplex: Duchi, Shalev-Shwartz, Singer and Chandra (2008), Figure 1, vectorised over
    rows. With ``u`` a row sorted in decreasing order and ``t_j = (sum_{i<=j} u_i - 1) / j``, Figure
    1's threshold is ``theta = t_rho`` for the last ``rho`` with ``u_rho > t_rho``, and the projection
    is ``max(v - theta, 0)``. We compute ``theta = max_j t_j``, the same number: ``t_j`` is a weighted
    mean of ``t_{j-1}`` and ``u_j``, so it rises exactly while ``u_j > t_j``, which holds for
    ``j <= rho`` and fails after."""
    v = np.asarray(v, dtype=float)
    if v.ndim not in (1, 2) or v.shape[-1] == 0:
        raise ValueError(f"project_simplex takes a non-empty vector or 2-D array, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("project_simplex: entries must be finite")
    rows = v.reshape(-1, v.shape[-1]).copy()
    return _project_rows(rows, np.empty_like(rows)).reshape(v.shape)


def _project_rows(rows: np.ndarray, work: np.ndarray) -> np.ndarray:
    """:func:`project_simplex` of a 2-D float array in place, with ``work`` (same shape) as scratch:
    no new array of that size, which matters at ``|X| |Z| = 10^8``."""
    work[...] = rows
    work.sort(axis=1)
    t = work[:, ::-1]
    np.cumsum(t, axis=1, out=t)
    t -= 1.0
    t /= np.arange(1, rows.shape[1] + 1, dtype=float)
    rows -= t.max(axis=1)[:, None]
    return np.maximum(rows, 0.0, out=rows)


class Tests(Protocol):
    """A finite class F of tests ``f(x, z, h(x))`` in [-1, 1] (Definition A.1), evaluated on a batch
    of points. ``points`` is any indexable batch (``len(points)`` points), ``h`` the current rows
    ``(len(points), |Z|)``."""

    n: int

    def values(self, points: Any, h: np.ndarray) -> np.ndarray:
        """``f(x, z, h(x))`` for every test, point and answer: shape ``(n, len(points), |Z|)``."""
        ...

    def advantages(self, points: Any, mu: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
        """``Adv_f(h)`` for every f (Definition A.1), shape ``(n,)``."""
        return np.einsum("fxz,x,xz->f", self.values(points, h), mu, g - h)

    def value(self, f: int, points: Any, h: np.ndarray) -> np.ndarray:
        """``f(x, z, h(x))`` for the one test ``f``: shape ``(len(points), |Z|)``."""
        return self.values(points, h)[f]


def _check_range(values: np.ndarray, what: str) -> np.ndarray:
    if values.size and not (values.min() >= -1.0 and values.max() <= 1.0):  # NaN fails both
        raise ValueError(f"{what} must lie in [-1, 1] (and be finite)")
    return values


class ProductTests(Tests):
    """Separable tests ``f(x, z) = a_f(x) b_f(z)``, blind to ``h``: ``a(points)`` gives ``(n,
    len(points))`` and ``b`` is ``(n, |Z|)``, both in [-1, 1] so every product is. Advantages are
    ``sum_z b_f(z) sum_x mu(x) a_f(x) (g - h)(x, z)``, two matrix products ``(n, |X|) @ (|X|, |Z|)``
    in memory ``O(|X| |Z| + n (|X| + |Z|))``, never ``n |X| |Z|``. ``a`` is called once per
    advantage evaluation and once per step: make it cheap (e.g. index a precomputed table)."""

    def __init__(self, a: Callable[[Any], np.ndarray], b: np.ndarray):
        b = np.asarray(b, dtype=float)
        if b.ndim != 2:
            raise ValueError(f"b must have shape (n, |Z|), got {b.shape}")
        self.a, self.b, self.n = a, _check_range(b, "b"), b.shape[0]

    def _a(self, points: Any) -> np.ndarray:
        a = np.asarray(self.a(points), dtype=float)
        if a.shape != (self.n, len(points)):
            raise ValueError(f"a(points) must have shape {(self.n, len(points))}, got {a.shape}")
        return _check_range(a, "a(points)")

    def values(self, points: Any, h: np.ndarray) -> np.ndarray:
        return self._a(points)[:, :, None] * self.b[:, None, :]

    def advantages(self, points: Any, mu: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
        weights = self._a(points) * mu  # (n, |X|): mu(x) a_f(x)
        return np.einsum("fz,fz->f", weights @ g - weights @ h, self.b)

    def value(self, f: int, points: Any, h: np.ndarray) -> np.ndarray:
        return np.outer(self._a(points)[f], self.b[f])


class CallableTests(Tests):
    """General tests ``f(x, z, h(x))`` given as ``fn(points, h) -> (n, len(points), |Z|)``."""

    def __init__(self, fn: Callable[[Any, np.ndarray], np.ndarray], n: int):
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self.fn, self.n = fn, n

    def values(self, points: Any, h: np.ndarray) -> np.ndarray:
        values = np.asarray(self.fn(points, h), dtype=float)
        expected = (self.n, *h.shape)
        if values.shape != expected:
            raise ValueError(f"fn(points, h) must have shape {expected}, got {values.shape}")
        return _check_range(values, "test values")


def step_bound(z_size: int, delta: float) -> int:
    """``T_max = floor(18 |Z| / delta^2)``: the most steps Algorithm 1 can take (Theorem A.2 with
    ``D = sqrt(2)``, ``G = 2 sqrt(|Z|)``; derivation in the module docstring)."""
    return math.floor(18 * z_size / delta**2 * (1 + 1e-12))


def step_size(z_size: int, t: int) -> float:
    """``eta_t = D / (G sqrt(t)) = 1 / sqrt(2 |Z| t)`` (Theorem A.2)."""
    return 1.0 / math.sqrt(2 * z_size * t)


def _uniform(batch: int, z_size: int) -> np.ndarray:
    return np.full((batch, z_size), 1.0 / z_size)


def _descend(h: np.ndarray, step: Step, tests: Tests, points: Any, work: np.ndarray) -> None:
    """Lines 8 and 9 of Algorithm 1 (one gate layer of Lemma A.3's circuit), in place:
    ``h <- proj(h + eta sign f(., ., h))``, with ``work`` (shape of ``h``) as scratch."""
    value = np.asarray(tests.value(step.f, points, h))
    if value.shape != h.shape:
        raise ValueError(f"value(f, points, h) must have shape {h.shape}, got {value.shape}")
    np.multiply(value, step.eta * step.sign, out=work)
    h += work
    _project_rows(h, work)


def conditional(row_h: np.ndarray, i: int, prefix: Sequence[int]) -> float | np.ndarray:
    """``P[z_i = 1 | z_1 .. z_{i-1} = prefix]`` under a distribution over ``{0,1}^q`` (the last axis
    of ``row_h``, length ``2^q``; leading axes are a batch). Index convention: z_1 is the most
    significant bit, ``index = sum_i z_i 2^(q-i)``; ``i`` counts from 1."""
    row = np.asarray(row_h, dtype=float)
    size = row.shape[-1] if row.ndim else 0
    q = size.bit_length() - 1
    if q < 1 or size != 1 << q:
        raise ValueError(f"the distribution must have 2^q >= 2 entries, got {size}")
    if not 1 <= i <= q:
        raise ValueError(f"i must be in 1..{q}, got {i}")
    if len(prefix) != i - 1 or any(bit not in (0, 1) for bit in prefix):
        raise ValueError(f"prefix must be {i - 1} bits, got {list(prefix)}")
    p = sum(int(bit) << (i - 2 - j) for j, bit in enumerate(prefix))
    pair = row.reshape(*row.shape[:-1], 1 << (i - 1), 2, 1 << (q - i))[..., p, :, :].sum(axis=-1)
    total = pair.sum(axis=-1)
    if np.any(total <= 0):
        raise ValueError(f"the prefix {list(prefix)} has probability 0")
    out = pair[..., 1] / total
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True, eq=False)
class Estimate:
    """The output of Algorithm 1: ``h`` on the training points, (delta, F)-indistinguishable from g
    with final ``advantage = max_f |Adv_f(h)| < delta`` (Definition A.1); the recorded ``steps``
    (at most ``step_bound``); and the tests, so that :meth:`predict` can replay them (Lemma A.3)."""

    h: np.ndarray
    steps: tuple[Step, ...]
    advantage: float
    step_bound: int
    tests: Tests = field(repr=False)

    conditional = staticmethod(conditional)

    def predict(self, points: Any) -> np.ndarray:
        """``h`` on any points, by Lemma A.3's circuit: replay the recorded steps from the uniform
        start, ``h_{t+1}(x) = proj(h_t(x) + eta_t sign_t f_t(x, ., h_t(x)))``. On the training points
        it reproduces :attr:`h`."""
        h = _uniform(len(points), self.h.shape[1])
        work = np.empty_like(h)
        for step in self.steps:
            _descend(h, step, self.tests, points, work)
        return h


def _validated(points: Any, mu: np.ndarray, g: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    mu, g = np.asarray(mu, dtype=float), np.asarray(g, dtype=float)
    if mu.ndim != 1 or len(mu) != len(points):
        raise ValueError(f"mu must be a vector with one weight per point ({len(points)}), got shape {mu.shape}")
    if not (np.all(mu >= 0) and abs(mu.sum() - 1.0) <= SIMPLEX_TOL):
        raise ValueError("mu must be nonnegative and sum to 1 (within 1e-9)")
    if g.ndim != 2 or g.shape[0] != len(mu) or g.shape[1] == 0:
        raise ValueError(f"g must have shape ({len(mu)}, |Z|) with |Z| >= 1, got {g.shape}")
    if not (np.all(g >= 0) and np.all(np.abs(g.sum(axis=1) - 1.0) <= SIMPLEX_TOL)):
        raise ValueError("every row of g must lie on the simplex: nonnegative, summing to 1 (within 1e-9)")
    if not 0 < delta <= 2:
        raise ValueError(f"delta must be in (0, 2], got {delta}")
    return mu, g


def indistinguishable(
    points: Any, mu: np.ndarray, g: np.ndarray, tests: Tests, delta: float, *, max_steps: int | None = None
) -> Estimate:
    """Algorithm 1: an estimate ``h`` that is (delta, F)-indistinguishable from ``g`` (Definition
    A.1) for the tests F on the points weighted by ``mu``. Each step takes the f with the largest
    ``|Adv_f|`` (smallest index among ties). Raises :class:`StepBoundExceeded` if a distinguisher
    remains after ``min(max_steps, step_bound)`` steps; at ``step_bound`` that contradicts Lemma A.3."""
    mu, g = _validated(points, mu, g, delta)
    z_size = g.shape[1]
    bound = step_bound(z_size, delta)
    if max_steps is not None and max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    limit = bound if max_steps is None else min(max_steps, bound)
    h, steps = _uniform(len(mu), z_size), []
    work = np.empty_like(h)
    while True:
        adv = np.asarray(tests.advantages(points, mu, g, h), dtype=float)
        if adv.shape != (tests.n,) or not np.all(np.isfinite(adv)):
            raise ValueError(f"advantages must be {tests.n} finite numbers, got shape {adv.shape}")
        f = int(np.argmax(np.abs(adv))) if tests.n else 0
        top = abs(float(adv[f])) if tests.n else 0.0
        if top < delta:
            return Estimate(h=h, steps=tuple(steps), advantage=top, step_bound=bound, tests=tests)
        if len(steps) >= limit:
            if limit == bound:
                message = (
                    f"a test still distinguishes (|Adv| = {top:.3g} >= delta = {delta}) after T_max = {bound} "
                    "steps: this contradicts Lemma A.3 (are the tests in [-1, 1] and deterministic?)"
                )
            else:
                message = f"a test still distinguishes (|Adv| = {top:.3g} >= delta = {delta}) after max_steps = {limit}"
            raise StepBoundExceeded(message, h, tuple(steps), top)
        step = Step(eta=step_size(z_size, len(steps) + 1), sign=1 if adv[f] > 0 else -1, f=f)
        _descend(h, step, tests, points, work)
        steps.append(step)
