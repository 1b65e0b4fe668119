"""Levelled, alternating AND/OR circuits with literals at the inputs: the circuits of Theorem 5
(debate query complexity, Section 3.1), where the Karchmer-Wigderson walk runs.

A :class:`LevelledCircuit` on n inputs has a literal level (each literal is x_i or NOT x_i) and
then ``depth`` levels of fan-in-2 gates; every gate reads two nodes of the level directly below,
the levels alternate AND and OR, and the top level is one AND gate (the output). So every path
from the output to a literal has length ``depth`` and alternates AND, OR, AND, ...

Evaluation is vectorised level by level with numpy: one input gives every node's value; a batch
of inputs (a 2-D array, one input per row) is bit-packed 64 inputs to a machine word, so a gate
level costs two gathers and one bitwise operation for 64 inputs at once.

Builders: :func:`levelled` converts any fan-in-2 :class:`~debatekit.machine.circuit.Circuit`
over AND/OR/XOR/NOT (the blow-up is stated there); :func:`expression_circuit` parses Boolean
expressions such as ``"(x0 & ~x1) | x2"``; the families are parity (built directly, vectorised),
equality, addition-overflow and random circuits (majority: ``levelled(majority_circuit(n))``).

Length: one data structure with its conversion from fan-in-2 circuits, its evaluators (one input and
bit-packed batches) and its families; they share private layout helpers, so they stay together.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from debatekit.machine.circuit import Circuit, CircuitBuilder, Gate


@dataclass(frozen=True, eq=False)
class LevelledCircuit:
    """Literals ``x[literal_var] ^ literal_neg``, then gate levels ``j = 0 .. depth-1`` (bottom
    first): gate g of level j reads nodes ``left[j][g]`` and ``right[j][g]`` of level j-1 (of the
    literal level when j = 0). Level j is AND when ``depth - 1 - j`` is even, so the top is AND.

    The n variables the literals name are x, then the witness/transcript bits, if any (the
    levelled form of a circuit C(x, w) has n = |x| + |w|)."""

    n: int
    literal_var: np.ndarray
    literal_neg: np.ndarray
    left: tuple[np.ndarray, ...]
    right: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        var = np.asarray(self.literal_var, dtype=np.int64)
        neg = np.asarray(self.literal_neg, dtype=bool)
        if var.ndim != 1 or neg.shape != var.shape or var.size == 0:
            raise ValueError("the literal level needs matching, non-empty literal_var and literal_neg")
        if np.any((var < 0) | (var >= self.n)):
            raise ValueError(f"literals must name inputs in [0, {self.n})")
        if not self.left or len(self.left) != len(self.right):
            raise ValueError("a levelled circuit needs at least one gate level, with left and right alike")
        below = var.size
        lefts, rights = [], []
        for a, b in zip(self.left, self.right, strict=True):
            a, b = np.asarray(a, dtype=np.int32), np.asarray(b, dtype=np.int32)
            if a.ndim != 1 or a.shape != b.shape or a.size == 0:
                raise ValueError("each gate level needs matching, non-empty left and right arrays")
            if np.any((a < 0) | (a >= below) | (b < 0) | (b >= below)):
                raise ValueError("a gate must read nodes of the level directly below")
            lefts.append(a)
            rights.append(b)
            below = a.size
        if below != 1:
            raise ValueError("the top level must be the single output gate")
        for array in (var, neg, *lefts, *rights):
            array.flags.writeable = False
        object.__setattr__(self, "literal_var", var)
        object.__setattr__(self, "literal_neg", neg)
        object.__setattr__(self, "left", tuple(lefts))
        object.__setattr__(self, "right", tuple(rights))

    @property
    def depth(self) -> int:
        """Gate levels: the length of every path from the output to a literal."""
        return len(self.left)

    @cached_property
    def size(self) -> int:
        """Number of gates (literals are not gates)."""
        return sum(int(a.size) for a in self.left)

    def is_and(self, level: int) -> bool:
        """Whether gate level ``level`` (0 = reads the literals) is an AND level."""
        return (self.depth - 1 - level) % 2 == 0

    def node_values(self, x: np.ndarray) -> list[np.ndarray]:
        """Every node's value: ``[literals, level 0, ..., level depth-1]``. For one input x of
        shape (n,) each entry has shape (width,); for a batch of shape (batch, n), shape
        (batch, width)."""
        x = _bits(x, self.n)
        if x.ndim == 1:
            values = [x[self.literal_var] ^ self.literal_neg.astype(np.uint8)]
            for j in range(self.depth):
                values.append(self._gate(j, values[-1]))
            return values
        batch = x.shape[0]
        return [_unpack(level, batch) for level in self._packed_levels(x)]

    def evaluate(self, x: np.ndarray) -> int | np.ndarray:
        """f(x): an int for one input, an array of shape (batch,) for a batch."""
        x = _bits(x, self.n)
        if x.ndim == 1:
            return int(self.node_values(x)[-1][0])
        return _unpack(self._packed_levels(x)[-1], x.shape[0])[:, 0]

    def _gate(self, j: int, below: np.ndarray) -> np.ndarray:
        a, b = below[self.left[j]], below[self.right[j]]
        return np.bitwise_and(a, b, out=a) if self.is_and(j) else np.bitwise_or(a, b, out=a)

    def _packed_levels(self, x: np.ndarray) -> list[np.ndarray]:
        """All levels on a batch, bit-packed: row k holds node k's value on 64 inputs a word."""
        packed = np.packbits(x.astype(bool), axis=0)  # (ceil(batch/8), n)
        pad = -packed.shape[0] % 8
        packed = np.concatenate([packed, np.zeros((pad, self.n), dtype=np.uint8)])
        words = np.ascontiguousarray(packed.T).view(np.uint64)  # (n, words)
        flip = np.where(self.literal_neg, np.uint64(2**64 - 1), np.uint64(0))[:, None]
        levels = [words[self.literal_var] ^ flip]
        for j in range(self.depth):
            levels.append(self._gate(j, levels[-1]))
        return levels


