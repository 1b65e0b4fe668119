"""The certified planner (docs/planner.md): its binomial tail against exact rational arithmetic, the
returned plans against every Lean inequality and every failure allowance, the issue's targets, a
Monte Carlo run at the worst case, and the ``plan`` command.

Reference values are computed here independently of the planner's code paths: exact fractions for
small n, 50-digit decimals for the plans' own n, and the honest tests' acceptance probabilities
evaluated directly (integer thresholds in exact arithmetic) over a grid of true probabilities.
"""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
import typer
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy import stats

from debatekit.cli import main as cli_main
from debatekit.cli import plan_cmd
from debatekit.protocols.stochastic import planner, tails
from debatekit.protocols.stochastic.params import PaperConstants, Params, Proof, samples
from debatekit.protocols.stochastic.planner import Plan

K, T = 1, 1000
LEAN_ALICE, LEAN_BOB = 61031, 27125  # samples(c, q) and samples((b-s)/2, q) of Params.defaults(1, 1000)


# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------


def exact_cdf(k: int, n: int, p: Fraction) -> Fraction:
    """P[Bin(n, p) <= k] in exact rational arithmetic."""
    return sum((math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)), Fraction(0))


def brute_tail(n: int, e: float) -> Fraction:
    """sup_p P_p[X <= n(p - e)] by its breakpoints p = k/n + e, exactly."""
    values = [exact_cdf(k, n, Fraction(k, n) + Fraction(e)) for k in range(n + 1) if Fraction(k, n) + Fraction(e) <= 1]
    return max(values, default=Fraction(0))


def brute_upper_tail(n: int, e: float) -> Fraction:
    """sup_p P_p[X >= n(p + e)] by its own breakpoints p = m/n - e (no symmetry used), exactly."""
    best = Fraction(0)
    for m in range(n + 1):
        p = Fraction(m, n) - Fraction(e)
        if 0 <= p <= 1:
            best = max(best, 1 - exact_cdf(m - 1, n, p) if m > 0 else Fraction(1))
    return best


def decimal_cdf(k: int, n: int, p: float, digits: int = 50) -> Decimal:
    """P[Bin(n, p) <= k] to about 40 significant digits, summing the pmf down from k."""
    with localcontext() as ctx:
        ctx.prec = digits
        f = Fraction(p)
        pd = Decimal(f.numerator) / Decimal(f.denominator)
        qd = 1 - pd
        term = Decimal(math.comb(n, k)) * pd**k * qd ** (n - k)
        total, j = term, k
        while j > 0 and term > total * Decimal(10) ** -42:
            term = term * j / (n - j + 1) * qd / pd
            total += term
            j -= 1
        return +total


def reject_probability(n: int, p_true: float, claim: Fraction, r: Fraction) -> float:
    """P[|claim - X/n| >= r] for X ~ Bin(n, p_true): the thresholds are exact integers."""
    upper = math.ceil(n * (claim + r))  # X >= upper
    lower = math.floor(n * (claim - r))  # X <= lower
    out = 0.0
    if upper <= n:
        out += float(stats.binom.sf(max(upper, 0) - 1, n, p_true))
    if lower >= 0:
        out += float(stats.binom.cdf(min(lower, n), n, p_true))
    return min(out, 1.0)


def estimate_off_probability(n: int, p_true: float, c: Fraction) -> float:
    """P[|X/n - p_true| >= c]: Alice's estimate off by c or more."""
    return reject_probability(n, p_true, Fraction(p_true), c)


def lean_params_fields(p: Params) -> dict[str, bool]:
    """Lean's ``Params w d k t`` fields in exact arithmetic, w = 2/3 and d the targets as typed."""
    k, v, c, s, b, q = (Fraction(x) for x in (p.k, p.v, p.c, p.s, p.b, p.q))
    w, t = Fraction(2, 3), p.T
    d_c, d_s = Fraction(repr(p.completeness)), Fraction(repr(p.soundness))
    return {
        "k0 c0 q0 v0": k > 0 and c > 0 and q > 0 and v > 0,
        "cs sb": c < s < b,
        "q1 v1 qv": q <= 1 and v <= 1 and q <= v,
        "bw": k * b <= w,
        "complete": d_c <= (1 - v) * (w - k * c - q * t),
        "sound": d_s <= (1 - v) * (1 - q * t) * (w - k * b),
    }


