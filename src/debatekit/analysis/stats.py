"""Confidence intervals used in reports and statistical tests."""

from __future__ import annotations


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion."""
    from scipy.stats import binomtest  # deferred: scipy.stats takes most of a second to import

    if trials == 0:
        return (0.0, 1.0)
    ci = binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))
