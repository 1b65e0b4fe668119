"""Oracles O(z): {0,1}-valued random variables modelling human judgement (Section 3).

An oracle either knows P[O(z)=1] (simulation and exact analysis) or can only be sampled (a
person, an LLM). A deterministic oracle is the case P[O(z)=1] in {0, 1}. Parties reach an
oracle only through an :class:`Asker` bound to their role, so every query lands in the ledger.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping

import numpy as np

from debatekit.ledger import Ledger, Role

Query = Hashable


class Oracle(ABC):
    """P[O(z)=1] when known, and a sampler."""

    def probability(self, query: Query) -> float | None:
        """P[O(query)=1], or None for a sample-only oracle."""
        return None

    @abstractmethod
    def sample(self, query: Query, rng: np.random.Generator) -> int:
        """One independent answer."""

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> int:
        """The number of ones among ``r`` independent answers: one binomial draw when the
        probability is known, else ``r`` samples."""
        p = self.probability(query)
        if p is not None:
            return int(rng.binomial(r, p))
        return sum(self.sample(query, rng) for _ in range(r))


class KnownOracle(Oracle):
    """An oracle whose answer probabilities are known."""

    @abstractmethod
    def probability(self, query: Query) -> float: ...

    def sample(self, query: Query, rng: np.random.Generator) -> int:
        p = self.probability(query)
        if p in (0.0, 1.0):
            return int(p)
        return int(rng.random() < p)


class FunctionOracle(KnownOracle):
    """P[O(z)=1] = fn(z)."""

    def __init__(self, fn: Callable[[Query], float]):
        self._fn = fn

    def probability(self, query: Query) -> float:
        return float(self._fn(query))


class TableOracle(KnownOracle):
    """P[O(z)=1] looked up in a table, with a default for queries not in it."""

    def __init__(self, table: Mapping[Query, float], default: float = 0.0):
        self._table = dict(table)
        self._default = default

    def probability(self, query: Query) -> float:
        return float(self._table.get(query, self._default))


class SampleOracle(Oracle):
    """An oracle known only through samples: ``draw(z, rng)`` returns 0 or 1."""

    def __init__(self, draw: Callable[[Query, np.random.Generator], int]):
        self._draw = draw

    def sample(self, query: Query, rng: np.random.Generator) -> int:
        return int(self._draw(query, rng))


NO_ORACLE: Oracle = FunctionOracle(lambda query: 0.0)
"""The oracle of a computation that never queries one."""


class Asker:
    """One party's access to the oracle; every query is counted in the ledger for that role."""

    def __init__(self, oracle: Oracle, role: Role, ledger: Ledger, rng: np.random.Generator):
        self.oracle, self.role, self._ledger, self._rng = oracle, role, ledger, rng

    def __call__(self, query: Query) -> int:
        self._ledger.count_queries(self.role)
        return self.oracle.sample(query, self._rng)

    def many(self, query: Query, r: int) -> int:
        """Ones among ``r`` queries on ``query``; counts ``r`` queries."""
        self._ledger.count_queries(self.role, r)
        return self.oracle.sample_count(query, r, self._rng)