def _bits(x: np.ndarray, n: int) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim not in (1, 2) or x.shape[-1] != n:
        raise ValueError(f"expected inputs of shape (n,) or (batch, n) with n = {n}, got {x.shape}")
    if x.size and (x.dtype.kind not in "biu" or x.min() < 0 or x.max() > 1):
        raise ValueError("inputs must be 0/1 integers")
    return x.astype(np.uint8)


def _unpack(level: np.ndarray, batch: int) -> np.ndarray:
    """(width, words) packed values -> (batch, width) 0/1 values."""
    as_bytes = np.ascontiguousarray(level).view(np.uint8)  # (width, 8 * words)
    return np.unpackbits(as_bytes, axis=1, count=batch).T.copy()


def levelled(circuit: Circuit) -> LevelledCircuit:
    """The levelled alternating form of a fan-in-2 circuit over AND/OR/XOR/NOT (Theorem 5 assumes
    it "without loss of generality"; this is the construction). A circuit with witness inputs
    C(x, w) keeps them as variables: w_i is variable ``n_inputs + i``, so the result has
    ``n = circuit.offset`` variables.

    Dual rail: every node a gets a positive rail p(a) and a negative rail n(a), AND/OR formulas
    over literals (De Morgan pushes NOTs to the literals): AND gives p = p(a)∧p(b),
    n = n(a)∨n(b); OR dually; NOT swaps the rails at no cost; XOR gives p = (p(a)∧n(b)) ∨
    (n(a)∧p(b)) and n = (p(a)∧p(b)) ∨ (n(a)∧n(b)). Only rails the output needs are built. Each
    rail is placed at the lowest level above its inputs that has its operation (AND on odd
    levels, OR on even, literals at level 0); a rail read from more than one level up is carried
    by pass-through gates g∧g or g∨g (shared by all readers); an AND g∧g tops an OR output.

    Blow-up, for C with s gates, n inputs (x and w) and depth d (NOT counting as a level):

    * depth ≤ 2d + 1. By induction both rails of a gate of depth d sit at level ≤ 2d: its inputs'
      rails sit at ≤ 2d − 2, an AND rail lands on the next odd level (≤ 2d − 1), an OR rail on
      the next even one (≤ 2d), XOR's inner ANDs at ≤ 2d − 1 and its ORs at ≤ 2d; NOT reuses its
      input's rails. The top AND adds at most one level.
    * size ≤ 6s + 1 + (2n + 6s)·(depth − 2): at most 6 rail gates per gate (XOR; AND/OR/NOT
      give 2/2/0), the top AND, and each of the ≤ 2n + 6s rails carried through at most
      depth − 2 levels. When every wire joins adjacent depths (parity on 2^k inputs) nothing is
      carried: exactly 6(n − 1) − 2 gates (the output XOR needs only its positive rail, 3 gates)
      and depth 2k + 1.
    """
    n, s = circuit.offset, circuit.length  # variables: x, then the witness
    ops, in0, in1 = circuit.ops.tolist(), circuit.in0.tolist(), circuit.in1.tolist()
    need = [0] * (n + s)  # bit 1: the positive rail is needed, bit 2: the negative one
    need[-1] = 1
    for t in range(s - 1, -1, -1):
        m = need[n + t]
        if not m:
            continue
        a, b = in0[t], in1[t]
        if ops[t] == Gate.NOT:
            need[a] |= ((m & 1) << 1) | (m >> 1)
        elif ops[t] == Gate.XOR:
            need[a] |= 3
            need[b] |= 3
        else:
            need[a] |= m
            need[b] |= m

    # rails: level, inputs (for literals: the variable and the sign); AND at odd levels.
    lev: list[int] = []
    ra: list[int] = []
    rb: list[int] = []
    lit: list[tuple[int, bool]] = []
    pos, neg = [-1] * (n + s), [-1] * (n + s)

    def rail(level: int, a: int, b: int) -> int:
        lev.append(level)
        ra.append(a)
        rb.append(b)
        return len(lev) - 1

    def make(is_and: bool, a: int, b: int) -> int:
        level = max(lev[a], lev[b]) + 1
        if (level % 2 == 1) != is_and:
            level += 1
        return rail(level, a, b)

    for i in range(n):
        for sign, table in ((False, pos), (True, neg)):
            if need[i] & (2 if sign else 1):
                table[i] = rail(0, len(lit), -1)
                lit.append((i, sign))
    for t in range(s):
        m, u, a, b = need[n + t], n + t, in0[t], in1[t]
        if not m:
            continue
        op = ops[t]
        if op == Gate.NOT:
            pos[u], neg[u] = neg[a], pos[a]
        elif op == Gate.XOR:
            if m & 1:
                pos[u] = make(False, make(True, pos[a], neg[b]), make(True, neg[a], pos[b]))
            if m & 2:
                neg[u] = make(False, make(True, pos[a], pos[b]), make(True, neg[a], neg[b]))
        else:
            if m & 1:
                pos[u] = make(op == Gate.AND, pos[a], pos[b])
            if m & 2:
                neg[u] = make(op == Gate.OR, neg[a], neg[b])
    out = pos[-1]
    if lev[out] % 2 == 0:
        out = make(True, out, out)
    depth = lev[out]

    rails = len(lev)
    top = list(lev)  # highest level each rail must reach (its readers' level - 1)
    for r in range(rails):
        if lev[r]:
            top[ra[r]] = max(top[ra[r]], lev[r] - 1)
            top[rb[r]] = max(top[rb[r]], lev[r] - 1)
    width = [0] * (depth + 1)
    own = [0] * rails
    for r in range(rails):
        own[r] = width[lev[r]]
        width[lev[r]] += 1
    start, copy_at = [0] * rails, []
    for r in range(rails):
        start[r] = len(copy_at)
        for level in range(lev[r] + 1, top[r] + 1):
            copy_at.append(width[level])
            width[level] += 1

    def at(r: int, level: int) -> int:
        return own[r] if level == lev[r] else copy_at[start[r] + level - lev[r] - 1]

    left = [np.empty(width[level], dtype=np.int32) for level in range(1, depth + 1)]
    right = [np.empty(width[level], dtype=np.int32) for level in range(1, depth + 1)]
    var = np.empty(width[0], dtype=np.int64)
    sign = np.empty(width[0], dtype=bool)
    for r in range(rails):
        level = lev[r]
        if level == 0:
            var[own[r]], sign[own[r]] = lit[ra[r]]
        else:
            left[level - 1][own[r]] = at(ra[r], level - 1)
            right[level - 1][own[r]] = at(rb[r], level - 1)
        for up in range(level + 1, top[r] + 1):
            here = copy_at[start[r] + up - level - 1]
            left[up - 1][here] = right[up - 1][here] = at(r, up - 1)
    return LevelledCircuit(n, var, sign, tuple(left), tuple(right))


