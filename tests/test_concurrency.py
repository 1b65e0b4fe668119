"""Slow players: many debates in flight at once, bounded by ``concurrency``, with results that do
not depend on how many were in flight (debate i depends only on the seed and i)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.catalog import PROTOCOLS
from debatekit.ledger import Role
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS


class Gauge:
    """Counts the moves in flight at once."""

    def __init__(self) -> None:
        self.now = self.most = 0


def slow(inner: Strategy, gauge: Gauge) -> Strategy:
    """``inner``'s moves, each taking a (short) while, as an LLM's or a person's would."""

    class Slow:
        def __init__(self, seat: Any):
            self.inner = inner.factory(seat)

        def __getattr__(self, name: str) -> Any:
            method = getattr(self.inner, name)

            async def move(*args: Any) -> Any:
                gauge.now += 1
                gauge.most = max(gauge.most, gauge.now)
                await asyncio.sleep(0.01)
                gauge.now -= 1
                return method(*args)

            return move

    return Strategy(f"slow-{inner.name}", inner.role, "", Slow)


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_debates_in_flight_are_bounded_and_do_not_change_results(concurrency: int) -> None:
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["approval-majority"], 6, True, 0)
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["point-random"]
    gauge = Gauge()
    result = run(spec, instance, slow(alice, gauge), slow(bob, gauge), trials=12, seed=5, concurrency=concurrency)
    assert gauge.most == min(concurrency, 12)  # one move of each debate in flight at a time
    reference = run(spec, instance, alice, bob, trials=12, seed=5)
    expected = reference.to_json() | {"alice": result.alice, "bob": result.bob}
    assert result.to_json() == expected
