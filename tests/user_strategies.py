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