def parity_levelled(n: int) -> LevelledCircuit:
    """XOR of n bits, built level by level with numpy (no per-gate Python): the dual-rail XOR
    tree of :func:`levelled` with an unpaired rail pair carried up by pass-through gates, the
    last XOR's negative rail left out (nothing reads it), then a top AND. For n = 2^k >= 2 it has
    ``levelled(parity_circuit(n))``'s size and depth: 6(n − 1) − 2 gates, depth 2k + 1
    (2·ceil(log2 n) + 1 in general)."""
    if n < 1:
        raise ValueError("parity needs n >= 1")
    var = np.repeat(np.arange(n), 2)
    sign = np.tile([False, True], n)  # node 2i: p of pair i, node 2i + 1: its n
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    pairs = n
    while pairs > 1:
        half, odd = pairs // 2, pairs % 2
        a, b = 4 * np.arange(half), 4 * np.arange(half) + 2  # p rails of the two pair members
        # AND level: p_a∧n_b, n_a∧p_b, p_a∧p_b, n_a∧n_b for each pair; carry the odd pair's rails.
        and_left = np.stack([a, a + 1, a, a + 1], axis=1).ravel()
        and_right = np.stack([b + 1, b, b, b + 1], axis=1).ravel()
        carry = np.array([2 * pairs - 2, 2 * pairs - 1][: 2 * odd], dtype=np.int64)
        left.append(np.concatenate([and_left, carry]))
        right.append(np.concatenate([and_right, carry]))
        # OR level: p = (p_a∧n_b)∨(n_a∧p_b), n = (p_a∧p_b)∨(n_a∧n_b); carry again.
        ors = 4 * np.arange(half)
        or_left = np.stack([ors, ors + 2], axis=1).ravel()
        or_right = np.stack([ors + 1, ors + 3], axis=1).ravel()
        carry = 4 * half + np.arange(2 * odd)
        left.append(np.concatenate([or_left, carry]))
        right.append(np.concatenate([or_right, carry]))
        pairs = half + odd
        if pairs == 1:  # the last XOR: only its positive rail is read (by the top AND)
            left[-2], right[-2], left[-1], right[-1] = and_left[:2], and_right[:2], or_left[:1], or_right[:1]
    left.append(np.zeros(1, dtype=np.int64))  # the top AND reads the positive rail twice
    right.append(np.zeros(1, dtype=np.int64))
    return LevelledCircuit(n, var, sign, tuple(left), tuple(right))