def two_sided_sup(n: int, e: float) -> tuple[float, float]:
    """(lower, upper) with lower <= sup_{p in [0,1]} P_p[|X/n - p| >= e] <= upper, X ~ Bin(n, p): the
    hypothesis Lean's ``alice_pr_le`` states for n samples. Independent of the planner's ``tail``.

    With x = n p and E = n e the event is X <= x - E or X >= x + E. Both thresholds are constant between
    the jumps x = j + f and x = j - f (f = frac(E), j integer), so [0, n] splits into intervals on which
    the probability is at most F(k; lo) + P[X >= m; hi] (F falls and the upper tail rises with p); a run
    of intervals is at most F(last k; first lo) + P[X >= first m; last hi]. Runs of 4^6 intervals are
    split by 4 while their bound reaches the lower bound found so far; upper is the largest single-interval
    bound left. lower is the largest one-sided limit of the probability at an interval's end, which the
    supremum is at least (up to float rounding of p). Probabilities p are rounded outward by 1e-15.
    """
    E = n * Fraction(e)
    f = E - math.floor(E)
    assert (2 * f).denominator != 1, "2ne is an integer: both tails jump together (not handled)"
    a, b = min(f, 1 - f), max(f, 1 - f)
    j = np.arange(-1, n)
    # intervals [j+a, j+b] (midpoint j + 1/2) and [j+b, j+1+a] (midpoint j + 1), in increasing order; those
    # meeting [0, n] are the second for j = -1 and both for j = 0 .. n-1 (however narrow as floats)
    lo = np.clip(np.stack([j + float(a), j + float(b)], axis=1).ravel()[1:], 0, n)
    hi = np.clip(np.stack([j + float(b), j + 1 + float(a)], axis=1).ravel()[1:], 0, n)
    k = np.stack([j + math.floor(Fraction(1, 2) - E), j + math.floor(1 - E)], axis=1).ravel()[1:]
    m = np.stack([j + math.ceil(Fraction(1, 2) + E), j + math.ceil(1 + E)], axis=1).ravel()[1:]
    p_lo, p_hi = lo / n, hi / n
    down, up = p_lo * (1 - 1e-15), np.minimum(p_hi * (1 + 1e-15), 1.0)

    def limits(i: np.ndarray) -> np.ndarray:
        def at(p: np.ndarray) -> np.ndarray:
            return stats.binom.cdf(k[i], n, p) + stats.binom.sf(m[i] - 1, n, p)

        return np.maximum(at(p_lo[i]), at(p_hi[i]))

    middle = int(np.searchsorted(p_lo, 0.5))
    lower = float(limits(np.arange(max(0, middle - 64), min(k.size, middle + 64))).max())
    size, starts = 4**6, np.arange(0, k.size, 4**6)
    while True:
        ends = np.minimum(starts + size, k.size) - 1
        bound = stats.binom.cdf(k[ends], n, down[starts]) + stats.binom.sf(m[starts] - 1, n, up[ends])
        if size == 1:
            best = starts[np.argsort(bound)[-256:]]
            return max(lower, float(limits(best).max())), float(bound.max())
        starts, size = starts[bound >= lower], size // 4
        starts = (starts[:, None] + size * np.arange(4)).ravel()
        starts = starts[starts < k.size]


def lean_route(plan: Plan) -> dict[str, tuple[float, float, float]]:
    """Lean's route for a plan: per honest party, (lower, upper, allowance) for the two-sided miss of its
    own estimate (``alice_pr_le`` for Alice's c, and for ``bob'``'s estimate at (b-s)/2 and (s-c)/2)."""
    p = params_of(plan)
    return {
        "Alice": (*two_sided_sup(p.alice_samples, p.c), p.q),
        "Bob": (*two_sided_sup(p.bob_samples, (p.b - p.s) / 2), p.q),
        "Vera": (*two_sided_sup(p.vera_samples, (p.s - p.c) / 2), p.v),
    }


def lean_route_verdict(plan: Plan) -> tuple[bool, set[str]]:
    """(accepted, parties proven to fail): accepted when every Params field holds exactly and every
    party's upper bound is within its allowance; a party fails when its lower bound exceeds it."""
    route = lean_route(plan)
    accepted = all(lean_params_fields(params_of(plan)).values()) and all(u <= a for _, u, a in route.values())
    return accepted, {name for name, (low, _, a) in route.items() if low > a}


