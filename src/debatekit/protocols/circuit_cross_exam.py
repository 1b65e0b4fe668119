"""Cross-examination over a circuit: Theorem 6 and the cross-examination lemma (Lemma 8) of the
debate query complexity paper.

Lemma 8 starts from a debate whose verifier computes V(x, α, β) with a circuit C of size m. Here
that debate is a fan-in-2 :class:`~debatekit.machine.circuit.Circuit` whose witness bits are the
transcript, one bit per message in the paper's order α_1, β_1, α_2, β_2, …: Prover 0 (Alice,
who argues f(x) = 0) writes the even-numbered bits and Prover 1 (Bob, who argues f(x) = 1) the
odd-numbered ones. After those rounds, Alice writes every gate value of C on (x, α, β) (one
message of m bits) and Bob names a gate index, or ``ACCEPT`` (he points nowhere). The verifier
reads Bob's word (⌈log2(m+1)⌉ bits), then the named gate's claimed value and its one or two
inputs: bits of x through ``Reader.query_input`` (the query-complexity model charges them like
prover bits), transcript bits and gate values through ``Reader.bit``. It outputs 1 if the gate
does not follow from its inputs, or if Bob named the output gate and its value is 1; else 0.

Theorem 6 is the case without rounds: C computes f itself and the debate is Alice's gate values
and Bob's pointer, DQC(f) ≤ log(size) + 3.

A transcript bit that is not 0 or 1, an Alice message of the wrong length (framing, checked
without reading) or a gate value the verifier reads that is not a bit loses for its sender; so
does a pointer that is neither ``ACCEPT`` nor a gate index.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from debatekit.engine.boundary import commit_bit, commit_bits, index_word
from debatekit.engine.nodes import Judge, Move, Node
from debatekit.ledger import Role
from debatekit.machine.circuit import Circuit, Gate
from debatekit.players.base import Seat
from debatekit.prob import Dist
from debatekit.protocols.cross_exam import parse_bits
from debatekit.reader import Reader, word_width

if TYPE_CHECKING:  # the problems package imports the protocols: types only
    from debatekit.problems.registry import Instance
    from debatekit.protocols.spec import Guarantee

ACCEPT = None
"""Bob's pointer when he names no gate."""

MAX_EXHAUSTIVE_ROUNDS = 16
"""Honest provers choose transcript bits by evaluating C on every completion of the transcript:
at most 2^16 evaluations, vectorised over the completions."""


@runtime_checkable
class Rounds(Protocol):
    """A player of the original debate's rounds (:func:`original_rounds`), Prover 0 or Prover 1."""

    def move(self, history: tuple[int, ...]) -> int | Dist:
        """The next transcript bit (α_i for Alice, β_i for Bob), given the bits so far."""


@runtime_checkable
class Alice(Rounds, Protocol):
    """Prover 0: the rounds, then every gate value (Lemma 8)."""

    def gates(self, transcript: tuple[int, ...]) -> Sequence[int] | Dist:
        """The value of every gate of C on (x, transcript)."""


@runtime_checkable
class Bob(Rounds, Protocol):
    """Prover 1: the rounds, then a pointer (Lemma 8)."""

    def point(self, transcript: tuple[int, ...], gates: np.ndarray) -> int | Dist | None:
        """A gate index in [0, m), or ``ACCEPT``."""


PLAYERS: dict[Role, type] = {Role.ALICE: Alice, Role.BOB: Bob}
"""Each role's player interface (:attr:`~debatekit.protocols.spec.ProtocolSpec.players`)."""


def circuit_of(instance: Instance) -> Circuit:
    machine = instance.machine
    if not isinstance(machine, Circuit):
        raise ValueError(f"problem {instance.problem} has no circuit for circuit cross-examination")
    return machine


def speaker(bit: int) -> Role:
    """Who writes transcript bit ``bit``: α_1, β_1, α_2, … alternate, Prover 0 (Alice) first."""
    return Role.ALICE if bit % 2 == 0 else Role.BOB


def original_rounds(count: int, finish: Callable[[tuple[int, ...]], Node]) -> Node:
    """The rounds of the original debate: ``count`` bits α_1, β_1, α_2, … from alternating
    speakers (``player.move(history)``), then ``finish(transcript)``. A bit that is not 0 or 1
    loses for its sender."""

    def after(history: tuple[int, ...]) -> Node:
        if len(history) == count:
            return finish(history)
        role = speaker(len(history))

        def ask_move(player: Rounds) -> int | Dist:
            return player.move(history)

        return Move(
            role,
            ask=ask_move,
            commit=lambda sent: commit_bit(sent, role, "transcript bit"),
            then=lambda bit: after((*history, bit)),
            options=lambda: (0, 1, 2),  # 2 stands for any malformed bit
        )

    return after(())


