"""Certified binomial tails: the failure bounds of the three lemmas the Lean proof takes from sampling.

The Lean proof (Debate/Details.lean) uses the honest parties' sampling only through ``alice_pr_le``
(honest Alice's estimate is off by >= c with probability <= q) and ``bob_complete`` / ``bob_sound`` for
``bob' c s q`` (accept iff |p - estimate| < (c+s)/2). This module bounds their failure probabilities for
every true probability with exact binomial tails instead of Hoeffding (docs/planner.md, "The tail"):

* :func:`tail` is a certified upper bound on sup_p P_p[Bin(n, p) <= n(p - e)] (= the upper tail);
* :func:`alice_failure`, :func:`bob_failures` bound the three lemmas' failure probabilities, and
  :func:`bob_estimate_failure` the two-sided miss of ``bob'``'s estimate (Lean's route);
  :func:`bob_prime_failure` is the one a :class:`~debatekit.protocols.stochastic.params.Proof` certifies.

:mod:`debatekit.protocols.stochastic.planner` searches the parameters these bounds certify.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

import numpy as np
from scipy import stats

from debatekit.protocols.stochastic.params import Proof

CDF_MARGIN = 1e-9
"""Relative margin added to every computed binomial cdf value (floating-point error of binom.cdf)."""

PRUNE_MARGIN = 1e-4
"""Relative margin on the Chernoff-Stirling block bounds that let the sweep skip breakpoints."""

SWEEP_BUDGET = 2**22
"""Breakpoints the certified tail evaluates exactly before it settles for the block bounds."""

_DOWN = 1 - 2.0**-50  # (k/n + e) * _DOWN, rounded, never exceeds the exact k/n + e


def float_down(x: Fraction) -> float:
    """The largest float <= x (x >= 0)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _kmax(n: int, e: float) -> int:
    """Last k that may satisfy k/n + e <= 1 (one extra k is harmless: its p is clipped to 1, cdf 0)."""
    return min(n - 1, math.floor(n * (1 - e)) + 1)


def _breakpoints(k: np.ndarray, n: int, e: float) -> np.ndarray:
    """k/n + e rounded down (so binom.cdf is evaluated at or below the exact point), clipped to 1."""
    return np.minimum((k / n + e) * _DOWN, 1.0)


