"""Strategies for the Karchmer-Wigderson walk (Theorem 5): honest, and adversaries for each role.

Alice's adversaries play when f(x) = 1 (honest Bob must win), Bob's when f(x) = 0. Every
adversary is deterministic or returns a :class:`~debatekit.prob.Dist`, so exact analysis can
enumerate it.
"""

from __future__ import annotations

from typing import Any

from debatekit.ledger import Role
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.prob import Dist
from debatekit.protocols.kw import Honest


class _Pointer:
    def __init__(self, choose: Any):
        self.choose = choose

    def point(self, level: int, gate: int) -> Any:
        return self.choose(level, gate)


def always_left(seat: Seat) -> _Pointer:
    """Point to the left child at every gate."""
    return _Pointer(lambda level, gate: 0)


def always_right(seat: Seat) -> _Pointer:
    """Point to the right child at every gate."""
    return _Pointer(lambda level, gate: 1)


def random_child(seat: Seat) -> _Pointer:
    """Point to a uniformly random child (a mixed move: exact analysis enumerates it)."""
    return _Pointer(lambda level, gate: Dist.uniform([0, 1]))


def wrong_child(seat: Seat) -> _Pointer:
    """Point to a child with the value the honest player avoids (1 for Alice, 0 for Bob), if any."""
    honest = Honest(seat)
    avoid = 1 - honest.want

    def choose(level: int, gate: int) -> int:
        left, right = honest.children(level, gate)
        return 0 if left == avoid or right != avoid else 1

    return _Pointer(choose)


GARBAGE = (2, None, float("nan"), "1")


def malformed(seat: Seat) -> _Pointer:
    """Not a bit: 2, None, NaN or the string "1", by position on the path (no hidden coins)."""
    return _Pointer(lambda level, gate: GARBAGE[(level + gate) % len(GARBAGE)])


def _table(role: Role) -> dict[str, Strategy]:
    aim = "a 0-child at AND gates" if role is Role.ALICE else "a 1-child at OR gates"
    return by_name(
        Strategy("honest", role, f"point to {aim} (Theorem 5)", Honest),
        Strategy("left", role, "always the left child", always_left),
        Strategy("right", role, "always the right child", always_right),
        Strategy("random", role, "a uniformly random child (mixed)", random_child),
        Strategy("wrong-child", role, "a child of the opposite value, if any", wrong_child),
        Strategy("malformed", role, "2, None, NaN or the string '1'", malformed),
    )


STRATEGIES: dict[Role, dict[str, Strategy]] = {role: _table(role) for role in (Role.ALICE, Role.BOB)}
