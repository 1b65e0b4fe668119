"""The Karchmer-Wigderson walk: Theorem 5 of debate query complexity, DQC(f) ≤ depth(C) + 1.

On a levelled alternating circuit (:class:`~debatekit.machine.levelled.LevelledCircuit`, top gate
AND) the provers walk from the output gate down. At an AND gate Prover 0 (Alice, who argues
f(x) = 0) sends one bit: the child she claims is 0. At an OR gate Prover 1 (Bob, who argues
f(x) = 1) sends one bit: the child he claims is 1. At the literal level the verifier reads the
one bit of x the literal names and outputs the literal's value.

The verifier reads every prover bit on the path (``depth`` bits) and one bit of x, each counted
as a query of the model of Section 2 (:meth:`~debatekit.reader.Reader.query_input`): exactly
depth + 1 bits. A bit that is not 0 or 1 loses for its sender.
"""

from __future__ import annotations

from typing import Any, Protocol

from debatekit.game import Judge, Move, Node
from debatekit.ledger import Malformed, Role
from debatekit.machine.levelled import LevelledCircuit
from debatekit.players.base import Seat
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.reader import Reader, as_bit

MALFORMED = 2
"""In ``Move.options``: stands for any message that is not a bit."""


class Walker(Protocol):
    def point(self, level: int, gate: int) -> int | Dist | Any:
        """At gate ``gate`` of gate level ``level`` (0 reads the literals): 0 for its left child,
        1 for its right child."""


def levelled_of(instance: Instance) -> LevelledCircuit:
    circuit = instance.levelled_circuit()
    if circuit is None:
        raise ValueError(f"problem {instance.problem} has no levelled circuit for the KW walk")
    return circuit


def debate(instance: Instance, reader: Reader) -> Node:
    """The game tree of Theorem 5's walk, one Move per gate on the path."""
    circuit = levelled_of(instance)

    def at(level: int, gate: int) -> Node:
        role = Role.ALICE if circuit.is_and(level) else Role.BOB

        def then(message: Any) -> Node:
            bit = as_bit(reader.word(message, 1))
            if bit is None:
                raise Malformed(role, f"{message!r} at level {level} gate {gate} is not a child bit 0 or 1")
            child = int((circuit.right if bit else circuit.left)[level][gate])
            if level == 0:
                return Judge(lambda: literal(instance, circuit, child, reader))
            return at(level - 1, child)

        return Move(
            role,
            ask=lambda player: player.point(level, gate),
            then=then,
            options=lambda: (0, 1, MALFORMED),
            key=("kw", level, gate),
        )

    return at(circuit.depth - 1, 0)


def literal(instance: Instance, circuit: LevelledCircuit, index: int, reader: Reader) -> int:
    """The walk's end: read the one bit of x that literal ``index`` names; output its value."""
    return reader.query_input(instance.x, int(circuit.literal_var[index])) ^ int(circuit.literal_neg[index])


class Honest:
    """Theorem 5's honest provers: Alice at an AND gate points to a child of value 0, Bob at an
    OR gate to a child of value 1 (the left child when there is none, a lost cause)."""

    def __init__(self, seat: Seat):
        self.want = 0 if seat.role is Role.ALICE else 1
        self.values = levelled_of(seat.instance).node_values(seat.instance.x)
        self.circuit = levelled_of(seat.instance)

    def children(self, level: int, gate: int) -> tuple[int, int]:
        below = self.values[level]  # values[0] are the literals, values[level + 1] this level
        return int(below[self.circuit.left[level][gate]]), int(below[self.circuit.right[level][gate]])

    def point(self, level: int, gate: int) -> int:
        left, right = self.children(level, gate)
        return 0 if left == self.want or right != self.want else 1


def bits_bound(circuit: LevelledCircuit) -> int:
    """Theorem 5's bound made concrete: depth prover bits and one bit of x."""
    return circuit.depth + 1
