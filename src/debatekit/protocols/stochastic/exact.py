"""Stochastic-oracle debate solved exactly: backward induction over transcript prefixes, each step
:func:`debatekit.protocols.stochastic.rules.step` itself (Lean's ``step``; Figure 2 steps 1-3), run
with an interpreter whose answers are enumerations rather than draws.

V(t, y) = P[V outputs 1 | the debate reached step t with bits y]; at a full transcript it is what
:func:`~debatekit.protocols.stochastic.rules.end` outputs, a_T. At step t, with p = P[y_t = 1 | y], the
rules' step runs once per branch (:class:`_Step`), over rows that are Alice's possible claims, and
everything it asks is answered as a distribution, never a draw:

* Alice's claim: honest Alice's (the honest strategy's own code, its estimate X/n_A, X ~ Bin(n_A, p)
  on an oracle step, p itself otherwise, enumerated with its binomial weights), a given strategy's (its
  one estimate enumerated the same way), or the *best* Alice's: every candidate of the supremum over
  real claims in [0, 1] (:meth:`_Blocks.candidates`; a claim outside [0, 1] loses, the departure from
  Lean's clamping recorded in :mod:`debatekit.protocols.stochastic.rules`);
* an estimate (honest Bob's, the verifier's) is a :class:`_Mean`, the law of the mean of n samples:
  the rules' tests |c - e| < h and >= h on it come out as the probability that each claim passes
  (:class:`_Chance`), from the binomial CDF;
* a coin share and nature's uniform are :data:`UNIFORM`: a share sum mod 1 is uniform, so the bit the
  rules compute from them (``coin_bit``, ``drawn_bit``) is 1 with probability c. Given strategies'
  shares are not asked (the bit is Bernoulli(c) when either side's share is uniform, as the honest
  side's is);
* Bob's abort: honest Bob's own code on :class:`_Mean` estimates (a probability per claim); a given
  strategy's decision per claim; the *best* Bob's is a choice, abort or continue, and the step runs
  once each way and keeps the smaller value (every abort policy). Where Bob sees the bit (the paper
  form) and reads it (best or given Bob), the step runs once per bit, weighted c and 1 - c.

What the step tells the interpreter becomes the value: a verdict adds P[where] P[accept], an extended
bit P[where] (P[a_t = 1] V(t + 1, y1) + P[a_t = 0] V(t + 1, y0)), and a message that fails its test
(``CLAIM.ok``, ``ABORT.ok``) loses for its sender at that row. The step order, the forfeits and the
tests live in :mod:`~debatekit.protocols.stochastic.rules` alone. The best Alice takes the maximum
over her candidates by branch and bound (:func:`_supremum`), its bound per block of claims the same
step run once more on the block (each probability as its range over the block; every value rises
with each, so the result bounds the block).

Strategies that draw from their generator, estimate more than once per step, or (Bob) estimate at
all cannot be enumerated and raise :class:`ExactError`; so does the best Alice against a given Bob,
whose decisions need not change only where the honest tests do.

All probabilities are exact binomial sums (scipy) over the counts outside each tail of mass below
``TAIL`` (1e-30; dropping them moves a step's value by at most 6e-30), so the result is exact up to
floating point. Departure: the tests' jump points Z/n ± threshold are computed in floating point,
so where two of them coincide in exact arithmetic but round apart (or the reverse) the value is that
of the rounded points. Prefixes are enumerated, so T <= 16.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from typing import Any

import numpy as np
from scipy.stats import binom

from debatekit.analysis.exact import ExactError, NoRandom, Solution
from debatekit.engine.trust import charge
from debatekit.ledger import Role
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic.rules import (
    ABORT,
    CLAIM,
    SHARE,
    HonestAlice,
    HonestBob,
    Message,
    Rules,
    StepView,
    as_flags,
    as_numbers,
    end,
    machine_of,
    step,
)

MAX_STEPS = 16
MAX_WITNESS_BITS = 10
TAIL = 1e-30
BLOCK = 256
"""Each block of the best Alice's branch and bound holds fewer than BLOCK jump points of each end of each test."""


class Play(Enum):
    """A side the analysis plays itself, rather than asking a given strategy."""

    HONEST = "honest"
    """The protocol's honest player: its estimates and tests as binomial sums."""
    BEST = "best"
    """The best adversary: Alice the supremum over her claims, Bob the better of abort and continue."""


