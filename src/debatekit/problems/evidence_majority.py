"""A problem for recursive debate (prover-estimator and naive recursion) with its recursive
decomposition M_D (Definition 5.1).

**evidence-majority** (Definitions 8.1 and 8.2, Theorem 8.3, Appendix C). The original
computation is an alternating AND/OR tree of fan-in w = FAN_IN and depth d over n = w^d human
judgements with ground truth x; each judgement is s-supported by s = κ^d pieces of evidence that
agree with it independently except with probability ε/(4n) (the oracle distribution P). The
stable transformation L' (Definition 8.2) fixes the evidence outcomes r; Appendix C's circuit C'
decides L' by majority votes over κ fresh copies below every gate, and its decomposition
(:class:`EvidenceMajority`) has width q = w·κ and is (ε, 1/2)-stable for ε = EPSILON.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from functools import cached_property

import numpy as np

from debatekit.machine.decomposition import Automaton, CountStatistic, Decomposition, LeafOracle, Query, exact_split
from debatekit.problems.registry import Feature, Instance, problem

EPSILON = 0.1
"""The ε the decomposition is (ε, 1/2)-stable for (Theorem 8.3)."""
FAN_IN = 2
"""w: the fan-in of the original AND/OR tree."""


def majority_copies(epsilon: float, fan_in: int) -> int:
    """κ = ⌈3 ln(2w/ε) / D(1/2 ‖ 1 - 3ε/2)⌉ with D(1/2 ‖ 1 - 3ε/2) = ln(1/(6ε(1 - 3ε/2))), as
    in Appendix C: then a majority of κ answers, each right with probability > 1 - 3ε/2, errs
    with probability ≤ ε/(2w) by the Chernoff bound, and M_D (w majorities) by < ε/2.
    For ε = 0.1, w = 2: 3 ln 40 / ln(1/0.51) = 11.067 / 0.6733 = 16.44, so κ = 17."""
    divergence = math.log(1 / (6 * epsilon * (1 - 3 * epsilon / 2)))
    if divergence <= 0:
        raise ValueError(f"Appendix C's κ needs 6ε(1 - 3ε/2) < 1, got ε = {epsilon}")
    return math.ceil(3 * math.log(2 * fan_in / epsilon) / divergence)


KAPPA = majority_copies(EPSILON, FAN_IN)
"""κ = 17: copies under each majority gate of C'."""
EVIDENCE_DRAWS = 100
"""Redraws of r allowed when C' disagrees with L(x): each happens with probability < ε/(4n), so
running out means C' is wrong, not unlucky."""


def and_or_tree(x: np.ndarray, fan_in: int = FAN_IN) -> int:
    """L(x): the alternating AND/OR tree of fan-in w over x (len(x) = w^d), top gate AND."""
    values = np.asarray(x, dtype=bool)
    depth = round(math.log(len(values), fan_in))
    for layer in range(1, depth + 1):
        grouped = values.reshape(-1, fan_in)
        values = grouped.all(axis=1) if (depth - layer) % 2 == 0 else grouped.any(axis=1)
    return int(values[0])


