"""Certified planner: the fewest verifier (human) queries for stochastic-oracle debate.

Honest Bob is Lean's ``bob' s b q`` and Vera is ``bob' c s v``. Keeping those tests but choosing the
sample counts so that ``alice_pr_le``, ``bob_complete`` and ``bob_sound`` hold for every true
probability, with the exact binomial tails of :mod:`debatekit.protocols.stochastic.tails` instead of
Hoeffding, keeps ``completeness_p`` and ``soundness_p`` true for the same :class:`Params`. Two
certificates (:class:`~debatekit.protocols.stochastic.params.Proof`): ``direct`` proves the three
conclusions itself; ``lean`` proves only ``alice_pr_le``'s, for every party's own estimate, and Lean
proves ``bob_complete``/``bob_sound`` from it. docs/planner.md gives the argument (section 1a: what
each leaves to Lean); this module searches it:

* :func:`plan` picks (v, c, s, b, q) and the sample counts to minimise Vera's queries under a cap
  on each honest prover's queries per step; :func:`lean_plan`, :func:`paper_plan` and
  :func:`frontier` report the alternatives, each plan's counts read through
  :func:`~debatekit.protocols.stochastic.params.counts`, as the rules read them;
* :func:`certifies` checks a plan under either proof, :func:`exact_inequalities` Lean's inequalities
  in exact rationals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats

from debatekit.protocols.stochastic.params import Constants, PaperConstants, Params, ParamsError, Proof, counts
from debatekit.protocols.stochastic.tails import (
    TailFn,
    alice_failure,
    bob_estimate_failure,
    bob_failures,
    bob_prime_failure,
    float_down,
    small_term,
    tail,
    tail_fast,
)

W = 2 / 3
"""Lean's w: P[M(x) = 1] >= 2/3 (completeness) or P[M(x) = 0] >= 2/3 (soundness)."""

FRONTIER_MULTIPLIERS = (1, 3, 10, 30, 100)
MAX_BUDGET = 10**9


class PlanError(ValueError):
    """The request cannot be planned: bad arguments or no parameters meet the targets."""


# ---------------------------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Parameters and per-party query counts for stochastic-oracle debate, with their guarantees.

    ``params`` is Lean's ``Params w d k t`` with the sample counts actually used; ``completeness``
    and ``soundness`` are its bounds (1-v)(w - k c - q T) and (1-v)(1 - q T)(w - k b). The failure
    fields are certified bounds, for every true probability, on: Alice's estimate off by >= c
    (``alice_pr_le``, <= q); honest Bob rejecting a claim off by <= s (``bob_complete``, <= q) or
    accepting one off by >= b (``bob_sound``, <= q); Vera rejecting a claim off by <= c or accepting
    one off by >= s (<= v); Bob's and Vera's own estimates missing by >= (b-s)/2 and (s-c)/2
    (``alice_pr_le`` for ``bob'``'s estimate; <= q and v). ``proof`` names the certificate the counts
    were chosen for (:func:`failures_within`); every field is computed for every plan, so a plan can be
    checked under the other proof too. For the paper's constants (Theorem 6.2, not Lean's proof)
    ``params``, ``proof`` and the failures are None. ``prover_budget`` is the (Alice, Bob) cap per step
    a planned plan obeys.
    """

    constants: Constants
    proof: Proof | None
    k: float
    T: int
    params: Params | None
    verifier_queries: int
    alice_queries_per_step: int
    bob_queries_per_step: int
    completeness: float
    soundness: float
    alice_failure: float | None = None
    bob_complete_failure: float | None = None
    bob_sound_failure: float | None = None
    vera_complete_failure: float | None = None
    vera_sound_failure: float | None = None
    bob_estimate_failure: float | None = None
    vera_estimate_failure: float | None = None
    prover_budget: tuple[int, int] | None = None

    @property
    def alice_queries(self) -> int:
        """Alice's queries over a whole debate (T steps at most)."""
        return self.T * self.alice_queries_per_step

    @property
    def bob_queries(self) -> int:
        """Bob's queries over a whole debate (T steps at most)."""
        return self.T * self.bob_queries_per_step

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["constants"] = self.constants.value
        out["proof"] = None if self.proof is None else self.proof.value
        out["prover_budget"] = None if self.prover_budget is None else list(self.prover_budget)
        out["alice_queries"] = self.alice_queries
        out["bob_queries"] = self.bob_queries
        return out