def read_variable(x: Any, transcript: tuple[int, ...], var: int, reader: Reader) -> int:
    """Variable ``var`` of C(x, transcript): a bit of x (a query of the model) or a round's bit."""
    n = len(x)
    return reader.query_input(x, var) if var < n else reader.bit(transcript, var - n, speaker(var - n))


def debate(instance: Instance, reader: Reader) -> Node:
    """Lemma 8's game tree over the circuit verifier of ``instance`` (Theorem 6 without rounds)."""
    circuit = circuit_of(instance)
    size = circuit.length

    def cross_examination(history: tuple[int, ...]) -> Node:
        def ask_gates(alice: Alice) -> Sequence[int] | Dist:
            return alice.gates(history)

        return Move(
            Role.ALICE,
            ask=ask_gates,
            commit=lambda sent: commit_bits(sent, size, Role.ALICE),
            then=lambda gates: challenge(history, gates),
            options=lambda: itertools.chain(itertools.product((0, 1), repeat=size), [()]),
        )

    def challenge(transcript: tuple[int, ...], gates: np.ndarray) -> Node:
        def ask_point(bob: Bob) -> int | Dist | None:
            return bob.point(transcript, gates)

        return Move(
            Role.BOB,
            ask=ask_point,
            commit=lambda sent: index_word(sent, size, "pointer"),
            then=lambda pointer: Judge(lambda: verify(instance, transcript, gates, pointer, reader)),
            options=lambda: [ACCEPT, *range(size), size],  # `size` stands for any malformed word
        )

    return original_rounds(circuit.n_witness, cross_examination)


def verify(
    instance: Instance, transcript: tuple[int, ...], gates: np.ndarray, pointer: int | None, reader: Reader
) -> int:
    """The verifier of Theorem 6 / Lemma 8: read the pointer, then one gate and its inputs."""
    circuit = circuit_of(instance)
    size = circuit.length
    g = reader.word(pointer, word_width(size + 1), Role.BOB)
    if g is ACCEPT:
        return 0
    claimed = reader.bit(gates, g, Role.ALICE)
    bits = tuple(_read_address(instance, transcript, gates, a, reader) for a in circuit.relevant(g))
    if claimed != circuit.rule(g, bits):
        return 1
    return int(g == size - 1 and claimed == 1)


def _read_address(
    instance: Instance, transcript: tuple[int, ...], gates: np.ndarray, address: int, reader: Reader
) -> int:
    """One input of a gate: a bit of x, a transcript bit, or an earlier gate's claimed value."""
    circuit = circuit_of(instance)
    if address < circuit.offset:
        return read_variable(instance.x, transcript, address, reader)
    return reader.bit(gates, address - circuit.offset, Role.ALICE)


def bits_bound(circuit: Circuit) -> int:
    """⌈log2(m+1)⌉ + 3 bits: the pointer names one of m gates or ``ACCEPT`` (m+1 words), then one
    gate value and its at most two inputs. The paper's ⌈log2 m⌉ + 3 has no word for accepting;
    the two agree unless m is a power of two, where this is one more."""
    return word_width(circuit.length + 1) + 3


def guarantee(instance: Instance) -> Guarantee:
    """Theorem 6 / Lemma 8: completeness 1, soundness 0, no oracle, :func:`bits_bound` bits read."""
    from debatekit.protocols.spec import Guarantee

    statement = "Thm 6 / Lemma 8 (query complexity): c=1, s=0, ceil(log2(size+1))+3 bits of x, alpha, beta read"
    return Guarantee(1.0, 0.0, 0, bits_bound(circuit_of(instance)), statement)


def description(instance: Instance) -> dict:
    """The circuit's size and depth."""
    circuit = circuit_of(instance)
    return {"circuit_size": circuit.length, "circuit_depth": circuit.depth}


# -- honest provers ------------------------------------------------------------------------------


_GATES = {
    Gate.AND: lambda a, b: a & b,
    Gate.OR: lambda a, b: a | b,
    Gate.XOR: lambda a, b: a ^ b,
    Gate.NOT: lambda a, b: 1 - a,
}


