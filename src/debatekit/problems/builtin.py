"""The built-in problems and where each comes from."""

from __future__ import annotations

import operator

import numpy as np

from debatekit.machine.circuit import (
    Circuit,
    CircuitBuilder,
    Gate,
    majority_circuit,
    parity_circuit,
)
from debatekit.machine.decomposition import natural
from debatekit.machine.levelled import levelled, parity_levelled
from debatekit.machine.transcript import MachineBuilder, TableMachine
from debatekit.machine.turing import palindrome_machine, parity_machine
from debatekit.oracle import NO_ORACLE, FunctionOracle
from debatekit.problems.registry import Feature, Instance, InstanceError, problem


@problem(
    "parity",
    "XOR of n input bits: a balanced XOR circuit, its levelled form and a scanning Turing machine",
    frozenset(Feature) - {Feature.LIPSCHITZ},  # every form but K (no judgement: no K to state)
    default_size=64,
)
def parity(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    x = rng.integers(0, 2, n).astype(np.uint8)
    if int(x.sum() % 2) != truth:
        x[rng.integers(n)] ^= 1
    circuit = parity_circuit(n)
    return Instance(
        "parity", n, truth, x, machine=circuit, turing=parity_machine(n), levelled=lambda: parity_levelled(n),
        decomposition=lambda: natural(circuit, x, NO_ORACLE),
    )  # fmt: skip


@problem(
    "majority",
    "1 iff more than half of n bits are 1: an adder-tree counting circuit and its levelled form",
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC, Feature.CIRCUIT, Feature.LEVELLED, Feature.DECOMPOSITION}),
    default_size=1024,
    max_size=2**20,
)
def majority(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    ones = _near_threshold(n, truth, rng)
    x = np.zeros(n, dtype=np.uint8)
    x[rng.choice(n, ones, replace=False)] = 1
    circuit = majority_circuit(n)
    return Instance(
        "majority", n, truth, x, machine=circuit, levelled=lambda: levelled(circuit),
        decomposition=lambda: natural(circuit, x, NO_ORACLE),
    )  # fmt: skip


def _near_threshold(n: int, truth: bool, rng: np.random.Generator) -> int:
    """A count of ones near the majority threshold floor(n/2)+1, on the requested side of it."""
    spread = max(1, n // 16)
    threshold = n // 2 + 1
    ones = threshold + int(rng.integers(0, spread)) if truth else threshold - 1 - int(rng.integers(0, spread))
    ones = min(max(ones, 0), n)
    if (ones >= threshold) != truth:
        raise InstanceError(f"majority has no {'yes' if truth else 'no'} instance of size {n}")
    return ones


@problem(
    "palindrome",
    "is the input a palindrome: the textbook Turing machine, T ~ n^2/2",
    frozenset({Feature.TURING, Feature.DETERMINISTIC}),
    default_size=32,
    max_size=2048,
)
def palindrome(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    half = rng.integers(0, 2, (n + 1) // 2).astype(np.uint8)
    x = np.concatenate([half, half[: n // 2][::-1]])
    if not truth:
        if n < 2:
            raise InstanceError("every string of length 1 is a palindrome; use --size >= 2 for --truth no")
        i = int(rng.integers(n // 2))
        x[i] ^= 1
    return Instance("palindrome", n, truth, x, turing=palindrome_machine(n))


def cnf_circuit(clauses: list[tuple[int, ...]], n_vars: int) -> Circuit:
    """M(x, w) of Theorem 7.1 for SAT: x is the CNF (compiled into the circuit), w the assignment.
    A literal +v / -v reads witness bit v-1 (negations shared), clauses are OR trees and the
    output is the AND tree over clauses."""
    b = CircuitBuilder(inputs=0, witness=n_vars)
    negated: dict[int, int] = {}

    def literal(lit: int) -> int:
        v = abs(lit) - 1
        if lit > 0:
            return v
        if v not in negated:
            negated[v] = b.not_(v)
        return negated[v]

    ors = [b.reduce(Gate.OR, [literal(lit) for lit in clause]) for clause in clauses]
    out = b.reduce(Gate.AND, ors)
    if out < n_vars:  # a single one-literal clause: copy it through a gate
        b.and_(out, out)
    return b.build()


@problem(
    "sat-witness",
    "3-CNF satisfiability with the assignment as witness (Theorem 7.1): planted "
    "solution for yes, planted unsatisfiable core for no",
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC}),
    default_size=20,
    min_size=3,
    max_size=2**16,
)
def sat_witness(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    def random_clause() -> tuple[int, ...]:
        variables = rng.choice(n, 3, replace=False) + 1
        signs = rng.choice([-1, 1], 3)
        return tuple(int(s * v) for s, v in zip(signs, variables, strict=True))

    assignment = rng.integers(0, 2, n).astype(np.uint8)
    satisfied = lambda clause: any((lit > 0) == bool(assignment[abs(lit) - 1]) for lit in clause)  # noqa: E731
    clauses: list[tuple[int, ...]] = []
    while len(clauses) < 4 * n:
        clause = random_clause()
        if not truth or satisfied(clause):
            clauses.append(clause)
    if not truth:  # all eight sign patterns on three variables: no assignment satisfies them all
        core = rng.choice(n, 3, replace=False) + 1
        clauses += [
            tuple(int(s) * int(v) for s, v in zip(signs, core, strict=True))
            for signs in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3)
        ]
        clauses = [clauses[i] for i in rng.permutation(len(clauses))]
    return Instance(
        "sat-witness", n, truth, np.zeros(0, dtype=np.uint8), machine=cnf_circuit(clauses, n), witness=assignment
    )


def judged_majority_machine(n: int, features: int) -> TableMachine:
    """n oracle steps, each asking whether item i (its ``features`` input bits) is acceptable,
    then the majority circuit over those n judgements, step for step."""
    b = MachineBuilder(inputs=n * features)
    judged = [b.ask(_item_question, *range(i * features, (i + 1) * features)) for i in range(n)]
    count = majority_circuit(n)
    address = judged + [-1] * count.length  # circuit address -> machine address
    for t in range(count.length):
        op, deps = int(count.ops[t]), [address[a] for a in count.relevant(t)]
        address[n + t] = b.compute(_GATE_FUNCTIONS[op], *deps)
    return b.build()


def _item_question(*item: int) -> tuple[str, tuple[int, ...]]:
    return ("is this item acceptable?", item)


def _not(a: int) -> int:
    return 1 - a


_GATE_FUNCTIONS = {Gate.AND: operator.and_, Gate.OR: operator.or_, Gate.XOR: operator.xor, Gate.NOT: _not}
"""Module-level functions, not lambdas: the machine pickles (an isolated player's copy of it)."""


@problem(
    "approval-majority",
    "do most of n items pass a human judgement: n deterministic oracle queries, then a majority circuit",
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC, Feature.DECOMPOSITION}),
    default_size=64,
    max_size=2**14,
)
def approval_majority(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    features = 3
    kinds = [tuple(int(b) for b in np.binary_repr(k, features)) for k in range(2**features)]
    verdicts = rng.permutation([1] * (len(kinds) // 2) + [0] * (len(kinds) // 2))
    judgement = dict(zip(kinds, verdicts.tolist(), strict=True))
    approved = [k for k in kinds if judgement[k]]
    rejected = [k for k in kinds if not judgement[k]]
    ones = _near_threshold(n, truth, rng)
    chosen = [approved[i] for i in rng.integers(len(approved), size=ones)]
    chosen += [rejected[i] for i in rng.integers(len(rejected), size=n - ones)]
    items = [chosen[i] for i in rng.permutation(n)]
    x = np.array([bit for item in items for bit in item], dtype=np.uint8)
    oracle = FunctionOracle(lambda query: float(judgement[query[1]]), deterministic=True)
    machine = judged_majority_machine(n, features)
    return Instance(
        "approval-majority", n, truth, x, oracle=oracle, machine=machine,
        decomposition=lambda: natural(machine, x, oracle),
    )  # fmt: skip