def halves(n: int) -> tuple[int, int]:
    """Widths of the two numbers a = x[:m] and b = x[m:] (little-endian), m = ceil(n/2): for odd
    n, b is one bit shorter (its missing top bit is 0)."""
    return (n + 1) // 2, n // 2


def equality_circuit(n: int) -> Circuit:
    """1 iff a == b for a = x[:m], b = x[m:] as little-endian numbers (for even n: x[:n/2] ==
    x[n/2:]): NOT(a_i XOR b_i) for each bit of b, NOT a_{m-1} when b is shorter, then a
    balanced AND tree."""
    if n < 2:
        raise ValueError("equality needs n >= 2")
    m, k = halves(n)
    b = CircuitBuilder(n)
    same = [b.not_(b.xor(i, m + i)) for i in range(k)] + ([b.not_(m - 1)] if m > k else [])
    b.reduce(Gate.AND, same)
    return b.build()


def overflow_circuit(n: int) -> Circuit:
    """The carry out of a + b beyond a's m bits, a = x[:m], b = x[m:] little-endian, m =
    ceil(n/2) (for even n: two n/2-bit numbers). Generate g_i = a_i∧b_i and propagate p_i =
    a_i∨b_i combine in a balanced carry-lookahead tree, (g, p)·(g', p') = (g ∨ (p∧g'), p∧p')
    with the higher bits on the left; when b is shorter, a's top bit passes the carry on
    (a_{m-1} ∧ carry). Depth 2·ceil(log2(n/2)) + 1, plus 1 for odd n."""
    if n < 2:
        raise ValueError("addition-overflow needs n >= 2")
    m, k = halves(n)
    b = CircuitBuilder(n)

    def carry(lo: int, hi: int, need_p: bool) -> tuple[int, int | None]:
        """(generate, propagate) of bits [lo, hi); the propagate gate only when it is read."""
        if hi - lo == 1:
            return b.and_(lo, m + lo), b.or_(lo, m + lo) if need_p else None
        mid = (lo + hi) // 2
        g_lo, p_lo = carry(lo, mid, need_p)
        g_hi, p_hi = carry(mid, hi, True)
        assert p_hi is not None
        g = b.or_(g_hi, b.and_(p_hi, g_lo))
        return g, b.and_(p_hi, p_lo) if need_p and p_lo is not None else None

    generated, _ = carry(0, k, False)
    if m > k:
        b.and_(m - 1, generated)
    return b.build()


