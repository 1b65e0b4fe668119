"""Algorithm 1 and Lemma A.3 (prover-estimator debate, Appendix A.1): the simplex projection is the
exact Euclidean projection, and the estimate is (delta, F)-indistinguishable by a direct count."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from debatekit.players import indistinguishable as ind
from debatekit.players.indistinguishable import (
    CallableTests,
    Estimate,
    ProductTests,
    StepBoundExceeded,
    conditional,
    indistinguishable,
    project_simplex,
    step_bound,
)

FEATURES = 3
vectors = hnp.arrays(
    float,
    st.tuples(st.integers(1, 6), st.integers(1, 9)),
    elements=st.floats(-5, 5, allow_nan=False, allow_infinity=False),
)


def assert_on_simplex(p: np.ndarray) -> None:
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)


def brute_projection(v: np.ndarray) -> np.ndarray:
    """Try every support S: on S the projection is v - (sum v_S - 1) / |S|; keep the nearest feasible."""
    best, best_distance = None, math.inf
    for size in range(1, len(v) + 1):
        for support in itertools.combinations(range(len(v)), size):
            p = np.zeros_like(v)
            s = list(support)
            p[s] = v[s] - (v[s].sum() - 1) / size
            distance = float(((p - v) ** 2).sum())
            if p.min() >= -1e-12 and distance < best_distance:
                best, best_distance = p, distance
    return best


# --- project_simplex ---------------------------------------------------------------------------


@given(vectors)
def test_projection_is_on_the_simplex_and_satisfies_kkt(v: np.ndarray) -> None:
    """KKT for min |p - v|^2 on the simplex: v - p = lambda 1 - nu with nu >= 0 and nu . p = 0."""
    p = project_simplex(v)
    assert p.shape == v.shape
    assert_on_simplex(p)
    for row, proj in zip(v, p, strict=True):
        support = proj > 0
        lam = float((row - proj)[support].mean())
        nu = lam - (row - proj)
        np.testing.assert_allclose(nu[support], 0.0, atol=1e-9)
        assert np.all(nu >= -1e-9)


@given(hnp.arrays(float, st.integers(1, 6), elements=st.floats(-3, 3, allow_nan=False)))
def test_projection_matches_brute_force(v: np.ndarray) -> None:
    np.testing.assert_allclose(project_simplex(v), brute_projection(v), atol=1e-9)


@given(hnp.arrays(float, st.tuples(st.integers(1, 5), st.integers(1, 8)), elements=st.floats(0, 1)))
def test_projection_is_idempotent_on_simplex_points(w: np.ndarray) -> None:
    w = w + 1e-3
    p = w / w.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(project_simplex(p), p, atol=1e-12)
    np.testing.assert_allclose(project_simplex(project_simplex(p * 3 - 1)), project_simplex(p * 3 - 1), atol=1e-12)


def test_projection_rejects_bad_shapes() -> None:
    for bad in (np.zeros((2, 2, 2)), np.zeros(0), np.array([np.nan, 1.0])):
        with pytest.raises(ValueError):
            project_simplex(bad)


# --- random problems and a direct advantage --------------------------------------------------------


def product_scalar(w: np.ndarray, b: np.ndarray):
    """f_k(x, z, h) = tanh(w_k . x) b_k(z), one (x, z) at a time."""
    return lambda k, x, z, hrow: math.tanh(sum(wi * xi for wi, xi in zip(w[k], x, strict=True))) * b[k][z]


def product_tests(w: np.ndarray, b: np.ndarray) -> ProductTests:
    return ProductTests(lambda points: np.tanh(points @ w.T).T, b)


def callable_scalar(w: np.ndarray, c: np.ndarray):
    """f_k(x, z, h) = cos(w_k . x + c_k z) (2 h(z) - 1): it reads the current estimate."""
    return lambda k, x, z, hrow: (
        math.cos(sum(wi * xi for wi, xi in zip(w[k], x, strict=True)) + c[k] * z) * (2 * hrow[z] - 1)
    )


def callable_tests(w: np.ndarray, c: np.ndarray) -> CallableTests:
    def fn(points: np.ndarray, h: np.ndarray) -> np.ndarray:
        z = np.arange(h.shape[1])
        return np.cos((points @ w.T).T[:, :, None] + c[:, None, None] * z) * (2 * h - 1)[None]

    return CallableTests(fn, len(w))


def direct_max_advantage(scalar, n: int, points: np.ndarray, mu: np.ndarray, g: np.ndarray, h: np.ndarray) -> float:
    """max_f |sum_x mu(x) sum_z (g(x, z) - h(x, z)) f(x, z, h(x))|, by explicit loops (Definition A.1)."""
    best = 0.0
    for k in range(n):
        total = 0.0
        for x in range(len(points)):
            hrow = list(h[x])
            for z in range(g.shape[1]):
                total += mu[x] * (g[x, z] - h[x, z]) * scalar(k, list(points[x]), z, hrow)
        best = max(best, abs(total))
    return best


def random_problem(rng: np.random.Generator, size: int, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    points = rng.normal(size=(size, FEATURES))
    mu = rng.random(size) * (rng.random(size) < 0.9)
    mu[0] += 0.1
    mu /= mu.sum()
    g = rng.dirichlet(np.full(2**q, rng.choice([0.2, 1.0])), size=size)
    deterministic = rng.random(size) < 0.4
    g[deterministic] = np.eye(2**q)[rng.integers(0, 2**q, deterministic.sum())]
    return points, mu, g


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 50),
    q=st.integers(1, 4),
    kind=st.sampled_from(["product", "callable"]),
    delta=st.sampled_from([0.005, 0.02, 0.05, 0.3]),
)
def test_output_is_indistinguishable(seed: int, size: int, q: int, kind: str, delta: float) -> None:
    rng = np.random.default_rng(seed)
    points, mu, g = random_problem(rng, size, q)
    n = int(rng.integers(1, 7))
    w = rng.normal(size=(n, FEATURES))
    if kind == "product":
        b = rng.uniform(-1, 1, (n, 2**q))
        tests, scalar = product_tests(w, b), product_scalar(w, b)
    else:
        c = rng.normal(size=n)
        tests, scalar = callable_tests(w, c), callable_scalar(w, c)

    estimate = indistinguishable(points, mu, g, tests, delta)

    assert_on_simplex(estimate.h)
    direct = direct_max_advantage(scalar, n, points, mu, g, estimate.h)
    assert direct < delta
    assert estimate.advantage == pytest.approx(direct, abs=1e-12)
    assert len(estimate.steps) <= estimate.step_bound == step_bound(2**q, delta)
    np.testing.assert_allclose(estimate.predict(points), estimate.h)
    fresh = rng.normal(size=(7, FEATURES)) * 3
    assert_on_simplex(estimate.predict(fresh))


def test_steps_follow_theorem_a2_step_sizes() -> None:
    rng = np.random.default_rng(1)
    points, mu, g = random_problem(rng, 40, 3)
    w, b = rng.normal(size=(4, FEATURES)), rng.uniform(-1, 1, (4, 8))
    estimate = indistinguishable(points, mu, g, product_tests(w, b), 0.02)
    assert len(estimate.steps) > 3
    for t, step in enumerate(estimate.steps, start=1):
        assert step.eta == pytest.approx(math.sqrt(2) / (2 * math.sqrt(8) * math.sqrt(t)))
        assert step.sign in (-1, 1) and 0 <= step.f < 4


def test_uniform_start_is_returned_when_nothing_distinguishes() -> None:
    rng = np.random.default_rng(2)
    points = rng.normal(size=(20, FEATURES))
    mu, g = np.full(20, 1 / 20), np.full((20, 4), 1 / 4)
    for tests in (
        product_tests(rng.normal(size=(3, FEATURES)), rng.uniform(-1, 1, (3, 4))),
        callable_tests(rng.normal(size=(3, FEATURES)), rng.normal(size=3)),
    ):
        estimate = indistinguishable(points, mu, g, tests, 0.01)
        assert estimate.steps == ()
        assert estimate.advantage < 1e-12
        np.testing.assert_array_equal(estimate.h, g)
    empty = indistinguishable(points, mu, g, CallableTests(lambda p, h: np.zeros((0, *h.shape)), 0), 0.01)
    assert empty.steps == () and empty.advantage == 0.0


@pytest.mark.parametrize("q", [1, 2, 3])
def test_indicator_tests_match_the_marginal(q: int) -> None:
    """With F = {+-1[z' = z]}, Adv_{f_z} = E_mu g(., z) - E_mu h(., z), so the marginals agree within delta."""
    rng = np.random.default_rng(q)
    points, mu, g = random_problem(rng, 50, q)
    eye = np.eye(2**q)
    tests = ProductTests(lambda p: np.ones((2 ** (q + 1), len(p))), np.vstack([eye, -eye]))
    delta = 0.02
    estimate = indistinguishable(points, mu, g, tests, delta)
    assert np.all(np.abs(mu @ estimate.h - mu @ g) < delta)


def test_step_bound_arithmetic() -> None:
    """T_max = floor((3 D G / (2 delta))^2) with D = sqrt(2), G = 2 sqrt(|Z|), i.e. 18 |Z| / delta^2."""
    assert step_bound(4, 1.0) == 72
    assert step_bound(1024, 0.1) == 1843200
    for z, delta in [(2, 0.3), (16, 0.07), (8, 2.0)]:
        d, g = math.sqrt(2), 2 * math.sqrt(z)
        assert step_bound(z, delta) == math.floor((3 * d * g / (2 * delta)) ** 2 + 1e-9)


def test_max_steps_budget_raises_with_the_state_reached() -> None:
    rng = np.random.default_rng(3)
    points, mu, g = random_problem(rng, 30, 2)
    tests = product_tests(rng.normal(size=(3, FEATURES)), rng.uniform(-1, 1, (3, 4)))
    full = indistinguishable(points, mu, g, tests, 0.02)
    assert len(full.steps) >= 2
    with pytest.raises(StepBoundExceeded, match="max_steps") as caught:
        indistinguishable(points, mu, g, tests, 0.02, max_steps=len(full.steps) - 1)
    assert caught.value.steps == full.steps[:-1]
    assert caught.value.advantage >= 0.02
    partial = Estimate(h=full.h, steps=caught.value.steps, advantage=0.0, step_bound=0, tests=tests)
    np.testing.assert_allclose(partial.predict(points), caught.value.h)
    assert indistinguishable(points, mu, g, tests, 0.02, max_steps=len(full.steps)).steps == full.steps


def test_step_bound_check_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    """With T_max forced below what the problem needs, the loop reports the contradiction."""
    rng = np.random.default_rng(4)
    points, mu, g = random_problem(rng, 30, 2)
    tests = product_tests(rng.normal(size=(3, FEATURES)), rng.uniform(-1, 1, (3, 4)))
    monkeypatch.setattr(ind, "step_bound", lambda z_size, delta: 1)
    with pytest.raises(StepBoundExceeded, match=r"Lemma A\.3"):
        indistinguishable(points, mu, g, tests, 0.02)


def test_out_of_range_tests_are_rejected() -> None:
    points, mu, g = np.zeros((2, 1)), np.array([0.5, 0.5]), np.array([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="b must lie"):
        ProductTests(lambda p: np.ones((1, len(p))), np.array([[2.0, 0.0]]))
    with pytest.raises(ValueError, match="a\\(points\\) must lie"):
        indistinguishable(points, mu, g, ProductTests(lambda p: np.full((1, len(p)), 1.5), np.ones((1, 2))), 0.1)
    with pytest.raises(ValueError, match="test values must lie"):
        indistinguishable(points, mu, g, CallableTests(lambda p, h: 2 * np.ones((1, *h.shape)), 1), 0.1)
    with pytest.raises(ValueError, match="shape"):
        indistinguishable(points, mu, g, CallableTests(lambda p, h: np.ones((2, *h.shape)), 1), 0.1)


@pytest.mark.parametrize(
    ("mu", "g", "delta", "message"),
    [
        ([0.5, 0.6], [[1, 0], [0, 1]], 0.1, "mu must be nonnegative and sum to 1"),
        ([1.5, -0.5], [[1, 0], [0, 1]], 0.1, "mu must be nonnegative"),
        ([1.0], [[1, 0], [0, 1]], 0.1, "one weight per point"),
        ([0.5, 0.5], [[0.5, 0.6], [0, 1]], 0.1, "simplex"),
        ([0.5, 0.5], [[1.5, -0.5], [0, 1]], 0.1, "simplex"),
        ([0.5, 0.5], [[1, 0], [0, 1]], 0.0, "delta must be in"),
        ([0.5, 0.5], [[1, 0], [0, 1]], 2.5, "delta must be in"),
    ],
)
def test_inputs_are_validated(mu, g, delta, message) -> None:
    tests = ProductTests(lambda p: np.ones((1, len(p))), np.ones((1, 2)))
    with pytest.raises(ValueError, match=message):
        indistinguishable(np.zeros((2, 1)), np.array(mu, float), np.array(g, float), tests, delta)


# --- conditionals over {0,1}^q ----------------------------------------------------------------------


@given(q=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_conditional_matches_bit_enumeration(q: int, seed: int) -> None:
    """z_1 is the most significant bit: index = sum_i z_i 2^(q - i)."""
    rng = np.random.default_rng(seed)
    row = rng.dirichlet(np.ones(2**q))
    for i in range(1, q + 1):
        for prefix in itertools.product((0, 1), repeat=i - 1):
            mass = {0: 0.0, 1: 0.0}
            for index in range(2**q):
                bits = [(index >> (q - k)) & 1 for k in range(1, q + 1)]
                if tuple(bits[: i - 1]) == prefix:
                    mass[bits[i - 1]] += row[index]
            expected = mass[1] / (mass[0] + mass[1])
            assert conditional(row, i, prefix) == pytest.approx(expected)
            assert Estimate.conditional(np.vstack([row, row]), i, prefix) == pytest.approx([expected] * 2)


def test_conditional_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="2\\^q"):
        conditional(np.ones(3) / 3, 1, [])
    with pytest.raises(ValueError, match="i must be"):
        conditional(np.ones(4) / 4, 3, [0, 0])
    with pytest.raises(ValueError, match="prefix"):
        conditional(np.ones(4) / 4, 2, [])
    with pytest.raises(ValueError, match="probability 0"):
        conditional(np.array([0.0, 0.0, 0.5, 0.5]), 2, [0])