# ---------------------------------------------------------------------------------------------
# Plans, computed once
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def frontier() -> list[Plan]:
    return planner.frontier(K, T)


@pytest.fixture(scope="module")
def default_plan(frontier: list[Plan]) -> Plan:
    assert frontier[0].prover_budget == (LEAN_ALICE, LEAN_BOB)
    return frontier[0]


@pytest.fixture(scope="module")
def ten_times(frontier: list[Plan]) -> Plan:
    assert frontier[2].prover_budget == (10 * LEAN_ALICE, 10 * LEAN_BOB)
    return frontier[2]


@pytest.fixture(scope="module")
def lean_frontier() -> list[Plan]:
    return planner.frontier(K, T, proof=Proof.lean)


@pytest.fixture(scope="module")
def other_setting() -> dict[str, Plan]:
    """K = 2, T = 50, targets 0.55 and 0.62, 200,000 queries per step for each prover, both proofs."""
    return {
        proof: planner.plan(2, 50, completeness=0.55, soundness=0.62, prover_budget=200_000, proof=proof)
        for proof in list(Proof)
    }


def params_of(p: Plan) -> Params:
    assert p.params is not None
    return p.params


# ---------------------------------------------------------------------------------------------
# The tail
# ---------------------------------------------------------------------------------------------


def test_lean_counts_are_the_default_budget() -> None:
    assert planner.lean_budget(K, T) == (LEAN_ALICE, LEAN_BOB)
    d = Params.defaults(K, T)
    assert (samples(d.c, d.q), samples((d.b - d.s) / 2, d.q)) == (LEAN_ALICE, LEAN_BOB)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), e=st.floats(1e-4, 1.0, allow_nan=False))
def test_tail_is_the_exact_supremum_for_small_n(n: int, e: float) -> None:
    exact = brute_tail(n, e)
    certified = tails.tail(n, e)
    assert Fraction(certified) >= exact  # never below the truth
    # and tight: breakpoints are evaluated up to 2^-49 below their value (d cdf / dp <= n), times 1 + 1e-9
    slack = n * 2.0**-48
    assert certified <= float(exact) * (1 + 1e-8) + slack + 1e-288
    sweep = tails.tail_sweep(n, e)[0]
    assert float(exact) * (1 - 1e-13) <= sweep <= float(exact) * (1 + 1e-13) + slack


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), e=st.floats(1e-3, 0.9, allow_nan=False))
def test_breakpoints_reach_the_supremum_and_the_upper_tail_is_symmetric(n: int, e: float) -> None:
    """Every p (a grid, and just either side of each breakpoint) stays at or below the breakpoint
    maximum; the upper tail's own breakpoints give the same supremum."""
    sup = brute_tail(n, e)
    grid = [Fraction(i, 101) for i in range(102)]
    for k in range(n + 1):
        point = Fraction(k, n) + Fraction(e)
        grid += [point - Fraction(1, 10**9), point + Fraction(1, 10**9)]
    for p in grid:
        if 0 <= p <= 1:
            threshold = n * (p - Fraction(e))
            value = exact_cdf(math.floor(threshold), n, p) if threshold >= 0 else Fraction(0)
            assert value <= sup
    assert brute_upper_tail(n, e) == sup


@pytest.mark.parametrize(("n", "e"), [(25_000, 0.02), (61031, 0.01), (200_000, 0.004), (300_000, 0.3), (100_000, 3e-4)])
def test_certified_tail_equals_the_full_sweep(n: int, e: float) -> None:
    """The pruned sweep skips only breakpoints it can prove are lower: same maximum as every breakpoint."""
    full = max(tails.tail_sweep(n, e)[0], 1e-289)
    assert tails.tail(n, e) == pytest.approx(full * (1 + tails.CDF_MARGIN), rel=1e-13)


def test_block_bounds_bound_every_breakpoint() -> None:
    """The Chernoff-Stirling lemma, checked on every breakpoint of a real case."""
    n, e = 200_000, 0.004
    kmax = tails._kmax(n, e)
    k = np.arange(kmax + 1)
    values = stats.binom.cdf(k, n, np.minimum((k / n + e) * tails._DOWN, 1.0))
    lo, hi, bound = tails._block_bounds(n, e, kmax)
    assert lo.min() == 0 and hi.max() == kmax
    covered = np.zeros(kmax + 1, dtype=int)
    for a, b, u in zip(lo, hi, bound, strict=True):
        covered[a : b + 1] += 1
        assert values[a : b + 1].max() <= u
    assert (covered == 1).all()
    assert np.isfinite(bound).mean() > 0.9  # the lemma does prune


