"""How well a model of the judge matches the ground truth (issue 22, point 6): Brier score,
expected calibration error, log-loss and the reliability diagram's bins, for predictions p_i of
P[yes] against ground-truth probabilities y_i (0 or 1 for a claim with a known answer):

- Brier = mean (p_i - y_i)^2;
- log-loss = mean -[y_i ln p_i + (1 - y_i) ln(1 - p_i)], p clipped to [:data:`EPS`, 1 - EPS];
- ECE = sum over :data:`BINS` equal-width bins of p (the last closed) of (n_b / n) |mean y - mean p|.

The always-0.5 baseline (:func:`baseline`) scores Brier mean (0.5 - y_i)^2 (0.25 on certain
claims), log-loss ln 2 and ECE |mean y - 0.5|; a judge whose Brier score is above it is worse
than chance (:attr:`Calibration.worse_than`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

BINS = 10
EPS = 1e-12
"""How close to 0 or 1 a prediction is taken to be in the log-loss (a certain wrong answer costs ln 10^12 ≈ 27.6)."""


@dataclass(frozen=True)
class Bin:
    """One bin of the reliability diagram: predictions in [low, high), their count, mean and the mean truth."""

    low: float
    high: float
    n: int
    predicted: float
    observed: float


@dataclass(frozen=True)
class Calibration:
    """The scores of n predictions, with the reliability diagram's non-empty bins."""

    n: int
    brier: float
    ece: float
    log_loss: float
    bins: tuple[Bin, ...]

    def worse_than(self, other: Calibration) -> bool:
        """A higher Brier score than ``other``'s on the same claims."""
        return self.brier > other.brier

    def to_json(self) -> dict:
        return asdict(self) | {"bins": [asdict(b) for b in self.bins]}


def calibration(predicted: Sequence[float], truth: Sequence[float], bins: int = BINS) -> Calibration:
    """The scores of ``predicted`` P[yes] against the ``truth`` probabilities (the module's formulas)."""
    n = len(predicted)
    if n == 0 or n != len(truth):
        raise ValueError(f"calibration needs as many predictions as truths, at least one ({n} and {len(truth)})")
    brier = sum((p - y) ** 2 for p, y in zip(predicted, truth, strict=True)) / n
    loss = 0.0
    for p, y in zip(predicted, truth, strict=True):
        q = min(max(p, EPS), 1 - EPS)
        loss -= y * math.log(q) + (1 - y) * math.log(1 - q)
    groups: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for p, y in zip(predicted, truth, strict=True):
        groups[min(int(p * bins), bins - 1)].append((p, y))
    found = tuple(
        Bin(i / bins, (i + 1) / bins, len(g), sum(p for p, _ in g) / len(g), sum(y for _, y in g) / len(g))
        for i, g in enumerate(groups)
        if g
    )
    ece = sum(b.n / n * abs(b.observed - b.predicted) for b in found)
    return Calibration(n, brier, ece, loss / n, found)


def baseline(truth: Sequence[float]) -> Calibration:
    """The always-0.5 judge's scores on the same claims."""
    return calibration([0.5] * len(truth), truth)
