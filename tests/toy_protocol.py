"""A toy protocol in one module, for tests/test_toy_protocol.py: what a new protocol is (its rules
as nodes, its honest players and adversaries, its guarantee and its spec), registered with one line.

Alice claims M(x) and names a witness w; Bob accepts or disputes; on a dispute the verifier runs
M on (x, w) itself, asking its oracle at each oracle step, and outputs M(x, w), else Alice's
claim. With a deterministic oracle, honest Alice (the true answer, the problem's witness) always
wins on a yes-instance and honest Bob (who disputes a claim that M on (x, w) contradicts) always
wins on a no-instance: completeness 1, soundness 0. The verifier reads Bob's bit and then Alice's
claim or her witness.
"""

from __future__ import annotations

import itertools
from typing import Protocol, runtime_checkable

import numpy as np

from debatekit.engine.boundary import bit_word, commit_bits
from debatekit.engine.nodes import Check, Judge, Move, Node, Query
from debatekit.ledger import Role
from debatekit.machine.transcript import StepKind, TranscriptMachine
from debatekit.players.base import Seat, Strategy, by_name
from debatekit.problems.registry import Feature, Instance
from debatekit.protocols.cross_exam import machine_of
from debatekit.protocols.spec import Guarantee, ProtocolSpec
from debatekit.reader import Reader


@runtime_checkable
class Alice(Protocol):
    def claim(self) -> np.ndarray:
        """c ‖ w: the claimed answer, then the witness bits."""


@runtime_checkable
class Bob(Protocol):
    def respond(self, message: np.ndarray) -> int:
        """1 to dispute Alice's message, 0 to accept it."""


def debate(instance: Instance, reader: Reader) -> Node:
    machine = machine_of(instance)
    size = 1 + machine.n_witness

    def responded(message: np.ndarray) -> Node:
        return Move(
            Role.BOB,
            ask=lambda bob: bob.respond(message),
            commit=lambda sent: bit_word(sent, "response"),
            then=lambda dispute: Judge(lambda: verify(instance, message, dispute, reader)),
            options=lambda: [0, 1, None],  # None stands for any malformed word
        )

    return Move(
        Role.ALICE,
        ask=lambda alice: alice.claim(),
        commit=lambda sent: commit_bits(sent, size, Role.ALICE),
        then=responded,
        options=lambda: itertools.chain(itertools.product((0, 1), repeat=size), [()]),
    )


def verify(instance: Instance, message: np.ndarray, dispute: int, reader: Reader) -> Check:
    """Alice's claim if Bob accepts; else M(x, w), one oracle query per oracle step."""
    machine = instance.machine
    assert machine is not None
    if reader.word(dispute, 1, Role.BOB) == 0:
        return reader.bit(message, 0, Role.ALICE)
    values = [reader.input_bit(instance.x, i) for i in range(machine.n_inputs)]
    values += [reader.bit(message, 1 + i, Role.ALICE) for i in range(machine.n_witness)]
    for t in range(machine.length):
        rule = machine.rule(t, tuple(values[a] for a in machine.relevant(t)))
        values.append(int(rule) if machine.kind(t) is StepKind.COMPUTE else (yield Query(rule)))  # type: ignore[arg-type]
    return values[-1]


def oracle_steps(machine: TranscriptMachine) -> int:
    return sum(machine.kind(t) is StepKind.ORACLE for t in range(machine.length))


def guarantee(instance: Instance) -> Guarantee:
    machine = machine_of(instance)
    return Guarantee(1.0, 0.0, oracle_steps(machine), 1 + max(1, machine.n_witness), "toy: c=1, s=0")


def _witness(seat: Seat) -> np.ndarray:
    found = seat.instance.witness
    return np.zeros(0, dtype=np.uint8) if found is None else found


def _output(seat: Seat, witness: np.ndarray) -> int:
    machine = seat.instance.machine
    assert machine is not None
    inputs = np.concatenate([seat.instance.x, witness]).astype(np.uint8)
    return int(machine.run(inputs, seat.ask, seat.rng)[-1])


class HonestAlice:
    def __init__(self, seat: Seat):
        self.seat = seat

    def claim(self) -> np.ndarray:
        witness = _witness(self.seat)
        return np.concatenate([[_output(self.seat, witness)], witness]).astype(np.uint8)


class Liar(HonestAlice):
    def claim(self) -> np.ndarray:
        message = super().claim()
        message[0] ^= 1
        return message


class HonestBob:
    def __init__(self, seat: Seat):
        self.seat = seat

    def respond(self, message: np.ndarray) -> int:
        return int(int(message[0]) != _output(self.seat, np.asarray(message[1:], dtype=np.uint8)))


class Always:
    def __init__(self, seat: Seat, dispute: int = 1):
        self.dispute = dispute

    def respond(self, message: np.ndarray) -> int:
        return self.dispute


STRATEGIES = {
    Role.ALICE: by_name(
        Strategy("honest", Role.ALICE, "the true answer and witness", HonestAlice, honest=True),
        Strategy("liar", Role.ALICE, "the wrong answer, the problem's witness", Liar),
    ),
    Role.BOB: by_name(
        Strategy("honest", Role.BOB, "disputes a claim M(x, w) contradicts", HonestBob, honest=True),
        Strategy("dispute", Role.BOB, "always disputes", Always),
        Strategy("accept", Role.BOB, "never disputes", lambda seat: Always(seat, 0)),
    ),
}

SPEC = ProtocolSpec(
    "toy",
    "a test's toy protocol",
    "Alice claims M(x) and a witness, Bob accepts or disputes, V runs M on a dispute",
    debate,
    guarantee,
    lambda instance: machine_of(instance).length,
    STRATEGIES,
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC}),
    players={Role.ALICE: Alice, Role.BOB: Bob},
    deterministic_oracle=True,
)