def test_budgeted_tail_stays_an_upper_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    n, e = 1_000_000, 0.0023
    full = tails.tail_sweep(n, e)[0]
    monkeypatch.setattr(tails, "SWEEP_BUDGET", 5_000)
    tails.tail.cache_clear()
    try:
        budgeted = tails.tail(n, e)
    finally:
        tails.tail.cache_clear()
    assert full <= budgeted <= full * 1.2


def test_tail_is_nonincreasing_in_e() -> None:
    n = 5_000
    es = np.linspace(0.001, 0.1, 60)
    values = [tails.tail(n, float(e)) for e in es]
    assert all(a >= b for a, b in itertools.pairwise(values))


def test_binom_cdf_agrees_with_50_digit_arithmetic(default_plan: Plan) -> None:
    """CDF_MARGIN (1e-9) is far above scipy's error at the breakpoints that decide the default plan."""
    p = params_of(default_plan)
    cases = [(p.alice_samples, p.c), (p.bob_samples, (p.b - p.s) / 2), (p.vera_samples, (p.s - p.c) / 2)]
    for n, e in cases:
        _, k = tails.tail_sweep(n, e)
        point = float(np.minimum((k / n + e) * tails._DOWN, 1.0))
        reference = decimal_cdf(k, n, point)
        ours = Decimal(float(stats.binom.cdf(k, n, point)))
        assert abs(ours / reference - 1) < Decimal("1e-11")


# ---------------------------------------------------------------------------------------------
# Plans: targets, inequalities, failures
# ---------------------------------------------------------------------------------------------


def test_targets_at_K1_T1000(default_plan: Plan, ten_times: Plan) -> None:
    for plan, cap, most in ((default_plan, 1, 20_000), (ten_times, 10, 3_000)):
        assert plan.constants == "planned"
        assert plan.verifier_queries <= most
        assert plan.alice_queries_per_step <= cap * LEAN_ALICE
        assert plan.bob_queries_per_step <= cap * LEAN_BOB
        assert plan.completeness >= 3 / 5 and plan.soundness >= 3 / 5
        assert planner.certifies(plan)


@pytest.mark.parametrize("index", range(5))
def test_every_lean_inequality_holds_exactly(frontier: list[Plan], index: int) -> None:
    """Params w d k t's fields, re-derived here in exact arithmetic with w = 2/3 and d = 3/5."""
    plan = frontier[index]
    p = params_of(plan)
    assert (p.completeness, p.soundness) == (0.6, 0.6)
    assert lean_params_fields(p) == dict.fromkeys(lean_params_fields(p), True)
    k, v, c, b, q = (Fraction(x) for x in (p.k, p.v, p.c, p.b, p.q))
    w, t = Fraction(2, 3), p.T
    assert plan.completeness == pytest.approx(float((1 - v) * (w - k * c - q * t)), rel=1e-12)
    assert plan.soundness == pytest.approx(float((1 - v) * (1 - q * t) * (w - k * b)), rel=1e-12)
    assert (plan.verifier_queries, plan.alice_queries_per_step, plan.bob_queries_per_step) == (
        p.vera_samples,
        p.alice_samples,
        p.bob_samples,
    )
    assert all(planner.exact_inequalities(p).values())


@pytest.mark.parametrize("index", range(5))
def test_certified_failures_are_within_q_and_v(frontier: list[Plan], index: int) -> None:
    plan = frontier[index]
    p = params_of(plan)
    assert plan.alice_failure is not None and plan.alice_failure <= p.q
    assert plan.bob_complete_failure is not None and plan.bob_complete_failure <= p.q
    assert plan.bob_sound_failure is not None and plan.bob_sound_failure <= p.q
    assert plan.vera_complete_failure is not None and plan.vera_complete_failure <= p.v
    assert plan.vera_sound_failure is not None and plan.vera_sound_failure <= p.v
    # Each certified value is at least its own exact ingredient (no pruning): 2 tails for Alice, one
    # tail at (s-c)/2 for Vera accepting, and the delta = c pair for Vera rejecting.
    assert plan.alice_failure >= 2 * tails.tail_sweep(p.alice_samples, p.c)[0]
    e_v = (p.s - p.c) / 2
    assert plan.vera_sound_failure >= tails.tail_sweep(p.vera_samples, e_v)[0] * (1 - 1e-12)
    pair = tails.tail_sweep(p.vera_samples, e_v)[0] + tails.tail_sweep(p.vera_samples, (3 * p.c + p.s) / 2)[0]
    assert plan.vera_complete_failure >= pair * (1 - 1e-12)