def _estimates(p: float, n: int, oracle: bool) -> tuple[np.ndarray, np.ndarray]:
    """The mean of n samples (Bin(n, p)/n on an oracle step, p itself otherwise) with its
    probabilities, over the counts whose lower and upper tails beyond them each weigh below TAIL."""
    if not oracle:
        return np.array([p]), np.array([1.0])
    low, high = _window(p, n)
    counts = np.arange(low, high + 1)
    return counts / n, binom.pmf(counts, n, p)


def _window(p: float, n: int) -> tuple[int, int]:
    """[low, high] with P[X < low] < TAIL and P[X > high] < TAIL for X ~ Bin(n, p) (the upper end
    by symmetry: scipy's isf cannot resolve 1 - 1e-30)."""
    return int(binom.ppf(TAIL, n, p)), n - int(binom.ppf(TAIL, n, 1 - p))


@dataclass(frozen=True)
class _Test:
    """One of Lean's ``bob'`` tests at one step: pass iff |c - e| < threshold for the estimate e.

    The estimates e_j = (low + j)/n increase with j, so the ones a claim passes are a run
    j in [first, stop). ``cumulative[k]`` = P[X < low + k] is filled in as runs need it."""

    starts: np.ndarray
    ends: np.ndarray
    cumulative: np.ndarray
    low: int = 0
    n: int = 1
    p: float = 0.0

    def mass(self, first: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """P[first <= j < stop] for each run (0 if empty)."""
        stop = np.maximum(stop, first)
        ends = np.concatenate([first.ravel(), stop.ravel()])
        missing = np.unique(ends[np.isnan(self.cumulative[ends])])
        if missing.size:
            self.cumulative[missing] = binom.cdf(self.low - 1 + missing, self.n, self.p)
        return self.cumulative[stop] - self.cumulative[first]

    def within(self, claims: _Claims) -> tuple[np.ndarray, np.ndarray]:
        """The least and the most P[pass] at each row of ``claims``: at a claim, the run of estimates
        with e - h < c < e + h (both the same array); at a claim's limit from above, e - h <= c < e + h,
        from below e - h < c <= e + h; over a block [low, high], the runs that every claim in it passes
        (e - h < low and high < e + h) and that some claim does (e - h < high and low < e + h)."""
        starts, ends, low, high = self.starts, self.ends, claims.low, claims.high
        if low is not high:  # a block of claims
            union = self.mass(np.searchsorted(ends, low, "right"), np.searchsorted(starts, high, "left"))
            return self.mass(np.searchsorted(ends, high, "right"), np.searchsorted(starts, low, "left")), union
        first, stop = np.searchsorted(ends, low, "right"), np.searchsorted(starts, low, "left")
        if claims.side is not None:
            first = np.where(claims.side < 0, np.searchsorted(ends, low, "left"), first)
            stop = np.where(claims.side > 0, np.searchsorted(starts, low, "right"), stop)
        passes = self.mass(first, stop)
        return passes, passes


@lru_cache(maxsize=16)
def _test(p: float, n: int, threshold: float, oracle: bool) -> _Test:
    if not oracle:
        return _Test(np.array([p - threshold]), np.array([p + threshold]), np.array([0.0, 1.0]))
    low, high = _window(p, n)
    estimates = np.arange(low, high + 1) / n
    return _Test(estimates - threshold, estimates + threshold, np.full(high - low + 2, np.nan), low, n, p)


# ---------------------------------------------------------------------------------------------
# The values the rules' step computes with, as distributions (never drawn)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Claims:
    """Alice's claim at each row of a step: a number (``low`` is ``high``), with ``side`` the limit
    from above (+1) or below (-1) where the best Alice's supremum is not attained; or, while
    bounding, a block [low, high] of claims."""

    low: np.ndarray
    high: np.ndarray
    side: np.ndarray | None = None
    parts: tuple[_Claims, ...] = ()
    """The kept claims these are the concatenation of (the best Alice's blocks)."""
    tested: dict[tuple, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    """Each test's least and most pass probabilities at these claims, once computed."""

    @classmethod
    def at(cls, claims: np.ndarray, side: np.ndarray | None = None, parts: tuple[_Claims, ...] = ()) -> _Claims:
        return cls(claims, claims, side, parts)

    def __len__(self) -> int:
        return len(self.high)

    def __sub__(self, estimate: _Mean) -> _Gap:
        return _Gap(self, estimate)

    def passing(self, key: tuple[float, int, float, bool]) -> tuple[np.ndarray, np.ndarray]:
        """The least and most P[|c - e| < h] for ``key`` = (p, n, h, oracle), through each part's."""
        if key not in self.tested:
            if self.parts:
                least, most = zip(*(part.passing(key) for part in self.parts), strict=True)
                self.tested[key] = np.concatenate(least), np.concatenate(most)
            else:
                self.tested[key] = _test(*key).within(self)
        return self.tested[key]


@dataclass(frozen=True)
class _Mean:
    """An estimate as the exact interpreter answers it: the law of the mean of n samples of y_t
    (Bin(n, p)/n on an oracle step, p itself otherwise)."""

    p: float
    n: int
    oracle: bool


@dataclass(frozen=True)
class _Gap:
    """c - e for the rules' tests (Lean's ``bob'``: |c - e| against a threshold)."""

    claims: _Claims
    estimate: _Mean

    def __abs__(self) -> _Distance:
        return _Distance(self.claims, self.estimate)


@dataclass(frozen=True)
class _Distance:
    """|c - e|: compared with a threshold it is the probability, per claim, that the test holds."""

    claims: _Claims
    estimate: _Mean

    def __lt__(self, threshold: float) -> _Chance:
        e = self.estimate
        return _Chance(*self.claims.passing((e.p, e.n, threshold, e.oracle)))

    def __ge__(self, threshold: float) -> _Chance:
        return (self < threshold) == 0


class _Chance:
    """A yes/no per row that the step leaves to chance, as P[yes]: between ``low`` and ``high``,
    the same array except while bounding a block of claims. ``== 1`` is itself, ``== 0`` the
    complement (the rules' ``abort == 1``, ``abort == 0``)."""

    __slots__ = ("high", "low")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, low: np.ndarray, high: np.ndarray):
        self.low, self.high = low, high

    def __eq__(self, value: object) -> _Chance:  # type: ignore[override]
        if value == 1:
            return self
        if value == 0:
            if self.low is self.high:
                complement = 1 - self.high
                return _Chance(complement, complement)
            return _Chance(1 - self.high, 1 - self.low)
        raise TypeError(f"a chance is compared with 0 or 1, not {value!r}")

    def any(self) -> bool:
        return bool(np.any(self.high > 0))


class _Uniform:
    """A uniform on [0, 1) that is never drawn: a coin share, or nature's uniform. Shares sum mod 1 to
    a uniform, and P[U <= c] = P[U < c] = c: the bit the rules compute (``coin_bit``, ``drawn_bit``)."""

    __array_ufunc__ = None

    def __add__(self, other: object) -> _Uniform:
        return self

    __radd__ = __add__

    def __mod__(self, modulus: float) -> _Uniform:
        return self

    def __le__(self, claims: _Claims) -> _Chance:
        return _Chance(claims.low, claims.high)

    __lt__ = __le__


UNIFORM = _Uniform()


def _most(value: Any) -> Any:
    """The most P[yes] of a ``where``, a verdict or a bit: a chance's high end, a bool's 0/1."""
    if type(value) is _Chance:
        return value.high
    if value is True:
        return 1.0
    return np.asarray(value, dtype=float)


def _mix(bit: _Chance, one: Any, zero: Any) -> Any:
    """P[bit = 1] one + P[bit = 0] zero; over a block of claims its most, at an end of P[bit = 1]'s
    range (the value is linear in it)."""
    mixed = bit.high * one + (1 - bit.high) * zero
    if bit.low is not bit.high:
        mixed = np.maximum(mixed, bit.low * one + (1 - bit.low) * zero)
    return mixed


# ---------------------------------------------------------------------------------------------
# The rules' step at one prefix, every branch of it
# ---------------------------------------------------------------------------------------------


class _Branch(Exception):
    """A run of the step reached a branch it has no path for: nature's bit where Bob reads it
    (``weights``: the bit; the first branch is 1) or the best Bob's choice (``weights`` None: the smaller)."""

    def __init__(self, weights: _Chance | None):
        self.weights = weights


@dataclass
class _Game:
    """What every step of one analysis shares: the rules, the machine, and each side (a :class:`Play`
    or a given strategy's player, honest ones the rules' own honest players)."""

    rules: Rules
    machine: TranscriptMachine
    steps: int
    alice: Any
    bob: Any
    honest_bob: bool
    trusted: dict[Role, bool]
    honest_claims: dict[tuple[float, bool], tuple[_Claims, np.ndarray]] | None
    """Honest Alice's claims and weights by (p, oracle step), all they depend on (None: she is not honest)."""


class _Step:
    """The rules' :class:`~debatekit.protocols.stochastic.rules.Interpreter` for step t at one prefix,
    its answers enumerations: each row one of Alice's claims, each value a distribution
    (:class:`_Chance`, :class:`_Mean`, :data:`UNIFORM`). :meth:`explore` runs
    :func:`~debatekit.protocols.stochastic.rules.step` once per branch (re-running it from the start
    along a path of the branches taken) and folds the branches' values."""

    def __init__(self, game: _Game, t: int, kind: StepKind, p: float, one: float, zero: float, history: np.ndarray):
        self.game, self.t, self.kind, self.p, self.one, self.zero = game, t, kind, p, one, zero
        self.oracle, self.history = kind is StepKind.ORACLE, history
        self.claims: _Claims | None = None
        self.weights: np.ndarray | None = None
        self.lost_alice: np.ndarray | None = None
        self.path: tuple[int, ...] = ()
        self.depth, self.total, self.lost_bob = 0, 0.0, None
        self.seen: tuple[_Chance, int] | None = None

    def value(self) -> float:
        """V(t, y): the best Alice's supremum over her claims, else the claims' weighted mean."""
        if self.game.alice is Play.BEST:
            rules = self.game.rules
            bob, vera = (rules.bob_samples, rules.bob_threshold), (rules.vera_samples, rules.vera_threshold)
            return _supremum(self, _blocks(self.p, self.oracle, bob, vera))
        return float(self.explore() @ self.weights)

    def explore(self, claims: _Claims | None = None) -> np.ndarray:
        """The step's value at each row (``claims``: the best Alice's; else the given or honest Alice's)."""
        if claims is not None:
            self.claims = claims
        return self._run(())

    def _run(self, path: tuple[int, ...]) -> np.ndarray:
        self.path, self.depth, self.total, self.lost_bob, self.seen = path, 0, 0.0, None, None
        try:
            step(self.game.rules, self.game.machine, self, self.t)
        except _Branch as branch:
            first, second = self._run((*path, 0)), self._run((*path, 1))
            if branch.weights is None:
                return np.minimum(first, second)
            return _mix(branch.weights, first, second)
        assert self.claims is not None
        value = np.broadcast_to(np.asarray(self.total, dtype=float), (len(self.claims),))
        if self.lost_bob is not None:
            value = np.where(self.lost_bob, 1.0, value)
        if self.lost_alice is not None:
            value = np.where(self.lost_alice, 0.0, value)
        return value

    def branch(self, weights: _Chance | None) -> int:
        """The path's next branch (0 or 1), or :class:`_Branch` where the path ends."""
        if self.depth == len(self.path):
            raise _Branch(weights)
        self.depth += 1
        return self.path[self.depth - 1]

    def begin(self, t: int) -> bool:
        return True

    def say(self, role: Role, message: Message, *seen: Any) -> Any:
        if message is CLAIM:
            if self.claims is None:
                self.claims = self._given_claims()
            return self.claims
        if message is SHARE:
            return UNIFORM
        if message is ABORT:
            return self._aborts(*seen)
        raise ExactError(f"the exact interpreter answers a step, not {message.what}")

    def _given_claims(self) -> _Claims:
        """Honest or given Alice's claims with their weights; one that is not a probability loses."""
        game = self.game
        honest = game.honest_claims
        if honest is not None:
            key = (self.p, self.oracle)
            if key not in honest:
                claims, weights = _given_claims(
                    game.alice, self.t, game.steps, self.kind, self.p, self.history, game.rules, True
                )
                honest[key] = _Claims.at(claims), weights
            found, self.weights = honest[key]
            return found
        claims, self.weights = _given_claims(
            game.alice, self.t, game.steps, self.kind, self.p, self.history, game.rules, game.trusted[Role.ALICE]
        )
        ok = CLAIM.ok(claims)
        if not ok.all():
            self.lost_alice = ~ok
            claims = np.where(ok, claims, 0.0)
        return _Claims.at(claims)

    def _aborts(self, claims: _Claims, bit: _Chance | None) -> Any:
        game, rows = self.game, len(claims)
        if game.honest_bob:  # his own code; his estimate a _Mean, so his decision a chance
            return game.bob.aborts(self._view(rows, self._mean), claims, bit)
        shown = None
        if bit is not None:  # he sees the bit: one run per value, weighted
            value = 1 - self.branch(bit)
            self.seen = (bit, value)
            shown = np.full(rows, value, dtype=np.uint8)
        if game.bob is Play.BEST:
            return np.full(rows, self.branch(None))
        flags = _given_aborts(game.bob, self._view(rows, _refuse), claims.high.copy(), shown, game.trusted[Role.BOB])
        ok = ABORT.ok(flags)
        if not ok.all():
            self.lost_bob = ~ok
        return flags

    def _mean(self, view: StepView, n: int) -> _Mean:
        return _Mean(self.p, n, self.oracle)

    def _view(self, rows: int, sampler: Any) -> StepView:
        return _view(self.t, self.game.steps, self.kind, self.p, rows, self.history, self.game.rules, sampler)

    def estimate(self, role: Role, n: int, where: Any) -> _Mean:
        return _Mean(self.p, n, self.oracle)

    def nature(self) -> _Uniform:
        return UNIFORM

    def extend(self, where: Any, bits: Any, chance: bool) -> None:
        if self.seen is not None and bits is self.seen[0]:  # the bit Bob saw
            bit = float(self.seen[1])
            bits = _Chance(bit, bit)
        self.total = self.total + _most(where) * _mix(bits, self.one, self.zero)

    def verdict(self, where: Any, accepted: Any) -> None:
        self.total = self.total + _most(where) * _most(accepted)

    def read(self, where: Any, bits: int, input_bits: int) -> None:
        """Bits read are not the value."""

    def last_bit(self) -> None:
        return None


class _End:
    """:func:`~debatekit.protocols.stochastic.rules.end` at a full transcript: its verdict is V(T, y)."""

    def __init__(self, last: int):
        self.last, self.value = last, 0.0

    def last_bit(self) -> int:
        return self.last

    def verdict(self, where: Any, accepted: int) -> None:
        self.value = float(accepted)

    def read(self, where: Any, bits: int, input_bits: int) -> None:
        """Bits read are not the value."""


# ---------------------------------------------------------------------------------------------
# The best Alice: the supremum over every real claim
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Blocks:
    """[0, 1] cut into blocks [edges[i], edges[i + 1]] holding fewer than BLOCK of each test's jump
    points Z/n ± threshold (``every``, as claims to bound), with each block's candidate claims."""

    vera: _Test
    bob: _Test
    edges: np.ndarray
    every: _Claims
    seen: dict[int, _Claims] = field(default_factory=dict)

    def candidates(self, blocks: np.ndarray) -> _Claims:
        """Claims in the blocks whose values' maximum is the blocks' supremum. Both tests' pass
        probabilities are constant between consecutive jump points, so on each open interval between
        them a claim's value is linear in the claim (the bit is 1 with probability c; every other
        probability is constant there) and its supremum is the limit at an end: the candidates are
        every jump point and both ends of every interval, as limits from inside it (the supremum
        need not be attained)."""
        parts = tuple(self._candidates(int(block)) for block in blocks)
        return _Claims.at(np.concatenate([part.high for part in parts]),
                          np.concatenate([part.side for part in parts]), parts)  # fmt: skip

    def _candidates(self, block: int) -> _Claims:
        if block not in self.seen:
            low, high = self.edges[block], self.edges[block + 1]
            arrays = (a for test in (self.vera, self.bob) for a in (test.starts, test.ends))
            inner = [a[np.searchsorted(a, low, "right") : np.searchsorted(a, high, "left")] for a in arrays]
            points = np.unique(np.concatenate([[low, high], *inner]))
            sides = np.repeat(np.array([0, 1, -1], dtype=np.int8), [len(points), len(points) - 1, len(points) - 1])
            self.seen[block] = _Claims.at(np.concatenate([points, points[:-1], points[1:]]), sides)
        return self.seen[block]


@lru_cache(maxsize=32)
def _blocks(p: float, oracle: bool, bob: tuple[int, float], vera: tuple[int, float]) -> _Blocks:
    vera_test, bob_test = _test(p, *vera, oracle), _test(p, *bob, oracle)
    every = np.concatenate([a[::BLOCK] for t in (vera_test, bob_test) for a in (t.starts, t.ends)])
    edges = np.unique(np.concatenate([[0.0, 1.0], every[(every > 0) & (every < 1)]]))
    return _Blocks(vera_test, bob_test, edges, _Claims(edges[:-1], edges[1:]))


def _supremum(step: _Step, blocks: _Blocks) -> float:
    """The step's supremum over every claim in [0, 1], by branch and bound over blocks: each block's
    bound is the step run on the block itself (every probability as its range over the block; the
    value rises with each, so the run's value at the high ends bounds every claim in it), and blocks
    are searched in decreasing order of bound until none left can beat the best value found."""
    bound = step.explore(blocks.every)
    order = np.argsort(-bound)
    best, done, take = -np.inf, 0, 1
    while done < len(order) and bound[order[done]] > best:
        best = max(best, float(step.explore(blocks.candidates(order[done : done + take])).max()))
        done, take = done + take, 2 * take
    return best


def _seat(instance: Instance, role: Role, rules: Rules) -> Seat:
    return Seat(instance, role, NoRandom(), None, rules)  # type: ignore[arg-type]


def _view(
    t: int, steps: int, kind: StepKind, p: float, rows: int, history: np.ndarray, rules: Rules, sampler: Any
) -> StepView:
    table = np.broadcast_to(history, (rows, len(history)))  # read-only, no copy
    return StepView(t, steps, kind, np.arange(rows), np.full(rows, p), rules, sampler, table, len(history), _no_coins)


def _no_coins(view: StepView) -> np.ndarray:
    raise ExactError("a strategy that draws from its random generator (view.random()) cannot be enumerated")


class _Estimates(Exception):
    def __init__(self, n: int):
        self.n = n


def _given_claims(
    player: Any, t: int, steps: int, kind: StepKind, p: float, history: np.ndarray, rules: Rules, trusted: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Alice's claims at one prefix, with their probabilities: asked once, and where she estimates,
    asked again with one row per possible estimate."""
    oracle = kind is StepKind.ORACLE

    def once(view: StepView, n: int) -> np.ndarray:
        if not oracle:
            return np.array(view.p, dtype=float)
        raise _Estimates(n)

    try:
        return _ask(player.claims, _view(t, steps, kind, p, 1, history, rules, once), trusted), np.ones(1)
    except _Estimates as asked:
        samples = asked.n
    support, weights = _estimates(p, samples, True)
    calls = 0

    def enumerate_estimates(view: StepView, n: int) -> np.ndarray:
        nonlocal calls
        calls += 1
        if calls > 1 or n != samples:
            raise ExactError("a strategy that estimates more than once per step cannot be enumerated")
        return support

    view = _view(t, steps, kind, p, len(support), history, rules, enumerate_estimates)
    return _ask(player.claims, view, trusted), weights


def _ask(method: Any, view: StepView, trusted: bool) -> np.ndarray:
    """Alice's claims for every row; an untrusted strategy that fails forfeits (NaN claims)."""
    try:
        return as_numbers(method(view), len(view.rows))
    except (ExactError, _Estimates):
        raise
    except Exception as err:  # strategy code: a forfeit, or a bug in a trusted one
        charge(Role.ALICE, err, trusted)
        return np.full(len(view.rows), np.nan)


def _refuse(view: StepView, n: int) -> np.ndarray:
    raise ExactError("only honest Bob's sampling is enumerated (pass bob='honest')")


def _given_aborts(
    player: Any, view: StepView, claims: np.ndarray, bits: np.ndarray | None, trusted: bool
) -> np.ndarray:
    """A given Bob's decisions (1 abort, 0 continue, -1 malformed) for each claim."""
    try:
        return as_flags(player.aborts(view, claims, bits), len(claims))
    except ExactError:
        raise
    except Exception as err:  # strategy code: a forfeit, or a bug in a trusted one
        charge(Role.BOB, err, trusted)
        return np.full(len(claims), -1)


def accept_probability(
    instance: Instance, rules: Rules, alice: Play | Strategy, bob: Play | Strategy, witness: np.ndarray | None = None
) -> float:
    """P[V = 1] with ``alice`` and ``bob`` each played as :class:`Play` says (best Alice: the supremum
    over her claims; best Bob minimises it) or a given strategy (not a given Bob against the best Alice)."""
    if not all(isinstance(side, Play | Strategy) for side in (alice, bob)):
        raise TypeError(f"each side is a Play or a Strategy, got {alice!r} and {bob!r}")
    machine = machine_of(instance)
    steps = machine.length
    if steps > MAX_STEPS:
        raise ExactError(f"exact analysis enumerates prefixes: T = {steps} exceeds {MAX_STEPS}")
    if alice is Play.BEST and isinstance(bob, Strategy):
        raise ExactError("the best Alice is computed against honest or best Bob only")
    w = instance.witness if witness is None else witness
    inputs = tuple(int(b) for b in np.concatenate([instance.x, w if w is not None else []]))
    sides: dict[Role, Any] = {}
    for role, side, honest in ((Role.ALICE, alice, HonestAlice), (Role.BOB, bob, HonestBob)):
        if isinstance(side, Strategy):
            sides[role] = side.factory(_seat(instance, role, rules))
        else:
            sides[role] = honest(_seat(instance, role, rules)) if side is Play.HONEST else side
    trusted = {Role.ALICE: not isinstance(alice, Strategy) or alice.trusted,
               Role.BOB: not isinstance(bob, Strategy) or bob.trusted}  # fmt: skip
    game = _Game(rules, machine, steps, sides[Role.ALICE], sides[Role.BOB], bob is Play.HONEST, trusted,
                 {} if alice is Play.HONEST else None)  # fmt: skip

    played: dict[tuple[float, bool, float, float], float] | None = None
    if not isinstance(alice, Strategy) and not isinstance(bob, Strategy):
        played = {}  # between honest or best players a step's value depends on p, its kind and one, zero

    @cache
    def value(prefix: tuple[int, ...]) -> float:
        t = len(prefix)
        if t == steps:
            closing = _End(prefix[-1])
            end(closing)  # type: ignore[arg-type]
            return closing.value
        state = inputs + prefix
        p = machine.conditional(t, tuple(state[a] for a in machine.relevant(t)), instance.oracle)
        one, zero = value((*prefix, 1)), value((*prefix, 0))
        kind = machine.kind(t)
        key = (p, kind is StepKind.ORACLE, one, zero)
        if played is not None and key in played:
            return played[key]
        found = _Step(game, t, kind, p, one, zero, np.array(state, dtype=np.uint8)).value()
        if played is not None:
            played[key] = found
        return found

    return value(())


def solve(instance: Instance, rules: Rules, protocol: str = "stochastic") -> Solution:
    """The honest side's exact win probability against the best adversary (Theorem 6.2's game)."""
    machine = machine_of(instance)
    witnesses: list[np.ndarray | None] = [None]
    if instance.truth:
        value = accept_probability(instance, rules, Play.HONEST, Play.BEST)
        honest, adversary, promised = "alice", "bob", rules.completeness
    else:
        if machine.n_witness:
            if machine.n_witness > MAX_WITNESS_BITS:
                raise ExactError(f"a {machine.n_witness}-bit witness is too many to enumerate")
            witnesses = [
                np.array([(k >> i) & 1 for i in reversed(range(machine.n_witness))], dtype=np.uint8)
                for k in range(2**machine.n_witness)
            ]
        value = 1 - max(accept_probability(instance, rules, Play.BEST, Play.HONEST, w) for w in witnesses)
        honest, adversary, promised = "bob", "alice", rules.soundness
    return Solution(
        protocol,
        instance.problem,
        instance.size,
        "yes" if instance.truth else "no",
        honest,
        adversary,
        value,
        repr(value),
        (2 ** (machine.length + 1) - 1) * len(witnesses),  # every prefix of every transcript, per witness
        promised,
    )
