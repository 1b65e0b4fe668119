"""What a strategy receives for one debate, and how strategies are named and found."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from debatekit.ledger import Role
from debatekit.oracle import Asker

if TYPE_CHECKING:
    from debatekit.problems.registry import Instance


@dataclass(frozen=True)
class Seat:
    """One player's place at one debate: the instance, its role, its randomness and its oracle
    access (every query it makes is counted for its role)."""

    instance: Instance
    role: Role
    rng: np.random.Generator
    ask: Asker | None
    """Counted oracle access (None where the protocol samples for the player, as stochastic
    debate's ``StepView.estimate`` does)."""
    rules: Any = None
    """Protocol settings the player may need (stochastic debate: its :class:`Rules`)."""
    opponent: Strategy | None = None
    """The other side's committed strategy, for a player that best-responds to it (the estimator
    of Lemma A.4 is built against a fixed A, as in a Stackelberg game)."""


Factory = Callable[[Seat], Any]


class Shape(Enum):
    """How a player reads and sends stochastic debate's per-step values (Figure 2's claims, coin
    shares and aborts; the other protocols pass messages, not arrays)."""

    ARRAYS = "arrays"
    """Arrays, one entry per live debate, many debates a call (a debate played alone: arrays of one)."""
    NUMBERS = "numbers"
    """Plain numbers, one debate at a time (an LLM's or a person's shape)."""
    EITHER = "either"
    """Written for numbers and arrays alike: many debates a call, numbers for a debate played
    alone (the honest built-ins)."""

    @property
    def batched(self) -> bool:
        """Can be handed many debates a call (a batch holding a player that cannot is played one
        debate after another)."""
        return self is not Shape.NUMBERS

    @property
    def numbers(self) -> bool:
        """Is shown plain numbers when one debate is played alone."""
        return self is not Shape.ARRAYS


@dataclass(frozen=True)
class Strategy:
    """A named way to play one role: ``factory(seat)`` returns the player for one debate."""

    name: str
    role: Role
    description: str
    factory: Factory
    refuses: Callable[[Instance], str | None] | None = None
    """Why the strategy cannot play an instance, or None when it can (checked before a run)."""
    trusted: bool = False
    """A built-in programmed strategy: its moves run inline, without a time limit. Every other
    player (a user's, an LLM, a person) moves in a worker thread or coroutine under the limit."""
    isolated: bool = False
    """Moves in worker processes (:class:`~debatekit.engine.isolation.Pool`), which enforce its time
    and memory limits themselves: the batch engines may give it many debates a call, as a built-in."""
    honest: bool = False
    """The theorem's honest player for its role: its completeness promise covers this strategy
    (declared, never inferred from the name; analysis reads it)."""
    truthful: bool = False
    """Knows the truth of the opponent's proof: the truthful estimator of Lemma A.4, δ = 0 (or
    naive recursion's challenger that always finds the false subclaim)."""
    shape: Shape = Shape.ARRAYS
    """How it plays stochastic debate's steps (:class:`Shape`)."""


def own_copies(instance: Instance, strategies: dict[Role, Strategy]) -> dict[Role, Instance]:
    """The instance each seat is given: the verifier's own for a trusted built-in and for a player in
    worker processes (``isolated``: its worker is sent a copy, once per instance, and the engine's
    side of it never hands the seat's instance to the player), a deep copy for anyone else, so that
    nothing a player can reach changes what the verifier or the other player reads (the engine's
    seats are copies for everyone: :func:`debatekit.engine.play.seat_copies`)."""
    return {role: instance if s.trusted or s.isolated else copy.deepcopy(instance) for role, s in strategies.items()}


class Side(StrEnum):
    """The side a model-driven player is assigned (``--alice llm-liar:PROVIDER/MODEL``): ``honest``
    argues what its model believes, ``liar`` the opposite, hiding the lie where its model finds
    it least likely to be caught."""

    HONEST = "honest"
    LIAR = "liar"


class StrategyError(ValueError):
    """A strategy name that is neither built in nor an importable ``module:attr``."""


def by_name(*strategies: Strategy) -> dict[str, Strategy]:
    """A role's table of built-in strategies, keyed by name (trusted: they run inline)."""
    return {s.name: replace(s, trusted=True) for s in strategies}


def resolve(spec: str, role: Role, builtins: dict[str, Strategy]) -> Strategy:
    """A built-in strategy by name, or the user's own as ``module:attr`` (a factory or class)."""
    if spec in builtins:
        return builtins[spec]
    if ":" not in spec:
        known = ", ".join(builtins)
        raise StrategyError(f"unknown {role.value} strategy {spec!r}; built in: {known}; or give module:attr")
    target = load(spec, role)
    doc = (getattr(target, "__doc__", None) or "user strategy").strip().splitlines()[0]
    return Strategy(spec, role, doc, target)


def load(spec: str, role: Role) -> Factory:
    """The factory ``module:attr`` names, imported in this process (inline here, or in an isolated
    player's worker: :mod:`debatekit.engine.worker`)."""
    module_name, _, attr = spec.partition(":")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except Exception as err:
        raise StrategyError(f"cannot import {role.value} strategy {spec!r}: {type(err).__name__}: {err}") from err
    if not callable(target):
        raise StrategyError(f"{spec!r} is not callable; a strategy is a factory taking a Seat")
    return target