def _true_probabilities(n: int, e: float) -> list[float]:
    """A grid over [0, 1], plus the worst breakpoint of the lower and of the upper tail, nudged."""
    _, k = tails.tail_sweep(n, e)
    worst = k / n + e
    nudged = [worst + 1e-9, worst - 1e-9, 1 - worst + 1e-9, 1 - worst - 1e-9]
    return [float(x) for x in np.linspace(0, 1, 201)] + [x for x in nudged if 0 <= x <= 1]


def _check_bob_prime(n: int, c: float, s: float, allowance: float) -> float:
    """bob' c s with n samples, directly: claims off by delta in [-c, c] are rejected, and claims off
    by s (or more) accepted, with probability <= allowance. Returns the largest probability seen."""
    cf, sf = Fraction(c), Fraction(s)
    r = (cf + sf) / 2
    worst = 0.0
    for p_true in _true_probabilities(n, float((sf - cf) / 2)):
        pt = Fraction(p_true)
        for delta in (-cf, -cf / 2, Fraction(0), cf / 2, cf):
            worst = max(worst, reject_probability(n, p_true, pt + delta, r))
        for off in (sf, -sf, sf + Fraction(1, 50), -sf - Fraction(1, 50)):
            worst = max(worst, 1 - reject_probability(n, p_true, pt + off, r))
    assert worst <= allowance
    return worst


def test_honest_tests_directly_on_a_grid_of_true_probabilities(default_plan: Plan) -> None:
    """The three lemmas' conclusions, evaluated from the tests themselves (not from tail())."""
    p = params_of(default_plan)
    alice = max(
        estimate_off_probability(p.alice_samples, x, Fraction(p.c)) for x in _true_probabilities(p.alice_samples, p.c)
    )
    assert alice <= p.q
    assert default_plan.alice_failure is not None and alice <= default_plan.alice_failure
    _check_bob_prime(p.bob_samples, p.s, p.b, p.q)  # honest Bob = bob' s b q
    vera = _check_bob_prime(p.vera_samples, p.c, p.s, p.v)  # Vera = bob' c s v
    assert vera >= 0.9 * p.v  # the grid finds the worst case: the certificate is nearly attained


def test_monte_carlo_at_the_worst_case(default_plan: Plan) -> None:
    """Vera, simulated with a fixed seed at her worst true probabilities: the Clopper-Pearson interval
    (confidence 1 - 1e-6) holds the exact probability, and its lower end is below the certified bound."""
    p = params_of(default_plan)
    n, c, s = p.vera_samples, p.c, p.s
    r = (c + s) / 2
    _, k = tails.tail_sweep(n, (s - c) / 2)
    worst = k / n + (s - c) / 2
    rng = np.random.default_rng(20240601)
    trials = 200_000
    cases = [
        # accepting a claim off by exactly s above an upper-tail-worst truth
        ("sound", 1 - worst - 1e-9, lambda x, t: np.abs((t + s) - x / n) < r, default_plan.vera_sound_failure),
        # rejecting a claim off by exactly c above a lower-tail-worst truth
        ("complete", worst + 1e-9, lambda x, t: np.abs((t + c) - x / n) >= r, default_plan.vera_complete_failure),
    ]
    for name, p_true, fails, certified in cases:
        assert certified is not None
        draws = rng.binomial(n, p_true, size=trials)
        count = int(fails(draws, p_true).sum())
        ci = stats.binomtest(count, trials).proportion_ci(confidence_level=1 - 1e-6, method="exact")
        offset = Fraction(s) if name == "sound" else Fraction(c)
        exact = reject_probability(n, p_true, Fraction(p_true) + offset, Fraction(c + s) / 2)
        exact = 1 - exact if name == "sound" else exact
        assert ci.low <= exact <= ci.high, name
        assert ci.low <= certified, name
        assert exact <= certified, name


def test_exact_tails_beat_hoeffding_for_the_same_tests(default_plan: Plan) -> None:
    """The gain is in the sample counts: for Vera's planned thresholds Lean's Hoeffding count is larger."""
    p = params_of(default_plan)
    assert p.vera_samples < samples((p.s - p.c) / 2, p.v)


