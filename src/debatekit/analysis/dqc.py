"""Debate query complexity (DQC) lower bounds and exact values for tiny functions.

* :func:`readable_inputs`: Corollary 4 of the debate query complexity paper made checkable. For
  one protocol and instance size, the set S of variables of x the verifier could ever read, found
  by exploring the game tree over every message of both provers (and every input x), and the most
  bits one whole debate reads (of x, α and β, over every move, not just the final check); a
  function that depends on all n bits needs all of them in S, so ℓ ≥ log2 n.
  :func:`circuit_inputs` derives the same set from a circuit's wiring, for any size.
* :func:`exact_dqc`: DQC(f) of a function on n ≤ 4 bits, exactly, by search over verifiers
  (:func:`debate_functions`). Bits f does not depend on are fixed to 0 first (a verifier gains
  nothing by reading them), leaving m relevant bits. A deterministic ℓ-query verifier is a
  decision tree of depth ℓ over (x, α, β); it has at most 2^ℓ - 1 internal nodes, so it reads at
  most 2^ℓ - 1 distinct variables (Lemma 3's k ≤ 2^ℓ follows) and, reading all m bits of x
  (Section 2.1, item 2), at most r = 2^ℓ - 1 - m transcript bits. Quantifiers over variables the
  tree never reads drop out of ∀α_1 ∃β_1 … V, so a debate is, up to value, a decision tree over
  x and t_1, …, t_r with a pattern saying whether each t_j is Prover 0's (∀) or Prover 1's (∃);
  every such pair is also realisable as a debate (each t_j in its own round, the other messages
  unread). ℓ runs from ⌈log2(m + 1)⌉ up to the decision-tree depth D(f), an upper bound (k = 0).
* :func:`randomised_lower_bound`: Theorem 13's log2 n - 3 for randomised verifiers. Theorem 14
  and Corollary 7 are not executed (README, "Query complexity").
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
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

MAX_N = 4
"""Exact DQC searches n ≤ 4: then ℓ < D(f) ≤ 4, and the search below needs ℓ ≤ 3."""


class BudgetExceeded(ValueError):
    """A search or exploration passed its position budget."""


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
    """Over every debate, every bit the verifier read in it: prover messages as they arrive, and
    x, α and β in the final check."""
    log2_n: float


def readable_inputs(spec: ProtocolSpec, instance: Instance, budget: int = 2_000_000) -> Exploration:
    """Explore every message of both provers on every input x of ``instance``'s size: the x
    positions the verifier reads in some debate, and the most bits one debate reads, from its
    first move to its verdict (:class:`BudgetExceeded` past ``budget`` positions)."""
    if spec.debate is None:
        raise ValueError(f"{spec.name} has no game tree to explore")
    read: set[int] = set()
    debates, most = 0, 0
    n = len(instance.x)
    for bits in itertools.product((0, 1), repeat=n):
        case = dataclasses.replace(instance, x=np.array(bits, dtype=np.uint8))
        ledger = Ledger()
        stack: list[tuple[Node, int]] = [(spec.debate(case, _Recorder(ledger, read)), 0)]
        while stack:
            node, spent = stack.pop()  # spent: bits read on the way to this node
            debates += 1
            if debates > budget:
                raise BudgetExceeded(f"exploration passed {budget} positions; use a smaller size or a larger budget")
            if isinstance(node, Move):
                assert node.options is not None, "exploration needs every move space"
                for message in node.options():
                    before = ledger.bits_read
                    _, child = advance(node, message, spec.alice_argues)
                    stack.append((child, spent + ledger.bits_read - before))
            elif isinstance(node, Judge):
                before = ledger.bits_read
                judge(node, lambda question: 0, spec.alice_argues)
                most = max(most, spent + ledger.bits_read - before)
            else:
                assert isinstance(node, End)
                most = max(most, spent)
    return Exploration(n, frozenset(read), debates, most, math.log2(n) if n else 0.0)


def circuit_inputs(circuit: Circuit) -> frozenset[int]:
    """The x positions a circuit cross-examination verifier can read: the inputs gates read."""
    return frozenset(int(a) for a in np.concatenate([circuit.in0, circuit.in1]) if a < circuit.n_inputs)


# -- exact DQC of tiny functions ----------------------------------------------------------------


def truth_table(f: Callable[[tuple[int, ...]], int], n: int) -> int:
    """f as an integer whose bit i is f(x) for x with x_j = bit j of i."""
    return sum(f(tuple((i >> j) & 1 for j in range(n))) << i for i in range(2**n))


def _variable(i: int, variables: int) -> int:
    """The table of variable i over ``variables`` variables."""
    return sum(1 << k for k in range(2**variables) if (k >> i) & 1)


def depends(table: int, variables: int, i: int) -> bool:
    """Whether the function ``table`` on ``variables`` variables depends on variable i."""
    v = _variable(i, variables)
    return (table & ~v) != (table & v) >> (1 << i)


def relevant(table: int, n: int) -> list[int]:
    """The variables f depends on."""
    return [i for i in range(n) if depends(table, n, i)]


def restrict(table: int, n: int, keep: list[int]) -> int:
    """f as a function of the variables ``keep`` only, the others fixed to 0."""
    return sum(
        ((table >> sum(((k >> a) & 1) << i for a, i in enumerate(keep))) & 1) << k for k in range(2 ** len(keep))
    )


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


@functools.cache
def tree_functions(variables: int, depth: int) -> tuple[int, ...]:
    """Every function of a decision tree of depth ≤ ``depth`` over ``variables`` variables, as
    truth tables, sorted (depth ≤ 2 here: at most 2·variables + 2 functions of depth 1, so at
    most variables·(2·variables + 2)^2 of depth 2)."""
    full = (1 << 2**variables) - 1
    level = {0, full}
    for _ in range(depth):
        level |= {
            (v & g) | (~v & full & h)
            for v in (_variable(i, variables) for i in range(variables))
            for g, h in itertools.product(level, repeat=2)
        }
    return tuple(sorted(level))


def game_table(table: int, n: int, pattern: tuple[bool, ...]) -> int:
    """Q_1 t_1 … Q_r t_r V(x, t) as a table over x: ``pattern[j]`` True for ∀ (Prover 0's
    variable), False for ∃ (Prover 1's); t_j is variable n + j."""
    return _quantify(table, n, pattern, 0)


def _quantify(table: int, n: int, pattern: tuple[bool, ...], start: int) -> int:
    """Q_start t_start … Q_r t_r V: a table over x and t_1 … t_{start - 1} (innermost first)."""
    for j in range(len(pattern) - 1, start - 1, -1):
        half = 1 << (n + j)  # table positions with t_j = 0 come first
        low, high = table & ((1 << half) - 1), table >> half
        table = low & high if pattern[j] else low | high
    return table


def _quantify_array(tables: np.ndarray, n: int, pattern: tuple[bool, ...]) -> np.ndarray:
    """:func:`game_table` on uint64 tables over x and t_1 … t_len(pattern) (at most 64 bits)."""
    for j in range(len(pattern) - 1, -1, -1):
        half = 1 << (n + j)
        low, high = tables & np.uint64((1 << half) - 1), tables >> np.uint64(half)
        tables = low & high if pattern[j] else low | high
    return tables


def _pairs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered pair of ``values`` (an element with itself included)."""
    left, right = np.triu_indices(len(values))
    return values[left], values[right]


@dataclass(frozen=True)
class Witness:
    """A verifier achieving ℓ: its table over x (m relevant bits) then t_1 … t_r, and who owns each t_j."""

    table: int
    variables: int
    pattern: tuple[bool, ...]
    """True for ∀ (Prover 0's bit), False for ∃ (Prover 1's), t_1 (the first message) first."""
    root: str
    """The variable the tree reads first: ``x<i>`` or ``t<j>`` (1-based)."""


@dataclass(frozen=True)
class Level:
    """Every f on m bits that some debate with ℓ queries and pattern P decides (exact)."""

    m: int
    ell: int
    pattern: tuple[bool, ...]
    decided: np.ndarray
    """Boolean, indexed by truth table: decided[f] iff some depth-ℓ verifier with ``pattern`` decides f."""
    positions: int
    """Candidate verifiers compared: subtree functions quantified, then root-and-subtree combinations."""


def debate_functions(m: int, ell: int, pattern: tuple[bool, ...], budget: int) -> Level:
    """Every f on m bits decided by a verifier of depth ≤ ℓ over (x, t_1 … t_r), r = len(pattern),
    with the game ``pattern``, by its root variable (ℓ ≤ 3, m ≤ 4, m + r ≤ 7: the inner values
    fit 64 bits).

    * Root x_i: x is not quantified, so Q(x_i ? g : h) = x_i ? Q g : Q h and the two subtrees are
      independent: f must agree with some Q g where x_i = 1 and with some Q h where x_i = 0.
    * Root t_j: g and h need not read t_j again, so
      Q(t_j ? g : h) = Q_{<j}[(Q_{>j} g) op_j (Q_{>j} h)], op_j AND for ∀ and OR for ∃, over pairs
      of inner values. Negating t_j swaps g and h (the symmetry reduction: unordered pairs), and
      subtrees with equal inner values are one (the memo: unique values before pairing).

    The subtrees are every function of depth ℓ - 1 (:func:`tree_functions`). Past ``budget``
    positions :class:`BudgetExceeded` is raised before the work is done."""
    r = len(pattern)
    if not (1 <= ell <= 3 and m <= MAX_N and m + r <= 7):
        raise ValueError(f"the search handles 1 <= ell <= 3, m <= {MAX_N}, m + r <= 7; got {ell}, {m}, {r}")
    variables = m + r
    subtrees = tree_functions(variables, ell - 1)
    positions = 0

    def spend(count: int) -> None:
        nonlocal positions
        positions += count
        if positions > budget:
            raise BudgetExceeded(f"exact DQC search passed {budget} positions at ell = {ell}")

    full = (1 << 2**m) - 1
    decided = np.zeros(2 ** (2**m), dtype=bool)
    spend(len(subtrees))
    values = np.unique(np.array([game_table(g, m, pattern) for g in subtrees], dtype=np.uint64))
    for i in range(m):
        mask = _variable(i, m)
        high, low = np.unique(values & np.uint64(mask)), np.unique(values & np.uint64(full & ~mask))
        spend(len(high) * len(low))
        decided[(high[:, None] | low[None, :]).ravel().astype(np.intp)] = True
    for j in range(r):
        free = [g for g in subtrees if not depends(g, variables, m + j)]
        spend(len(free))
        inner = np.unique(np.array([_inner(g, m, pattern, j) for g in free], dtype=np.uint64))
        spend(len(inner) * (len(inner) + 1) // 2)
        left, right = _pairs(inner)
        joined = left & right if pattern[j] else left | right
        decided[_quantify_array(joined, m, pattern[:j]).astype(np.intp)] = True
    return Level(m, ell, pattern, decided, positions)


def _inner(g: int, m: int, pattern: tuple[bool, ...], j: int) -> int:
    """Q_{>j} g for a g that does not read t_j: a table over x and t_1 … t_{j-1}."""
    return _quantify(g, m, pattern, j + 1) & ((1 << (1 << (m + j))) - 1)


def witness(f: int, level: Level) -> Witness:
    """A verifier of depth ≤ ℓ with ``level.pattern`` that decides f (which ``level`` decides)."""
    m, pattern = level.m, level.pattern
    variables = m + len(pattern)
    full = (1 << 2**m) - 1
    subtrees = tree_functions(variables, level.ell - 1)
    for i in range(m):
        mask, var = _variable(i, m), _variable(i, variables)
        ones = next((g for g in subtrees if (game_table(g, m, pattern) ^ f) & mask == 0), None)
        zeros = next((h for h in subtrees if (game_table(h, m, pattern) ^ f) & full & ~mask == 0), None)
        if ones is not None and zeros is not None:
            return Witness((var & ones) | (~var & zeros & ((1 << 2**variables) - 1)), variables, pattern, f"x{i + 1}")
    for j in range(len(pattern)):
        free = [g for g in subtrees if not depends(g, variables, m + j)]
        inner = np.array([_inner(g, m, pattern, j) for g in free], dtype=np.uint64)
        for g, value in zip(free, inner, strict=True):
            joined = value & inner if pattern[j] else value | inner
            hits = np.flatnonzero(_quantify_array(joined, m, pattern[:j]) == np.uint64(f))
            if hits.size:
                var, h = _variable(m + j, variables), free[int(hits[0])]
                return Witness((var & g) | (~var & h & ((1 << 2**variables) - 1)), variables, pattern, f"t{j + 1}")
    raise ValueError("f is not decided at this level")


def randomised_lower_bound(m: int) -> float:
    """Theorem 13: a randomised verifier with error ≤ 1/3 for f depending on all of its m bits
    makes at least log2 m - 3 queries in the worst case (vacuous for m ≤ 8)."""
    return math.log2(m) - 3 if m else 0.0


@dataclass(frozen=True)
class DQCResult:
    function: str
    n: int
    relevant: int
    lower: int
    """⌈log2(m + 1)⌉, m relevant bits: the decision-tree floor. Corollary 4 states DQC(f) ≥ log2 n
    (Lemma 3's |S| ≤ 2^ℓ); counting a depth-ℓ tree's 2^ℓ - 1 internal nodes instead, all m relevant
    bits read need 2^ℓ - 1 ≥ m, a floor at least Corollary 4's log2 m (and one more when m is a
    power of 2)."""
    randomised_lower: float
    """Theorem 13's log2 m - 3, for randomised verifiers."""
    decision_tree_depth: int
    dqc: int
    """Exact DQC(f)."""
    searched: list[int]
    """The ℓ searched exhaustively (and found impossible, except the last when dqc < D(f))."""
    positions: int
    seconds: float
    witness: Witness | None
    """A verifier of depth dqc over the relevant bits and the transcript (None when dqc = D(f):
    then the decision tree for f is one, with no transcript)."""


def exact_dqc(name: str, n: int, budget: int = 20_000_000) -> DQCResult:
    """DQC of the named tiny function on n ≤ 4 bits, exactly (:func:`table_dqc`)."""
    if name not in FUNCTIONS:
        raise ValueError(f"unknown function {name!r}; choose from: {', '.join(FUNCTIONS)}")
    return table_dqc(truth_table(FUNCTIONS[name], n), n, budget, name)


def table_dqc(full_table: int, n: int, budget: int = 20_000_000, name: str = "") -> DQCResult:
    """DQC of the function with truth table ``full_table`` on n ≤ 4 bits, exactly (module
    docstring, :func:`debate_functions`); :class:`BudgetExceeded` past ``budget`` positions."""
    if not 1 <= n <= MAX_N:
        raise ValueError(f"exact DQC searches n from 1 to {MAX_N}, got {n}")
    start = time.perf_counter()
    keep = relevant(full_table, n)
    m, table = len(keep), restrict(full_table, n, keep)
    lower = math.ceil(math.log2(m + 1))
    upper = decision_tree_depth(table, m)
    searched: list[int] = []
    positions = 0
    for ell in range(lower, upper):
        searched.append(ell)
        for pattern in itertools.product((True, False), repeat=2**ell - 1 - m):
            level = debate_functions(m, ell, pattern, budget - positions)
            positions += level.positions
            if level.decided[table]:
                found = witness(table, level)
                return DQCResult(
                    name, n, m, lower, randomised_lower_bound(m), upper, ell, searched, positions,
                    time.perf_counter() - start, found,
                )  # fmt: skip
    return DQCResult(
        name, n, m, lower, randomised_lower_bound(m), upper, upper, searched, positions,
        time.perf_counter() - start, None,
    )  # fmt: skip
