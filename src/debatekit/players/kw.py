"""Strategies for the Karchmer-Wigderson walk (Theorem 5): honest, and adversaries for each role.

Alice's adversaries play when f(x) = 1 (honest Bob must win), Bob's when f(x) = 0. When the walk
follows the rounds of an original debate (Theorem 9's route), the adversaries play those rounds
optimally, as in circuit cross-examination, except ``random``, whose round bits are uniform; they
cheat in the walk. Every adversary is deterministic or returns a
:class:`~debatekit.prob.Dist`, so exact analysis can enumerate it.
"""

from __future__ import annotations

from typing import Any

from debatekit.ledger import Role
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.prob import Dist
from debatekit.problems.registry import Feature
from debatekit.protocols import kw as rules
from debatekit.protocols.circuit_cross_exam import OptimalRounds
from debatekit.protocols.kw import Honest
from debatekit.protocols.spec import ProtocolSpec


class _Pointer(OptimalRounds):
    """Optimal round bits, then the child ``choose(transcript, level, gate)`` at each gate."""

    def __init__(self, seat: Seat, choose: Any):
        super().__init__(seat)
        self.choose = choose

    def point(self, transcript: tuple[int, ...], level: int, gate: int) -> Any:
        return self.choose(transcript, level, gate)


def always_left(seat: Seat) -> _Pointer:
    """Point to the left child at every gate."""
    return _Pointer(seat, lambda transcript, level, gate: 0)


def always_right(seat: Seat) -> _Pointer:
    """Point to the right child at every gate."""
    return _Pointer(seat, lambda transcript, level, gate: 1)


class _Random:
    """Uniform round bits and a uniformly random child at every gate (mixed moves: exact analysis
    enumerates them)."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def move(self, history: tuple[int, ...]) -> Dist:
        return Dist.uniform([0, 1])

    def point(self, transcript: tuple[int, ...], level: int, gate: int) -> Dist:
        return Dist.uniform([0, 1])


def wrong_child(seat: Seat) -> _Pointer:
    """Point to a child with the value the honest player avoids (1 for Alice, 0 for Bob), if any."""
    honest = Honest(seat)
    avoid = 1 - honest.want

    def choose(transcript: tuple[int, ...], level: int, gate: int) -> int:
        left, right = honest.children(transcript, level, gate)
        return 0 if left == avoid or right != avoid else 1

    return _Pointer(seat, choose)


GARBAGE = (2, None, float("nan"), "1")


def malformed(seat: Seat) -> _Pointer:
    """Not a bit: 2, None, NaN or the string "1", by position on the path (no hidden coins)."""
    return _Pointer(seat, lambda transcript, level, gate: GARBAGE[(level + gate) % len(GARBAGE)])


def _table(role: Role) -> dict[str, Strategy]:
    aim = "a 0-child at AND gates" if role is Role.ALICE else "a 1-child at OR gates"
    return by_name(
        Strategy("honest", role, f"play any rounds optimally, then point to {aim} (Theorem 5)", Honest, honest=True),
        Strategy("left", role, "always the left child", always_left),
        Strategy("right", role, "always the right child", always_right),
        Strategy("random", role, "uniform round bits, a uniformly random child (mixed)", _Random),
        Strategy("wrong-child", role, "a child of the opposite value, if any", wrong_child),
        Strategy("malformed", role, "2, None, NaN or the string '1'", malformed),
    )


STRATEGIES: dict[Role, dict[str, Strategy]] = {role: _table(role) for role in (Role.ALICE, Role.BOB)}


SPEC = ProtocolSpec(
    "kw",
    "Theorem 5 of the debate query complexity paper (Karchmer-Wigderson)",
    "the provers play any rounds, then walk a levelled AND/OR circuit down to one input or transcript bit, "
    "one bit per gate; V reads the path",
    rules.debate,
    rules.guarantee,
    lambda instance: rules.levelled_of(instance).size,
    STRATEGIES,
    frozenset({Feature.LEVELLED}),
    players=rules.PLAYERS,
    isolated=True,
    describe=rules.description,
    alice_argues=0,
)
"""The KW walk as the registry knows it: the rules of :mod:`debatekit.protocols.kw` with this
module's strategies."""
