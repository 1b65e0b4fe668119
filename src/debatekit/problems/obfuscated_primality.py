"""A problem for recursive debate (prover-estimator and naive recursion) with its recursive
decomposition M_D (Definition 5.1), and the number theory its bounded debaters run (trial division,
Pollard's rho, Miller-Rabin, interval candidates).

**obfuscated-primality** (Section 7, after Barnes 2020). The input is an integer N; the claim
"N is prime" is decomposed as "N has no factor in [2, ⌊√N⌋]", split into q consecutive
intervals of candidate divisors, recursively, down to leaves of LEAF candidates that a human
checks by doing the divisions (:class:`FactorIntervals`). For N = p·p' every interval but the
one holding p is correct, and the debaters are *bounded*: each may spend DIVISION_BUDGET = 2^10
operations per debate, one operation being one division with remainder or one multiplication
modulo N, while the Miller-Rabin test (:func:`is_probable_prime`, the polynomial-time test both
debaters run) costs O(log N) multiplications per base. Spent on trial division
(:func:`trial_divide`; :meth:`FactorIntervals.bounded_truth` is what such a debater knows), the
budget is hopeless against a b-bit factor, one of ~2^(b-1) candidates (2^10·b ln 2 / 2^(b-1) if
only b-bit primes are tried: 0.35 at b = 16, 0.002 at b = 24). Spent on Pollard's rho
(:func:`pollard_rho`, Brent's variant), which needs about √(πp/2) ≈ 2^(b/2) steps, it factors N
at small b. So the default size is the least b (of 16, 18, ..., 30) at which the obfuscator of
Section 7 wins naive recursion against every built-in bounded challenger in at least 95% of
debates (the Wilson interval's lower end). Her win rate, 1000 debates per cell, each on a fresh
instance (:func:`debatekit.analysis.obfuscation.challenger_rates`, seed 0):

    b   d   honest  spot-check  pollard-rho  random  first
    16   6   0.958     0.996       0.185      1.000   1.000
    18   7   0.993     0.998       0.557      1.000   1.000
    20   8   0.999     1.000       0.844      1.000   1.000
    22   9   1.000     1.000       0.952      1.000   1.000   (pollard-rho: Wilson [0.937, 0.964])
    24  10   1.000     1.000       0.989      1.000   1.000   (pollard-rho: Wilson [0.980, 0.994])
    26  11   1.000     1.000       0.999      1.000   1.000
    28  12   1.000     1.000       0.999      1.000   1.000
    30  13   1.000     1.000       1.000      1.000   1.000

At the default b = 24 both debaters know that N is composite but neither can say which interval
is wrong: the obfuscated argument.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations

import numpy as np

from debatekit.machine.decomposition import Automaton, Decomposition, LeafOracle, Query, exact_split
from debatekit.params import param
from debatekit.problems.registry import Feature, Instance, problem

WIDTH = 4
"""q of :class:`FactorIntervals`: each interval claim splits into 4 consecutive intervals."""
LEAF = 16
"""Candidate divisors per leaf: the human does at most 16 divisions to judge one leaf."""
DIVISION_BUDGET = 2**10
"""Operations (a division with remainder or a multiplication modulo N) one bounded debater may
spend per debate (module docstring: why a factor is out of reach at the default size)."""
MILLER_RABIN_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
"""The first twelve primes: Miller-Rabin with them is exact below MILLER_RABIN_EXACT_BELOW."""
MILLER_RABIN_EXACT_BELOW = 318_665_857_834_031_151_167_461
"""ψ_12 ≈ 3.2·10^23, the least strong pseudoprime to the first twelve prime bases (Sorenson and
Webster, "Strong pseudoprimes to twelve prime bases", Math. Comp. 2017). The often quoted
3.3·10^24 is ψ_13, which needs base 41 as well. Either is far above the 2^60 used here."""


def is_probable_prime(n: int) -> bool:
    """Deterministic Miller-Rabin over :data:`MILLER_RABIN_BASES`: exact below
    :data:`MILLER_RABIN_EXACT_BELOW` (every N here is below 2^60), a strong probable-prime test
    above. Costs O(log n) modular multiplications per base: the test the debaters can run."""
    n = int(n)
    if n < 2:
        return False
    for p in MILLER_RABIN_BASES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in MILLER_RABIN_BASES:
        y = pow(a, d, n)
        if y in (1, n - 1):
            continue
        for _ in range(r - 1):
            y = y * y % n
            if y == n - 1:
                break
        else:
            return False
    return True


def random_prime(bits: int, rng: np.random.Generator) -> int:
    """A uniformly random prime of exactly ``bits`` bits (top bit set), by drawing odd candidates
    from ``rng`` until :func:`is_probable_prime` accepts one."""
    if not 2 <= bits <= 62:
        raise ValueError(f"random_prime draws 2..62-bit primes, got {bits} bits")
    if bits == 2:
        return int(rng.choice([2, 3]))
    while True:
        candidate = int(rng.integers(2 ** (bits - 1), 2**bits)) | 1
        if is_probable_prime(candidate):
            return candidate


def trial_divide(n: int, candidates: Iterable[int], budget: int = DIVISION_BUDGET) -> int | None:
    """What a bounded debater can do to find a factor: try at most ``budget`` of ``candidates``
    (in order; nothing beyond the budget is drawn from the iterable) and return the first c with
    1 < c < n dividing n, or None."""
    n = int(n)
    if budget <= 0:
        return None
    for tried, c in enumerate(candidates, start=1):
        c = int(c)
        if 1 < c < n and n % c == 0:
            return c
        if tried >= budget:
            break
    return None


BRENT_BATCH = 64
"""m in Brent's variant of Pollard's rho: products of |x - y| accumulated between two gcds. Of
m = 4..128 this finds a b-bit factor most often within DIVISION_BUDGET at b = 20..24, where the
default size is decided (m = 32 does slightly better at b = 16, which the default excludes)."""


@dataclass(frozen=True)
class Factoring:
    """What :func:`pollard_rho` found within its budget."""

    factor: int | None
    """A factor g of n with 1 < g < n, or None."""
    operations: int
    """Operations spent (:func:`pollard_rho` says what one is); never above the budget."""


class _Exhausted(Exception):
    """The operation budget ran out."""


def pollard_rho(n: int, rng: np.random.Generator, budget: int = DIVISION_BUDGET) -> Factoring:
    """Pollard's rho in Brent's variant (Brent 1980, "An improved Monte Carlo factorization
    algorithm", BIT 20; batch :data:`BRENT_BATCH`) within ``budget`` operations. One operation is
    one multiplication modulo n (a step x ↦ x² + c, or folding |x - y| into the product) or one
    division with remainder (a step of Euclid's gcd), so a trial division (:func:`trial_divide`)
    is one operation too and the two spend the same budget. A cycle that yields only n restarts
    with a fresh (c, x_0) from ``rng``. A b-bit factor p needs about √(πp/2) steps of x ↦ x² + c,
    each about two operations: within 2^10 operations likely at b = 16, rarely at b = 24."""
    n = int(n)
    spent = 0

    def spend(k: int) -> None:
        nonlocal spent
        if spent + k > budget:
            raise _Exhausted
        spent += k

    def gcd(a: int, b: int) -> int:
        while b:
            spend(1)
            a, b = b, a % b
        return a

    try:
        if n < 4:
            return Factoring(None, spent)
        spend(1)
        if n % 2 == 0:
            return Factoring(2, spent)
        while True:
            c, y = int(rng.integers(1, n - 2)), int(rng.integers(0, n))
            r, product, g = 1, 1, 1
            while g == 1:
                x = y
                for _ in range(r):
                    spend(1)
                    y = (y * y + c) % n
                k = 0
                while k < r and g == 1:
                    saved = y
                    for _ in range(min(BRENT_BATCH, r - k)):
                        spend(2)
                        y = (y * y + c) % n
                        product = product * abs(x - y) % n
                    g = gcd(n, product)
                    k += BRENT_BATCH
                r *= 2
            if g == n:  # the batch overshot: step again from its start, one gcd at a time
                g = 1
                while g == 1:
                    spend(1)
                    saved = (saved * saved + c) % n
                    g = gcd(n, abs(x - saved))
            if g != n:
                return Factoring(g, spent)
    except _Exhausted:
        return Factoring(None, spent)


def _and(state: Hashable, i: int, z: int) -> Hashable:
    return int(state) & int(z)  # type: ignore[call-overload]


def _identity(state: Hashable) -> int:
    return int(state)  # type: ignore[call-overload]


class FactorIntervals(Decomposition):
    """The obfuscated decomposition of "N is prime" (Section 7): "N has no factor in [a, c)".

    A query is a half-open interval (a, c) of candidate divisors. The root is
    (2, 2 + L·q^d) with d = max(1, ⌈log_q((⌊√N⌋ - 1)/L)⌉), the least depth whose leaves cover
    the m = ⌊√N⌋ - 1 candidates 2..⌊√N⌋; candidates above ⌊√N⌋ are padding (no claim is made
    about them). A level-k interval splits into its q equal consecutive sub-intervals of length
    L·q^(k-1), and M_D is their AND. The implicit proof has u_j = "j + 2 does not divide N" for
    j = 0..m-1; a leaf names the proof indices of its candidates ≤ ⌊√N⌋ (none for pure padding),
    and the human judges it 1 iff every claimed bit is 1 and, doing each division, finds that no
    candidate divides N.

    ``_factors`` is the prime factorization of N: what an unbounded party knows, and what
    :meth:`truth` reads (never a trial division over the interval). Nothing else exposes it.
    :meth:`bounded_truth` is what a prover spending its ``budget`` on trial divisions knows:
    the root by Miller-Rabin, every claim once Miller-Rabin says N is prime, and for composite N
    a claim about at most budget/q candidates (checking a whole split of such claims costs at
    most the budget, and what it finds settles every claim below); any other claim about a
    composite N is out of reach. The answers are deterministic, so ``epsilon`` (the ε it is
    built stable for) is None.
    """

    epsilon: float | None = None

    def __init__(
        self, n: int, factors: tuple[int, ...], width: int = WIDTH, leaf: int = LEAF, budget: int = DIVISION_BUDGET
    ):
        if width < 2 or leaf < 1:
            raise ValueError("FactorIntervals needs width q >= 2 and leaves of >= 1 candidate")
        n = int(n)
        if n < 4:
            raise ValueError(f"FactorIntervals needs N >= 4 (some candidate divisor), got {n}")
        if math.prod(factors) != n or not all(is_probable_prime(f) for f in factors):
            raise ValueError("factors must be the prime factorization of N")
        self.n, self.width, self.leaf_size, self.budget = n, width, leaf, budget
        self._factors = tuple(sorted(int(f) for f in factors))
        self.sqrt_n = math.isqrt(n)
        self.depth = 1
        while leaf * width**self.depth < self.proof_length:
            self.depth += 1
        self.leaf_bound = min(leaf, self.proof_length)

    @property
    def proof_length(self) -> int:
        """m: one bit per candidate divisor 2..⌊√N⌋."""
        return self.sqrt_n - 1

    @cached_property
    def _small_divisors(self) -> list[int]:
        """The divisors of N in [2, ⌊√N⌋], from the factorization (only p when N = p·p')."""
        products = {
            math.prod(subset) for r in range(1, len(self._factors) + 1) for subset in combinations(self._factors, r)
        }
        return sorted(d for d in products if 2 <= d <= self.sqrt_n)

    def root(self) -> Query:
        return (2, 2 + self.leaf_size * self.width**self.depth)

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        a, _ = query  # type: ignore[misc]
        span = self.leaf_size * self.width ** (level - 1)
        return tuple((a + i * span, a + (i + 1) * span) for i in range(self.width))

    def valid_split(self, query: Query, level: int, subqueries: object) -> bool:
        """Exactly :meth:`split`, with int endpoints; never raises."""
        return exact_split(self, query, level, subqueries)

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        return int(all(answers))

    def automaton(self, query: Query, level: int) -> Automaton:
        return Automaton(1, _and, _identity)

    def candidates(self, query: Query) -> range:
        """The candidate divisors a claim is about: [a, c) ∩ [2, ⌊√N⌋] (empty for padding)."""
        a, c = query  # type: ignore[misc]
        return range(max(a, 2), min(c, self.sqrt_n + 1))

    def leaf(self, query: Query) -> tuple[int, ...]:
        return tuple(j - 2 for j in self.candidates(query))

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        candidates = self.candidates(query)
        if len(bits) != len(candidates):
            raise ValueError(f"leaf {query} names {len(candidates)} proof bits, got {len(bits)}")
        claims_hold = all(int(bit) == 1 for bit in bits)
        return float(claims_hold and all(self.n % j for j in candidates))

    def proof(self, j: int) -> int:
        if not 0 <= j < self.proof_length:
            raise IndexError(f"proof index {j} outside [0, {self.proof_length})")
        return int(self.n % (j + 2) != 0)

    def judge_leaves(self, queries: Sequence[Query], read: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """:meth:`judge` at every leaf at once, by numpy's remainder when N fits in int64."""
        if self.n >= 2**63 or not len(queries):
            return super().judge_leaves(queries, read)
        a, c = np.array(queries, dtype=np.int64).reshape(-1, 2).T
        lo, hi = np.maximum(a, 2), np.minimum(c, self.sqrt_n + 1)
        lengths = np.maximum(hi - lo, 0)
        starts = np.cumsum(lengths) - lengths  # where each leaf's candidates begin in the flat array
        candidates = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts - lo, lengths)
        bits = read(candidates - 2)
        owner = np.repeat(np.arange(len(queries)), lengths)
        failed = np.zeros(len(queries), dtype=bool)  # a claimed bit that is not 1, or a candidate that divides N
        failed[owner[(bits != 1) | (np.int64(self.n) % candidates == 0)]] = True
        return (~failed).astype(float)

    def proof_array(self, positions: np.ndarray) -> np.ndarray:
        """:meth:`proof` at every position, by numpy's remainder when N fits in int64."""
        if self.n >= 2**63 or not len(positions):
            return super().proof_array(positions)
        if positions.min() < 0 or positions.max() >= self.proof_length:
            raise IndexError(f"proof indices outside [0, {self.proof_length})")
        return (np.int64(self.n) % (positions.astype(np.int64) + 2) != 0).astype(np.uint8)

    def truth(self, query: Query, level: int) -> float:
        a, c = query  # type: ignore[misc]
        hi = min(c, self.sqrt_n + 1)
        divisors = self._small_divisors
        return float(bisect.bisect_left(divisors, hi) == bisect.bisect_left(divisors, a))

    @cached_property
    def miller_rabin(self) -> bool:
        """Whether N passes :func:`is_probable_prime`: what every debater knows of the root."""
        return is_probable_prime(self.n)

    def bounded_truth(self, query: Query, level: int) -> float | None:
        """The claim's answer as a prover with ``budget`` trial divisions finds it (class
        docstring), or None when it is out of reach."""
        candidates = self.candidates(query)
        if self.miller_rabin or (candidates.start <= 2 and candidates.stop > self.sqrt_n):
            return float(self.miller_rabin)
        if len(candidates) <= self.budget // self.width:
            return float(trial_divide(self.n, candidates, self.budget) is None)
        return None


def _bits(n: int, length: int) -> np.ndarray:
    """The ``length`` low bits of n, most significant first."""
    return np.array([(n >> (length - 1 - i)) & 1 for i in range(length)], dtype=np.uint8)


@dataclass(frozen=True)
class PrimalityParams:
    """The parameters of :class:`FactorIntervals` (``-P NAME=VALUE``); its depth d follows from
    them and the size b (the least d with leaf·q^d ≥ ⌊√N⌋ - 1)."""

    q: int = param(WIDTH, "intervals each claim splits into (the decomposition's width)", low=2, high=4096)
    leaf: int = param(LEAF, "candidate divisors per leaf (the human's divisions)", low=1, high=2**16)
    budget: int = param(
        DIVISION_BUDGET, "operations (divisions, multiplications mod N) a bounded debater may spend per debate", low=0
    )


@problem(
    "obfuscated-primality",
    "is N (2b bits, most significant first) prime? Decomposed as 'no factor in [2, √N]' over "
    f"q = {WIDTH} intervals per level, {LEAF} candidates per leaf (-P q, leaf): for N = p·p' both debaters can "
    "run Miller-Rabin but neither can find the one wrong interval (size = b)",
    frozenset({Feature.DECOMPOSITION, Feature.DETERMINISTIC}),
    default_size=24,
    min_size=6,
    max_size=30,
    params=PrimalityParams,
)
def obfuscated_primality(b: int, truth: bool, rng: np.random.Generator, params: PrimalityParams) -> Instance:
    """Yes: N is a random 2b-bit prime (top bit set). No: N = p·p' for distinct random b-bit
    primes p < p' (top bits set), redrawn until N also has exactly 2b bits, so that x's length
    and leading bit never give the answer away. The factors live only in the decomposition."""
    if truth:
        n = random_prime(2 * b, rng)
        factors: tuple[int, ...] = (n,)
    else:
        while True:
            p, p2 = random_prime(b, rng), random_prime(b, rng)
            if p != p2 and (p * p2).bit_length() == 2 * b:
                break
        factors = (min(p, p2), max(p, p2))
        n = p * p2
    decomposition = FactorIntervals(n, factors, params.q, params.leaf, params.budget)
    return Instance(
        "obfuscated-primality", b, truth, _bits(n, 2 * b), oracle=LeafOracle(decomposition), decomposition=decomposition
    )


# ---------------------------------------------------------------------------------------------
