"""Slow players: many debates in flight at once, bounded by ``concurrency``, with results that do
not depend on how many were in flight (debate i depends only on the seed and i)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import pytest

from debatekit.analysis.montecarlo import make_instance, run
from debatekit.ledger import Role
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS


class Gauge:
    """Counts the moves in flight at once. Until ``target`` moves have been in flight together,
    a move waits for the others (at most ``patience`` seconds), so that reaching the bound does
    not depend on how fast the machine starts debates."""

    def __init__(self, target: int = 0, patience: float = 5.0) -> None:
        self.now = self.most = 0
        self.target, self.patience = target, patience

    async def gather(self) -> None:
        deadline = time.monotonic() + self.patience
        while self.most < self.target and time.monotonic() < deadline:
            await asyncio.sleep(0.001)


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
                await gauge.gather()
                await asyncio.sleep(0.01)
                gauge.now -= 1
                return method(*args)

            return move

    declared = {"honest": inner.honest, "truthful": inner.truthful, "shape": inner.shape}
    return Strategy(f"slow-{inner.name}", inner.role, "", Slow, **declared)


SLOW = [  # protocol, problem, size, Alice, Bob: one of each interpreter's protocols
    ("cross-exam", "approval-majority", 6, "honest", "point-random"),
    ("stochastic", "noisy-majority", 8, "honest", "honest"),
    ("naive-recursive", "evidence-majority", 1, "honest", "random"),
    ("prover-estimator", "obfuscated-primality", 10, "obfuscate", "omniscient"),
]


@pytest.mark.parametrize("concurrency", [1, 4, 16])
@pytest.mark.parametrize(("name", "problem", "size", "a", "b"), SLOW)
def test_debates_in_flight_are_bounded_and_do_not_change_results(concurrency, name, problem, size, a, b) -> None:
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, True, 0)
    alice, bob = spec.strategies[Role.ALICE][a], spec.strategies[Role.BOB][b]
    gauge = Gauge(target=min(concurrency, 12))
    result = run(spec, instance, slow(alice, gauge), slow(bob, gauge), trials=12, seed=5, concurrency=concurrency)
    assert gauge.most == min(concurrency, 12)  # one move of each debate in flight at a time
    reference = run(spec, instance, alice, bob, trials=12, seed=5)
    expected = reference.to_json() | {"alice": result.alice, "bob": result.bob}
    assert result.to_json() == expected


class Stuck:
    """Never answers in time: every move blocks well past the limit."""

    def __init__(self, seat: Any):
        pass

    def __getattr__(self, name: str) -> Any:
        def move(*args: Any) -> None:
            time.sleep(2)

        return move


BATCH = [
    ("stochastic", "noisy-majority", 8),
    ("naive-recursive", "evidence-majority", 1),
    ("prover-estimator", "evidence-majority", 1),
]


@pytest.mark.parametrize(("name", "problem", "size"), BATCH)
@pytest.mark.parametrize("role", [Role.ALICE, Role.BOB])
def test_a_player_that_never_answers_forfeits_on_the_batch_engines(name: str, problem: str, size: int, role: Role):
    """The batch engines too: a move past the time limit is its sender's forfeit, never a stall."""
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, role is Role.BOB, 0)
    honest = "omniscient" if name == "prover-estimator" and role is Role.ALICE else "honest"  # B who needs no A
    players = {role: Strategy("stuck", role, "", Stuck), role.opponent: spec.strategies[role.opponent][honest]}
    result = run(spec, instance, players[Role.ALICE], players[Role.BOB], trials=3, seed=0, timeout=0.1)
    assert result.forfeits[role.value] == 3 and result.honest_win_rate == 1.0
    assert "no move within 0.1 s" in result.forfeit_reasons[role.value]


def test_a_run_does_not_wait_for_a_move_abandoned_at_its_time_limit(tmp_path) -> None:
    """A player stuck for ten minutes forfeits at ``--move-timeout`` and the process ends: its call is
    abandoned, not joined when the run's event loop closes (as ``asyncio.to_thread``'s would be)."""
    (tmp_path / "stuck_player.py").write_text(
        "import time\n\nclass Stuck:\n    def __init__(self, seat):\n        pass\n\n"
        "    def transcript(self):\n        time.sleep(600)\n"
    )
    code = "import sys; from debatekit.cli.main import main; sys.exit(main(sys.argv[1:]))"
    argv = ["run", "cross-exam", "--problem", "approval-majority", "--alice", "stuck_player:Stuck", "--trials", "2",
            "--move-timeout", "0.5", "--json"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["forfeits"]["alice"] == 2