def lean_budget(k: float, T: int) -> tuple[int, int]:
    """Lean's per-step counts for ``Params.defaults k t``: Alice ``samples c q``, Bob ``samples ((b-s)/2) q``."""
    p = Params.defaults(k, T)
    return p.alice_samples, p.bob_samples


def lean_plan(k: float, T: int) -> Plan:
    """Lean's ``Params.defaults`` with Hoeffding's ``samples``, which Lean's theorems cover as stated
    (``Proof.lean``, no substitution); its failures bounded by exact tails too (left None when a count
    exceeds MAX_BUDGET)."""
    _check_kT(k, T)
    params = Params.defaults(k, T)
    if max(params.alice_samples, params.bob_samples, params.vera_samples) <= MAX_BUDGET:
        return _certified(Constants.lean, params, None, Proof.lean)
    return _plan(Constants.lean, Proof.lean, params, k, T)


def paper_plan(K: float, T: int) -> Plan:
    """Figure 2's constants: r verifier samples, R per prover per round; Theorem 6.2 promises
    completeness 3/5 and soundness 3/5 (P[V = 1] <= 2/5). Not a Lean ``Params``, so no params."""
    _check_kT(K, T)
    return _plan(Constants.paper, None, PaperConstants(K, T), K, T)


def _plan(constants: Constants, proof: Proof | None, chosen: Params | PaperConstants, k: float, T: int,
          **failures: Any) -> Plan:  # fmt: skip
    """A plan of ``chosen``'s counts (:func:`~debatekit.protocols.stochastic.params.counts`, as the rules
    read them), with the failures given."""
    c = counts(chosen)
    return Plan(
        constants=constants, proof=proof, k=k, T=T, params=chosen if isinstance(chosen, Params) else None,
        verifier_queries=c.vera_samples, alice_queries_per_step=c.alice_samples,
        bob_queries_per_step=c.bob_samples, completeness=c.completeness, soundness=c.soundness, **failures,
    )  # fmt: skip


def _check_kT(k: float, T: int) -> None:
    if isinstance(k, bool) or not (isinstance(k, int | float) and math.isfinite(k) and k > 0):
        raise PlanError(f"K must be a positive number, got {k!r}")
    if not isinstance(T, int) or isinstance(T, bool) or T < 1:
        raise PlanError(f"T must be a positive integer, got {T!r}")


def _certified(constants: Constants, params: Params, budget: tuple[int, int] | None, proof: Proof) -> Plan:
    """Bound every failure of both proofs for ``params``' sample counts and package the plan."""
    bob_c, bob_s = bob_failures(params.bob_samples, params.s, params.b)
    vera_c, vera_s = bob_failures(params.vera_samples, params.c, params.s)
    return _plan(
        constants, proof, params, params.k, params.T,
        alice_failure=alice_failure(params.alice_samples, params.c),
        bob_complete_failure=bob_c,
        bob_sound_failure=bob_s,
        vera_complete_failure=vera_c,
        vera_sound_failure=vera_s,
        bob_estimate_failure=bob_estimate_failure(params.bob_samples, params.s, params.b),
        vera_estimate_failure=bob_estimate_failure(params.vera_samples, params.c, params.s),
        prover_budget=budget,
    )  # fmt: skip


