"""Algorithm 1 of the prover-estimator debate paper (Appendix A.1), one gradient step at a time:
seconds per step of ``debatekit.players.indistinguishable`` (numpy) against a plain Python
reference written here (loops over f, x and z; a per-row ``sorted`` projection), side by side.

Each step is one evaluation of every test's advantage, the update ``h + eta sign f`` and the
projection of every row onto the simplex. The workload: ``|X|`` points (uniform ``mu``), ``|Z| =
2^q`` answers, ``--tests`` separable tests ``a_f(x) b_f(z)`` (``ProductTests``; ``a`` is a random
table in [-1, 1] indexed by the points, ``b`` half parity characters of random bit sets, half
uniform in [-1, 1]) and a truth ``g`` log-linear in them, so the tests do distinguish it from the
uniform start and ``--delta`` keeps the loop stepping.

(a) vectorised: ``indistinguishable(..., max_steps=k)`` with ``k = --steps``, which stops with
    ``StepBoundExceeded`` after k steps (k + 1 advantage evaluations); the median of ``--repeat``
    runs, divided by k.
(b) plain: the same loop in plain Python for ``--plain-steps`` steps (one run). When the whole
    problem would cost more than ``--plain-budget`` inner-loop iterations, it runs on a random
    subsample of m points (``mu`` renormalised) and its time per step is multiplied by ``|X| / m``:
    every part of a step is linear in the number of points. The table says which.

Check: on the problem (b) ran, the vectorised run takes the same steps (test, sign, eta) and reaches
the same ``h`` (within 1e-9); the script exits 1 otherwise. Sizes whose arrays would not fit in
``--max-gb`` (default: 80% of available memory) are skipped. Run: ``python
benchmarks/indistinguishable.py [--qs 2 6 10] [--sizes 1000 10000 100000] [--tests N] [--steps K]
[--plain-steps K] [--plain-budget I] [--repeat R] [--delta D] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time

import numpy as np

from debatekit.players.indistinguishable import ProductTests, StepBoundExceeded, indistinguishable
from timing import median_time, print_table

ARRAYS_PER_STEP = 7
"""Peak number of |X| x |Z| float64 arrays alive in one step (g, h, g - h, the step, its sort, cumsum,
the result), for the memory estimate."""
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
SLOW = 5.0
"""Seconds: a vectorised run slower than this is measured once, not ``--repeat`` times."""


def problem(rng: np.random.Generator, size: int, q: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a table (n, |X|), b (n, |Z|), g (|X|, |Z|)) with g(x, .) proportional to exp(sum_f a_f(x) b_f(z))."""
    z = np.arange(2**q)
    masks = rng.integers(1, 2**q, n // 2)
    parity = np.array([np.bitwise_count(z & m) for m in masks], dtype=float) if len(masks) else np.zeros((0, 2**q))
    b = np.vstack([1 - 2 * (parity % 2), rng.uniform(-1, 1, (n - len(masks), 2**q))])
    a = rng.uniform(-1, 1, (n, size))
    g = a.T @ b
    g -= g.max(axis=1, keepdims=True)
    np.exp(g, out=g)
    g /= g.sum(axis=1, keepdims=True)
    return a, b, g


def plain_project(v: list[float]) -> list[float]:
    """Duchi et al. (2008), Figure 1, one row: sort, find the last j with u_j > (sum_{i<=j} u_i - 1) / j."""
    total, theta = 0.0, 0.0
    for j, u in enumerate(sorted(v, reverse=True), start=1):
        total += u
        if u > (total - 1) / j:
            theta = (total - 1) / j
    return [max(x - theta, 0.0) for x in v]


def plain_algorithm1(
    a: list[list[float]], b: list[list[float]], mu: list[float], g: list[list[float]], delta: float, max_steps: int
) -> tuple[list[list[float]], list[tuple[float, int, int]]]:
    """Algorithm 1 with f(x, z) = a_f(x) b_f(z), in plain Python, for at most ``max_steps`` steps."""
    size, z_size = len(g), len(g[0])
    h = [[1.0 / z_size] * z_size for _ in range(size)]
    steps: list[tuple[float, int, int]] = []
    while True:
        best_f, best = -1, 0.0
        for f in range(len(b)):
            af, bf, adv = a[f], b[f], 0.0
            for x in range(size):
                gx, hx, inner = g[x], h[x], 0.0
                for z in range(z_size):
                    inner += (gx[z] - hx[z]) * bf[z]
                adv += mu[x] * af[x] * inner
            if best_f < 0 or abs(adv) > abs(best):
                best_f, best = f, adv
        if abs(best) < delta or len(steps) == max_steps:
            return h, steps
        eta, sign = 1.0 / math.sqrt(2 * z_size * (len(steps) + 1)), 1 if best > 0 else -1
        af, bf, c = a[best_f], b[best_f], eta * sign
        h = [plain_project([hx[z] + c * af[x] * bf[z] for z in range(z_size)]) for x, hx in enumerate(h)]
        steps.append((eta, sign, best_f))


def vectorised(points: np.ndarray, mu: np.ndarray, g: np.ndarray, tests: ProductTests, delta: float, k: int):
    """(h, steps) after at most k steps of ``indistinguishable``."""
    try:
        estimate = indistinguishable(points, mu, g, tests, delta, max_steps=k)
    except StepBoundExceeded as stopped:
        return stopped.h, stopped.steps
    return estimate.h, estimate.steps


def measure(rng: np.random.Generator, size: int, q: int, args: argparse.Namespace) -> tuple[tuple[str, ...], bool]:
    """One table row for |X| = size, |Z| = 2^q, and whether the plain and numpy steps agree."""
    n, k, kp, z_size = args.tests, args.steps, args.plain_steps, 2**q
    clock = CLOCKS[args.clock]
    a, b, g = problem(rng, size, q, n)
    tests = ProductTests(lambda points: np.take(a, points, axis=1), b)
    points, mu = np.arange(size), np.full(size, 1.0 / size)
    run = lambda: vectorised(points, mu, g, tests, args.delta, k)  # noqa: E731
    t_vec, (_, steps) = median_time(run, 1, clock)  # a big run is measured once, a small one again (warm)
    if t_vec < SLOW:
        t_vec, (_, steps) = median_time(run, args.repeat, clock)
    per_vec = t_vec / max(len(steps), 1)

    m = min(size, max(1, int(args.plain_budget // (n * z_size * (kp + 1)))))
    sub = np.sort(rng.choice(size, m, replace=False)) if m < size else points
    mu_sub = mu[sub] / mu[sub].sum()
    lists = (a[:, sub].tolist(), b.tolist(), mu_sub.tolist(), g[sub].tolist())
    t_plain, (plain_h, plain_steps) = median_time(lambda: plain_algorithm1(*lists, args.delta, kp), 1, clock)
    per_plain = t_plain / max(len(plain_steps), 1) * size / m
    if m == size:
        where = f"all points, {len(plain_steps)} steps"
    else:
        where = f"{m:,} of {size:,} points, {len(plain_steps)} steps, x {size / m:,.1f}"

    check_h, check_steps = vectorised(sub, mu_sub, g[sub], tests, args.delta, kp)
    same = len(check_steps) == len(plain_steps) and all(
        (s.f, s.sign) == (f, sign) and math.isclose(s.eta, eta)
        for s, (eta, sign, f) in zip(check_steps, plain_steps, strict=True)
    )
    same = same and np.allclose(check_h, np.array(plain_h), rtol=0, atol=1e-9)
    ratio = f"{per_plain / per_vec:,.0f}x"
    return (
        f"{size:,}",
        f"{z_size:,}",
        f"{per_vec:.3g}",
        f"{per_plain:.3g}",
        where + ("" if same else " DISAGREE"),
        ratio,
    ), same


def available_gb() -> float:
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qs", type=int, nargs="+", default=[2, 6, 10])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**3, 10**4, 10**5])
    parser.add_argument("--tests", type=int, default=32)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--plain-steps", type=int, default=2)
    parser.add_argument("--plain-budget", type=float, default=2e7, help="inner-loop iterations the plain run may take")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--delta", type=float, default=1e-3)
    parser.add_argument("--max-gb", type=float, default=0.8 * available_gb())
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="cpu: this process's CPU time")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"Algorithm 1, {args.tests} product tests, delta = {args.delta}, {args.clock} time; (a) {args.steps} "
          f"steps, median of {args.repeat} runs (1 run if slower than {SLOW:g} s); (b) {args.plain_steps} steps, "
          f"1 run; memory limit {args.max_gb:.1f} GB")  # fmt: skip
    rows = [("|X|", "|Z|", "(a) numpy s/step", "(b) plain s/step", "(b) measured on", "(b)/(a)")]
    agree, start = True, time.perf_counter()
    for q in args.qs:
        for size in args.sizes:
            need = ARRAYS_PER_STEP * size * 2**q * 8 / 2**30
            if need > args.max_gb:
                rows.append((f"{size:,}", f"{2**q:,}", f"skipped: ~{need:.1f} GB", "", "", ""))
                continue
            row, same = measure(rng, size, q, args)
            rows.append(row)
            agree &= same
    print_table(rows)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"total {time.perf_counter() - start:.0f} s, peak memory {peak:.1f} GB; "
          + ("plain and numpy steps agree" if agree else "PLAIN AND NUMPY STEPS DISAGREE"))  # fmt: skip
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
