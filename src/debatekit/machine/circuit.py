"""Boolean circuits as transcript machines: one step per gate, gates in topological order.

Gate t reads its one or two inputs (its relevant coordinates) and writes y_t; the last gate is
the output. Evaluation is vectorised level by level with numpy, and the local check used by
honest Bob (which gate does not follow from its claimed inputs) is one vectorised pass.
"""

from __future__ import annotations

import operator
from array import array
from enum import IntEnum
from functools import cached_property

import numpy as np

from debatekit.machine.transcript import Ask, StepKind, TranscriptMachine


class Gate(IntEnum):
    AND = 0
    OR = 1
    XOR = 2
    NOT = 3


_AND, _OR, _XOR, _NOT = (int(gate) for gate in (Gate.AND, Gate.OR, Gate.XOR, Gate.NOT))
"""The gates as plain ints, read in every step of evaluation and of :meth:`Circuit.relevant`: an
enum member's lookup costs more on Python 3.11."""


def _apply(op: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == _AND:
        return a & b
    if op == _OR:
        return a | b
    if op == _XOR:
        return a ^ b
    return 1 - a


_GATE = (operator.and_, operator.or_, operator.xor, lambda a, b: 1 - a)
"""Each gate on one step's bits (:meth:`Circuit.rule`), by ``Gate`` value."""


class Circuit(TranscriptMachine):
    """A fan-in-2 circuit over addresses (x, w, earlier gates); ``in1`` equals ``in0`` for NOT."""

    def __init__(self, n_inputs: int, ops: np.ndarray, in0: np.ndarray, in1: np.ndarray, n_witness: int = 0):
        self.n_inputs, self.n_witness, self.length = n_inputs, n_witness, len(ops)
        self.ops = np.asarray(ops, dtype=np.uint8)
        self.in0 = np.asarray(in0, dtype=np.int64)
        self.in1 = np.asarray(in1, dtype=np.int64)
        own = self.offset + np.arange(self.length)
        if self.length == 0:
            raise ValueError("a circuit needs at least one gate")
        if (
            np.any(self.ops > Gate.NOT)
            or np.any((self.in0 < 0) | (self.in0 >= own))
            or np.any((self.in1 < 0) | (self.in1 >= own))
        ):
            raise ValueError("gates must read earlier addresses and use AND, OR, XOR or NOT")

    def kind(self, t: int) -> StepKind:
        return StepKind.COMPUTE

    def relevant(self, t: int) -> tuple[int, ...]:
        ops, in0, in1 = self._scalar
        return (in0[t],) if ops[t] == _NOT else (in0[t], in1[t])

    def rule(self, t: int, bits: tuple[int, ...]) -> int:
        a = bits[0]
        return int(_GATE[self._scalar[0][t]](a, bits[1] if len(bits) > 1 else a))

    @cached_property
    def _scalar(self) -> tuple[bytes, array, array]:
        """The gates and their inputs for reading one step at a time (the verifier's check, a
        scalar interpreter): items are Python ints, and the copies cost 17 bytes a gate."""
        return self.ops.tobytes(), array("q", self.in0.tobytes()), array("q", self.in1.tobytes())

    @property
    def deterministic(self) -> bool:
        return True

    @cached_property
    def max_relevant(self) -> int:
        return 2 if np.any(self.ops != Gate.NOT) else 1

    @cached_property
    def levels(self) -> np.ndarray:
        """Depth of each gate: 1 + the largest depth among its inputs (inputs have depth 0)."""
        depth = np.zeros(self.offset + self.length, dtype=np.int64)
        in0, in1, offset = self.in0.tolist(), self.in1.tolist(), self.offset
        d = depth.tolist()
        for t in range(self.length):
            d[offset + t] = 1 + max(d[in0[t]], d[in1[t]])
        return np.asarray(d[offset:], dtype=np.int64)

    @cached_property
    def _schedule(self) -> list[tuple[int, np.ndarray]]:
        """(op, gate indices) batches in an order that respects dependencies."""
        order = np.lexsort((self.ops, self.levels))
        keys = self.levels[order] * 4 + self.ops[order]
        cuts = np.flatnonzero(np.diff(keys)) + 1
        return [(int(self.ops[chunk[0]]), chunk) for chunk in np.split(order, cuts)]

    @property
    def depth(self) -> int:
        return int(self.levels.max())

    def evaluate(self, inputs: np.ndarray) -> np.ndarray:
        """All gate values on (x, w) = ``inputs``, vectorised level by level."""
        values = np.empty(self.offset + self.length, dtype=np.uint8)
        values[: self.offset] = inputs
        for op, gates in self._schedule:
            values[self.offset + gates] = _apply(op, values[self.in0[gates]], values[self.in1[gates]])
        return values[self.offset :]

    def run(self, inputs: np.ndarray, ask: Ask, rng: np.random.Generator) -> np.ndarray:
        return self.evaluate(inputs)

    def local_errors(self, inputs: np.ndarray, transcript: np.ndarray) -> np.ndarray:
        """Boolean mask of gates whose claimed value does not follow from their claimed inputs."""
        values = np.concatenate([np.asarray(inputs, dtype=np.uint8), transcript])
        a, b = values[self.in0], values[self.in1]
        is_and, is_or, is_xor = self._kinds
        expected = np.where(is_and, a & b, np.where(is_or, a | b, np.where(is_xor, a ^ b, 1 - a)))
        return expected != transcript

    @cached_property
    def _kinds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which gates are AND, OR and XOR (the rest are NOT), found once for :meth:`local_errors`."""
        return self.ops == Gate.AND, self.ops == Gate.OR, self.ops == Gate.XOR

    def first_error(self, inputs: np.ndarray, transcript: np.ndarray, ask: Ask) -> int | None:
        wrong = np.flatnonzero(self.local_errors(inputs, transcript))
        return int(wrong[0]) if wrong.size else None


class CircuitBuilder:
    """Add gates one at a time; each call returns the address of the gate's output."""

    def __init__(self, inputs: int, witness: int = 0):
        self.n_inputs, self.n_witness = inputs, witness
        self._ops: list[int] = []
        self._in0: list[int] = []
        self._in1: list[int] = []

    def _gate(self, op: Gate, a: int, b: int) -> int:
        self._ops.append(op)
        self._in0.append(a)
        self._in1.append(b)
        return self.n_inputs + self.n_witness + len(self._ops) - 1

    def and_(self, a: int, b: int) -> int:
        return self._gate(Gate.AND, a, b)

    def or_(self, a: int, b: int) -> int:
        return self._gate(Gate.OR, a, b)

    def xor(self, a: int, b: int) -> int:
        return self._gate(Gate.XOR, a, b)

    def not_(self, a: int) -> int:
        return self._gate(Gate.NOT, a, a)

    def reduce(self, op: Gate, addresses: list[int]) -> int:
        """A balanced tree of ``op`` gates over ``addresses`` (depth ceil(log2 len))."""
        layer = list(addresses)
        if not layer:
            raise ValueError("cannot reduce an empty list")
        while len(layer) > 1:
            nxt = [self._gate(op, layer[i], layer[i + 1]) for i in range(0, len(layer) - 1, 2)]
            if len(layer) % 2:
                nxt.append(layer[-1])
            layer = nxt
        return layer[0]

    def build(self) -> Circuit:
        return Circuit(self.n_inputs, np.array(self._ops), np.array(self._in0), np.array(self._in1), self.n_witness)


def parity_circuit(n: int) -> Circuit:
    """XOR of n bits as a balanced tree: n-1 gates, depth ceil(log2 n)."""
    b = CircuitBuilder(n)
    out = b.reduce(Gate.XOR, list(range(n)))
    if out < n:  # n == 1: the output is the input bit; copy it through one gate
        b.and_(out, out)
    return b.build()


def _add_numbers(b: CircuitBuilder, u: list[int], v: list[int]) -> list[int]:
    """Ripple-carry sum of two little-endian numbers (u at least as long as v)."""
    if len(u) < len(v):
        u, v = v, u
    out, carry = [], None
    for i, ui in enumerate(u):
        vi = v[i] if i < len(v) else None
        bits = [a for a in (ui, vi, carry) if a is not None]
        if len(bits) == 1:
            out.append(bits[0])
            carry = None
        elif len(bits) == 2:
            out.append(b.xor(bits[0], bits[1]))
            carry = b.and_(bits[0], bits[1])
        else:
            s = b.xor(bits[0], bits[1])
            out.append(b.xor(s, bits[2]))
            carry = b.or_(b.and_(bits[0], bits[1]), b.and_(s, bits[2]))
    if carry is not None:
        out.append(carry)
    return out


def _at_least(b: CircuitBuilder, number: list[int], k: int) -> int:
    """A gate that is 1 iff the little-endian ``number`` is >= the constant k >= 1."""
    ge: int | None = None  # None stands for the constant 1 ("the low bits are >= k's low bits")
    for i, bit in enumerate(number):
        if (k >> i) & 1:
            ge = bit if ge is None else b.and_(bit, ge)
        elif ge is not None:
            ge = b.or_(bit, ge)
    if k >> len(number):
        raise ValueError("threshold above the largest representable count")
    assert ge is not None, "k >= 1 has a one bit"
    return ge


def majority_circuit(n: int) -> Circuit:
    """1 iff more than n/2 of the n input bits are 1: an adder tree counts the ones (O(n) gates,
    depth O(log^2 n)) and a comparator tests count >= floor(n/2) + 1."""
    b = CircuitBuilder(n)
    numbers = [[i] for i in range(n)]
    while len(numbers) > 1:
        nxt = [_add_numbers(b, numbers[i], numbers[i + 1]) for i in range(0, len(numbers) - 1, 2)]
        if len(numbers) % 2:
            nxt.append(numbers[-1])
        numbers = nxt
    out = _at_least(b, numbers[0], n // 2 + 1)
    if out < n:  # n <= 2: the output is a single input bit; copy it through a gate
        out = b.and_(out, out)
    return b.build()
