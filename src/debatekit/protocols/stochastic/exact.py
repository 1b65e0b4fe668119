"""Stochastic-oracle debate solved exactly: backward induction over transcript prefixes.

V(t, y) = P[V outputs 1 | the debate reached step t with bits y]. Each step is
:func:`debatekit.protocols.stochastic.rules.debate`'s step in expectation, in its order (claim; in the
paper form the bit; Bob's abort; then the verifier's test or the bit joining y), with its messages'
tests (:data:`~debatekit.protocols.stochastic.rules.CLAIM`, ``ABORT``: a failing message loses for its
sender). ``debate`` is not called here: a step's value needs every outcome of the verifier's and
nature's draws at once, which one path through it cannot give, so the sums below take its place.
At step t, with p = P[y_t = 1 | y]:

* honest Alice's claim is X/n_A with X ~ Bin(n_A, p) on an oracle step (p itself otherwise);
  the *best* Alice takes the supremum over every real claim in [0, 1] (:meth:`_Blocks.candidates`;
  a claim outside [0, 1] loses, the departure from Lean's clamping recorded in
  :mod:`debatekit.protocols.stochastic.rules`) and, with a witness, any witness;
* honest Bob aborts with probability P[|c - Z/n_B| >= bob_threshold], Z ~ Bin(n_B, p); the *best*
  Bob takes, for every claim (and in the paper form for every drawn bit), the better of abort and
  continue: every abort policy;
* on abort the verifier accepts with probability P[|c - Y/n_V| < vera_threshold], Y ~ Bin(n_V, p);
* otherwise the bit is 1 with probability c (Lean: external randomness; paper: z^A + z^B mod 1,
  uniform because the honest side's share is).

* a given strategy (a :class:`~debatekit.players.base.Strategy`) is asked for its message at each
  prefix; if it estimates, it is asked once more with one row per possible estimate, weighted by
  the binomial probabilities. Strategies that draw from their generator, or that estimate more
  than once per step, cannot be enumerated and raise :class:`ExactError`; so does the best Alice
  against a given Bob, whose decisions need not change only where the honest tests do.

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
from debatekit.ledger import Role
from debatekit.machine.transcript import StepKind
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic.rules import ABORT, CLAIM, Form, Rules, StepView, as_flags, as_numbers, machine_of

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

    def at(self, claims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The run each claim passes: the estimates with e - h < c < e + h."""
        return np.searchsorted(self.ends, claims, "right"), np.searchsorted(self.starts, claims, "left")

    def inside(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The run every claim in the open interval (left, right), which holds no jump point,
        passes: the estimates with e - h <= left and right <= e + h."""
        return np.searchsorted(self.ends, right, "left"), np.searchsorted(self.starts, left, "right")

    def passes(self, claims: np.ndarray) -> np.ndarray:
        """P[pass] at each claim."""
        return self.mass(*self.at(claims))


@lru_cache(maxsize=16)
def _test(p: float, n: int, threshold: float, oracle: bool) -> _Test:
    if not oracle:
        return _Test(np.array([p - threshold]), np.array([p + threshold]), np.array([0.0, 1.0]))
    low, high = _window(p, n)
    estimates = np.arange(low, high + 1) / n
    return _Test(estimates - threshold, estimates + threshold, np.full(high - low + 2, np.nan), low, n, p)


@dataclass(frozen=True)
class _Blocks:
    """[0, 1] cut into blocks [edges[i], edges[i + 1]] holding fewer than BLOCK of each test's jump
    points Z/n ± threshold, with bounds on the pass probabilities of every claim in a block: the
    mass of the union and of the intersection of the runs its claims pass."""

    vera: _Test
    bob: _Test
    edges: np.ndarray
    vera_most: np.ndarray
    bob_most: np.ndarray
    bob_least: np.ndarray
    seen: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)

    def candidates(self, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Claims in the block whose values' maximum is the block's supremum, with the tests'
        pass probabilities there. Both pass probabilities are constant between consecutive jump
        points, so on each open interval between them a claim's value is linear in the claim
        (monotone in every case of :func:`_inner`) and its supremum is the limit at an end: the
        candidates are every jump point with its own test outcomes and both ends of every interval
        with the interval's outcomes (limits: the supremum need not be attained)."""
        if block in self.seen:
            return self.seen[block]
        low, high = self.edges[block], self.edges[block + 1]
        arrays = (a for test in (self.vera, self.bob) for a in (test.starts, test.ends))
        inner = [a[np.searchsorted(a, low, "right") : np.searchsorted(a, high, "left")] for a in arrays]
        points = np.unique(np.concatenate([[low, high], *inner]))
        left, right = points[:-1], points[1:]
        passes = []
        for test in (self.vera, self.bob):
            (first, stop), (first_in, stop_in) = test.at(points), test.inside(left, right)
            inside = test.mass(first_in, stop_in)
            passes.append(np.concatenate([test.mass(first, stop), inside, inside]))
        self.seen[block] = np.concatenate([points, left, right]), passes[0], 1 - passes[1]
        return self.seen[block]


@lru_cache(maxsize=32)
def _blocks(p: float, oracle: bool, bob: tuple[int, float], vera: tuple[int, float]) -> _Blocks:
    vera_test, bob_test = _test(p, *vera, oracle), _test(p, *bob, oracle)
    every = np.concatenate([a[::BLOCK] for t in (vera_test, bob_test) for a in (t.starts, t.ends)])
    edges = np.unique(np.concatenate([[0.0, 1.0], every[(every > 0) & (every < 1)]]))
    low, high = edges[:-1], edges[1:]

    def union(test: _Test) -> np.ndarray:  # e - h < high and low < e + h
        return test.mass(np.searchsorted(test.ends, low, "right"), np.searchsorted(test.starts, high, "left"))

    def intersection(test: _Test) -> np.ndarray:  # e - h < low and high < e + h
        return test.mass(np.searchsorted(test.ends, high, "right"), np.searchsorted(test.starts, low, "left"))

    return _Blocks(vera_test, bob_test, edges, union(vera_test), union(bob_test), intersection(bob_test))


def _inner(
    claims: np.ndarray, vera: np.ndarray, abort: np.ndarray, one: float, zero: float, bob: Play, form: Form
) -> np.ndarray:
    """P[V = 1] after each claim against honest or best Bob, given the values after each bit."""
    go_on = claims * one + (1 - claims) * zero
    if bob is Play.HONEST:
        return abort * vera + (1 - abort) * go_on
    if form is Form.paper:  # Bob sees the bit before deciding
        return claims * np.minimum(vera, one) + (1 - claims) * np.minimum(vera, zero)
    return np.minimum(vera, go_on)


def _supremum(blocks: _Blocks, one: float, zero: float, bob: Play, form: Form) -> float:
    """The supremum of :func:`_inner` over every claim in [0, 1], by branch and bound over blocks:
    each block's bound holds for all its claims (one, zero >= 0, and every case increases with
    P[V accepts]), and blocks are searched in decreasing order of bound until none left can beat
    the best value found."""
    ends = (blocks.edges[:-1], blocks.edges[1:])
    go_on = np.maximum(*(c * one + (1 - c) * zero for c in ends))
    if bob is Play.HONEST:  # A V + (1 - A) g(c), with A <= 1 - bob_least and 1 - A <= bob_most
        bound = (1 - blocks.bob_least) * blocks.vera_most + blocks.bob_most * go_on
    elif form is Form.paper:
        top, bottom = np.minimum(blocks.vera_most, one), np.minimum(blocks.vera_most, zero)
        bound = np.maximum(*(c * top + (1 - c) * bottom for c in ends))
    else:
        bound = np.minimum(blocks.vera_most, go_on)
    order = np.argsort(-bound)
    best, done, take = -np.inf, 0, 1
    while done < len(order) and bound[order[done]] > best:
        found = [blocks.candidates(i) for i in order[done : done + take]]
        claims, vera, abort = (np.concatenate(parts) for parts in zip(*found, strict=True))
        best = max(best, float(_inner(claims, vera, abort, one, zero, bob, form).max()))
        done, take = done + take, 2 * take
    return best


class _Estimates(Exception):
    def __init__(self, n: int):
        self.n = n


def _seat(instance: Instance, role: Role, rules: Rules) -> Seat:
    return Seat(instance, role, NoRandom(), None, rules)  # type: ignore[arg-type]


def _view(
    t: int, steps: int, kind: StepKind, p: float, rows: int, history: np.ndarray, rules: Rules, sampler: Any
) -> StepView:
    table = np.tile(history, (rows, 1))
    table.flags.writeable = False
    return StepView(t, steps, kind, np.arange(rows), np.full(rows, p), rules, sampler, table, len(history), _no_coins)


def _no_coins(view: StepView) -> np.ndarray:
    raise ExactError("a strategy that draws from its random generator (view.random()) cannot be enumerated")


def _given_claims(
    player: Any, t: int, steps: int, kind: StepKind, p: float, history: np.ndarray, rules: Rules
) -> tuple[np.ndarray, np.ndarray]:
    """A given Alice's claims at one prefix, with their probabilities."""
    oracle = kind is StepKind.ORACLE

    def once(view: StepView, n: int) -> np.ndarray:
        if not oracle:
            return np.array(view.p, dtype=float)
        raise _Estimates(n)

    try:
        return _ask(player.claims, _view(t, steps, kind, p, 1, history, rules, once)), np.ones(1)
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

    return _ask(player.claims, _view(t, steps, kind, p, len(support), history, rules, enumerate_estimates)), weights


def _ask(method: Any, view: StepView) -> np.ndarray:
    """A given Alice's claims for every row; a strategy that fails forfeits (NaN claims)."""
    try:
        return as_numbers(method(view), len(view.rows))
    except (ExactError, _Estimates):
        raise
    except Exception:  # untrusted strategy code
        return np.full(len(view.rows), np.nan)


def _given_aborts(
    player: Any,
    t: int,
    steps: int,
    kind: StepKind,
    p: float,
    history: np.ndarray,
    rules: Rules,
    claims: np.ndarray,
    bits: np.ndarray | None,
) -> np.ndarray:
    """A given Bob's decisions (1 abort, 0 continue, -1 malformed) for each claim."""

    def refuse(view: StepView, n: int) -> np.ndarray:
        raise ExactError("only honest Bob's sampling is enumerated (pass bob='honest')")

    view = _view(t, steps, kind, p, len(claims), history, rules, refuse)
    try:
        return as_flags(player.aborts(view, claims.copy(), bits), len(claims))
    except ExactError:
        raise
    except Exception:  # untrusted strategy code: it forfeits
        return np.full(len(claims), -1)


def accept_probability(
    instance: Instance, rules: Rules, alice: Play | Strategy, bob: Play | Strategy, witness: np.ndarray | None = None
) -> float:
    """P[V = 1] with ``alice`` and ``bob`` each played as :class:`Play` says (best Alice: the supremum
    over her claims; best Bob minimises it) or a given strategy (not a given Bob against the best Alice)."""
    if not all(isinstance(side, Play | Strategy) for side in (alice, bob)):
        raise TypeError(f"each side is a Play or a Strategy, got {alice!r} and {bob!r}")
    machine = machine_of(instance)
    steps, oracle_kind = machine.length, StepKind.ORACLE
    if steps > MAX_STEPS:
        raise ExactError(f"exact analysis enumerates prefixes: T = {steps} exceeds {MAX_STEPS}")
    if alice is Play.BEST and isinstance(bob, Strategy):
        raise ExactError("the best Alice is computed against honest or best Bob only")
    w = instance.witness if witness is None else witness
    inputs = tuple(int(b) for b in np.concatenate([instance.x, w if w is not None else []]))
    given_alice = alice.factory(_seat(instance, Role.ALICE, rules)) if isinstance(alice, Strategy) else None
    given_bob = bob.factory(_seat(instance, Role.BOB, rules)) if isinstance(bob, Strategy) else None
    bob_test, vera_test = (rules.bob_samples, rules.bob_threshold), (rules.vera_samples, rules.vera_threshold)

    def tests(claims: np.ndarray, p: float, oracle: bool) -> tuple[np.ndarray, np.ndarray]:
        """P[V accepts | abort] and P[honest Bob aborts] at each claim."""
        return _test(p, *vera_test, oracle).passes(claims), 1 - _test(p, *bob_test, oracle).passes(claims)

    @cache
    def honest_claims(p: float, oracle: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        claims, weights = _estimates(p, rules.alice_samples, oracle)
        return claims, weights, *tests(claims, p, oracle)

    @cache
    def step_value(p: float, oracle: bool, one: float, zero: float) -> float:
        """A step's value between honest or best players: it depends on the prefix only through these."""
        assert isinstance(bob, Play)
        if alice is Play.BEST:
            return _supremum(_blocks(p, oracle, bob_test, vera_test), one, zero, bob, rules.form)
        claims, weights, vera, abort = honest_claims(p, oracle)
        return float(_inner(claims, vera, abort, one, zero, bob, rules.form) @ weights)

    @cache
    def value(prefix: tuple[int, ...]) -> float:
        t = len(prefix)
        if t == steps:
            return float(prefix[-1])
        state = inputs + prefix
        p = machine.conditional(t, tuple(state[a] for a in machine.relevant(t)), instance.oracle)
        one, zero = value((*prefix, 1)), value((*prefix, 0))
        kind = machine.kind(t)
        if given_alice is None and given_bob is None:
            return step_value(p, kind is oracle_kind, one, zero)
        history = np.array(state, dtype=np.uint8)
        if given_alice is not None:
            claims, weights = _given_claims(given_alice, t, steps, kind, p, history, rules)
            ok = CLAIM.ok(claims)
            claims = np.where(ok, claims, 0.0)
            vera, abort = tests(claims, p, kind is oracle_kind)
        else:
            claims, weights, vera, abort = honest_claims(p, kind is oracle_kind)
            ok = np.ones(len(claims), dtype=bool)
        if given_bob is None:
            assert isinstance(bob, Play)
            inner = _inner(claims, vera, abort, one, zero, bob, rules.form)
        elif rules.form is Form.paper:  # Bob sees the bit: ask him for each
            flags1, flags0 = (
                _given_aborts(
                    given_bob, t, steps, kind, p, history, rules, claims, np.full(len(claims), b, dtype=np.uint8)
                )
                for b in (1, 0)
            )
            inner = claims * np.where(flags1 == 1, vera, one) + (1 - claims) * np.where(flags0 == 1, vera, zero)
            inner = np.where(ABORT.ok(flags1) & ABORT.ok(flags0), inner, 1.0)  # Bob's malformed decision loses
        else:
            flags = _given_aborts(given_bob, t, steps, kind, p, history, rules, claims, None)
            go_on = claims * one + (1 - claims) * zero
            inner = np.where(ABORT.ok(flags), np.where(flags == 1, vera, go_on), 1.0)
        inner = np.where(ok, inner, 0.0)  # a claim that is not a probability loses for Alice
        return float(inner @ weights)

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
