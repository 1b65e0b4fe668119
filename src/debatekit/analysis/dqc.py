"""Debate query complexity (DQC) lower bounds and exact values for tiny functions.

* :func:`readable_inputs`: Corollary 4 of the debate query complexity paper made checkable. For
  one protocol and instance size, the set S of variables of x the verifier could ever read, found
  by exploring the game tree over every message of both provers (and every input x); a function
  that depends on all n bits needs all of them in S, so ℓ ≥ log2 n.
  :func:`circuit_inputs` derives the same set from a circuit's wiring, for any size.
* :func:`exact_dqc`: DQC(f) of a function on n ≤ 3 bits (and n = 4 where the bounds meet), by
  search over verifiers. A deterministic ℓ-query verifier is a decision tree of depth ℓ over
  (x, α, β); it has at most 2^ℓ - 1 internal nodes, so it reads at most 2^ℓ - 1 distinct
  variables (Lemma 3's k ≤ 2^ℓ follows). Quantifiers over variables the tree never reads drop
  out of ∀α_1 ∃β_1 … V, so a debate is, up to value, a decision tree over x and r ≤ 2^ℓ - 1 -
  |relevant x| transcript variables t_1, …, t_r together with a pattern saying whether each t_j
  is Prover 0's (∀) or Prover 1's (∃); every such pair is also realisable as a debate (put each
  t_j in its own round, the other messages unread). The search enumerates the distinct functions
  of depth-ℓ trees (truth tables as integers) and every pattern, for ℓ from the lower bound
  ⌈log2(|relevant| + 1)⌉ up to the decision-tree depth D(f), which is an upper bound (k = 0).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from debatekit.engine.nodes import End, Judge, Move, Node, advance, judge
from debatekit.ledger import Ledger
from debatekit.machine.circuit import Circuit
from debatekit.problems.registry import Instance
from debatekit.protocols.spec import ProtocolSpec
from debatekit.reader import Reader

FUNCTIONS: dict[str, Callable[[tuple[int, ...]], int]] = {
    "parity": lambda x: sum(x) % 2,
    "majority": lambda x: int(sum(x) > len(x) / 2),
    "and": lambda x: int(all(x)),
    "or": lambda x: int(any(x)),
    "first": lambda x: x[0],
    "selector": lambda x: x[1 + x[0]] if len(x) >= 3 else x[0],
    "equality": lambda x: int(len(set(x)) <= 1),
}
"""Tiny functions f: {0,1}^n → {0,1} by name (``selector`` is x_1 ? x_3 : x_2)."""

MAX_TREE_FUNCTIONS = 400_000
"""The search stops (and reports bounds only) when the depth-ℓ functions would exceed this."""


class _Recorder(Reader):
    """A reader that records which positions of x the verifier reads."""

    def __init__(self, ledger: Ledger, read: set[int]):
        super().__init__(ledger)
        self.read = read

    def input_bit(self, x: np.ndarray, index: int) -> int:
        self.read.add(int(index))
        return super().input_bit(x, index)


@dataclass(frozen=True)
class Exploration:
    """Corollary 4 for one protocol and size: S ∩ x, the most bits any debate read, and the bound."""

    n: int
    readable: frozenset[int]
    debates: int
    max_bits_read: int
    log2_n: float


def readable_inputs(spec: ProtocolSpec, instance: Instance, budget: int = 2_000_000) -> Exploration:
    """Explore every message of both provers on every input x of ``instance``'s size: the x
    positions the verifier reads in some debate, and the most bits it reads (x, α and β)."""
    if spec.debate is None:
        raise ValueError(f"{spec.name} has no game tree to explore")
    read: set[int] = set()
    debates, most = 0, 0
    n = len(instance.x)
    for bits in itertools.product((0, 1), repeat=n):
        case = dataclasses.replace(instance, x=np.array(bits, dtype=np.uint8))
        ledger = Ledger()
        stack: list[Node] = [spec.debate(case, _Recorder(ledger, read))]
        while stack:
            node = stack.pop()
            debates += 1
            if debates > budget:
                raise ValueError(f"exploration passed {budget} positions; use a smaller size")
            if isinstance(node, Move):
                assert node.options is not None, "exploration needs every move space"
                stack += [advance(node, m, spec.alice_argues)[1] for m in node.options()]
            elif isinstance(node, Judge):
                before = ledger.bits_read
                judge(node, lambda question: 0, spec.alice_argues)
                most = max(most, ledger.bits_read - before)
            else:
                assert isinstance(node, End)
    return Exploration(n, frozenset(read), debates, most, math.log2(n) if n else 0.0)


def circuit_inputs(circuit: Circuit) -> frozenset[int]:
    """The x positions a circuit cross-examination verifier can read: the inputs gates read."""
    return frozenset(int(a) for a in np.concatenate([circuit.in0, circuit.in1]) if a < circuit.n_inputs)


# -- exact DQC of tiny functions ----------------------------------------------------------------


def truth_table(f: Callable[[tuple[int, ...]], int], n: int) -> int:
    """f as an integer whose bit i is f(x) for x with x_j = bit j of i."""
    return sum(f(tuple((i >> j) & 1 for j in range(n))) << i for i in range(2**n))


def _variable(i: int, variables: int) -> int:
    return sum(1 << k for k in range(2**variables) if (k >> i) & 1)


def relevant(table: int, n: int) -> list[int]:
    """The variables f depends on."""
    full = (1 << 2**n) - 1
    out = []
    for i in range(n):
        v = _variable(i, n)
        low, high = table & ~v & full, (table & v) >> (1 << i)
        if low != high:
            out.append(i)
    return out


def decision_tree_depth(table: int, n: int) -> int:
    """D(f): the least depth of a decision tree for f (a (0, D(f))-debate)."""
    size = 2**n
    bits = tuple((table >> k) & 1 for k in range(size))

    def depth(points: tuple[int, ...], free: tuple[int, ...]) -> int:
        if len({bits[p] for p in points}) <= 1:
            return 0
        return 1 + min(
            max(depth(tuple(p for p in points if (p >> i) & 1 == b), tuple(j for j in free if j != i)) for b in (0, 1))
            for i in free
        )

    return depth(tuple(range(size)), tuple(range(n)))


def _tree_functions(variables: int, depth: int) -> set[int] | None:
    """Every function of a decision tree of depth ≤ ``depth`` over ``variables`` variables, as
    truth tables; None past :data:`MAX_TREE_FUNCTIONS`."""
    full = (1 << 2**variables) - 1
    masks = [_variable(i, variables) for i in range(variables)]
    level = {0, full}
    for _ in range(depth):
        if len(level) ** 2 * variables > MAX_TREE_FUNCTIONS * 50:
            return None
        grown = set(level)
        for v in masks:
            for g, h in itertools.product(level, repeat=2):
                grown.add((v & g) | (~v & full & h))
        if len(grown) > MAX_TREE_FUNCTIONS:
            return None
        level = grown
    return level


def game_table(table: int, n: int, pattern: tuple[bool, ...]) -> int:
    """Q_1 t_1 … Q_r t_r V(x, t) as a table over x: ``pattern[j]`` True for ∀ (Prover 0's
    variable), False for ∃ (Prover 1's); t_j is variable n + j."""
    for j in range(len(pattern) - 1, -1, -1):
        half = 1 << (n + j)  # table positions with t_j = 0 come first
        low, high = table & ((1 << half) - 1), table >> half
        table = low & high if pattern[j] else low | high
    return table


@dataclass(frozen=True)
class DQCResult:
    function: str
    n: int
    relevant: int
    lower: int
    """⌈log2(|relevant| + 1)⌉: Corollary 4 with a depth-ℓ tree's 2^ℓ - 1 internal nodes."""
    decision_tree_depth: int
    dqc: int | None
    """Exact DQC(f) when the search settled it, else None (then lower ≤ DQC ≤ upper)."""
    upper: int
    searched: list[int]
    """The ℓ searched exhaustively (and found impossible, except the last if dqc is set)."""


def exact_dqc(name: str, n: int) -> DQCResult:
    """DQC of the named tiny function on n bits by search over verifiers (module docstring)."""
    if name not in FUNCTIONS:
        raise ValueError(f"unknown function {name!r}; choose from: {', '.join(FUNCTIONS)}")
    if not 1 <= n <= 4:
        raise ValueError(f"exact DQC searches n from 1 to 4, got {n}")
    table = truth_table(FUNCTIONS[name], n)
    rel = len(relevant(table, n))
    lower = math.ceil(math.log2(rel + 1))
    upper = decision_tree_depth(table, n)
    searched = []
    for ell in range(lower, upper):
        r = 2**ell - 1 - rel
        functions = _tree_functions(n + r, ell)
        if functions is None:
            return DQCResult(name, n, rel, max(lower, ell), upper, None, upper, searched)
        searched.append(ell)
        for pattern in itertools.product((True, False), repeat=r):
            if any(game_table(v, n, pattern) == table for v in functions):
                return DQCResult(name, n, rel, lower, upper, ell, ell, searched)
    return DQCResult(name, n, rel, lower, upper, upper, upper, searched)