class EvidenceMajority(Decomposition):
    """Appendix C's stable decomposition of L' (Definition 8.2) for an alternating AND/OR tree.

    C' has layers k = 0..d. Layer 0 holds the evidence: for input i and a copy path
    (c_1..c_d) ∈ [κ]^d, the piece v_i^j with j = (c_1..c_d) read base κ (c_1 most significant)
    is ``evidence[i·s + j]``, s = κ^d. Layer k has gates g ∈ [w^(d-k)] of type G_k (AND at the
    top, k = d, alternating below), in κ^(d-k) copies named by paths in [κ]^(d-k); the copy
    (k, g, path) computes G_k(Maj_c (k-1, g·w, path + (c,)), ..., Maj_c (k-1, g·w + w-1,
    path + (c,))), every copy on its own fresh evidence. The root is (d, 0, ()).

    A level-k query is one such copy; its split is its w·κ input wires, input-major
    ((k-1, g·w + i, path + (c,)) for i ∈ [w], then c ∈ [κ]), and M_D = G_k ∘ (w majorities of κ).
    A level-0 query is one piece of evidence: it names no proof bits (m = 0), and the oracle
    returns that evidence bit. The answers are deterministic given r (the evidence), so the
    correct answers are bits; ``epsilon`` is the ε of Theorem 8.3's (ε, 1/2)-stability. M_D
    reads the split only through its w majority counts: ``statistic`` has the w groups of κ wires.
    """

    def __init__(self, evidence: np.ndarray, fan_in: int = FAN_IN, kappa: int = KAPPA, epsilon: float = EPSILON):
        if fan_in < 2 or kappa < 1 or kappa % 2 == 0:
            raise ValueError("EvidenceMajority needs fan-in w >= 2 and an odd κ (majorities without ties)")
        self.fan_in, self.kappa, self.epsilon = fan_in, kappa, epsilon
        self.evidence = np.array(evidence, dtype=np.uint8)
        self.evidence.flags.writeable = False
        total, depth = len(self.evidence), 0
        while total > fan_in**depth * kappa**depth:
            depth += 1
        if depth < 1 or total != (fan_in * kappa) ** depth:
            raise ValueError(f"evidence must have n·s = (wκ)^d bits for some d >= 1, got {total}")
        self.depth, self.width = depth, fan_in * kappa
        self.n_inputs, self.support = fan_in**depth, kappa**depth
        self.statistic = CountStatistic(tuple(tuple(range(i * kappa, (i + 1) * kappa)) for i in range(fan_in)))

    def gate_is_and(self, level: int) -> bool:
        """G_k: AND at the top layer d, alternating below."""
        return (self.depth - level) % 2 == 0

    @cached_property
    def _layers(self) -> list[np.ndarray]:
        """Every copy of every gate of C': layer k as an array [gate, copy number] (the copy path
        read base κ), computed bottom-up by reshaping."""
        w, kappa = self.fan_in, self.kappa
        values = self.evidence.reshape(self.n_inputs, self.support).astype(bool)
        layers = [values]
        for level in range(1, self.depth + 1):
            gates, copies = values.shape[0] // w, values.shape[1] // kappa
            votes = values.reshape(gates, w, copies, kappa).sum(axis=3)
            majorities = votes > kappa // 2
            values = majorities.all(axis=1) if self.gate_is_and(level) else majorities.any(axis=1)
            layers.append(values)
        return layers

    def _copy_number(self, path: tuple[int, ...]) -> int:
        number = 0
        for c in path:
            if not 0 <= c < self.kappa:
                raise ValueError(f"copy index {c} outside [0, {self.kappa})")
            number = number * self.kappa + c
        return number

    def _locate(self, query: Query, level: int) -> tuple[int, int]:
        k, gate, path = query  # type: ignore[misc]
        if k != level or len(path) != self.depth - level or not 0 <= gate < self.fan_in ** (self.depth - level):
            raise ValueError(f"{query} is not a level-{level} query of this C'")
        return gate, self._copy_number(path)

    def root(self) -> Query:
        return (self.depth, 0, ())

    def split(self, query: Query, level: int) -> tuple[Query, ...]:
        _, gate, path = query  # type: ignore[misc]
        return tuple(
            (level - 1, gate * self.fan_in + i, (*path, c)) for i in range(self.fan_in) for c in range(self.kappa)
        )

    def valid_split(self, query: Query, level: int, subqueries: object) -> bool:
        """Exactly :meth:`split`, made of ints; never raises."""
        return exact_split(self, query, level, subqueries)

    def combine(self, query: Query, level: int, answers: tuple[int, ...]) -> int:
        kappa = self.kappa
        majorities = [sum(answers[i * kappa : (i + 1) * kappa]) > kappa // 2 for i in range(self.fan_in)]
        return int(all(majorities) if self.gate_is_and(level) else any(majorities))

    def automaton(self, query: Query, level: int) -> Automaton:
        """G ∘ Maj streamed: state (G over the completed majorities, ones in the current group).
        Once G is decided (a false majority under AND, a true one under OR) the count is dropped,
        which keeps the reachable states few."""
        kappa, is_and = self.kappa, self.gate_is_and(level)
        decided = 0 if is_and else 1

        def step(state: Hashable, i: int, z: int) -> Hashable:
            acc, ones = state  # type: ignore[misc]
            if acc == decided:
                return state
            ones += int(z)
            if (i + 1) % kappa:
                return (acc, ones)
            majority = int(ones > kappa // 2)
            return (acc & majority if is_and else acc | majority, 0)

        return Automaton((1 - decided, 0), step, lambda state: int(state[0]))  # type: ignore[index]

    def leaf(self, query: Query) -> tuple[int, ...]:
        return ()

    def judge(self, query: Query, bits: tuple[int, ...]) -> float:
        if len(bits):
            raise ValueError(f"an evidence leaf names no proof bits, got {len(bits)}")
        gate, copy = self._locate(query, 0)
        return float(self.evidence[gate * self.support + copy])

    def proof(self, j: int) -> int:
        raise IndexError(f"EvidenceMajority has no implicit proof (m = 0), asked for u_{j}")

    @property
    def proof_length(self) -> int:
        return 0

    def truth(self, query: Query, level: int) -> float:
        gate, copy = self._locate(query, level)
        return float(self._layers[level][gate, copy])


@problem(
    "evidence-majority",
    f"alternating AND/OR tree (fan-in {FAN_IN}, depth d = size, top AND) over 2^d human judgements, "
    f"each backed by {KAPPA}^d pieces of noisy evidence; Appendix C's majority circuit C' as an "
    f"(ε = {EPSILON}, 1/2)-stable decomposition of width {FAN_IN * KAPPA}",
    frozenset({Feature.DECOMPOSITION, Feature.DETERMINISTIC}),
    default_size=2,
    min_size=1,
    max_size=3,
)
def evidence_majority(d: int, truth: bool, rng: np.random.Generator) -> Instance:
    """x: n = w^d judgements, uniform subject to L(x) = truth (by rejection). r: the evidence,
    n·s bits with s = κ^d, each equal to its x_i except with probability ε/(4n) (Definition 8.1).
    If C' on r disagrees with L(x) (probability < ε/(4n), Appendix C) r is redrawn (at most
    EVIDENCE_DRAWS times), so the instance's answer is both L(x) and L'(x, r). Instance.x is x
    followed by the evidence: ``x[:n]`` are the judgements, ``x[n + i·s + j]`` is evidence j of
    judgement i (j the copy path read base κ, as in :class:`EvidenceMajority`)."""
    n, s = FAN_IN**d, KAPPA**d
    while True:
        x = rng.integers(0, 2, n).astype(np.uint8)
        if and_or_tree(x) == truth:
            break
    noise = EPSILON / (4 * n)
    for _ in range(EVIDENCE_DRAWS):
        flips = (rng.random(n * s) < noise).astype(np.uint8)
        evidence = np.repeat(x, s) ^ flips
        decomposition = EvidenceMajority(evidence)
        if decomposition.truth(decomposition.root(), d) == truth:
            break
    else:
        raise RuntimeError(f"C' disagreed with L(x) on {EVIDENCE_DRAWS} draws of the evidence: C' is broken")
    return Instance(
        "evidence-majority", d, truth, np.concatenate([x, evidence]), oracle=LeafOracle(decomposition),
        decomposition=decomposition,
    )  # fmt: skip
