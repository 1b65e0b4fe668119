"""Strategies for cross-examination debate (Figure 1): honest, and adversaries for each role.

Alice's adversaries play when x is not in L (honest Bob must win); Bob's when x is in L.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from debatekit.ledger import Role
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.prob import Dist
from debatekit.problems.registry import Feature
from debatekit.protocols import cross_exam as rules
from debatekit.protocols.cross_exam import ACCEPT, HonestAlice, HonestBob
from debatekit.protocols.spec import ProtocolSpec


def _honest_message(seat: Seat) -> np.ndarray:
    return HonestAlice(seat).transcript()


class _Fixed:
    """A player whose one message is computed when it sits down."""

    def __init__(self, message: Any):
        self.message = message

    def transcript(self) -> Any:
        return self.message


def lie_output(seat: Seat) -> _Fixed:
    """The true witness and transcript, with the output bit a_T flipped."""
    message = _honest_message(seat)
    message[-1] ^= 1
    return _Fixed(message)


def _consistent_lie(seat: Seat, witness: np.ndarray, lie_at: int | None) -> np.ndarray:
    """Run M on (x, witness), flipping step ``lie_at`` and following M's rules after it; if the
    output is still 0, flip the output too (a second lie, since one was not enough)."""
    instance, machine = seat.instance, seat.instance.machine
    assert machine is not None
    values = np.concatenate([instance.x, witness, np.zeros(machine.length, dtype=np.uint8)]).astype(np.uint8)
    start = machine.offset
    for t in range(machine.length):
        bits = tuple(int(values[a]) for a in machine.relevant(t))
        values[start + t] = machine.step(t, bits, seat.ask, seat.rng) ^ (t == lie_at)
    values[-1] = 1
    return values[machine.n_inputs :]


def lie_step(seat: Seat) -> _Fixed:
    """Lie at one random step and stay consistent with M afterwards (a cover-up)."""
    machine = seat.instance.machine
    assert machine is not None
    witness = _honest_message(seat)[: machine.n_witness]
    return _Fixed(_consistent_lie(seat, witness, int(seat.rng.integers(machine.length))))


def random_witness(seat: Seat) -> _Fixed:
    """A uniformly random witness, a transcript consistent with it, and a_T = 1."""
    machine = seat.instance.machine
    assert machine is not None
    witness = seat.rng.integers(0, 2, machine.n_witness).astype(np.uint8)
    return _Fixed(_consistent_lie(seat, witness, None))


def random_transcript(seat: Seat) -> _Fixed:
    """Uniformly random bits for w ‖ a, with a_T = 1."""
    machine = seat.instance.machine
    assert machine is not None
    message = seat.rng.integers(0, 2, machine.n_witness + machine.length).astype(np.uint8)
    message[-1] = 1
    return _Fixed(message)


def malformed_transcript(seat: Seat) -> _Fixed:
    """Garbage: wrong length, a 2, a NaN, a string, None, or a non-sequence (one at random)."""
    message = _honest_message(seat).tolist()
    message[-1] = 1
    i = int(seat.rng.integers(len(message)))
    kind = int(seat.rng.integers(6))
    if kind == 0:
        garbage: Any = message[:-1]
    elif kind == 1:
        garbage = [*message[:i], 2, *message[i + 1 :]]
    elif kind == 2:
        garbage = [*message[:i], float("nan"), *message[i + 1 :]]
    elif kind == 3:
        garbage = "".join(map(str, message))
    elif kind == 4:
        garbage = [*message[:i], None, *message[i + 1 :]]
    else:
        garbage = 12345
    return _Fixed(garbage)


class _Challenger:
    def __init__(self, choose: Any):
        self.choose = choose

    def challenge(self, message: Any) -> Any:
        return self.choose(message)


def always_accept(seat: Seat) -> _Challenger:
    """Accept every transcript."""
    return _Challenger(lambda message: ACCEPT)


def point_output(seat: Seat) -> _Challenger:
    """Name the output step T."""
    steps = seat.instance.machine.length  # type: ignore[union-attr]
    return _Challenger(lambda message: steps - 1)


def point_random(seat: Seat) -> _Challenger:
    """Name a uniformly random step (a mixed move: exact analysis enumerates it)."""
    steps = seat.instance.machine.length  # type: ignore[union-attr]
    return _Challenger(lambda message: Dist.uniform(range(steps)))


def malformed_challenge(seat: Seat) -> _Challenger:
    """Garbage: an index out of range, negative, NaN, a float, a string or a list."""
    steps = seat.instance.machine.length  # type: ignore[union-attr]
    choices = [steps, -1, float("nan"), 0.5, "0", [0], steps + 10**9]
    return _Challenger(lambda message: choices[int(seat.rng.integers(len(choices)))])


STRATEGIES: dict[Role, dict[str, Strategy]] = {
    Role.ALICE: by_name(
        Strategy("honest", Role.ALICE, "run M(x, w) once and send w and the true transcript", HonestAlice, honest=True),
        Strategy("lie-output", Role.ALICE, "the true transcript with the output bit flipped", lie_output),
        Strategy("lie-step", Role.ALICE, "lie at one random step, consistent with M afterwards", lie_step),
        Strategy("random-witness", Role.ALICE, "a random witness, a consistent transcript, output 1", random_witness),
        Strategy("random", Role.ALICE, "uniformly random transcript bits with output 1", random_transcript),
        Strategy("malformed", Role.ALICE, "wrong length, non-bits, NaN, None or not a sequence", malformed_transcript),
    ),
    Role.BOB: by_name(
        Strategy(
            "honest",
            Role.BOB,
            "name the first step inconsistent with Alice's own bits, else accept",
            HonestBob,
            honest=True,
        ),
        Strategy("accept", Role.BOB, "accept every transcript", always_accept),
        Strategy("point-output", Role.BOB, "name the output step", point_output),
        Strategy("point-random", Role.BOB, "name a uniformly random step (mixed)", point_random),
        Strategy(
            "malformed", Role.BOB, "an index out of range, negative, NaN, a float or a string", malformed_challenge
        ),
    ),
}


SPEC = ProtocolSpec(
    "cross-exam",
    "Theorem 5.3 (Figure 1); with a witness Theorem 7.1 (Figure 3)",
    "Alice writes the transcript, Bob names one step, V checks it",
    rules.debate,
    rules.guarantee,
    lambda instance: rules.machine_of(instance).length,
    STRATEGIES,
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC}),
    players=rules.PLAYERS,
    llm="debatekit.llm.players.cross_exam:PLAYERS",
    isolated=True,
    deterministic_oracle=True,
)
"""Cross-examination as the registry knows it: the rules of :mod:`debatekit.protocols.cross_exam` with this
module's strategies."""
