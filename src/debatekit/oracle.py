"""Oracles O(z): {0,1}-valued random variables modelling human judgement (Section 3).

An oracle either knows P[O(z)=1] (simulation and exact analysis) or can only be sampled (a
person, an LLM). A deterministic oracle is the case P[O(z)=1] in {0, 1}. Parties reach an
oracle only through an :class:`Asker` bound to their role, so every query lands in the ledger.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

from debatekit.engine.boundary import safe_repr, to_json
from debatekit.ledger import Ledger, Role

Query = Hashable


class Oracle(ABC):
    """P[O(z)=1] when known, and a sampler."""

    def probability(self, query: Query) -> float | None:
        """P[O(query)=1], or None for a sample-only oracle."""
        return None

    @property
    def deterministic(self) -> bool | None:
        """Whether every answer is certain (P[O(z)=1] in {0, 1}, Theorems 5.1 and 5.3 assume it),
        or None when that is not known."""
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
    """P[O(z)=1] = fn(z); ``deterministic`` declares that fn only returns 0 or 1."""

    def __init__(self, fn: Callable[[Query], float], deterministic: bool | None = None):
        self._fn = fn
        self._deterministic = deterministic

    def probability(self, query: Query) -> float:
        return float(self._fn(query))

    @property
    def deterministic(self) -> bool | None:
        return self._deterministic


class TableOracle(KnownOracle):
    """P[O(z)=1] looked up in a table, with a default for queries not in it."""

    def __init__(self, table: Mapping[Query, float], default: float = 0.0):
        self._table = dict(table)
        self._default = default

    def probability(self, query: Query) -> float:
        return float(self._table.get(query, self._default))

    @property
    def deterministic(self) -> bool:
        return all(p in (0.0, 1.0) for p in (*self._table.values(), self._default))


class SampleOracle(Oracle):
    """An oracle known only through samples: ``draw(z, rng)`` returns 0 or 1."""

    def __init__(self, draw: Callable[[Query, np.random.Generator], int]):
        self._draw = draw

    def sample(self, query: Query, rng: np.random.Generator) -> int:
        return int(self._draw(query, rng))


class SampleOnly(Oracle):
    """The sample-only view of any oracle (``--oracle sample``): its probabilities are hidden,
    so every party, and the engine, can only draw answers, as from a person or a model."""

    def __init__(self, oracle: Oracle):
        self._oracle = oracle

    def sample(self, query: Query, rng: np.random.Generator) -> int:
        return self._oracle.sample(query, rng)

    @property
    def hidden(self) -> Oracle:
        """The oracle whose probabilities this one hides."""
        return self._oracle

    def sample_count(self, query: Query, r: int, rng: np.random.Generator) -> int:
        """The count of yes among ``r`` answers in one call, as a panel or a model answers: the
        underlying oracle's count (one binomial draw when it knows p), still never p itself."""
        return self._oracle.sample_count(query, r, rng)

    @property
    def deterministic(self) -> bool | None:
        return self._oracle.deterministic


NO_ORACLE: Oracle = FunctionOracle(lambda query: 0.0, deterministic=True)
"""The oracle of a computation that never queries one."""


class Asker:
    """One party's access to the oracle; every query is counted in the ledger for that role and
    noted, with its answer, in the debate's record."""

    def __init__(self, oracle: Oracle, role: Role, ledger: Ledger, rng: np.random.Generator):
        self.oracle, self.role, self._ledger, self._rng = oracle, role, ledger, rng

    def __call__(self, query: Query) -> int:
        return self._counted(query, 1, self.oracle.sample(query, self._rng))

    def many(self, query: Query, r: int) -> int:
        """Ones among ``r`` queries on ``query``; counts ``r`` queries."""
        return self._counted(query, r, self.oracle.sample_count(query, r, self._rng))

    def _counted(self, query: Query, r: int, answer: int) -> int:
        self._ledger.count_queries(self.role, r)
        if self._ledger.events is not None:
            self._ledger.note({"query": self.role.value, "question": question_json(query), "n": r, "answer": answer})
        return answer


def question_json(query: Query) -> Any:
    """A query as JSON data when it is made of plain values, else its bounded repr."""
    data = to_json(query)
    try:
        json.dumps(data)
    except (TypeError, ValueError):
        return safe_repr(query)
    return data
