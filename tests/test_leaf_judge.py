"""The recursive protocols ask the run's own judge at the leaves: a judge swapped in for a run
(people, a model) is the one asked about every leaf that is a human judgement, never ignored
while the ledger reports a query (the decomposition computes the others itself)."""

from __future__ import annotations

from typing import Any

import pytest

from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.engine.record import read_records
from debatekit.ledger import Role
from debatekit.oracle import FunctionOracle, Oracle, Query, Question
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS


class Asked(Oracle):
    """Always answers ``answer``, keeping what it was asked."""

    def __init__(self, answer: int):
        self.answer, self.asked = answer, []

    def sample(self, query: Query, rng: Any) -> int:
        self.asked.append(query)
        return self.answer


def _verifier_answers(path) -> list[int]:
    return [e["answer"] for r in read_records(path) for e in r["events"] if e.get("query") == "verifier"]


@pytest.mark.parametrize("name", ["prover-estimator", "naive-recursive"])
def test_the_claim_trees_leaves_are_put_to_the_runs_judge(tmp_path, name) -> None:
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS["bike-lanes"], 13, True, 0)
    alice, bob = spec.honest(Role.ALICE), spec.strategies[Role.BOB]["omniscient"]
    run(spec, instance, alice, bob, 12, 2, record=tmp_path / "builtin.jsonl")
    naysayer = Asked(0)
    swapped = run(spec, instance, alice, bob, 12, 2, oracles=Oracles(instance.oracle, naysayer),
                  record=tmp_path / "swapped.jsonl")  # fmt: skip
    assert len(naysayer.asked) == swapped.verifier_queries_mean * 12 > 0  # every leaf query reached it
    assert all(isinstance(q, Question) for q in naysayer.asked)
    assert 1 in _verifier_answers(tmp_path / "builtin.jsonl")  # the true judge says yes somewhere,
    assert set(_verifier_answers(tmp_path / "swapped.jsonl")) == {0}  # this one never, and is recorded


def test_a_machines_judged_steps_are_put_to_the_runs_judge_which_if_the_same_changes_nothing() -> None:
    spec = PROTOCOLS["naive-recursive"]
    instance = make_instance(PROBLEMS["approval-majority"], 8, True, 0)
    alice, bob = spec.honest(Role.ALICE), spec.strategies[Role.BOB]["random"]
    asked = []

    class Keeping(FunctionOracle):
        def probability(self, query: Query) -> float:
            asked.append(query)
            return super().probability(query)

    keeping = Keeping(instance.oracle.probability, deterministic=True)
    ours = run(spec, instance, alice, bob, 20, 4, oracles=Oracles(instance.oracle, keeping))
    theirs = run(spec, instance, alice, bob, 20, 4)
    assert ours.to_json() == theirs.to_json()  # the same judge, asked through the run's route
    assert asked and all(instance.oracle.probability(q) in (0.0, 1.0) for q in asked)
