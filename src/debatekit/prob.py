"""Finitely supported probability distributions: the Lean ``Prob`` monad (Prob/Defs.lean).

A :class:`Dist` maps outcomes to weights that are all :class:`~fractions.Fraction` (exact)
or all ``float``. ``pure``, ``bind``, ``map``, ``bernoulli``, ``expectation`` and ``prob``
mirror the Lean names ``pure``, ``bind``, ``exp``, ``pr`` and ``bernoulli``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction
from typing import Generic, TypeVar

import numpy as np

A = TypeVar("A", bound=Hashable)
B = TypeVar("B", bound=Hashable)
Weight = Fraction | float

_FLOAT_TOLERANCE = 1e-9


class Dist(Generic[A]):
    """A finitely supported distribution; outcomes must be hashable."""

    __slots__ = ("_weights",)

    def __init__(self, pairs: Iterable[tuple[A, Weight]]):
        weights: dict[A, Weight] = {}
        for outcome, weight in pairs:
            if weight < 0 or weight != weight:
                raise ValueError(f"weight {weight!r} of {outcome!r} is not a probability")
            if weight:
                weights[outcome] = weights.get(outcome, 0) + weight
        total = sum(weights.values())
        exact = all(isinstance(w, Fraction | int) for w in weights.values())
        if (exact and total != 1) or (not exact and abs(total - 1) > _FLOAT_TOLERANCE):
            raise ValueError(f"weights sum to {total}, not 1")
        self._weights = weights

    @staticmethod
    def pure(outcome: A) -> Dist[A]:
        """The point mass at ``outcome`` (Lean ``pure``)."""
        return Dist([(outcome, Fraction(1))])

    @staticmethod
    def bernoulli(p: Weight) -> Dist[int]:
        """1 with probability ``p``, else 0 (Lean ``bernoulli``; p is clamped to [0, 1])."""
        p = min(max(p, 0), 1)
        return Dist([(1, p), (0, 1 - p)])

    @staticmethod
    def uniform(outcomes: Sequence[A]) -> Dist[A]:
        """Equal exact weight on each listed outcome."""
        if not outcomes:
            raise ValueError("uniform distribution over no outcomes")
        w = Fraction(1, len(outcomes))
        return Dist((o, w) for o in outcomes)

    def items(self) -> list[tuple[A, Weight]]:
        """(outcome, weight) pairs with positive weight, in insertion order."""
        return list(self._weights.items())

    @property
    def support(self) -> list[A]:
        return list(self._weights)

    def bind(self, f: Callable[[A], Dist[B]]) -> Dist[B]:
        """Sequence a dependent distribution (Lean ``bind``)."""
        return Dist((b, w * v) for a, w in self._weights.items() for b, v in f(a).items())

    def map(self, f: Callable[[A], B]) -> Dist[B]:
        return Dist((f(a), w) for a, w in self._weights.items())

    def expectation(self, f: Callable[[A], Weight] = lambda a: a) -> Weight:  # type: ignore[assignment,return-value]
        """E[f(outcome)] (Lean ``exp``)."""
        return sum((w * f(a) for a, w in self._weights.items()), start=0)

    def prob(self, event: Callable[[A], bool]) -> Weight:
        """P[event] (Lean ``pr``)."""
        return sum((w for a, w in self._weights.items() if event(a)), start=0)

    def sample(self, rng: np.random.Generator) -> A:
        """Draw one outcome with ``rng``."""
        outcomes = list(self._weights)
        if len(outcomes) == 1:
            return outcomes[0]
        cumulative = np.cumsum([float(w) for w in self._weights.values()])
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return outcomes[min(index, len(outcomes) - 1)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dist) and self._weights == other._weights

    def __hash__(self) -> int:
        return hash(frozenset(self._weights.items()))

    def __repr__(self) -> str:
        body = ", ".join(f"{a!r}: {w}" for a, w in self._weights.items())
        return f"Dist({{{body}}})"
