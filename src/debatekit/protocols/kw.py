"""The Karchmer-Wigderson walk: Theorem 5 of debate query complexity, DQC(f) ≤ depth(C) + 1.

On a levelled alternating circuit (:class:`~debatekit.machine.levelled.LevelledCircuit`, top gate
AND) the provers walk from the output gate down. At an AND gate Prover 0 (Alice, who argues
f(x) = 0) sends one bit: the child she claims is 0. At an OR gate Prover 1 (Bob, who argues
f(x) = 1) sends one bit: the child he claims is 1. At the literal level the verifier reads the
one bit the literal names and outputs the literal's value.

Rounds first (Theorem 9's route, with this walk in place of Lemma 8's cross-examination): when
the levelled circuit has more variables than x, it is the verifier C(x, α, β) of an original
debate and the extra variables are its transcript α_1, β_1, α_2, …, one bit per round, written
alternately by Alice and Bob as in :mod:`~debatekit.protocols.circuit_cross_exam`. The walk then
runs over C(x, transcript), and a literal on a transcript bit is read from the transcript.

The verifier reads every prover bit on the path (``depth`` bits) and one bit of x or of the
transcript, each counted as a query of the model of Section 2
(:meth:`~debatekit.reader.Reader.query_input`, :meth:`~debatekit.reader.Reader.bit`): exactly
depth + 1 bits. A bit that is not 0 or 1 loses for its sender.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from debatekit.engine.boundary import bit_word
from debatekit.engine.nodes import Judge, Move, Node
from debatekit.ledger import Role
from debatekit.machine.levelled import LevelledCircuit
from debatekit.players.base import Seat
from debatekit.prob import Dist
from debatekit.problems.registry import Instance
from debatekit.protocols.circuit_cross_exam import OptimalRounds, Rounds, original_rounds, read_variable
from debatekit.protocols.spec import Guarantee
from debatekit.reader import Reader

MALFORMED = 2
"""In ``Move.options``: stands for any message that is not a bit."""


@runtime_checkable
class Walker(Rounds, Protocol):
    """Either prover (Prover 0 at AND gates, Prover 1 at OR gates): the rounds, then the walk."""

    def point(self, transcript: tuple[int, ...], level: int, gate: int) -> int | Dist | Any:
        """At gate ``gate`` of gate level ``level`` (0 reads the literals), after the rounds'
        ``transcript`` (empty without rounds): 0 for its left child, 1 for its right child."""


PLAYERS: dict[Role, type] = {Role.ALICE: Walker, Role.BOB: Walker}
"""Each role's player interface (:attr:`~debatekit.protocols.spec.ProtocolSpec.players`)."""


def levelled_of(instance: Instance) -> LevelledCircuit:
    circuit = instance.levelled_circuit()
    if circuit is None:
        raise ValueError(f"problem {instance.problem} has no levelled circuit for the KW walk")
    if circuit.n < len(instance.x):
        raise ValueError(f"the levelled circuit of {instance.problem} has fewer variables than x")
    return circuit


def rounds_of(instance: Instance) -> int:
    """Transcript bits before the walk: the levelled circuit's variables beyond x."""
    return levelled_of(instance).n - len(instance.x)


def debate(instance: Instance, reader: Reader) -> Node:
    """The game tree: one Move per round, then one per gate on the path."""
    circuit = levelled_of(instance)

    def at(transcript: tuple[int, ...], level: int, gate: int) -> Node:
        role = Role.ALICE if circuit.is_and(level) else Role.BOB

        def ask_point(player: Walker) -> int | Dist | Any:
            return player.point(transcript, level, gate)

        def then(word: int) -> Node:
            bit = reader.word(word, 1, role)
            child = int((circuit.right if bit else circuit.left)[level][gate])
            if level == 0:
                return Judge(lambda: literal(instance, circuit, transcript, child, reader))
            return at(transcript, level - 1, child)

        return Move(
            role,
            ask=ask_point,
            commit=lambda sent: bit_word(sent, f"the child at level {level} gate {gate},"),
            then=then,
            options=lambda: (0, 1, MALFORMED),
            key=("kw", transcript, level, gate),
        )

    return original_rounds(rounds_of(instance), lambda transcript: at(transcript, circuit.depth - 1, 0))


def literal(
    instance: Instance, circuit: LevelledCircuit, transcript: tuple[int, ...], index: int, reader: Reader
) -> int:
    """The walk's end: read the one bit literal ``index`` names (of x, or of the transcript);
    output the literal's value."""
    bit = read_variable(instance.x, transcript, int(circuit.literal_var[index]), reader)
    return bit ^ int(circuit.literal_neg[index])


class Honest(OptimalRounds):
    """Theorem 5's honest provers, after playing the rounds optimally (Lemma 8's honest provers,
    :class:`~debatekit.protocols.circuit_cross_exam.OptimalRounds`): Alice at an AND gate points
    to a child of value 0, Bob at an OR gate to a child of value 1 (the left child when there is
    none, a lost cause)."""

    def __init__(self, seat: Seat):
        super().__init__(seat)
        self.want = 0 if seat.role is Role.ALICE else 1
        self.circuit = levelled_of(seat.instance)

    def values(self, transcript: tuple[int, ...]) -> list[np.ndarray]:
        """Every node's value on (x, transcript), computed once per instance and transcript and
        shared by the debates on the instance."""
        x = self.seat.instance.x

        def evaluate() -> list[np.ndarray]:
            inputs = np.concatenate([x, np.asarray(transcript, dtype=np.uint8)]) if transcript else x
            return self.circuit.node_values(inputs)

        return self.seat.instance.memo(("kw node values", transcript), evaluate)

    def children(self, transcript: tuple[int, ...], level: int, gate: int) -> tuple[int, int]:
        below = self.values(transcript)[level]  # values[0] are the literals, values[level + 1] this level
        return int(below[self.circuit.left[level][gate]]), int(below[self.circuit.right[level][gate]])

    def point(self, transcript: tuple[int, ...], level: int, gate: int) -> int:
        left, right = self.children(transcript, level, gate)
        return 0 if left == self.want or right != self.want else 1


def bits_bound(circuit: LevelledCircuit) -> int:
    """Theorem 5's bound made concrete: depth prover bits and one bit of x or of the transcript."""
    return circuit.depth + 1


def guarantee(instance: Instance) -> Guarantee:
    """Theorem 5 on ``instance``: completeness 1, soundness 0, no oracle, :func:`bits_bound` bits read."""
    statement = "Thm 5 (Karchmer-Wigderson walk, after any rounds): c=1, s=0, depth+1 bits of x, alpha, beta read"
    return Guarantee(1.0, 0.0, 0, bits_bound(levelled_of(instance)), statement)


def description(instance: Instance) -> dict:
    """The levelled circuit walked, and the rounds played before the walk (0 without them)."""
    circuit = levelled_of(instance)
    return {"circuit_size": circuit.size, "circuit_depth": circuit.depth, "rounds": rounds_of(instance)}