def test_frontier_trades_prover_queries_for_verifier_queries(frontier: list[Plan]) -> None:
    assert [p.prover_budget for p in frontier] == [(m * LEAN_ALICE, m * LEAN_BOB) for m in (1, 3, 10, 30, 100)]
    queries = [p.verifier_queries for p in frontier]
    assert queries == sorted(queries, reverse=True)
    for p in frontier:
        assert p.prover_budget is not None
        assert p.alice_queries_per_step <= p.prover_budget[0] and p.bob_queries_per_step <= p.prover_budget[1]


def test_lean_and_paper_constants() -> None:
    lean = planner.lean_plan(K, T)
    assert lean.constants == "lean" and lean.params == Params.defaults(K, T)
    assert (lean.alice_queries_per_step, lean.bob_queries_per_step) == (LEAN_ALICE, LEAN_BOB)
    assert lean.verifier_queries == samples(0.005, 0.01)
    assert lean.verifier_queries == pytest.approx(1.06e5, rel=0.01)
    assert planner.certifies(lean)  # Hoeffding's counts pass the exact certificate too, with room
    paper = planner.paper_plan(K, T)
    assert paper.constants == "paper" and paper.params is None
    assert paper.verifier_queries == PaperConstants(K, T).verifier_samples
    assert paper.verifier_queries == pytest.approx(1.99e7, rel=0.01)
    assert paper.alice_queries_per_step == paper.bob_queries_per_step == PaperConstants(K, T).prover_samples
    assert (paper.completeness, paper.soundness) == (3 / 5, 3 / 5)


@pytest.mark.parametrize("proof", list(Proof))
def test_other_targets_and_single_budget(other_setting: dict[str, Plan], proof: str) -> None:
    p = other_setting[proof]
    assert p.proof == proof and planner.certifies(p)
    assert p.completeness >= 0.55 and p.soundness >= 0.62
    assert p.prover_budget == (200_000, 200_000)
    assert max(p.alice_queries_per_step, p.bob_queries_per_step) <= 200_000


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0, "T": 10},
        {"k": -1.0, "T": 10},
        {"k": float("nan"), "T": 10},
        {"k": 1, "T": 0},
        {"k": 1, "T": 10, "completeness": 1.2},
        {"k": 1, "T": 10, "soundness": 0.0},
        {"k": 1, "T": 10, "completeness": 0.7},
        {"k": 1, "T": 10, "prover_budget": 0},
        {"k": 1, "T": 1000, "prover_budget": 10},
        {"k": 1, "T": 10, "proof": "hoeffding"},
    ],
)
def test_plan_rejects_bad_requests(kwargs: dict) -> None:
    with pytest.raises(planner.PlanError):
        planner.plan(**kwargs)


# ---------------------------------------------------------------------------------------------
# Lean's route: --proof lean, and an independent checker that follows alice_pr_le
# ---------------------------------------------------------------------------------------------


def _two_sided_exact(n: int, e: Fraction, p: Fraction) -> Fraction:
    """P_p[|X/n - p| >= e] in exact rational arithmetic."""
    return sum(
        (math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(n + 1) if abs(Fraction(x, n) - p) >= e),
        Fraction(0),
    )


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 30), e=st.floats(1e-3, 0.7, allow_nan=False))
@example(n=6, e=1 / 3)  # n e just below an integer: intervals narrower than a float's spacing
@example(n=7, e=2 / 7 + 1e-15)
def test_two_sided_checker_brackets_the_exact_supremum(n: int, e: float) -> None:
    """The checker against exact fractions at every jump (and 1e-12 either side) and on a grid of p."""
    ef = Fraction(e)
    assume((2 * n * ef).denominator != 1)
    points = [Fraction(i, 97) for i in range(98)]
    for j in range(-1, n + 2):
        for jump in (Fraction(j, n) + ef, Fraction(j, n) - ef):
            points += [jump - Fraction(1, 10**12), jump, jump + Fraction(1, 10**12)]
    exact = max(_two_sided_exact(n, ef, p) for p in points if 0 <= p <= 1)
    lower, upper = two_sided_sup(n, e)
    assert float(exact) <= upper * (1 + 1e-12) + 1e-300
    assert lower <= float(exact) + n * 1e-11  # limits are reached within 1e-12 of the jump
    assert upper <= 2 * tails.tail(n, e)  # each tail at most its supremum


