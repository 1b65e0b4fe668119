"""True quantified Boolean formulas (TQBF, PSPACE-complete): the showcase for Theorem 9 of the
debate query complexity paper, debated with the cross-examination lemma (Lemma 8) or with the
Karchmer-Wigderson walk (Theorem 5) over the same verifier.

For n quantified variables the function is f_n(x) = ∀v_1 ∃v_2 ∀v_3 … φ_x(v), where φ_x is a
3-CNF with m = round(0.85·n) clauses. The clause structure (which variables each clause reads,
at least one of them existential) is fixed for each n, drawn from a generator seeded by n, so
f_n is one function; the input x is the 3m literal signs, literal k of clause j being
v_{j,k} XOR x_{3j+k}. The verifier circuit C(x, v) of Lemma 8 computes φ_x(v): one XOR gate per
literal, an OR tree per clause and an AND tree over the clauses (about 6m gates), with the
quantified variables as the transcript: Prover 0 (Alice, arguing f = 0) chooses the universal
v_1, v_3, … as α_1, α_2, … and Prover 1 (Bob) the existential ones as β_1, β_2, …. Lemma 8 then
has Alice write every gate value of C and Bob point at a wrong gate or the output, so the
verifier reads ⌈log2(size(C)+1)⌉ + 3 = O(log n) bits. The ``kw`` protocol plays the same rounds
and then walks the levelled form of C(x, α, β) down to one literal (of x or of the transcript):
depth + 1 bits, also O(log n) since C has depth O(log m).

The signs are drawn uniformly until the formula has the requested truth, which is decided by
exhaustive evaluation of the game (2^n evaluations of C, vectorised); honest provers choose
their variables the same way. Hence n ≤ 16.
"""

from __future__ import annotations

import numpy as np

from debatekit.machine.circuit import Circuit, CircuitBuilder, Gate
from debatekit.machine.levelled import levelled
from debatekit.problems.registry import Feature, Instance, InstanceError, problem
from debatekit.protocols.circuit_cross_exam import MAX_EXHAUSTIVE_ROUNDS, GameValue

CLAUSES_PER_VARIABLE = 0.85
"""Chosen so that both answers are common among random signs for every n in [2, 16]."""

DRAWS = 400


def clause_structure(n: int) -> list[tuple[int, ...]]:
    """The variables (0-based) of each clause of f_n: one existential (odd index) and up to two
    others, distinct, from a generator seeded by n."""
    rng = np.random.default_rng([n, 2024])
    existential = np.arange(1, n, 2)
    clauses = []
    for _ in range(max(1, round(CLAUSES_PER_VARIABLE * n))):
        e = int(rng.choice(existential))
        others = [v for v in range(n) if v != e]
        clauses.append((e, *(int(v) for v in rng.choice(others, min(2, len(others)), replace=False))))
    return clauses


def tqbf_circuit(n: int) -> Circuit:
    """C(x, v) = φ_x(v): inputs are the 3m signs, the witness (transcript) the n variables."""
    clauses = clause_structure(n)
    m = len(clauses)
    b = CircuitBuilder(inputs=3 * m, witness=n)
    ors = [
        b.reduce(Gate.OR, [b.xor(3 * j + k, 3 * m + v) for k, v in enumerate(clause)])
        for j, clause in enumerate(clauses)
    ]
    b.reduce(Gate.AND, ors)
    return b.build()


def quantified_value(circuit: Circuit, x: np.ndarray) -> int:
    """∀v_1 ∃v_2 … φ_x(v) by exhaustive evaluation."""
    return GameValue(circuit, x).value


@problem(
    "tqbf",
    "∀v1 ∃v2 ∀v3 … of a random 3-CNF whose literal signs are x (PSPACE-complete; Theorem 9 via Lemma 8)",
    frozenset({Feature.DETERMINISTIC, Feature.CIRCUIT, Feature.LEVELLED}),
    default_size=8,
    min_size=2,
    max_size=MAX_EXHAUSTIVE_ROUNDS,
)
def tqbf(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    circuit = tqbf_circuit(n)
    for _ in range(DRAWS):
        x = rng.integers(0, 2, circuit.n_inputs).astype(np.uint8)
        if quantified_value(circuit, x) == truth:
            return Instance("tqbf", n, truth, x, machine=circuit, levelled=lambda: levelled(circuit))
    raise InstanceError(f"no {'true' if truth else 'false'} tqbf formula of size {n} found in {DRAWS} draws")
