"""Oracles O(z): {0,1}-valued random variables modelling human judgement (Section 3).

An oracle either knows P[O(z)=1] (simulation and exact analysis) or can only be sampled (a
person, an LLM). A deterministic oracle is the case P[O(z)=1] in {0, 1}. Parties reach an
oracle only through an :class:`Asker` bound to their role, so every query lands in the ledger.

An oracle's ``sample`` and ``sample_count`` may return an awaitable (a person or a model answers
in minutes); such an oracle says so with ``waits``, and a run then plays one debate per call,
each journaled, so a debate that died waiting resumes at the pending query. While an oracle is
called, :func:`asking` says which query it answers (run, debate, role, number): a stable key for
a person's task, the same when a stopped debate is resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from debatekit.engine.boundary import safe_repr, to_json
from debatekit.engine.events import Queried
from debatekit.ledger import Ledger, Role

Query = Hashable


@dataclass(frozen=True)
class Question:
    """A judgement question in words, as a person or a model is asked it: ``text``, and the
    relevant coordinates it depends on (the earlier steps I(t), each rendered as a line)."""

    text: str
    context: tuple[str, ...] = ()


@dataclass(frozen=True)
class Asking:
    """The query an oracle is answering: the run (a fingerprint of its protocol, instance, seed,
    players and parameters), the debate's index, the role asking and the query's number among
    that role's queries in the debate (queries counted so far, so R samples take R numbers)."""

    run: str
    debate: int
    role: Role
    number: int


_ASKING: ContextVar[Asking | None] = ContextVar("asking", default=None)
_DEBATE: ContextVar[Debating | None] = ContextVar("debate", default=None)


@dataclass(frozen=True)
class Debating:
    """The debate a context (one debate's task or thread) plays: debate ``index`` of ``run``, and
    its ``aside``: what trusted parts of the system (an LLM player, a model of the judge) did in
    it beyond committed messages and oracle answers (prompts, completions, tokens), kept in its
    record under ``aside`` and not read by replay; ``known``, what its players' models answered
    (by model, role and question), which a fresh copy of a player in the debate reuses."""

    run: str
    index: int
    aside: list[dict[str, Any]]
    known: dict[Hashable, Any] = field(default_factory=dict)


def asking() -> Asking | None:
    """The query the oracle being called answers, or None outside a run's debate. Read it when
    called (an ``async def`` body runs within the same context when awaited)."""
    return _ASKING.get()


def in_debate(run: str, index: int) -> Debating:
    """Mark the current context (one debate's task or thread) as debate ``index`` of ``run``."""
    debate = Debating(run, index, [])
    _DEBATE.set(debate)
    return debate


def debating() -> Debating | None:
    """The debate the current context plays, or None outside a run."""
    return _DEBATE.get()


@contextlib.contextmanager
def outside_debate() -> Iterator[None]:
    """Within: no debate is played (:func:`debating` is None). For what a run derives once and every
    debate shares (B's training, A's committed proof): its model calls belong to no one debate's
    record, whichever debate happened to ask for it first."""
    token = _DEBATE.set(None)
    try:
        yield
    finally:
        _DEBATE.reset(token)


def aside(entry: dict[str, Any]) -> None:
    """Keep ``entry`` (plain JSON data) in the current debate's record under ``aside``."""
    debate = _DEBATE.get()
    if debate is not None:
        debate.aside.append(entry)


def here(role: Role, number: int) -> Asking | None:
    """Query ``number`` of ``role`` in the debate of the current context (None outside a run)."""
    debate = _DEBATE.get()
    return None if debate is None else Asking(debate.run, debate.index, role, number)


def consulted(where: Asking | None, call: Callable[[], Any]) -> Any:
    """``call()`` with :func:`asking` telling the oracle which query it answers; an awaitable
    answer is awaited within the same context."""
    token = _ASKING.set(where)
    try:
        answer = call()
    finally:
        _ASKING.reset(token)
    if inspect.isawaitable(answer):
        return _awaited_asking(answer, where)
    return answer


async def _awaited_asking(answer: Awaitable[Any], where: Asking | None) -> Any:
    token = _ASKING.set(where)
    try:
        return await answer
    finally:
        _ASKING.reset(token)


