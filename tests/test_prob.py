"""prob.Dist: the Lean ``Prob`` monad with exact Fraction weights."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, chisquare

from debatekit.prob import Dist

OUTCOMES = range(5)


@st.composite
def dists(draw) -> Dist:
    """A distribution on {0..4} with random positive integer weights, normalised exactly."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(OUTCOMES), st.integers(1, 6)), min_size=1, max_size=5))
    total = sum(w for _, w in pairs)
    return Dist((o, Fraction(w, total)) for o, w in pairs)


kernels = st.lists(dists(), min_size=len(OUTCOMES), max_size=len(OUTCOMES))  # a -> Dist, as a table


def weights(d: Dist) -> dict:
    return dict(d.items())


# -- construction and exactness ----------------------------------------------------------------


def test_pure_is_a_point_mass():
    d = Dist.pure("x")
    assert d.items() == [("x", Fraction(1))]
    assert d.support == ["x"]
    assert d.prob(lambda a: a == "x") == 1
    assert d.prob(lambda a: a != "x") == 0


def test_uniform_weights_are_exact_and_repeats_add_up():
    d = Dist.uniform([3, 1, 3, 2])
    assert weights(d) == {3: Fraction(1, 2), 1: Fraction(1, 4), 2: Fraction(1, 4)}
    assert all(isinstance(w, Fraction) for _, w in d.items())
    with pytest.raises(ValueError):
        Dist.uniform([])


def test_expectation_and_prob_of_a_die_are_exact():
    die = Dist.uniform(range(1, 7))
    assert die.expectation() == Fraction(7, 2)
    assert die.expectation(lambda a: a * a) == Fraction(91, 6)
    assert die.prob(lambda a: a % 2 == 0) == Fraction(1, 2)
    assert die.prob(lambda a: a > 4) == Fraction(1, 3)
    two = die.bind(lambda a: die.map(lambda b: a + b))
    assert two.prob(lambda s: s == 7) == Fraction(6, 36)
    assert two.expectation() == 7


def test_zero_weights_are_not_in_the_support():
    d = Dist([("a", Fraction(0)), ("b", Fraction(1))])
    assert d.support == ["b"]
    assert d == Dist.pure("b")


@pytest.mark.parametrize(
    "pairs",
    [
        [(0, Fraction(-1, 2)), (1, Fraction(3, 2))],  # a negative weight
        [(0, float("nan")), (1, 1.0)],  # NaN
        [(0, Fraction(1, 2)), (1, Fraction(1, 3))],  # exact weights that do not sum to 1
        [(0, 0.5), (1, 0.4)],  # float weights off by far more than rounding
        [(0, float("inf"))],
        [],  # no outcomes at all
    ],
)
def test_invalid_weights_raise_value_error(pairs):
    with pytest.raises(ValueError):
        Dist(pairs)


def test_float_weights_within_rounding_are_accepted():
    d = Dist((i, 0.1) for i in range(10))  # 0.1 * 10 is not exactly 1 in binary
    assert len(d.support) == 10
    assert d.expectation() == pytest.approx(4.5)


# -- bernoulli ---------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(1)])
def test_bernoulli_is_exact(p):
    d = Dist.bernoulli(p)
    assert d.prob(lambda a: a == 1) == p
    assert d.prob(lambda a: a == 0) == 1 - p
    assert d.expectation() == p
    assert set(d.support) <= {0, 1}


@pytest.mark.parametrize(
    ("p", "clamped"),
    [(-1, 0), (Fraction(-1, 7), 0), (2, 1), (Fraction(3, 2), 1), (-0.5, 0), (1.5, 1)],
)
def test_bernoulli_clamps_p_to_the_unit_interval(p, clamped):
    assert Dist.bernoulli(p) == Dist.pure(clamped)


def test_bernoulli_of_nan_raises():
    with pytest.raises(ValueError):
        Dist.bernoulli(float("nan"))


# -- the monad laws (exact equality of distributions) -----------------------------------------


@settings(deadline=None, max_examples=60)
@given(a=st.sampled_from(OUTCOMES), f=kernels)
def test_left_identity(a, f):
    assert Dist.pure(a).bind(lambda x: f[x]) == f[a]


@settings(deadline=None, max_examples=60)
@given(m=dists())
def test_right_identity(m):
    assert m.bind(Dist.pure) == m


@settings(deadline=None, max_examples=60)
@given(m=dists(), f=kernels, g=kernels)
def test_associativity(m, f, g):
    assert m.bind(lambda x: f[x]).bind(lambda y: g[y]) == m.bind(lambda x: f[x].bind(lambda y: g[y]))


@settings(deadline=None, max_examples=60)
@given(m=dists(), k=st.integers(1, 4))
def test_map_is_bind_of_pure_and_merges_outcomes(m, k):
    f = lambda a: a % k  # noqa: E731  (not injective: equal images must merge)
    mapped = m.map(f)
    assert mapped == m.bind(lambda a: Dist.pure(f(a)))
    for b in mapped.support:
        assert mapped.prob(lambda y, b=b: y == b) == m.prob(lambda a, b=b: f(a) == b)


@settings(deadline=None, max_examples=60)
@given(m=dists(), f=kernels)
def test_expectation_of_bind_is_iterated_expectation(m, f):
    h = lambda y: Fraction(y * y + 1, 3)  # noqa: E731
    assert m.bind(lambda x: f[x]).expectation(h) == m.expectation(lambda x: f[x].expectation(h))
    # and weights stay exact and sum to exactly 1
    assert sum(w for _, w in m.bind(lambda x: f[x]).items()) == 1


@settings(deadline=None, max_examples=60)
@given(m=dists(), event=st.sets(st.sampled_from(OUTCOMES)))
def test_prob_is_expectation_of_the_indicator(m, event):
    assert m.prob(lambda a: a in event) == m.expectation(lambda a: int(a in event))
    assert m.prob(lambda a: a in event) + m.prob(lambda a: a not in event) == 1


def test_equal_distributions_hash_equal():
    a = Dist([(0, Fraction(1, 4)), (1, Fraction(3, 4))])
    b = Dist([(1, Fraction(1, 2)), (0, Fraction(1, 4)), (1, Fraction(1, 4))])
    assert a == b
    assert hash(a) == hash(b)
    assert a != Dist.bernoulli(Fraction(1, 4))


# -- sampling ----------------------------------------------------------------------------------


def test_a_point_mass_samples_its_outcome():
    rng = np.random.default_rng(0)
    assert all(Dist.pure("only").sample(rng) == "only" for _ in range(10))


@pytest.mark.parametrize(
    "d",
    [
        Dist([("a", Fraction(1, 6)), ("b", Fraction(1, 3)), ("c", Fraction(1, 2))]),
        Dist([(0, 0.05), (1, 0.9), (2, 0.05)]),
        Dist.uniform(range(7)),
    ],
)
def test_sample_frequencies_agree_with_weights(d):
    n, alpha = 20_000, 1e-4
    rng = np.random.default_rng(20240611)
    draws = [d.sample(rng) for _ in range(n)]
    assert set(draws) <= set(d.support)
    support = d.support
    counts = np.array([draws.count(o) for o in support])
    probs = np.array([float(w) for _, w in d.items()])
    # each count lies in its exact binomial acceptance region (Bonferroni over the outcomes) ...
    for count, p in zip(counts, probs, strict=True):
        low, high = binom.interval(1 - alpha / len(support), n, p)
        assert low <= count <= high
    # ... and jointly the counts pass a chi-square goodness-of-fit test at the same level
    assert chisquare(counts, probs * n).pvalue > alpha
