"""User-defined strategies for the command line's ``--alice/--bob module:attr`` tests.

The tests put this folder on ``sys.path`` (or ``PYTHONPATH`` for a subprocess) and name the
strategies as ``user_strategies:Name``. A strategy is a factory taking a
:class:`~debatekit.players.base.Seat` and returning a player.
"""

from __future__ import annotations

import sys
from typing import Any

from debatekit.players.base import Seat
from debatekit.protocols.cross_exam import ACCEPT

CALLS: dict[str, int] = {"AcceptingBob": 0}
"""How often each counting strategy was asked for a move (read by the in-process tests)."""


class AcceptingBob:
    """A cross-examination Bob that accepts every transcript and counts how often it was asked."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def challenge(self, message: Any) -> None:
        CALLS["AcceptingBob"] += 1
        return ACCEPT


class CrashingBob:
    """A cross-examination Bob whose move raises: it forfeits every debate."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def challenge(self, message: Any) -> int:
        raise RuntimeError("user bob crashed")


class CrashingAlice:
    """A cross-examination Alice whose move raises: she forfeits every debate."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> list[int]:
        raise ZeroDivisionError("user alice crashed")


def crashing_factory(seat: Seat) -> Any:
    """A factory that fails while sitting down (before any move)."""
    raise ValueError("cannot sit down")


NOT_CALLABLE = 42


class ExitingAtSeat:
    """A strategy that calls ``sys.exit`` while sitting down: a usage mistake (exit status 2)."""

    def __init__(self, seat: Seat):
        sys.exit(3)


class InterruptingAtSeat:
    """A strategy that raises ``KeyboardInterrupt`` while sitting down: a usage mistake too."""

    def __init__(self, seat: Seat):
        raise KeyboardInterrupt


class ExitingMover:
    """A player of any protocol whose every move raises ``SystemExit``: it forfeits, the run goes on."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def __getattr__(self, name: str) -> Any:
        raise SystemExit(0)


class InterruptingMover(ExitingMover):
    """Likewise with ``KeyboardInterrupt``."""

    def __getattr__(self, name: str) -> Any:
        raise KeyboardInterrupt


class ExitingNumber:
    """A message whose every reading raises ``SystemExit``: as an int, an index, a bool, a string."""

    def __index__(self) -> int:
        raise SystemExit(4)

    __int__ = __index__
    __bool__ = __index__  # type: ignore[assignment]
    __len__ = __index__
    __float__ = __index__  # type: ignore[assignment]

    def __repr__(self) -> str:
        raise SystemExit(5)


class ExitingMessageBob:
    """A cross-examination Bob whose challenge is an :class:`ExitingNumber`: it loses when committed."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def challenge(self, message: Any) -> Any:
        return ExitingNumber()


class Unprintable(Exception):
    """An exception whose ``__str__`` and ``__repr__`` try to end the process with status 0."""

    def __str__(self) -> str:
        raise SystemExit(0)

    __repr__ = __str__


class UnprintableMover:
    """A player of any protocol whose every move raises :class:`Unprintable`: it forfeits, and the
    run goes on and says so."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def __getattr__(self, name: str) -> Any:
        def move(*args: Any) -> Any:
            raise Unprintable

        return move


HUGE = 10**400
"""An int past a float's range."""


class HugeClaimAlice:
    """A stochastic-debate Alice whose every claim is the bare int :data:`HUGE`."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def claims(self, view: Any) -> Any:
        return HUGE

    def shares(self, view: Any) -> Any:
        return 0.5


class HugeShareAlice(HugeClaimAlice):
    """A stochastic-debate Alice who claims the true probabilities and shares the bare int :data:`HUGE`."""

    def claims(self, view: Any) -> Any:
        return view.p

    def shares(self, view: Any) -> Any:
        return HUGE


# -- prover-estimator provers that try to show B and the verifier different proofs (issue 25) --
# Each plays the bad-proof line (the wrong claim, A^k = 0 until round 0, recursion to the subclaim
# B believes most, A^0 = -1 there) and answers the proof request with bits that depend on who
# asks. They take either interface, proof(j) -> bit or proof(leaves) -> bits, so the same cheater
# shows the hole on the code before the committed proof and its closing after.

REACHED: set[int] = set()
"""Proof positions of the leaves a playing copy reached (written by :class:`GlobalCheater`)."""
ASKED: set[int] = set()
"""Proof positions asked before (read and written by :class:`SecondCallCheater`)."""
SENT: list[Any] = []
"""The arrays :class:`MutatingCheater` sent, which she zeroes later."""


def _bits(seat: Seat, leaves: Any, lie: Any) -> Any:
    """The implicit proof at ``leaves`` (an int or a tuple), 0 wherever ``lie(j)`` holds."""
    D = seat.instance.recursive_decomposition()
    if isinstance(leaves, int):
        return 0 if lie(leaves) else D.proof(leaves)
    return [0 if lie(j) else D.proof(j) for j in leaves]


class _BadProofLine:
    def __init__(self, seat: Seat):
        from debatekit.players.prover_estimator import BadProof

        self.seat, self.line = seat, BadProof(seat)

    def claim(self) -> int:
        return self.line.claim()

    def answer(self, level: int, query: Any) -> int:
        return self.line.answer(level, query)

    def direction(self, s: Any) -> int:
        return self.line.direction(s)

    def queries(self, s: Any) -> Any:
        return self.line.queries(s)

    def recurse(self, s: Any, subqueries: Any, estimates: Any, z: Any) -> int:
        return self.line.recurse(s, subqueries, estimates, z)


class SeatCheater(_BadProofLine):
    """Honest proof bits when her seat has no opponent (B simulating her), 0 when it names one
    (the verifier's copy, seated like the playing one)."""

    def proof(self, leaves: Any) -> Any:
        return _bits(self.seat, leaves, lambda j: self.seat.opponent is not None)


class GlobalCheater(_BadProofLine):
    """The playing copy writes the leaf it reached into a module variable; a copy asked for proof
    bits answers 0 there and honestly elsewhere."""

    def direction(self, s: Any) -> int:
        if s.level == 0:
            REACHED.update(self.seat.instance.recursive_decomposition().leaf(s.query))
        return super().direction(s)

    def proof(self, leaves: Any) -> Any:
        return _bits(self.seat, leaves, lambda j: j in REACHED)


class SecondCallCheater(_BadProofLine):
    """Honest the first time a position is asked, 0 every time after (B's training asks first)."""

    def proof(self, leaves: Any) -> Any:
        def again(j: int) -> bool:
            seen = j in ASKED
            ASKED.add(j)
            return seen

        return _bits(self.seat, leaves, again)


class MutatingCheater(_BadProofLine):
    """Answers with honest bits in a numpy array it keeps, and zeroes every array it sent once
    the playing copy reaches round 0 (the committed copy must not see it)."""

    def direction(self, s: Any) -> int:
        if s.level == 0:
            for sent in SENT:
                sent[:] = 0
        return super().direction(s)

    def proof(self, leaves: Any) -> Any:
        import numpy as np

        bits = np.array(_bits(self.seat, leaves, lambda j: False), dtype=np.uint8)
        SENT.append(bits)
        return bits