class Unanswered(BaseException):
    """An oracle, or a player's model, that could not be consulted at all: its service failed
    after its retries (a timeout, a lost connection, an HTTP 5xx), or the answer it gave is no
    answer. That is nobody's argument, so it is never charged to a party: a player's move that
    meets it leaves the debate undecided (:attr:`debatekit.engine.nodes.End.verdict` None),
    counted apart from the decided ones. A ``BaseException``, like a signal, so that no handler
    of a party's own errors takes it for one; ``source`` names the model (``llm:PROVIDER/MODEL``)."""

    def __init__(self, source: str, reason: str):
        super().__init__(f"{source}: {reason}")
        self.source, self.reason = source, reason


class Pending(Unanswered):
    """The verifier's oracle could not answer: the debate is not decided, and stays pending in
    the run's journal; the run stops (one line at the command line) and ``--resume`` asks the
    query again."""


class Oracle(ABC):
    """P[O(z)=1] when known, and a sampler."""

    waits: bool = False
    """Answers may take minutes and may be awaitable (a person, a model): a run plays one debate
    per call, concurrently, each journaled, rather than a batch."""

    def judgements(self, where: Asking) -> list[dict[str, Any]]:
        """Who gave the answers to the query ``where`` and when, for the debate's record (people;
        never their tokens); none for an oracle that is not a panel."""
        return []

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
    def entries(self) -> tuple[Mapping[Query, float], float]:
        """The table and the default (what a record's instance fingerprint hashes)."""
        return self._table, self._default

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
    def waits(self) -> bool:  # type: ignore[override]
        return self._oracle.waits

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

    def counting_in(self, ledger: Ledger) -> None:
        """Count and note in ``ledger`` from now on: a resumed debate's players sit down again
        against a scratch ledger, as what they asked sitting down is in its journal."""
        self._ledger = ledger

    def __call__(self, query: Query) -> int:
        """One answer; a player calling it waits for an oracle that waits (a person, a model)."""
        return settled(self.asked(query))

    def many(self, query: Query, r: int) -> int:
        """Ones among ``r`` queries on ``query``; counts ``r`` queries."""
        return settled(self.asked(query, r))

    def asked(self, query: Query, r: int = 1) -> int | Awaitable[int]:
        """Ones among ``r`` answers, or an awaitable of them when the oracle waits: the
        interpreter's form, which awaits it without holding up the other debates in flight. The
        query is numbered by this role's queries counted so far, which a resumed debate counts
        again from its journal, so a person's task keeps its key."""
        where = here(self.role, self._ledger.queries[self.role])
        if r == 1:
            answer = consulted(where, lambda: self.oracle.sample(query, self._rng))
        else:
            answer = consulted(where, lambda: self.oracle.sample_count(query, r, self._rng))
        if inspect.isawaitable(answer):
            return self._counted_later(query, r, answer, where)
        return self._counted(query, r, answer, where)

    async def _counted_later(self, query: Query, r: int, answer: Awaitable[int], where: Asking | None) -> int:
        return self._counted(query, r, await answer, where)

    def _counted(self, query: Query, r: int, answer: int, where: Asking | None) -> int:
        self._ledger.count_queries(self.role, r)
        if self._ledger.events is not None and not self._ledger.made_again(self.role):
            judges = judged(self.oracle, where)
            self._ledger.note(Queried(role=self.role, question=question_json(query), n=r, answer=answer, judges=judges))
        return answer


def judged(oracle: Oracle, where: Asking | None) -> tuple[dict[str, Any], ...]:
    """Who answered a query, for the record (``Queried.judges``), when the oracle is a panel."""
    return () if where is None else tuple(oracle.judgements(where))


def settled(value: Any) -> Any:
    """``value``, awaited first when it is awaitable (a waiting oracle's answer, asked from
    synchronous code): in a fresh event loop, on a thread of its own if this one runs a loop."""
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(value))
    with ThreadPoolExecutor(max_workers=1) as pool:  # contextvars travel with the coroutine object
        return pool.submit(asyncio.run, _awaited(value)).result()


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def question_json(query: Query) -> Any:
    """A query as JSON data when it is made of plain values, else its bounded repr."""
    data = to_json(query)
    try:
        json.dumps(data)
    except (TypeError, ValueError):
        return safe_repr(query)
    return data