def evaluate_batch(circuit: Circuit, x: np.ndarray, transcripts: np.ndarray) -> np.ndarray:
    """The output of C on x and each row of ``transcripts`` (shape (count, rounds)), vectorised
    over the rows."""
    n, rounds = circuit.n_inputs, circuit.n_witness
    values = np.empty((circuit.offset + circuit.length, len(transcripts)), dtype=np.uint8)
    values[:n] = np.asarray(x, dtype=np.uint8)[:, None]
    values[n : n + rounds] = transcripts.T
    for t in range(circuit.length):
        a, b, op = values[circuit.in0[t]], values[circuit.in1[t]], circuit.ops[t]
        values[circuit.offset + t] = _GATES[op](a, b)
    return values[-1]


class GameValue:
    """The value of the transcript game ∀α_1 ∃β_1 ∀α_2 … V(x, α, β) from every prefix, by
    evaluating C on all 2^rounds transcripts (Lemma 8's honest provers play the original
    debate optimally). ``table[j][p]`` is the value after the j bits of prefix p (big-endian)."""

    def __init__(self, circuit: Circuit, x: np.ndarray):
        rounds = circuit.n_witness
        if rounds > MAX_EXHAUSTIVE_ROUNDS:
            raise ValueError(f"honest play evaluates every transcript; at most {MAX_EXHAUSTIVE_ROUNDS} rounds")
        codes = np.arange(2**rounds, dtype=np.int64)
        transcripts = ((codes[:, None] >> np.arange(rounds - 1, -1, -1)) & 1).astype(np.uint8)
        level = evaluate_batch(circuit, x, transcripts)
        self.table = [level]
        for j in range(rounds - 1, -1, -1):  # bit j: Alice (Prover 0) minimises, Bob maximises
            pairs = level.reshape(-1, 2)
            level = pairs.min(axis=1) if speaker(j) is Role.ALICE else pairs.max(axis=1)
            self.table.append(level)
        self.table.reverse()

    @property
    def value(self) -> int:
        return int(self.table[0][0])

    def best(self, history: tuple[int, ...]) -> int:
        """The bit the speaker of the next round should write: one reaching its side's value."""
        prefix = int("".join(map(str, history)) or "0", 2)
        children = self.table[len(history) + 1][2 * prefix : 2 * prefix + 2]
        want = children.min() if speaker(len(history)) is Role.ALICE else children.max()
        return int(np.flatnonzero(children == want)[0])


def true_gates(seat: Seat, transcript: tuple[int, ...]) -> np.ndarray:
    """Every gate of C on (x, transcript), computed once per instance and transcript (read-only)."""
    instance = seat.instance

    def evaluate() -> np.ndarray:
        inputs = np.concatenate([instance.x, np.asarray(transcript, dtype=np.uint8)]).astype(np.uint8)
        return circuit_of(instance).evaluate(inputs)

    return instance.memo(("gate values", transcript), evaluate)


class OptimalRounds:
    """Transcript bits by exhaustive evaluation (computed when first needed)."""

    def __init__(self, seat: Seat):
        self.seat = seat
        self._game: GameValue | None = None

    def move(self, history: tuple[int, ...]) -> int:
        if self._game is None:
            instance = self.seat.instance
            self._game = instance.memo("game value", lambda: GameValue(circuit_of(instance), instance.x))
        return self._game.best(history)


class HonestAlice(OptimalRounds):
    """Lemma 8 / Theorem 6 completeness: play the original debate optimally, then write the true
    value of every gate of C."""

    def gates(self, transcript: tuple[int, ...]) -> np.ndarray:
        return true_gates(self.seat, transcript)


class HonestBob(OptimalRounds):
    """Lemma 8 / Theorem 6 soundness: play the original debate optimally, then name the first gate
    that does not follow from Alice's own claimed inputs (or whose bits cannot be read). If every
    gate follows, Alice's values are C's true values, so when V(x, α, β) = 1 her output gate
    reads 1 and naming it wins; otherwise accept."""

    def point(self, transcript: tuple[int, ...], gates: np.ndarray) -> int | None:
        circuit = circuit_of(self.seat.instance)
        claimed = parse_bits(gates)
        inputs = np.concatenate([self.seat.instance.x, np.asarray(transcript, dtype=np.uint8)]).astype(np.uint8)
        unreadable = claimed < 0
        if unreadable.any():
            gate_inputs = circuit.offset + np.flatnonzero(unreadable)
            touches = np.isin(circuit.in0, gate_inputs) | np.isin(circuit.in1, gate_inputs)
            return int(np.flatnonzero(unreadable | touches)[0])
        wrong = np.flatnonzero(circuit.local_errors(inputs, claimed.astype(np.uint8)))
        if wrong.size:
            return int(wrong[0])
        return circuit.length - 1 if claimed[-1] == 1 else ACCEPT