def failures_within(plan: Plan, proof: Proof | None = None) -> dict[str, bool]:
    """Each failure ``proof`` (default: the plan's own) needs, against its allowance (q for Alice and
    Bob, v for Vera): ``direct``, the conclusions of ``alice_pr_le``, ``bob_complete`` and ``bob_sound``;
    ``lean``, ``alice_pr_le``'s for each party's own estimate."""
    p = plan.params
    if p is None:
        return {}

    def within(value: float | None, allowance: float) -> bool:
        return value is not None and value <= allowance

    if (proof or plan.proof) is Proof.lean:
        return {
            "alice_pr_le (Alice)": within(plan.alice_failure, p.q),
            "alice_pr_le (Bob's estimate)": within(plan.bob_estimate_failure, p.q),
            "alice_pr_le (Vera's estimate)": within(plan.vera_estimate_failure, p.v),
        }
    return {
        "alice_pr_le": within(plan.alice_failure, p.q),
        "bob_complete (Bob)": within(plan.bob_complete_failure, p.q),
        "bob_sound (Bob)": within(plan.bob_sound_failure, p.q),
        "bob_complete (Vera)": within(plan.vera_complete_failure, p.v),
        "bob_sound (Vera)": within(plan.vera_sound_failure, p.v),
    }


def certifies(plan: Plan, proof: Proof | None = None) -> bool:
    """The certificate of ``proof`` (default: the plan's own) holds: every failure it needs within its
    allowance and every Lean inequality true in exact rational arithmetic (:func:`exact_inequalities`)."""
    if plan.params is None:
        return False
    return all(failures_within(plan, proof).values()) and all(exact_inequalities(plan.params).values())


def _decimal(x: float) -> Fraction:
    """The decimal the user typed (the float's shortest repr), e.g. 0.6 -> 3/5."""
    return Fraction(repr(float(x)))


def exact_inequalities(p: Params) -> dict[str, bool]:
    """Lean's ``Params`` fields in exact rational arithmetic on the floats' values, with w = 2/3 and
    the targets d read as decimals (a target 0.6 means exactly 3/5)."""
    k, v, c, s, b, q = (Fraction(x) for x in (p.k, p.v, p.c, p.s, p.b, p.q))
    w, t = Fraction(2, 3), p.T
    return {
        "k0: 0 < k": k > 0,
        "c0: 0 < c": c > 0,
        "cs: c < s": c < s,
        "sb: s < b": s < b,
        "q0: 0 < q": q > 0,
        "q1: q <= 1": q <= 1,
        "v0: 0 < v": v > 0,
        "v1: v <= 1": v <= 1,
        "qv: q <= v": q <= v,
        "bw: k*b <= w": k * b <= w,
        "complete: d <= (1-v)(w - k*c - q*T)": _decimal(p.completeness) <= (1 - v) * (w - k * c - q * t),
        "sound: d <= (1-v)(1 - q*T)(w - k*b)": _decimal(p.soundness) <= (1 - v) * (1 - q * t) * (w - k * b),
    }


# ---------------------------------------------------------------------------------------------
# The optimiser
# ---------------------------------------------------------------------------------------------

_SLACK = 1e-9  # relative slack left in the inequalities, so float and exact-rational checks both pass
_SEARCH_MARGIN = 1e-6  # the search aims this far below each allowance; its tails are approximate


@dataclass(frozen=True)
class _Problem:
    k: float
    T: int
    d_c: float
    d_s: float
    n_a: int
    n_b: int
    proof: Proof

    @property
    def share(self) -> float:
        """The part of an allowance one tail may use: all (direct's dominant term) or half (two-sided)."""
        return 0.5 if self.proof is Proof.lean else 1.0

    def b_max(self, v: float, q: float) -> float:
        """Largest b with d_s <= (1-v)(1-qT)(w - k b), less a relative slack."""
        return (W - self.d_s / ((1 - v) * (1 - q * self.T))) / self.k * (1 - _SLACK)

    def complete_ok(self, v: float, q: float, c: float) -> bool:
        return (1 - v) * (W - self.k * c - q * self.T) >= self.d_c * (1 + _SLACK)


