"""A debate's aside: what a trusted part of the system (an LLM player, a model of the judge) did
beyond committed messages and oracle answers, kept in that debate's record and ignored by replay."""

from __future__ import annotations

from typing import Any

import pytest

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.record import read_records, replay
from debatekit.ledger import Role
from debatekit.oracle import aside, debating
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS


def noting(inner: Strategy) -> Strategy:
    """``inner``, noting each move it makes (with the debate it plays) in the debate's aside."""

    class Noting:
        def __init__(self, seat: Any):
            self.inner = inner.factory(seat)

        def __getattr__(self, name: str) -> Any:
            method = getattr(self.inner, name)

            def move(*args: Any) -> Any:
                playing = debating()
                aside({"move": name, "debate": None if playing is None else playing.index})
                return method(*args)

            return move

    return Strategy(f"noting-{inner.name}", inner.role, "", Noting, shape=inner.shape)


@pytest.mark.parametrize(
    ("name", "problem", "size"),
    [
        ("cross-exam", "approval-majority", 6),
        ("stochastic", "noisy-majority", 8),
        ("naive-recursive", "bike-lanes", 13),
    ],
)
def test_each_debate_keeps_its_own_aside(tmp_path, name, problem, size) -> None:
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, True, 0)
    alice = noting(spec.honest(Role.ALICE))
    path = tmp_path / "a.jsonl"
    run(spec, instance, alice, spec.honest(Role.BOB), 5, 1, record=path, concurrency=3)
    records = list(read_records(path))
    assert len(records) == 5
    for record in records:
        assert record["aside"] and {entry["debate"] for entry in record["aside"]} == {record["debate"]}
        assert replay(record, spec, instance).reproduced
