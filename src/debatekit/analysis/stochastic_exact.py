"""Exact analysis of stochastic-oracle debate by backward induction over transcript prefixes.

V(t, y) = P[V outputs 1 | the debate reached step t with bits y]. At step t, with p = P[y_t = 1 | y]:

* honest Alice's claim is X/n_A with X ~ Bin(n_A, p) on an oracle step (p itself otherwise);
  the *best* Alice picks a claim from a grid (every multiple of 1/200 plus the points where a
  threshold of Bob or the verifier is crossed) and, with a witness, any witness;
* honest Bob aborts with probability P[|c - Z/n_B| >= bob_threshold], Z ~ Bin(n_B, p); the *best*
  Bob takes, for every claim (and in the paper form for every drawn bit), the better of abort and
  continue: every abort policy;
* on abort the verifier accepts with probability P[|c - Y/n_V| < vera_threshold], Y ~ Bin(n_V, p);
* otherwise the bit is 1 with probability c (Lean: external randomness; paper: z^A + z^B mod 1,
  uniform because the honest side's share is).

* a given strategy (a :class:`~debatekit.players.base.Strategy`) is asked for its message at each
  prefix; if it estimates, it is asked once more with one row per possible estimate, weighted by
  the binomial probabilities. Strategies that draw from their generator, or that estimate more
  than once per step, cannot be enumerated and raise :class:`ExactError`.

All probabilities are exact binomial sums (scipy), so the result is exact up to floating point and
to the grid of claims the best Alice chooses from. Prefixes are enumerated, so T <= 16.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from scipy.stats import binom

from debatekit.analysis.exact import ExactError, NoRandom, Solution
from debatekit.ledger import Role
from debatekit.machine.transcript import StepKind
from debatekit.players.base import Seat, Strategy
from debatekit.problems.registry import Instance
from debatekit.protocols.stochastic import Rules, StepView, as_flags, as_numbers, claims_ok, machine_of

MAX_STEPS = 16
MAX_WITNESS_BITS = 10
GRID = np.linspace(0, 1, 201)
TAIL = 1e-30


def _within(claims: np.ndarray, p: float, n: int, threshold: float, oracle: bool) -> np.ndarray:
    """P[|claim - estimate| < threshold] for each claim; the estimate is Bin(n, p)/n on an oracle
    step and exactly p otherwise. |c - Y/n| < h  iff  floor(n(c-h)) < Y < ceil(n(c+h))."""
    if not oracle:
        return (np.abs(claims - p) < threshold).astype(float)
    high = np.ceil(n * (claims + threshold)) - 1
    low = np.floor(n * (claims - threshold))
    return np.clip(binom.cdf(high, n, p) - binom.cdf(low, n, p), 0.0, 1.0)


def _honest_claims(p: float, n: int, oracle: bool) -> tuple[np.ndarray, np.ndarray]:
    if not oracle:
        return np.array([p]), np.array([1.0])
    # Hoeffding: each tail beyond np ± sqrt(n ln(1/TAIL) / 2) has mass below TAIL = 1e-30, far under
    # double precision's 1e-16 relative error, so dropping it changes no printed digit.
    spread = np.sqrt(n * np.log(1 / TAIL) / 2) + 1
    counts = np.arange(max(0, int(n * p - spread)), min(n, int(np.ceil(n * p + spread))) + 1)
    pmf = binom.pmf(counts, n, p)
    keep = pmf > 0
    return counts[keep] / n, pmf[keep]


def _grid(p: float, rules: Rules) -> np.ndarray:
    eps = 1e-9
    edges = [
        p + sign * (h + d)
        for h in (rules.bob_threshold, rules.vera_threshold, rules.bob_margin)
        for sign in (-1, 1)
        for d in (-eps, 0.0, eps)
    ]
    return np.unique(np.clip(np.concatenate([GRID, [p], edges]), 0, 1))


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
    return StepView(t, steps, kind, np.arange(rows), np.full(rows, p), rules, sampler, table, len(history))


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
    support, weights = _honest_claims(p, samples, True)
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
    instance: Instance, rules: Rules, alice: str | Strategy, bob: str | Strategy, witness: np.ndarray | None = None
) -> float:
    """P[V = 1] with ``alice`` and ``bob`` each "honest", "best" (best Alice maximises it, best Bob
    minimises it) or a given strategy."""
    machine = machine_of(instance)
    steps, oracle_kind = machine.length, StepKind.ORACLE
    if steps > MAX_STEPS:
        raise ExactError(f"exact analysis enumerates prefixes: T = {steps} exceeds {MAX_STEPS}")
    w = instance.witness if witness is None else witness
    inputs = tuple(int(b) for b in np.concatenate([instance.x, w if w is not None else []]))
    given_alice = alice.factory(_seat(instance, Role.ALICE, rules)) if isinstance(alice, Strategy) else None
    given_bob = bob.factory(_seat(instance, Role.BOB, rules)) if isinstance(bob, Strategy) else None

    @cache
    def step_terms(p: float, oracle: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
        """Claims, their weights (None: the best Alice chooses), P[V accepts | abort], P[Bob aborts]."""
        if alice == "honest":
            claims, weights = _honest_claims(p, rules.alice_samples, oracle)
        else:
            claims, weights = _grid(p, rules), None
        vera = _within(claims, p, rules.vera_samples, rules.vera_threshold, oracle)
        abort = 1 - _within(claims, p, rules.bob_samples, rules.bob_threshold, oracle)
        return claims, weights, vera, abort

    @cache
    def value(prefix: tuple[int, ...]) -> float:
        t = len(prefix)
        if t == steps:
            return float(prefix[-1])
        state = inputs + prefix
        p = machine.conditional(t, tuple(state[a] for a in machine.relevant(t)), instance.oracle)
        one, zero = value((*prefix, 1)), value((*prefix, 0))
        kind = machine.kind(t)
        history = np.array(state, dtype=np.uint8)
        if given_alice is not None:
            claims, weights = _given_claims(given_alice, t, steps, kind, p, history, rules)
            ok = claims_ok(claims)
            claims = np.where(ok, claims, 0.0)
            vera = _within(claims, p, rules.vera_samples, rules.vera_threshold, kind is oracle_kind)
            abort = 1 - _within(claims, p, rules.bob_samples, rules.bob_threshold, kind is oracle_kind)
        else:
            claims, weights, vera, abort = step_terms(p, kind is oracle_kind)
            ok = np.ones(len(claims), dtype=bool)
        go_on = claims * one + (1 - claims) * zero
        if given_bob is not None:
            if rules.form == "paper":  # Bob sees the bit: ask him for each
                flags1, flags0 = (
                    _given_aborts(
                        given_bob, t, steps, kind, p, history, rules, claims, np.full(len(claims), b, dtype=np.uint8)
                    )
                    for b in (1, 0)
                )
                inner = claims * np.where(flags1 == 1, vera, one) + (1 - claims) * np.where(flags0 == 1, vera, zero)
                inner = np.where((flags1 < 0) | (flags0 < 0), 1.0, inner)
            else:
                flags = _given_aborts(given_bob, t, steps, kind, p, history, rules, claims, None)
                inner = np.where(flags < 0, 1.0, np.where(flags == 1, vera, go_on))
        elif bob == "honest":
            inner = abort * vera + (1 - abort) * go_on
        elif rules.form == "paper":  # Bob sees the bit before deciding
            inner = claims * np.minimum(vera, one) + (1 - claims) * np.minimum(vera, zero)
        else:
            inner = np.minimum(vera, go_on)
        inner = np.where(ok, inner, 0.0)  # a claim that is not a probability loses for Alice
        return float(inner @ weights) if weights is not None else float(inner.max())

    return value(())


def solve(instance: Instance, rules: Rules, protocol: str = "stochastic") -> Solution:
    """The honest side's exact win probability against the best adversary (Theorem 6.2's game)."""
    machine = machine_of(instance)
    if instance.truth:
        value = accept_probability(instance, rules, "honest", "best")
        honest, adversary, promised = "alice", "bob", rules.completeness
    else:
        witnesses = [None]
        if machine.n_witness:
            if machine.n_witness > MAX_WITNESS_BITS:
                raise ExactError(f"a {machine.n_witness}-bit witness is too many to enumerate")
            witnesses = [
                np.array([(k >> i) & 1 for i in reversed(range(machine.n_witness))], dtype=np.uint8)
                for k in range(2**machine.n_witness)
            ]
        value = 1 - max(accept_probability(instance, rules, "best", "honest", w) for w in witnesses)
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
        2**machine.length,
        promised,
    )