@pytest.mark.parametrize("index", range(5))
def test_lean_route_checker_accepts_every_lean_plan(lean_frontier: list[Plan], index: int) -> None:
    plan = lean_frontier[index]
    assert plan.proof == "lean" and planner.certifies(plan)
    accepted, failing = lean_route_verdict(plan)
    assert accepted and failing == set()
    route = lean_route(plan)
    certified = {"Alice": plan.alice_failure, "Bob": plan.bob_estimate_failure, "Vera": plan.vera_estimate_failure}
    for name, (lower, upper, _) in route.items():
        assert certified[name] is not None
        assert lower <= upper <= certified[name] * (1 + 1e-12)  # the planner's 2 tail is above the truth
    # Vera's count is the least the two-sided certificate accepts
    p = params_of(plan)
    assert tails.bob_estimate_failure(p.vera_samples - 1, p.c, p.s) > p.v


@pytest.mark.parametrize("index", range(5))
def test_lean_route_checker_rejects_every_direct_plan(frontier: list[Plan], index: int) -> None:
    """The direct plans prove bob_complete and bob_sound's conclusions but not alice_pr_le's for Bob's
    and Vera's estimates: the true two-sided miss exceeds q and v (Alice's is the same in both proofs)."""
    plan = frontier[index]
    assert plan.proof == "direct" and planner.certifies(plan)
    assert not planner.certifies(plan, Proof.lean)
    assert lean_route_verdict(plan) == (False, {"Bob", "Vera"})


def test_lean_route_other_setting_and_lean_defaults(other_setting: dict[str, Plan]) -> None:
    lean, direct = other_setting["lean"], other_setting["direct"]
    assert lean.completeness >= 0.55 and lean.soundness >= 0.62
    assert lean_route_verdict(lean) == (True, set())
    assert lean_route_verdict(direct) == (False, {"Bob", "Vera"})
    defaults = planner.lean_plan(K, T)  # Hoeffding's counts: Lean proves them as stated, with room
    assert defaults.proof == "lean" and planner.certifies(defaults)
    assert lean_route_verdict(defaults) == (True, set())


def test_lean_plans_also_prove_the_direct_conclusions(
    lean_frontier: list[Plan], other_setting: dict[str, Plan]
) -> None:
    for plan in [*lean_frontier, other_setting["lean"]]:
        assert planner.certifies(plan, "direct")


