"""Confidence intervals used in reports and statistical tests."""

from __future__ import annotations

import numpy as np


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion."""
    from scipy.stats import binomtest  # deferred: scipy.stats takes most of a second to import

    if trials == 0:
        return (0.0, 1.0)
    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def normal_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """mean ± z·s/√n, the normal-approximation interval for a mean (a payoff's)."""
    from scipy.stats import norm  # deferred, as above

    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    if values.size < 2:
        return mean, mean
    half = float(norm.ppf(0.5 + confidence / 2)) * float(values.std(ddof=1)) / np.sqrt(values.size)
    return mean - half, mean + half
