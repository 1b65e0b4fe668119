"""Counter-based random numbers for debates played as one numpy batch, or alone.

A batch interpreter (stochastic debate's) plays many debates in one array, yet debate i's draws
must depend only on the run's seed and i (:mod:`debatekit.engine.seeds`), never on which debates
share its batch. So each draw is a function of (the debate's key, a counter naming the draw): the
key comes from ``debate_seed(seed, i)``, the counter from the step, the party and the call, and the
uniform is the SplitMix64 finaliser of the two (Steele, Lea and Flood 2014; the same mixing as
numpy's seeding). A batch of any size, a single debate and a replay draw the same numbers.

Binomial counts (n samples of one question, :meth:`Streams.binomial`) are drawn by inverting the
binomial CDF at one uniform, so one draw stands for n oracle queries, still counted as n.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from functools import lru_cache

import numpy as np

from debatekit.engine.seeds import debate_seed

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_UNIT = 2.0**-53


def mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


_MASK = (1 << 64) - 1
_GOLDEN_INT, _M1_INT, _M2_INT = int(_GOLDEN), int(_M1), int(_M2)


def _mix_int(z: int) -> int:
    """:func:`mix` of one 64-bit value, in Python integers (a numpy scalar is slower)."""
    z = ((z ^ (z >> 30)) * _M1_INT) & _MASK
    z = ((z ^ (z >> 27)) * _M2_INT) & _MASK
    return z ^ (z >> 31)


def counter(step: int, purpose: int, call: int = 0) -> int:
    """The counter of one draw: ``purpose`` (a party or nature, < 256) at ``step``, its ``call``-th
    draw of the step (< 2^16)."""
    return (step << 24) | (purpose << 16) | call


class Streams:
    """The random streams of debates ``indices`` of a run seeded ``seed``."""

    def __init__(self, seed: int, indices: np.ndarray):
        self.indices = np.asarray(indices, dtype=np.int64)
        self.keys = np.array(
            [debate_seed(seed, int(i)).generate_state(1, np.uint64)[0] for i in self.indices], dtype=np.uint64
        )

    def words(self, rows: np.ndarray, count: int) -> np.ndarray:
        """64 random bits for each debate in ``rows`` (positions in the batch) at ``count``."""
        return mix(self.keys[rows] ^ np.uint64(_mix_int((count * _GOLDEN_INT + 1) & _MASK)))

    def uniform(self, rows: np.ndarray, count: int) -> np.ndarray:
        """A uniform in [0, 1) for each debate in ``rows`` at ``count``."""
        return (self.words(rows, count) >> _S11).astype(np.float64) * _UNIT

    def binomial(self, rows: np.ndarray, count: int, n: int, p: np.ndarray) -> np.ndarray:
        """Bin(n, p) for each debate in ``rows`` (p per row), by inversion at one uniform each."""
        u = self.uniform(rows, count)
        out = np.empty(len(rows), dtype=np.int64)
        values, index = np.unique(p, return_inverse=True)
        for k, value in enumerate(values):
            where = index.reshape(-1) == k
            low, cdf = binomial_cdf(n, float(value))
            out[where] = low + np.searchsorted(cdf, u[where], side="right")
        return np.minimum(out, n)

    def generator(self, row: int, count: int) -> np.random.Generator:
        """A numpy generator for one debate's draw at ``count`` (a sample-only oracle's, which asks
        each debate's question separately)."""
        return np.random.default_rng(int(self.words(np.array([row]), count)[0]))


class Stream:
    """Debate ``index``'s stream alone, in Python integers and floats: the same numbers as
    :class:`Streams` draws for that debate in any batch, at a fraction of the cost per draw."""

    def __init__(self, seed: int, index: int):
        self.key = int(debate_seed(seed, index).generate_state(1, np.uint64)[0])

    def word(self, count: int) -> int:
        return _mix_int(self.key ^ _mix_int((count * _GOLDEN_INT + 1) & _MASK))

    def uniform(self, count: int) -> float:
        z = self.key ^ _mix_int((count * _GOLDEN_INT + 1) & _MASK)  # word(count), inlined: the hot path
        z = ((z ^ (z >> 30)) * _M1_INT) & _MASK
        z = ((z ^ (z >> 27)) * _M2_INT) & _MASK
        return ((z ^ (z >> 31)) >> 11) * _UNIT

    def binomial(self, count: int, n: int, p: float) -> int:
        """Bin(n, p) by inversion at this debate's uniform at ``count`` (``searchsorted`` on the
        right is ``bisect_right``)."""
        low, cdf = _cdf_list(n, p)
        return min(low + bisect_right(cdf, self.uniform(count)), n)

    def generator(self, count: int) -> np.random.Generator:
        return np.random.default_rng(self.word(count))


@lru_cache(maxsize=256)
def _cdf_list(n: int, p: float) -> tuple[int, list[float]]:
    low, cdf = binomial_cdf(n, p)
    return low, cdf.tolist()


WINDOW = 40.0
"""Standard deviations kept each side of the mean: the mass beyond is below 1e-300."""


@lru_cache(maxsize=256)
def binomial_cdf(n: int, p: float) -> tuple[int, np.ndarray]:
    """(low, P[X <= k] for k = low..high), X ~ Bin(n, p), over the counts within :data:`WINDOW`
    standard deviations of the mean (all of 0..n for small n), from log-space terms."""
    if p <= 0.0 or p >= 1.0:
        cdf = np.ones(1)
        cdf.flags.writeable = False
        return (n if p >= 1.0 else 0), cdf
    spread = WINDOW * math.sqrt(n * p * (1 - p)) + 10
    low, high = max(0, math.floor(n * p - spread)), min(n, math.ceil(n * p + spread))
    k = np.arange(low, high)
    steps = np.log((n - k) / (k + 1)) + math.log(p) - math.log1p(-p)  # log pmf(k+1) - log pmf(k)
    first = math.lgamma(n + 1) - math.lgamma(low + 1) - math.lgamma(n - low + 1)
    first += low * math.log(p) + (n - low) * math.log1p(-p)
    logs = first + np.concatenate([[0.0], np.cumsum(steps)])
    cdf = np.cumsum(np.exp(logs - logs.max()))
    cdf /= cdf[-1]
    cdf.flags.writeable = False
    return low, cdf
