"""Problems from debate query complexity (Section 3): functions given as fan-in-2 circuits, for
cross-examination (Theorem 6 reads a circuit as a transcript machine) and, in levelled form, for
the Karchmer-Wigderson walk (Theorem 5). Truth yes means f(x) = 1.
"""

from __future__ import annotations

import numpy as np

from debatekit.machine.levelled import equality_circuit, halves, levelled, overflow_circuit
from debatekit.problems.registry import Feature, Instance, problem


@problem(
    "equality",
    "1 iff a == b for a = x[:n/2], b = x[n/2:] (little-endian; for odd n a has the extra top bit): "
    "XNOR per pair and an AND tree",
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC, Feature.CIRCUIT, Feature.LEVELLED}),
    default_size=64,
    min_size=2,
    max_size=2**20,
)
def equality(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    """Yes: a random b, and a = b; no: the same with one random bit flipped."""
    m, k = halves(n)
    b = rng.integers(0, 2, k).astype(np.uint8)
    x = np.concatenate([b, np.zeros(m - k, dtype=np.uint8), b])
    if not truth:
        x[rng.integers(n)] ^= 1
    circuit = equality_circuit(n)
    return Instance("equality", n, truth, x, machine=circuit, levelled=lambda: levelled(circuit))


@problem(
    "addition-overflow",
    "the carry out of a + b, a = x[:n/2], b = x[n/2:] little-endian (for odd n a has the extra top bit): "
    "a carry-lookahead tree",
    frozenset({Feature.TRANSCRIPT, Feature.DETERMINISTIC, Feature.CIRCUIT, Feature.LEVELLED}),
    default_size=64,
    min_size=2,
    max_size=2**20,
)
def addition_overflow(n: int, truth: bool, rng: np.random.Generator) -> Instance:
    """A random position j of b decides the carry: yes sets a_j = b_j = 1 (a carry is
    generated) and keeps a_i ∨ b_i above j, and a's extra top bit 1 (it propagates); no sets
    a_j = b_j = 0 (killed) and keeps not a_i ∧ b_i above j (none is generated again). The other
    bits are uniform."""
    m, k = halves(n)
    a, b = rng.integers(0, 2, m).astype(np.uint8), rng.integers(0, 2, k).astype(np.uint8)
    j = int(rng.integers(k))
    a[j] = b[j] = int(truth)
    above = k - j - 1
    if above:
        pairs = np.array([(0, 1), (1, 0), (1, 1)] if truth else [(0, 0), (0, 1), (1, 0)], dtype=np.uint8)
        chosen = pairs[rng.integers(0, 3, above)]
        a[j + 1 : k], b[j + 1 :] = chosen[:, 0], chosen[:, 1]
    if m > k and truth:
        a[-1] = 1
    circuit = overflow_circuit(n)
    x = np.concatenate([a, b])
    return Instance("addition-overflow", n, truth, x, machine=circuit, levelled=lambda: levelled(circuit))
