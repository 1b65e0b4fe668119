"""Strategies for circuit cross-examination (Theorem 6, Lemma 8): honest, and adversaries for
each role. Alice is Prover 0 and argues f(x) = 0, so her adversaries play when f(x) = 1 (honest
Bob must win); Bob's play when f(x) = 0. In the rounds of the original debate (Lemma 8) the
adversaries play its optimal moves, except ``random``, whose bits are uniform; they cheat in the
cross-examination."""

from __future__ import annotations

from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.prob import Dist
from debatekit.problems.registry import Feature
from debatekit.protocols import circuit_cross_exam as rules
from debatekit.protocols.circuit_cross_exam import (
    ACCEPT,
    HonestAlice,
    HonestBob,
    OptimalRounds,
    circuit_of,
    true_gates,
)
from debatekit.protocols.spec import ProtocolSpec


def covered_lie(seat: Seat, transcript: tuple[int, ...], gate: int) -> np.ndarray:
    """C's gate values with gate ``gate`` flipped and every gate above it recomputed from the
    flipped value (a cover-up: only ``gate`` is locally wrong); if the output is still 1, it is
    set to 0 too (a second lie, since one was not enough). The recomputation sweeps every gate
    that disagrees with its inputs, at most depth times."""
    circuit = circuit_of(seat.instance)
    inputs = np.concatenate([seat.instance.x, np.asarray(transcript, dtype=np.uint8)]).astype(np.uint8)
    values = true_gates(seat, transcript).copy()
    values[gate] ^= 1
    while True:
        wrong = circuit.local_errors(inputs, values)
        wrong[gate] = False
        if not wrong.any():
            break
        values[wrong] ^= 1
    values[-1] = 0
    return values


class _Liar(OptimalRounds):
    """Optimal transcript bits, then gate values made by ``lie(seat, transcript)``."""

    def __init__(self, seat: Seat, lie: Any):
        super().__init__(seat)
        self.lie = lie

    def gates(self, transcript: tuple[int, ...]) -> Any:
        return self.lie(self.seat, transcript)


def lie_gate(seat: Seat) -> _Liar:
    """A wrong value at one random gate with a consistent cover-up above it (output 0)."""
    size = circuit_of(seat.instance).length
    return _Liar(seat, lambda s, t: covered_lie(s, t, int(s.rng.integers(size))))


def lie_output(seat: Seat) -> _Liar:
    """The true gate values with the output gate flipped."""
    return _Liar(seat, lambda s, t: covered_lie(s, t, circuit_of(s.instance).length - 1))


def all_zero(seat: Seat) -> _Liar:
    """Every gate claimed 0."""
    return _Liar(seat, lambda s, t: np.zeros(circuit_of(s.instance).length, dtype=np.uint8))


