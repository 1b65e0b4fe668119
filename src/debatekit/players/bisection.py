"""Strategies for bisection debate (Figure 4): honest, and adversaries for each role."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from debatekit.ledger import Role
from debatekit.machine.turing import Config
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.prob import Dist
from debatekit.problems.registry import Feature
from debatekit.protocols import bisection as rules
from debatekit.protocols.bisection import HonestAlice, HonestBob, machine_of
from debatekit.protocols.spec import ProtocolSpec


class LieFinal(HonestAlice):
    """Claim the true final configuration in the accept state; true middles otherwise."""

    def final(self) -> Config:
        return replace(self.trajectory.final, state=machine_of(self.seat.instance).accept)


class LieStep(HonestAlice):
    """Corrupt one random step (flip the symbol under the head), follow M from there, and claim
    acceptance: every middle is on this consistent-looking false run."""

    def __init__(self, seat: Seat):
        super().__init__(seat)
        tm = machine_of(seat.instance)
        self.at = int(seat.rng.integers(tm.time))
        corrupt = self.trajectory.config_at(self.at)
        tape = list(corrupt.tape)
        tape[corrupt.head] = (tape[corrupt.head] % (tm.symbols - 1)) + 1
        self.tail = tm.run_from(Config(corrupt.state, corrupt.head, tuple(tape)), tm.time - self.at, seat.ask)

    def _at(self, t: int) -> Config:
        return self.trajectory.config_at(t) if t < self.at else self.tail.config_at(t - self.at)

    def final(self) -> Config:
        return replace(self._at(machine_of(self.seat.instance).time), state=machine_of(self.seat.instance).accept)

    def middle(self, start: Config, end: Config, begin: int, steps: int) -> Config:
        return self._at(begin + steps // 2)


class RandomConfigs:
    """Uniformly random valid configurations (an accepting one at the end)."""

    def __init__(self, seat: Seat):
        self.seat, self.tm = seat, machine_of(seat.instance)

    def _random(self, state: int | None = None) -> Config:
        rng, tm = self.seat.rng, self.tm
        tape = tuple(int(s) for s in rng.integers(0, tm.symbols, tm.space))
        return Config(int(rng.integers(len(tm.states))) if state is None else state, int(rng.integers(tm.space)), tape)

    def final(self) -> Config:
        return self._random(self.tm.accept)

    def middle(self, start: Config, end: Config, begin: int, steps: int) -> Config:
        return self._random()


class MalformedConfigs(RandomConfigs):
    """Garbage configurations: short tape, state or head out of range, bad symbols, None, text."""

    def middle(self, start: Config, end: Config, begin: int, steps: int) -> Any:
        tm, c = self.tm, self._random()
        choices: list[Any] = [
            Config(c.state, c.head, c.tape[:-1]),
            Config(len(tm.states), c.head, c.tape),
            Config(c.state, -1, c.tape),
            Config(c.state, c.head, (tm.symbols + 7, *c.tape[1:])),
            (c.state, float("nan"), c.tape),
            None,
            "the middle configuration",
        ]
        return choices[int(self.seat.rng.integers(len(choices)))]


class _Halves:
    def __init__(self, choose: Any):
        self.choose = choose

    def half(self, start: Config, middle: Any, end: Config, begin: int, steps: int) -> Any:
        return self.choose()


def first_half(seat: Seat) -> _Halves:
    """Always dispute the first half."""
    return _Halves(lambda: 0)


def second_half(seat: Seat) -> _Halves:
    """Always dispute the second half."""
    return _Halves(lambda: 1)


def random_half(seat: Seat) -> _Halves:
    """Dispute a uniformly random half (mixed)."""
    return _Halves(lambda: Dist.uniform([0, 1]))


def malformed_half(seat: Seat) -> _Halves:
    """Garbage bits: 2, -1, None, NaN, "0"."""
    choices: list[Any] = [2, -1, None, float("nan"), "0"]
    return _Halves(lambda: choices[int(seat.rng.integers(len(choices)))])


STRATEGIES: dict[Role, dict[str, Strategy]] = {
    Role.ALICE: by_name(
        Strategy("honest", Role.ALICE, "run M once and send the true configurations", HonestAlice, honest=True),
        Strategy("lie-final", Role.ALICE, "claim an accepting final configuration, true middles", LieFinal),
        Strategy("lie-step", Role.ALICE, "corrupt one step, follow M from there, claim acceptance", LieStep),
        Strategy("random", Role.ALICE, "uniformly random valid configurations", RandomConfigs),
        Strategy("malformed", Role.ALICE, "short tapes, out-of-range states or heads, None, text", MalformedConfigs),
    ),
    Role.BOB: by_name(
        Strategy(
            "honest", Role.BOB, "simulate the first half and dispute the half that is false", HonestBob, honest=True
        ),
        Strategy("first", Role.BOB, "always dispute the first half", first_half),
        Strategy("second", Role.BOB, "always dispute the second half", second_half),
        Strategy("random", Role.BOB, "dispute a uniformly random half (mixed)", random_half),
        Strategy("malformed", Role.BOB, "send 2, -1, None, NaN or a string instead of a bit", malformed_half),
    ),
}


SPEC = ProtocolSpec(
    "bisection",
    "Theorem 5.1 (Figure 4)",
    "Alice bisects the run of a Turing machine, Bob picks the false half, V checks one step",
    rules.debate,
    rules.guarantee,
    lambda instance: rules.machine_of(instance).time,
    STRATEGIES,
    frozenset({Feature.TURING}),
    players=rules.PLAYERS,
    isolated=True,
    deterministic_oracle=True,
)
"""Bisection as the registry knows it: the rules of :mod:`debatekit.protocols.bisection` with this
module's strategies."""