def _cdf(k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    return np.asarray(stats.binom.cdf(k, n, p), dtype=float)


def tail_sweep(n: int, e: float) -> tuple[float, int]:
    """Every breakpoint: (max_k binom.cdf(k, n, k/n + e), argmax k), no margin; (0, -1) if none.

    sup_{p in [0,1]} P_p[X <= n(p - e)] is this maximum (docs/planner.md, "The tail").
    """
    _check_tail_args(n, e)
    if e <= 0:
        return 1.0, n
    kmax = _kmax(n, e)
    if kmax < 0:
        return 0.0, -1
    return _max_over(n, e, [(0, kmax + 1)])


def _max_over(n: int, e: float, ranges: list[tuple[int, int]], chunk: int = 2**21) -> tuple[float, int]:
    """(max, argmax) of binom.cdf(k, n, k/n + e) over k in the half-open ranges, in chunks."""
    best, arg = -1.0, -1
    for start, stop in ranges:
        for a in range(start, stop, chunk):
            k = np.arange(a, min(stop, a + chunk))
            values = _cdf(k, n, _breakpoints(k, n, e))
            i = int(np.argmax(values))
            if values[i] > best:
                best, arg = float(values[i]), int(k[i])
    return max(best, 0.0), arg


def _check_tail_args(n: int, e: float) -> None:
    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not math.isfinite(e):
        raise ValueError(f"e must be finite, got {e!r}")


def _kl(a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """D(a || p) = a ln(a/p) + (1-a) ln((1-a)/(1-p)) for 0 < a < p < 1, without cancellation."""
    gap = p - a
    return -a * np.log1p(gap / a) - (1 - a) * np.log1p(-gap / (1 - a))


def _block_bounds(n: int, e: float, kmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Blocks [lo, hi] covering k = 0..kmax, each with an upper bound on binom.cdf(k, n, p) at its
    breakpoints (inf where no bound is claimed: k = 0, k = kmax and the blocks around D's minimum).

    For 1 <= k <= n-1 and p >= k/n + e_lo (every rounded breakpoint is, with e_lo = e - 2^-48):
    binom.cdf(k, n, p) <= pmf(k) / (1 - rho) with rho = k(1-p)/((n-k+1)p), the largest ratio
    pmf(j-1)/pmf(j) for j <= k, and pmf(k) <= sqrt(n/(2 pi k(n-k))) exp(-n D(k/n || p)) (Robbins).
    On a block: sqrt(...) is largest at an end, rho at most hi(1-a_lo-e_lo)/((n-hi+1)(a_lo+e_lo)),
    and D(a || a+e_lo), convex in a, smallest at an end unless the block holds D's minimum.
    """
    e_lo = e - 2.0**-48
    inner = min(kmax - 1, n - 1)
    if e_lo <= 0 or inner < 1:
        return np.array([0]), np.array([kmax]), np.array([np.inf])
    blocks = min(inner, 2**20, max(512, math.ceil(32 / e)))  # blocks of about n e / 32 keep rho < 1
    ends = np.unique(np.linspace(1, inner + 1, num=blocks + 1).astype(np.int64))
    lo, hi = ends[:-1], ends[1:] - 1
    a_lo, a_hi = lo / n, hi / n
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d_lo, d_hi = _kl(a_lo, a_lo + e_lo), _kl(a_hi, a_hi + e_lo)
        d_min = np.minimum(d_lo, d_hi)
        sq = np.sqrt(n / (2 * np.pi * np.minimum(lo * (n - lo), hi * (n - hi)).astype(float)))
        rho = hi * (1 - a_lo - e_lo) / ((n - hi + 1) * (a_lo + e_lo))
        bound = sq * np.exp(-n * d_min) / (1 - rho)
    bound = np.where((rho < 1) & (a_hi + e_lo < 1) & np.isfinite(bound), bound, np.inf)
    j = int(np.nanargmin(d_min))
    bound[max(0, j - 2) : j + 3] = np.inf  # the blocks around D's minimum
    edges = np.array([0, inner + 1]), np.array([0, kmax])
    return np.concatenate([edges[0], lo]), np.concatenate([edges[1], hi]), np.concatenate([[np.inf, np.inf], bound])


def _tail_certified(n: int, e: float) -> float:
    """An upper bound on max_k binom.cdf(k, n, k/n + e), equal to it unless the sweep budget runs out.

    Blocks of k are swept in decreasing order of their :func:`_block_bounds`, starting from a value
    some k attains (:func:`tail_fast`), until the next block's bound is below the best value found
    (then the result is exact) or SWEEP_BUDGET breakpoints have been evaluated (then the result is the
    larger of the best value and the next bound). A value below 1e-290 is reported as 1e-289.
    """
    kmax = _kmax(n, e)
    if kmax < 0:
        return 0.0
    if hoeffding(n, e) < 1e-290:
        return 1e-289
    if kmax < 20_000:
        best = tail_sweep(n, e)[0]
    else:
        best = tail_fast(n, e)  # attained by some k, so a valid start for the maximum
        lo, hi, bound = _block_bounds(n, e, kmax)
        bound = bound * (1 + PRUNE_MARGIN)
        order = np.argsort(-bound, kind="stable")
        order = order[bound[order] >= best]
        swept = 0
        for start in range(0, order.size, 256):
            batch = order[start : start + 256]
            if bound[batch[0]] < best:
                break
            if swept >= SWEEP_BUDGET and np.isfinite(bound[batch[0]]):
                best = max(best, float(bound[batch[0]]))  # every block left is below this bound
                break
            batch = batch[bound[batch] >= best]
            sizes = hi[batch] - lo[batch] + 1
            k = np.repeat(lo[batch] - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
            best = max(best, float(_cdf(k, n, _breakpoints(k, n, e)).max()))
            swept += k.size
    return max(best, 1e-289) if best < 1e-290 else best


@lru_cache(maxsize=65536)
def tail_fast(n: int, e: float) -> float:
    """About tail_sweep(n, e)[0], and a value some breakpoint reaches: a grid of 129 breakpoints over all
    k, then grids zooming in on the best one. For the optimiser's search, not for certificates."""
    if e <= 0:
        return 1.0
    kmax = _kmax(n, e)
    if kmax < 0:
        return 0.0
    if kmax < 512:
        return tail_sweep(n, e)[0]
    lo, hi, best = 0, kmax, 0.0
    while hi - lo >= 2:
        k = np.unique(np.linspace(lo, hi, num=129).astype(np.int64))
        values = _cdf(k, n, _breakpoints(k, n, e))
        i = int(np.argmax(values))
        best = max(best, float(values[i]))
        lo, hi = int(k[max(i - 1, 0)]), int(k[min(i + 1, k.size - 1)])
        if k.size == hi - lo + 1:
            break
    return best


@lru_cache(maxsize=4096)
def tail(n: int, e: float) -> float:
    """Certified upper bound on sup_{p in [0,1]} P_p[Bin(n, p) <= n(p - e)], which by symmetry
    (X -> n - X, p -> 1 - p) also bounds sup_p P_p[Bin(n, p) >= n(p + e)]. Nonincreasing in e.

    The maximum over every breakpoint of :func:`tail_sweep` (skipping only k that a rigorous
    Chernoff-Stirling bound keeps below it), times 1 + CDF_MARGIN for binom.cdf's rounding.
    """
    _check_tail_args(n, e)
    if e <= 0:
        return 1.0
    return min(1.0, _tail_certified(int(n), float(e)) * (1 + CDF_MARGIN))


def hoeffding(n: int, e: float) -> float:
    """exp(-2 n e^2) (with a 1e-9 margin for rounding), Hoeffding's bound on the same sup: used for terms
    far below the one that matters."""
    return 1.0 if e <= 0 else min(1.0, math.exp(-2 * n * e * e) * (1 + 1e-9))


TailFn = Callable[[int, float], float]


def small_term(tail_fn: TailFn, n: int, e: float, main: float) -> float:
    """tail_fn(n, e), or Hoeffding's bound when that is already below 1e-9 of the main term."""
    h = hoeffding(n, e)
    return h if h <= 1e-9 * main else tail_fn(n, e)


def alice_failure(n: int, c: float, tail_fn: TailFn = tail) -> float:
    """Bound on P[|X/n - p| >= c] for every p (Lean ``alice_pr_le``): lower tail + upper tail."""
    return min(1.0, 2 * tail_fn(n, c))


def bob_sound_failure(n: int, c: float, s: float, tail_fn: TailFn = tail) -> float:
    """``bob' c s`` with n samples accepts a claim off by >= s with probability <= this (``bob_sound``).

    Accepting means |p - X/n| < (c+s)/2, so X/n is beyond p_true by more than (s-c)/2 on the claim's side.
    """
    return tail_fn(n, float_down((Fraction(s) - Fraction(c)) / 2))


def bob_complete_failure(n: int, c: float, s: float, tail_fn: TailFn = tail, splits: int = 16) -> float:
    """``bob' c s`` with n samples rejects a claim off by <= c with probability <= this (``bob_complete``).

    With delta = p - p_true in [-c, c] and r = (c+s)/2, rejecting means X/n >= p_true + (r + delta) or
    X/n <= p_true - (r - delta), so the failure is <= tail(r + delta) + tail(r - delta), symmetric in delta.
    On [d_i, d_j] that is <= tail(r + d_i) + tail(r - d_j) (tail is nonincreasing); the interval holding
    the largest bound is halved up to ``splits`` times.
    """
    cf, sf = Fraction(c), Fraction(s)
    r = (cf + sf) / 2
    main = tail_fn(n, float_down(r - cf))  # tail(r - c) = tail((s-c)/2): the largest term anywhere
    floor = main + small_term(tail_fn, n, float_down(r + cf), main)  # delta = c's bound; no interval beats it

    def bound(a: Fraction, b: Fraction) -> float:
        low = tail_fn(n, float_down(r - b))
        return low + small_term(tail_fn, n, float_down(r + a), main)

    points = [Fraction(0), cf]
    bounds = [bound(points[0], points[1])]
    for _ in range(splits):
        i = max(range(len(bounds)), key=bounds.__getitem__)
        if bounds[i] <= floor * (1 + 1e-4):
            break
        middle = (points[i] + points[i + 1]) / 2
        points.insert(i + 1, middle)
        bounds[i : i + 1] = [bound(points[i], middle), bound(middle, points[i + 2])]
    return min(1.0, max(bounds))


def bob_failures(n: int, c: float, s: float, tail_fn: TailFn = tail, splits: int = 16) -> tuple[float, float]:
    """(``bob_complete`` failure, ``bob_sound`` failure) bounds for ``bob' c s`` with n samples."""
    return bob_complete_failure(n, c, s, tail_fn, splits), bob_sound_failure(n, c, s, tail_fn)


def bob_estimate_failure(n: int, c: float, s: float, tail_fn: TailFn = tail) -> float:
    """``bob' c s``'s own estimate (``alice' ((s-c)/2)``, here with n samples) misses by >= (s-c)/2 with
    probability <= this, for every p: ``alice_pr_le``'s conclusion at e = (s-c)/2, from which Lean
    proves both ``bob_complete`` and ``bob_sound``."""
    return alice_failure(n, float_down((Fraction(s) - Fraction(c)) / 2), tail_fn)


def bob_prime_failure(proof: Proof, n: int, c: float, s: float, tail_fn: TailFn = tail, splits: int = 16) -> float:
    """The failure of ``bob' c s`` with n samples that ``proof`` certifies against its allowance: the
    larger of the two direct bounds, or the two-sided miss of its estimate (Lean's route)."""
    if proof is Proof.lean:
        return bob_estimate_failure(n, c, s, tail_fn)
    return max(bob_failures(n, c, s, tail_fn, splits))