class _RandomAlice:
    """Uniform transcript bits and uniform gate values with output 0."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def move(self, history: tuple[int, ...]) -> int:
        return int(self.seat.rng.integers(2))

    def gates(self, transcript: tuple[int, ...]) -> np.ndarray:
        values = self.seat.rng.integers(0, 2, circuit_of(self.seat.instance).length).astype(np.uint8)
        values[-1] = 0
        return values


def malformed_gates(seat: Seat) -> _Liar:
    """Garbage gate values: wrong length, a 2, a NaN, a string, None or a non-sequence."""

    def garbage(s: Seat, transcript: tuple[int, ...]) -> Any:
        message = true_gates(s, transcript).tolist()
        message[-1] = 0
        i, kind = int(s.rng.integers(len(message))), int(s.rng.integers(6))
        if kind == 0:
            return message[:-1]
        if kind == 5:
            return 12345
        if kind == 3:
            return "".join(map(str, message))
        return [*message[:i], (2, float("nan"), None, None, None)[kind - 1], *message[i + 1 :]]

    return _Liar(seat, garbage)


class _Pointer(OptimalRounds):
    """Optimal transcript bits, then the pointer ``choose(seat, transcript, gates)``."""

    def __init__(self, seat: Seat, choose: Any):
        super().__init__(seat)
        self.choose = choose

    def point(self, transcript: tuple[int, ...], gates: Any) -> Any:
        return self.choose(self.seat, transcript, gates)


def always_accept(seat: Seat) -> _Pointer:
    """Point nowhere (ACCEPT)."""
    return _Pointer(seat, lambda s, t, g: ACCEPT)


def point_output(seat: Seat) -> _Pointer:
    """Name the output gate."""
    return _Pointer(seat, lambda s, t, g: circuit_of(s.instance).length - 1)


def point_random(seat: Seat) -> _Pointer:
    """Name a uniformly random gate (a mixed move: exact analysis enumerates it)."""
    return _Pointer(seat, lambda s, t, g: Dist.uniform(range(circuit_of(s.instance).length)))


def malformed_pointer(seat: Seat) -> _Pointer:
    """Garbage: an index out of range, negative, NaN, a float, a string or a list."""
    size = circuit_of(seat.instance).length
    choices = [size, -1, float("nan"), 0.5, "0", [0], size + 10**9]
    return _Pointer(seat, lambda s, t, g: choices[int(s.rng.integers(len(choices)))])


class _RandomBob:
    """Uniform transcript bits and a uniform pointer among ACCEPT and the gates."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def move(self, history: tuple[int, ...]) -> int:
        return int(self.seat.rng.integers(2))

    def point(self, transcript: tuple[int, ...], gates: Any) -> Any:
        size = circuit_of(self.seat.instance).length
        return Dist.uniform([ACCEPT, *range(size)])


STRATEGIES: dict[Role, dict[str, Strategy]] = {
    Role.ALICE: by_name(
        Strategy(
            "honest",
            Role.ALICE,
            "play the rounds optimally, then write every true gate value",
            HonestAlice,
            honest=True,
        ),
        Strategy("lie-gate", Role.ALICE, "one wrong gate with a consistent cover-up above it, output 0", lie_gate),
        Strategy("lie-output", Role.ALICE, "the true gate values with the output flipped", lie_output),
        Strategy("all-zero", Role.ALICE, "every gate claimed 0", all_zero),
        Strategy("random", Role.ALICE, "uniform transcript bits and gate values, output 0", _RandomAlice),
        Strategy("malformed", Role.ALICE, "wrong length, non-bits, NaN, None or not a sequence", malformed_gates),
    ),
    Role.BOB: by_name(
        Strategy(
            "honest",
            Role.BOB,
            "play the rounds optimally, then name the first wrong gate, else the output if 1",
            HonestBob,
            honest=True,
        ),
        Strategy("accept", Role.BOB, "point nowhere", always_accept),
        Strategy("point-output", Role.BOB, "name the output gate", point_output),
        Strategy("point-random", Role.BOB, "name a uniformly random gate (mixed)", point_random),
        Strategy("random", Role.BOB, "uniform transcript bits and a uniform pointer (mixed)", _RandomBob),
        Strategy("malformed", Role.BOB, "an index out of range, negative, NaN, a float or a string", malformed_pointer),
    ),
}


SPEC = ProtocolSpec(
    "circuit-cross-exam",
    "Theorem 6 and Lemma 8 of the debate query complexity paper",
    "Prover 0 writes every gate value, Prover 1 names a wrong gate or the output, V checks one gate",
    rules.debate,
    rules.guarantee,
    lambda instance: rules.circuit_of(instance).length,
    STRATEGIES,
    frozenset({Feature.CIRCUIT}),
    players=rules.PLAYERS,
    isolated=True,
    describe=rules.description,
    alice_argues=0,
)
"""Circuit cross-examination as the registry knows it: the rules of
:mod:`debatekit.protocols.circuit_cross_exam` with this module's strategies."""
