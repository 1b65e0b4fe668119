"""Oracles that wait (a person, a model): their answers are awaited, every query is counted once
and numbered for its task key (:func:`debatekit.oracle.asking`), the run plays one debate per call
whatever the players, and a debate that died waiting resumes at the same key."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.engine.record import journal_path, read_records, replay
from debatekit.ledger import Role
from debatekit.oracle import Asking, Oracle, Query, asking
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

CASES = [  # protocol, problem, size, Alice, Bob: one of each interpreter's protocols
    ("cross-exam", "approval-majority", 6, "honest", "point-random"),
    ("stochastic", "noisy-majority", 8, "bias", "random-abort"),
    ("naive-recursive", "evidence-majority", 1, "honest", "random"),
]


class Died(BaseException):
    """The process dying under the run (nothing in the engine catches a BaseException)."""


class Waiting(Oracle):
    """``inner``'s answers, each after an await, as a person's or a model's: keeps the key each
    query was asked under; dies at query number ``dies_at`` (counting calls) if given."""

    waits = True

    def __init__(self, inner: Oracle, dies_at: int | None = None):
        self.inner, self.dies_at = inner, dies_at
        self.keys: list[Asking | None] = []

    @property
    def deterministic(self) -> bool | None:
        return self.inner.deterministic

    def sample(self, query: Query, rng: Any) -> Any:
        return self._answer(lambda: self.inner.sample(query, rng))

    def sample_count(self, query: Query, r: int, rng: Any) -> Any:
        return self._answer(lambda: self.inner.sample_count(query, r, rng))

    def _answer(self, draw: Any) -> Any:
        key = asking()
        self.keys.append(key)
        if len(self.keys) == self.dies_at:
            raise Died

        async def later() -> int:
            await asyncio.sleep(0.001)
            assert asking() == key  # the context holds while the answer is awaited
            return draw()

        return later()


def _instance(problem: str, size: int):
    return make_instance(PROBLEMS[problem], size, True, 0)


@pytest.mark.parametrize(("name", "problem", "size", "a", "b"), CASES)
def test_a_waiting_judge_gives_the_run_of_a_judge_who_answers_at_once(tmp_path, name, problem, size, a, b) -> None:
    spec, instance = PROTOCOLS[name], _instance(problem, size)
    alice, bob = spec.strategies[Role.ALICE][a], spec.strategies[Role.BOB][b]
    judge = Waiting(instance.oracle)
    path = tmp_path / "w.jsonl"
    waited = run(spec, instance, alice, bob, 6, 3, oracles=Oracles(instance.oracle, judge), record=path, concurrency=3)
    at_once = run(spec, instance, alice, bob, 6, 3)
    assert waited.to_json() == at_once.to_json()
    records = list(read_records(path))
    asked = [e for r in records for e in r["events"] if e.get("query") == "verifier"]
    assert len(judge.keys) == len(asked) > 0  # each query asked once, each recorded with its answer
    assert all(type(e["answer"]) is int for e in asked)
    keys = [k for k in judge.keys if k is not None]
    assert len(keys) == len(judge.keys) and len(set(keys)) == len(keys)  # every query keyed, no key twice
    assert {k.debate for k in keys} <= set(range(6)) and {k.role for k in keys} == {Role.VERIFIER}
    assert len({k.run for k in keys}) == 1
    assert all(replay(r, spec, instance).reproduced for r in records)


@pytest.mark.parametrize(("name", "problem", "size", "a", "b"), CASES)
def test_a_debate_that_died_waiting_asks_the_pending_query_under_the_same_key(tmp_path, name, problem, size, a, b):
    spec, instance = PROTOCOLS[name], _instance(problem, size)
    alice, bob = spec.strategies[Role.ALICE][a], spec.strategies[Role.BOB][b]
    path = tmp_path / "d.jsonl"
    dying = Waiting(instance.oracle, dies_at=2)
    with pytest.raises(Died):
        run(spec, instance, alice, bob, 5, 7, oracles=Oracles(instance.oracle, dying), record=path)
    pending = dying.keys[-1]
    assert pending is not None and journal_path(path).exists()
    again = Waiting(instance.oracle)
    resumed = run(spec, instance, alice, bob, 5, 7, oracles=Oracles(instance.oracle, again), record=path, resume=True)
    assert again.keys[0] == pending  # the debate waited where it died: same run, debate, role and number
    never_stopped = run(spec, instance, alice, bob, 5, 7, oracles=Oracles(instance.oracle, Waiting(instance.oracle)))
    assert resumed.to_json() == never_stopped.to_json()
    records = list(read_records(path))
    assert len(records) == 5 and not journal_path(path).exists()
    assert json.loads(json.dumps(records)) == records
