"""Confidence intervals used in reports and statistical tests, in closed form (no scipy.stats at
start-up)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np


def z_value(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (1.96 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion:
    (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    if trials == 0:
        return (0.0, 1.0)
    z = z_value(confidence)
    p, z2n = successes / trials, z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials)) / (1 + z2n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # the bounds are exact at 0 and n
    return (low, 1.0 if successes == trials else min(1.0, centre + half))


def accept_promise(yes: bool, completeness: float | None, soundness: float | None) -> float | None:
    """The accept rate a theorem promises on an instance: at least c on a yes-instance, at most s on a
    no-instance; None where it promises nothing (c = 0, s = 1, or no guarantee stated)."""
    bound = completeness if yes else soundness
    return None if bound is None or (bound <= 0 if yes else bound >= 1) else bound


def reaches(yes: bool, bound: float, interval: tuple[float, float]) -> bool:
    """Whether an accept rate's interval reaches the promise ``bound`` (:func:`accept_promise`): its
    top at least c on a yes-instance, its bottom at most s on a no-instance."""
    low, high = interval
    return high >= bound if yes else low <= bound


def normal_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """mean ± z·s/√n, the normal-approximation interval for a mean (a payoff's)."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, mean
    half = z_value(confidence) * float(values.std(ddof=1)) / np.sqrt(values.size)
    return mean - half, mean + half