def test_lean_route_costs_and_targets(frontier: list[Plan], lean_frontier: list[Plan]) -> None:
    """Lean's route needs more verifier queries than the direct proof, far fewer than Hoeffding's."""
    hoeffding = planner.lean_plan(K, T).verifier_queries
    for direct, lean in zip(frontier, lean_frontier, strict=True):
        assert lean.prover_budget == direct.prover_budget
        assert direct.verifier_queries < lean.verifier_queries < 1.5 * direct.verifier_queries
        p = params_of(lean)
        assert lean.verifier_queries < samples((p.s - p.c) / 2, p.v)  # Hoeffding at the same thresholds
    assert lean_frontier[0].verifier_queries <= 15_000 < hoeffding / 7
    assert lean_frontier[2].verifier_queries <= 3_000


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``debatekit`` with ``plan`` registered (on a copy of the app, as main.py will register it)."""
    app = typer.Typer(name="debatekit", add_completion=False, rich_markup_mode=None)
    app.registered_commands.extend(c for c in cli_main.app.registered_commands if c.name != "plan")
    app.command("plan")(plan_cmd.plan)
    monkeypatch.setattr(cli_main, "app", app)
    monkeypatch.delenv("DEBATEKIT_DEBUG", raising=False)

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = cli_main.main(["plan", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


PLAN_FIELDS = {
    "constants": str,
    "proof": str,
    "k": float,
    "T": int,
    "params": dict,
    "verifier_queries": int,
    "alice_queries_per_step": int,
    "bob_queries_per_step": int,
    "completeness": float,
    "soundness": float,
    "alice_failure": float,
    "bob_complete_failure": float,
    "bob_sound_failure": float,
    "vera_complete_failure": float,
    "vera_sound_failure": float,
    "bob_estimate_failure": float,
    "vera_estimate_failure": float,
    "prover_budget": list,
}


def test_cli_json_default_plan(cli, default_plan: Plan) -> None:
    code, out, err = cli("--K", "1", "--T", "1000", "--json")
    assert code == 0, err
    assert out.count("\n") == 1
    data = json.loads(out)
    for name, kind in PLAN_FIELDS.items():
        assert isinstance(data[name], kind), name
    assert (data["constants"], data["proof"]) == ("planned", "direct")
    assert data["verifier_queries"] == default_plan.verifier_queries <= 20_000
    assert data["prover_budget"] == [LEAN_ALICE, LEAN_BOB]
    assert {"v", "c", "s", "b", "q", "alice_samples", "bob_samples", "vera_samples"} <= set(data["params"])


def test_cli_text_and_constants(cli) -> None:
    code, out, _ = cli("--K", "1", "--T", "1000", "--prover-budget", str(10 * LEAN_ALICE))
    assert code == 0
    for name in ("verifier_queries", "alice_queries_per_step", "bob_queries_per_step", "completeness", "soundness"):
        assert name in out
    code, out, _ = cli("--K", "1", "--T", "1000", "--constants", "lean", "--json")
    assert code == 0 and json.loads(out)["verifier_queries"] == samples(0.005, 0.01)
    code, out, _ = cli("--K", "1", "--T", "1000", "--constants", "paper", "--json")
    data = json.loads(out)
    assert code == 0 and data["constants"] == "paper" and data["params"] is None
    assert data["verifier_queries"] == PaperConstants(1, 1000).verifier_samples


def test_cli_proof_lean(cli, lean_frontier: list[Plan]) -> None:
    code, out, err = cli("--K", "1", "--T", "1000", "--proof", "lean", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["constants"], data["proof"]) == ("planned", "lean")
    assert data["verifier_queries"] == lean_frontier[0].verifier_queries
    assert data["vera_estimate_failure"] <= data["params"]["v"] < 2 * data["vera_estimate_failure"]
    code, out, _ = cli("--K", "1", "--T", "1000", "--proof", "lean")
    assert code == 0 and "vera estimate failure bound" in out and "proof                         lean:" in out


def test_cli_frontier(cli, frontier: list[Plan], lean_frontier: list[Plan]) -> None:
    code, out, err = cli("--K", "1", "--T", "1000", "--frontier", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [row["multiplier"] for row in data["frontier"]] == [1, 3, 10, 30, 100]
    assert [row["direct"]["verifier_queries"] for row in data["frontier"]] == [p.verifier_queries for p in frontier]
    assert [row["lean"]["verifier_queries"] for row in data["frontier"]] == [p.verifier_queries for p in lean_frontier]
    assert {row["direct"]["proof"] for row in data["frontier"]} == {"direct"}
    assert {row["lean"]["proof"] for row in data["frontier"]} == {"lean"}
    assert data["lean"]["constants"] == "lean" and data["paper"]["constants"] == "paper"
    code, out, _ = cli("--K", "1", "--T", "1000", "--frontier")
    assert code == 0 and "100x Lean's" in out and "direct proof" in out and "lean proof" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--K", "0", "--T", "10"],
        ["--K", "-2", "--T", "10"],
        ["--K", "1", "--T", "0"],
        ["--K", "1", "--T", "10", "--completeness", "1.5"],
        ["--K", "1", "--T", "10", "--soundness", "0"],
        ["--K", "1", "--T", "10", "--completeness", "0.9"],
        ["--K", "1", "--T", "10", "--prover-budget", "0"],
        ["--K", "1", "--T", "1000", "--prover-budget", "10"],
        ["--K", "1", "--T", "10", "--constants", "lean", "--prover-budget", "5"],
        ["--K", "1", "--T", "10", "--frontier", "--prover-budget", "5"],
        ["--K", "1", "--T", "10", "--constants", "bogus"],
        ["--K", "1", "--T", "10", "--proof", "foo"],
        ["--K", "1", "--T", "10", "--frontier", "--proof", "lean"],
        ["--K", "1", "--T", "10", "--constants", "lean", "--proof", "direct"],
        ["--K", "20", "--T", "10", "--frontier"],
        ["--K", "1", "--T", "10", "--prover-budget", str(10**10)],
    ],
)
def test_cli_user_errors(cli, argv: list[str]) -> None:
    code, out, err = cli(*argv)
    assert code == 2, (code, out, err)
    assert out == ""
    assert err.startswith("debatekit: error: ") and err.count("\n") == 1