def random_circuit(n: int, gates: int, rng: np.random.Generator) -> Circuit:
    """``gates`` random AND/OR/XOR/NOT gates, each reading uniformly random earlier addresses;
    the last gate is the output."""
    if n < 1 or gates < 1:
        raise ValueError("a random circuit needs n >= 1 and gates >= 1")
    ops = rng.integers(0, 4, gates)
    own = n + np.arange(gates)
    in0 = (rng.random(gates) * own).astype(np.int64)
    in1 = np.where(ops == Gate.NOT, in0, (rng.random(gates) * own).astype(np.int64))
    return Circuit(n, ops, in0, in1)


def random_levelled(n: int, widths: list[int], rng: np.random.Generator) -> LevelledCircuit:
    """Random literals (``widths[0]`` of them) and gate levels of the given widths, each gate
    reading two uniformly random nodes of the level below; a top AND is added if the last width
    is not 1."""
    if n < 1 or len(widths) < 2 or min(widths) < 1:
        raise ValueError("a random levelled circuit needs n >= 1, a literal width and a gate width, all >= 1")
    sizes = [*widths, 1] if widths[-1] != 1 else list(widths)
    left = tuple(rng.integers(0, below, size, dtype=np.int32) for below, size in itertools.pairwise(sizes))
    right = tuple(rng.integers(0, below, size, dtype=np.int32) for below, size in itertools.pairwise(sizes))
    return LevelledCircuit(n, rng.integers(0, n, sizes[0]), rng.random(sizes[0]) < 0.5, left, right)


_TOKEN = re.compile(r"\s*(?:(x)(\d+)|([&|^~!()]))")


def expression_circuit(text: str, n: int | None = None) -> Circuit:
    """A fan-in-2 circuit for a Boolean expression over variables ``x0, x1, ...`` with ``~``
    (or ``!``) for NOT, ``&``, ``^`` and ``|`` (binding in that order) and parentheses, e.g.
    ``"(x0 & ~x1) | x2"``. n defaults to the largest variable index + 1."""
    tokens: list[tuple[str, int]] = []
    at = 0
    text = text.rstrip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise ValueError(f"cannot parse {text[at:]!r} in the expression")
        tokens.append(("x", int(match[2])) if match[1] else (match[3].replace("!", "~"), -1))
        at = match.end()
    variables = [v for kind, v in tokens if kind == "x"]
    if not variables:
        raise ValueError("the expression names no variable x0, x1, ...")
    inputs = max(variables) + 1 if n is None else n
    if max(variables) >= inputs:
        raise ValueError(f"the expression reads x{max(variables)} but n = {inputs}")
    b = CircuitBuilder(inputs)
    position = 0

    def peek() -> str:
        return tokens[position][0] if position < len(tokens) else ""

    def take(kind: str) -> int:
        nonlocal position
        if peek() != kind:
            raise ValueError(f"expected {kind!r} at token {position} of the expression")
        position += 1
        return tokens[position - 1][1]

    gates = {"|": b.or_, "^": b.xor, "&": b.and_}

    def binary(symbols: str) -> int:
        """Operators in ``symbols``, loosest first; each level is left-associative."""
        operand = (lambda: binary(symbols[1:])) if len(symbols) > 1 else unary
        value = operand()
        while peek() == symbols[0]:
            take(symbols[0])
            value = gates[symbols[0]](value, operand())
        return value

    def unary() -> int:
        if peek() == "~":
            take("~")
            return b.not_(unary())
        if peek() == "(":
            take("(")
            value = binary("|^&")
            take(")")
            return value
        return take("x")

    out = binary("|^&")
    if position != len(tokens):
        raise ValueError(f"unexpected {tokens[position][0]!r} at token {position} of the expression")
    if out < inputs:  # the expression is one variable: copy it through a gate
        b.and_(out, out)
    return b.build()


def from_expression(text: str, n: int | None = None) -> LevelledCircuit:
    """The levelled form of a Boolean expression (see :func:`expression_circuit`)."""
    return levelled(expression_circuit(text, n))