def _z(x: np.ndarray | float) -> np.ndarray:
    return np.asarray(stats.norm.isf(x), dtype=float)


def _approx_e(n: int, target: np.ndarray | float) -> np.ndarray:
    """Normal approximation (worst p = 1/2, continuity correction) of the least e with tail(n, e) <= target."""
    return (_z(target) * math.sqrt(n) / 2 + 0.5) / n


def _approx_n(e: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Normal approximation of the least n with tail(n, e) <= v: 2 e n - 1 = z sqrt(n)."""
    z = _z(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = (z + np.sqrt(z * z + 8 * e)) / (4 * e)
    return np.where(e > 0, root * root, np.inf)


def _least_e(f: Callable[[float], float], target: float, guess: float, rtol: float = 1e-6) -> float:
    """Least e in (0, 1] (to rtol, rounded up) with f(e) <= target, for f nonincreasing; inf if none."""
    hi = min(max(guess, 1e-12), 1.0)
    if f(hi) <= target:
        lo = hi * 0.98
        while lo > 1e-12 and f(lo) <= target:
            hi, lo = lo, lo * 0.9
    else:
        lo = hi
        while f(hi) > target:
            if hi >= 1.0:
                return math.inf
            lo, hi = hi, min(1.0, hi * 1.02 + 1e-12)
    while hi - lo > rtol * hi:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if f(mid) <= target else (mid, hi)
    return hi


def _least_n(ok: Callable[[int], bool], guess: float) -> int:
    """Least n >= 1 with ok(n), by bisection (exact when ok is monotone in n); always ok at the result."""
    hi = max(1, math.ceil(guess))
    if ok(hi):
        lo = max(0, int(hi * 0.995) - 1)
        while lo > 0 and ok(lo):
            hi, lo = lo, max(0, int(lo * 0.95) - 1)
    else:
        lo = hi
        while not ok(hi):
            lo, hi = hi, int(hi * 1.005) + 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class _Design:
    v: float
    q: float
    c: float
    s: float
    b: float
    n_v: int
    gamma: float = 1.0

    @property
    def key(self) -> tuple[int, float]:
        return (self.n_v, -(self.s - self.c))


class _Search:
    """Evaluate a (v, q) choice with the fast tails: the least c, the least Bob half-width, the
    largest b, then the fewest Vera samples. Per-q results are cached."""

    def __init__(self, problem: _Problem):
        self.pb = problem
        self._alice: dict[float, float] = {}
        self._bob: dict[float, float] = {}
        self._ratio = 1.0

    def alice_c(self, q: float) -> float:
        if q not in self._alice:
            n, target = self.pb.n_a, q * (1 - _SEARCH_MARGIN)
            guess = float(_approx_e(n, q / 2))
            self._alice[q] = _least_e(lambda e: alice_failure(n, e, tail_fast), target, guess)
        return self._alice[q]

    def bob_half_width(self, q: float) -> float:
        if q not in self._bob:
            # direct leaves room for bob_complete's second term; lean needs both tails within q
            n, target = self.pb.n_b, q * self.pb.share * (1 - 1e-3)
            self._bob[q] = _least_e(lambda e: tail_fast(n, e), target, float(_approx_e(n, q * self.pb.share)))
        return self._bob[q]

    def design(self, v: float, q: float, gamma: float = 1.0) -> _Design | None:
        """The design for (v, q), with Alice's accuracy c = gamma times the least she can certify
        (gamma > 1 can help Vera: her completeness bound has a tail at (s+3c)/2)."""
        pb = self.pb
        if not (0 < q <= v < 1 and q * pb.T < 1 and gamma >= 1):
            return None
        b = pb.b_max(v, q)
        if not (b > 0 and pb.k * b <= W):
            return None
        c = self.alice_c(q) * gamma
        if not (math.isfinite(c) and pb.complete_ok(v, q, c)):
            return None
        half = self.bob_half_width(q)
        s = b - 2 * half
        if not (math.isfinite(half) and c < s < b):
            return None
        if bob_prime_failure(pb.proof, pb.n_b, s, b, tail_fast, splits=2) > q * (1 - _SEARCH_MARGIN):
            return None
        target = v * (1 - _SEARCH_MARGIN)
        e_v = (s - c) / 2
        approx = float(_approx_n(np.array(e_v), np.array(v * pb.share)))
        n_v = _least_n(lambda n: _vera_search_failure(pb.proof, n, c, s) <= target, min(approx * self._ratio, 1e13))
        self._ratio = n_v / approx  # the next guess starts from this design's correction
        return _Design(v, q, c, s, b, n_v, gamma)


def _vera_search_failure(proof: Proof, n: int, c: float, s: float) -> float:
    """Vera's failure in the search, fast tails. Lean's route: 2 tail((s-c)/2). Direct: bob_complete's
    bound at delta = c, tail((s-c)/2) + tail((3c+s)/2), which the certified interval bound approaches
    (and bob_sound's tail((s-c)/2) is below it)."""
    if proof is Proof.lean:
        return bob_estimate_failure(n, c, s, tail_fast)
    cf, sf = Fraction(c), Fraction(s)
    main = tail_fast(n, float_down((sf - cf) / 2))
    return main + small_term(tail_fast, n, float_down((3 * cf + sf) / 2), main)


def _approx_candidates(pb: _Problem, size: int = 200) -> list[tuple[float, float]]:
    """Feasible (v, q) on a log grid, best first by the normal approximation of the whole design."""
    v_max = 1 - max(pb.d_c, pb.d_s) / W
    v = v_max * np.logspace(-5, 0, size, endpoint=False)[:, None]
    q = (np.logspace(-8, 0, size, endpoint=False) / pb.T)[None, :]
    c = _approx_e(pb.n_a, q / 2)
    e_b = _approx_e(pb.n_b, q * pb.share)
    with np.errstate(divide="ignore", invalid="ignore"):
        b = (W - pb.d_s / ((1 - v) * (1 - q * pb.T))) / pb.k
        s = b - 2 * e_b
        ok = (q <= v) & (b > 0) & (c < s) & ((1 - v) * (W - pb.k * c - q * pb.T) >= pb.d_c)
        n = np.where(ok, _approx_n((s - c) / 2, np.broadcast_to(v * pb.share, ok.shape)), np.inf)
    vs, qs = np.broadcast_arrays(v, q)
    order = np.argsort(n, axis=None, kind="stable")
    return [(float(vs.flat[i]), float(qs.flat[i])) for i in order if np.isfinite(n.flat[i])]


def _optimise(pb: _Problem) -> _Design:
    """The approximation's best (v, q) that the fast tails confirm, then a pattern search in
    (log v, log q, log gamma) on the fast-tail objective."""
    search = _Search(pb)
    best: _Design | None = None
    for v, q in _approx_candidates(pb)[:60]:
        best = search.design(v, q)
        if best is not None:
            break
    if best is None:
        raise PlanError(
            f"no parameters meet completeness {pb.d_c:g} and soundness {pb.d_s:g} at K={pb.k:g}, T={pb.T} "
            f"with at most {pb.n_a} (Alice) and {pb.n_b} (Bob) queries per step"
        )
    moves = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (1, 1, 0), (-1, -1, 0), (1, -1, 0), (-1, 1, 0)]
    moves += [(0, 0, 1), (0, 0, -1)]
    step = 0.1
    while step > 0.003:
        for dv, dq, dg in moves:
            g = math.exp(dg * step)
            trial = search.design(best.v * math.exp(dv * step), best.q * math.exp(dq * step), best.gamma * g)
            if trial is not None and trial.key < best.key:
                best = trial
                break
        else:
            step /= 2
    return best


def _settle(certified: Callable[[float], float], fast: Callable[[float], float], target: float, e: float) -> float:
    """From the search's e, the least e (near it) whose certified failure is <= target: where the
    certified tail exceeds the fast one, solve again with the fast one scaled by their ratio."""
    for _ in range(8):
        value = certified(e)
        if value <= target:
            return e
        ratio = value / max(fast(e), 1e-300) * (1 + 1e-7)
        e = _least_e(lambda x, r=ratio: fast(x) * r, target, e * (1 + 1e-6))
    raise PlanError("internal error: could not certify the provers' accuracy")


def _fewest(failure: Callable[[int, TailFn], float], target: float, cap: int | None, guess: int = 0) -> int:
    """Few samples whose certified failure is <= target: the least n by the fast tails (at most cap),
    raised while the certified tails disagree, by solving again with the fast failure scaled by their ratio."""
    ratio = 1.0
    n = 0
    for _ in range(8):
        n = _least_n(
            lambda m, r=ratio: failure(m, tail_fast) * r <= target * (1 - _SEARCH_MARGIN), n or guess or cap or 1
        )
        n = n if cap is None else min(n, cap)
        value = failure(n, tail)
        if value <= target:
            return n
        if cap is not None and n >= cap:
            break
        ratio = max(ratio * 1.0001, value / max(failure(n, tail_fast), 1e-300))
    raise PlanError("internal error: could not certify a party's sample count")


def _certify_design(pb: _Problem, d: _Design) -> Plan:
    """Certify a design with the certified tails: c up or s down if the fast search's tails fell short
    (parts per million, or a few per cent above SWEEP_BUDGET breakpoints), then Vera's samples up to
    the least count the certified bounds accept."""
    n_a, n_b, b = pb.n_a, pb.n_b, d.b
    c = _settle(lambda e: alice_failure(n_a, e), lambda e: alice_failure(n_a, e, tail_fast), d.q, d.c)
    half = _settle(
        lambda h: bob_prime_failure(pb.proof, n_b, b - 2 * h, b),
        lambda h: bob_prime_failure(pb.proof, n_b, b - 2 * h, b, tail_fast, splits=2),
        d.q,
        (b - d.s) / 2,
    )
    s = b - 2 * half
    if not (c < s and pb.complete_ok(d.v, d.q, c)):
        raise PlanError("internal error: the certified provers' accuracy breaks Lean's inequalities")
    # Where c or the half-width has room (gamma > 1), fewer prover samples do; never more than the cap.
    n_a = _fewest(lambda n, tail_fn: alice_failure(n, c, tail_fn), d.q, n_a)
    n_b = _fewest(lambda n, tail_fn: bob_prime_failure(pb.proof, n, s, b, tail_fn), d.q, n_b)
    n_v = _fewest(lambda n, tail_fn: bob_prime_failure(pb.proof, n, c, s, tail_fn), d.v, None, d.n_v)
    try:
        params = Params(
            k=pb.k, T=pb.T, v=d.v, c=c, s=s, b=b, q=d.q, completeness=pb.d_c, soundness=pb.d_s,
            alice_samples=n_a, bob_samples=n_b, vera_samples=n_v,
        )  # fmt: skip
    except ParamsError as err:
        raise PlanError(f"internal error: the optimiser's parameters are invalid: {err}") from err
    result = _certified(Constants.planned, params, (pb.n_a, pb.n_b), pb.proof)
    if not certifies(result):
        failed = [name for name, ok in {**failures_within(result), **exact_inequalities(params)}.items() if not ok]
        raise PlanError(f"internal error: could not certify the optimiser's choice ({', '.join(failed)})")
    return result


def _budget(k: float, T: int, prover_budget: int | tuple[int, int] | None) -> tuple[int, int]:
    if prover_budget is None:
        pair: tuple[Any, ...] = lean_budget(k, T)
        if max(pair) > MAX_BUDGET:
            raise PlanError(
                f"Lean's per-step counts {pair} exceed the supported {MAX_BUDGET:.0e} "
                "(a prover budget, `plan --prover-budget`, caps them)"
            )
        return pair
    if isinstance(prover_budget, int | np.integer) and not isinstance(prover_budget, bool):
        pair = (prover_budget, prover_budget)
    else:
        pair = tuple(prover_budget)
    if len(pair) != 2 or not all(isinstance(n, int | np.integer) and not isinstance(n, bool) for n in pair):
        raise PlanError(f"prover budget must be an integer or a pair of integers, got {prover_budget!r}")
    if min(pair) < 1:
        raise PlanError(f"prover budget must be at least 1 query per step, got {prover_budget!r}")
    if max(pair) > MAX_BUDGET:
        raise PlanError(f"prover budgets above {MAX_BUDGET:.0e} queries per step are not supported")
    return int(pair[0]), int(pair[1])


def _check_target(x: float, name: str) -> float:
    if isinstance(x, bool) or not (isinstance(x, int | float) and 0 < x < 1):
        raise PlanError(f"{name} target must be in (0, 1), got {x!r}")
    if x >= W:
        raise PlanError(f"{name} target must be below w = 2/3 (Lean's bound never exceeds w), got {x:g}")
    return float(x)


def plan(
    k: float,
    T: int,
    completeness: float = 3 / 5,
    soundness: float = 3 / 5,
    prover_budget: int | tuple[int, int] | None = None,
    advance: Callable[[int], None] | None = None,
    proof: Proof = Proof.direct,
) -> Plan:
    """The certified plan with the fewest verifier queries (:attr:`Constants.planned`).

    Subject to Lean's ``Params`` inequalities (w = 2/3, d = the targets) and to honest Alice and Bob
    making at most ``prover_budget`` queries per step (an int caps both; a pair is (Alice, Bob); by
    default Lean's own counts for ``Params.defaults k t``). The parties keep Lean's tests; only the
    sample counts change, certified by exact binomial tails under ``proof`` (:class:`Proof`;
    docs/planner.md). ``advance(i)`` is called after the search (i = 1) and the certificate (i = 2).
    """
    _check_kT(k, T)
    if not isinstance(proof, Proof):
        raise PlanError(f"proof must be a Proof ({', '.join(Proof)}), got {proof!r}")
    d_c, d_s = _check_target(completeness, "completeness"), _check_target(soundness, "soundness")
    n_a, n_b = _budget(k, T, prover_budget)
    pb = _Problem(float(k), T, d_c, d_s, n_a, n_b, proof)
    design = _optimise(pb)
    if advance is not None:
        advance(1)
    result = _certify_design(pb, design)
    if advance is not None:
        advance(2)
    return result


def frontier(
    k: float,
    T: int,
    completeness: float = 3 / 5,
    soundness: float = 3 / 5,
    multipliers: Sequence[int] = FRONTIER_MULTIPLIERS,
    advance: Callable[[int], None] | None = None,
    proof: Proof = Proof.direct,
) -> list[Plan]:
    """Planned plans under ``proof`` when both provers may spend m times Lean's per-step counts, for each m."""
    _check_kT(k, T)
    n_a, n_b = lean_budget(k, T)
    if max(multipliers) * max(n_a, n_b) > MAX_BUDGET:
        raise PlanError(
            f"the frontier needs up to {max(multipliers)} x Lean's per-step counts ({n_a}, {n_b}) at K={k:g}, "
            f"T={T}: above the supported {MAX_BUDGET:.0e}; use --prover-budget"
        )
    out = []
    for i, m in enumerate(multipliers):
        out.append(plan(k, T, completeness, soundness, (m * n_a, m * n_b), proof=proof))
        if advance is not None:
            advance(i + 1)
    return out


TARGET_STEP = Fraction(1, 1000)
"""The grid of targets :func:`strongest` searches (completeness and soundness to three decimals)."""


def strongest(
    k: float,
    T: int,
    verifier_budget: int,
    prover_budget: int | tuple[int, int] | None = None,
    completeness: float | None = None,
    soundness: float | None = None,
    advance: Callable[[int], None] | None = None,
    proof: Proof = Proof.direct,
) -> Plan:
    """The strongest guarantee certifiable with at most ``verifier_budget`` verifier queries per debate:
    the largest target d on a grid of :data:`TARGET_STEP` whose :func:`plan` needs no more queries, for
    completeness and soundness both (the largest gap d_c + d_s - 1), or for the one not given. A search
    on d that brackets the answer (relying on the fewest queries growing with the targets): each step
    interpolates log(queries) between the bracket's ends, or bisects where that did not halve the
    bracket or an end has no plan; ``advance(i)`` after each plan."""
    _check_kT(k, T)
    if isinstance(verifier_budget, bool) or not isinstance(verifier_budget, int | np.integer) or verifier_budget < 1:
        raise PlanError(f"verifier budget must be a positive integer, got {verifier_budget!r}")
    if completeness is not None and soundness is not None:
        raise PlanError("a verifier budget leaves completeness or soundness free: give at most one of them")
    fixed = None if completeness is None and soundness is None else _check_target(completeness or soundness, "fixed")
    made: dict[int, Plan | None] = {}

    def at(i: int) -> Plan | None:
        """The plan for targets i * TARGET_STEP (None where none is feasible)."""
        if i not in made:
            d = float(i * TARGET_STEP)
            pair = (d, d) if fixed is None else (fixed, d) if completeness is not None else (d, fixed)
            try:
                made[i] = plan(k, T, *pair, prover_budget, proof=proof)
            except PlanError as err:
                if "internal error" in str(err):
                    raise
                made[i] = None
            if advance is not None:
                advance(len(made))
        return made[i]

    def fits(i: int) -> bool:
        found = at(i)
        return found is not None and found.verifier_queries <= verifier_budget

    lo, hi = 0, math.ceil(W / TARGET_STEP)  # d = 0 fits and hi * TARGET_STEP >= w fails: neither is asked
    bisect = True
    while hi - lo > 1:
        ends = made.get(lo), made.get(hi)
        guess = (lo + hi) // 2
        if not bisect and ends[0] is not None and ends[1] is not None:
            n_lo, n_hi = ends[0].verifier_queries, ends[1].verifier_queries
            share = math.log(verifier_budget / n_lo) / math.log(n_hi / n_lo)
            guess = min(max(lo + math.floor((hi - lo) * share), lo + 1), hi - 1)
        width = hi - lo
        lo, hi = (guess, hi) if fits(guess) else (lo, guess)
        bisect = hi - lo > width // 2
    if lo == 0:
        raise PlanError(
            f"{verifier_budget} verifier queries certify no guarantee at K={k:g}, T={T} "
            f"(targets {float(TARGET_STEP):g} need more, or none are feasible)"
        )
    best = at(lo)
    assert best is not None
    return best


def strongest_steps() -> int:
    """How many plans :func:`strongest` makes at most (for a progress bar): a step that does not halve
    the bracket is followed by one that does."""
    return 2 * math.ceil(math.log2(math.ceil(W / TARGET_STEP)))


def honest_abort(T: int, alice_samples: int, c: float, bob_samples: int, s: float, b: float) -> float:
    """A certified bound on P[honest Bob aborts a debate with honest Alice]: at each of T steps Alice's
    estimate is off by >= c with probability <= ``alice_failure``, and a claim off by <= s is rejected by
    Bob with probability <= ``bob_complete_failure`` (c < s); so at most T times their sum (and 1)."""
    return min(1.0, T * (alice_failure(alice_samples, c) + bob_failures(bob_samples, s, b)[0]))
