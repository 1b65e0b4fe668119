"""The recursive-debate problems: obfuscated primality (Section 7) against sieves and brute-force
trial division, and evidence-majority (Appendix C) against a direct recursive evaluation of the
majority circuit C' written here, independently of the library's vectorised one."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debatekit.analysis.stability import check
from debatekit.problems import PROBLEMS
from debatekit.problems.evidence_majority import EPSILON, FAN_IN, KAPPA, EvidenceMajority, and_or_tree, majority_copies
from debatekit.problems.obfuscated_primality import (
    DIVISION_BUDGET,
    LEAF,
    MILLER_RABIN_EXACT_BELOW,
    WIDTH,
    FactorIntervals,
    is_probable_prime,
    trial_divide,
)

PRIMALITY = PROBLEMS["obfuscated-primality"]
EVIDENCE = PROBLEMS["evidence-majority"]


def sieve(limit: int) -> np.ndarray:
    """is_prime[k] for k < limit, by the sieve of Eratosthenes."""
    is_prime = np.ones(limit, dtype=bool)
    is_prime[:2] = False
    for k in range(2, math.isqrt(limit - 1) + 1):
        if is_prime[k]:
            is_prime[k * k :: k] = False
    return is_prime


SIEVE = sieve(2**16)


def primality_case(b: int, truth: bool, seed: int) -> tuple[int, FactorIntervals]:
    instance = PRIMALITY.instance(b, truth, np.random.default_rng(seed))
    n = int("".join(map(str, instance.x.tolist())), 2)
    decomposition = instance.recursive_decomposition()
    assert isinstance(decomposition, FactorIntervals) and decomposition.n == n
    return n, decomposition


def levels(decomposition, root=None, first=None):
    """Every query of the decomposition tree, by level (the root's level first); with ``first``,
    only the first that many of each level (in order)."""
    frontier = [decomposition.root() if root is None else root]
    by_level = {decomposition.depth: frontier}
    for level in range(decomposition.depth, 0, -1):
        frontier = [sub for query in frontier[:first] for sub in decomposition.split(query, level)][:first]
        by_level[level - 1] = frontier
    return by_level


# -- obfuscated-primality -------------------------------------------------------------------


def test_is_probable_prime_matches_a_sieve_and_known_hard_cases() -> None:
    limit = 10**5
    assert [is_probable_prime(k) for k in range(limit)] == sieve(limit).tolist()
    # strong pseudoprimes to small base sets, Carmichael numbers, Mersenne numbers
    for composite in (2047, 1373653, 25326001, 3215031751, 561, 41041, 2**59 - 1, 2**29 - 1):
        assert not is_probable_prime(composite)
    for prime in (2**31 - 1, 2**61 - 1, 1_000_000_007):
        assert is_probable_prime(prime)
    # the exactness bound is tight: ψ_12 is composite (base 41 is a Fermat witness) yet passes
    assert pow(41, MILLER_RABIN_EXACT_BELOW - 1, MILLER_RABIN_EXACT_BELOW) != 1
    assert is_probable_prime(MILLER_RABIN_EXACT_BELOW)
    assert MILLER_RABIN_EXACT_BELOW > 2**64 > 2 ** (2 * PRIMALITY.max_size)


@pytest.mark.parametrize("b", [6, 7, 8, 12, 16, 30])
@pytest.mark.parametrize("truth", [True, False])
def test_instances_have_the_requested_truth(b: int, truth: bool) -> None:
    for seed in range(4):
        instance = PRIMALITY.instance(b, truth, np.random.default_rng(seed))
        n, decomposition = primality_case(b, truth, seed)
        assert instance.x.dtype == np.uint8 and len(instance.x) == 2 * b and instance.x[0] == 1
        assert n.bit_length() == 2 * b and is_probable_prime(n) == truth
        if 2 * b <= 16:
            assert SIEVE[n] == truth
        assert instance.witness is None  # the factors live only in the decomposition
        factors = decomposition._factors
        assert math.prod(factors) == n
        if not truth:
            p, p2 = factors
            assert p < p2 and p.bit_length() == p2.bit_length() == b
        assert decomposition.truth(decomposition.root(), decomposition.depth) == float(truth)
        assert decomposition.epsilon is None


def test_instances_are_reproducible_from_the_generator() -> None:
    a = PRIMALITY.instance(16, False, np.random.default_rng(5))
    b = PRIMALITY.instance(16, False, np.random.default_rng(5))
    assert a.x.tolist() == b.x.tolist()
    assert a.recursive_decomposition()._factors == b.recursive_decomposition()._factors  # type: ignore[union-attr]


def brute_truth(n: int, query: tuple[int, int]) -> float:
    a, c = query
    hi = min(c, math.isqrt(n) + 1)
    return float(all(n % j for j in range(a, hi)))


def small_shapes(decomposition: FactorIntervals) -> list[FactorIntervals]:
    """The instance's decomposition and deeper, narrower ones of the same N and factors."""
    n, factors = decomposition.n, decomposition._factors
    return [decomposition, FactorIntervals(n, factors, width=2, leaf=3), FactorIntervals(n, factors, width=3, leaf=1)]


@pytest.mark.parametrize("b", [6, 7, 8])
@pytest.mark.parametrize("truth", [True, False])
def test_truth_matches_trial_division_over_the_interval_at_every_level(b: int, truth: bool) -> None:
    for seed in range(3):
        n, instance_decomposition = primality_case(b, truth, seed)
        for decomposition in small_shapes(instance_decomposition):
            for level, queries in levels(decomposition).items():
                for query in queries:
                    assert decomposition.truth(query, level) == brute_truth(n, query), (level, query)
                    if level:
                        parts = decomposition.split(query, level)
                        answers = tuple(int(decomposition.truth(s, level - 1)) for s in parts)
                        assert decomposition.combine(query, level, answers) == decomposition.truth(query, level)


@pytest.mark.parametrize("b", [6, 8, 10, 16])
@pytest.mark.parametrize("truth", [True, False])
def test_the_honest_proof_passes_every_leaf_iff_n_is_prime(b: int, truth: bool) -> None:
    n, decomposition = primality_case(b, truth, 1)
    m = decomposition.proof_length
    assert m == math.isqrt(n) - 1
    assert [decomposition.proof(j) for j in range(min(m, 500))] == [int(n % (j + 2) != 0) for j in range(min(m, 500))]
    leaves = levels(decomposition)[0]
    assert len(leaves) == WIDTH**decomposition.depth
    named = [j for leaf in leaves for j in decomposition.leaf(leaf)]
    assert named == list(range(m))  # the leaves name the whole proof, once each, in order
    honest = {leaf: tuple(decomposition.proof(j) for j in decomposition.leaf(leaf)) for leaf in leaves}
    failing = [leaf for leaf in leaves if decomposition.judge(leaf, honest[leaf]) == 0]
    if truth:
        assert failing == []
    else:
        p = decomposition._factors[0]
        assert len(failing) == 1 and failing[0][0] <= p < failing[0][1]
        assert decomposition.truth(failing[0], 0) == 0.0


def test_a_leaf_judge_needs_every_claim_and_every_division() -> None:
    _, decomposition = primality_case(8, False, 0)
    p = decomposition._factors[0]
    leaves = levels(decomposition)[0]
    clean = next(leaf for leaf in leaves if decomposition.truth(leaf, 0) == 1 and decomposition.leaf(leaf))
    guilty = next(leaf for leaf in leaves if leaf[0] <= p < leaf[1])
    size = len(decomposition.leaf(clean))
    assert decomposition.judge(clean, (1,) * size) == 1.0
    assert decomposition.judge(clean, (1,) * (size - 1) + (0,)) == 0.0  # a claim the prover withdrew
    assert decomposition.judge(guilty, (1,) * len(decomposition.leaf(guilty))) == 0.0  # the lie is caught
    padding = (decomposition.sqrt_n + 1, decomposition.sqrt_n + 1 + LEAF)
    assert decomposition.leaf(padding) == () and decomposition.judge(padding, ()) == 1.0
    with pytest.raises(ValueError):
        decomposition.judge(clean, (1,) * (size + 1))


@pytest.mark.parametrize("b", [6, 8, 12, 16, PRIMALITY.default_size])
@pytest.mark.parametrize("truth", [True, False])
def test_bounded_truth_is_miller_rabin_at_the_root_and_trial_division_near_the_leaves(b: int, truth: bool) -> None:
    """What a prover with DIVISION_BUDGET divisions knows is always right; for composite N the
    root (Miller-Rabin) and claims about at most budget/q candidates are in reach, the large
    intervals in between are not: the obfuscated argument."""
    _, instance_decomposition = primality_case(b, truth, 4)
    reach = DIVISION_BUDGET // WIDTH
    for decomposition in small_shapes(instance_decomposition) if b <= 8 else [instance_decomposition]:
        unknown = 0
        for level, queries in levels(decomposition, first=4096).items():
            for query in queries:
                known = decomposition.bounded_truth(query, level)
                candidates = min(query[1], decomposition.sqrt_n + 1) - max(query[0], 2)
                if truth or level == decomposition.depth or candidates <= decomposition.budget // decomposition.width:
                    assert known == decomposition.truth(query, level), (level, query)
                else:
                    assert known is None
                    unknown += 1
        if not truth and decomposition is instance_decomposition:
            assert (unknown > 0) == (LEAF * WIDTH ** (decomposition.depth - 1) > reach)
    if b == PRIMALITY.default_size and not truth:
        assert unknown > 0  # at the default size some claims are out of reach


@pytest.mark.parametrize("b", [6, 7, 16])
def test_leaf_bound_is_the_largest_leaf(b: int) -> None:
    _, decomposition = primality_case(b, False, 0)
    leaves = levels(decomposition)[0]
    assert (
        decomposition.leaf_bound
        == max(len(decomposition.leaf(leaf)) for leaf in leaves)
        == min(LEAF, decomposition.proof_length)
    )


@pytest.mark.parametrize("b", [6, 9, 16])
def test_split_covers_the_parent_exactly(b: int) -> None:
    _, decomposition = primality_case(b, False, 2)
    a, c = decomposition.root()
    assert a == 2 and c == 2 + LEAF * WIDTH**decomposition.depth
    assert c - 2 >= decomposition.proof_length
    assert decomposition.depth == 1 or LEAF * WIDTH ** (decomposition.depth - 1) < decomposition.proof_length
    for level, queries in levels(decomposition).items():
        if level == 0 or len(queries) > 64:
            continue
        for query in queries:
            parts = decomposition.split(query, level)
            assert len(parts) == WIDTH and parts[0][0] == query[0] and parts[-1][1] == query[1]
            assert all(left[1] == right[0] for left, right in itertools.pairwise(parts))
            assert {hi - lo for lo, hi in parts} == {LEAF * WIDTH ** (level - 1)}
            assert decomposition.valid_split(query, level, parts)


GARBAGE = [
    None,
    (),
    [],
    "abcd",
    b"\x00\x01",
    42,
    float("nan"),
    (float("nan"),) * 4,
    ((float("nan"), 1.0),) * 4,
    (None, None, None, None),
    ("a", "b", "c", "d"),
    ((1, 2),) * 3,
    ((1, 2),) * 5,
    (((1,),),) * 4,
    ((1, 2, 3),) * 4,
    (np.arange(2),) * 4,
    ({1: 2}, [1], {1}, object()),
    ((True, True),) * 4,
]


def test_valid_split_rejects_garbage_without_raising() -> None:
    _, decomposition = primality_case(8, False, 0)
    root, level = decomposition.root(), decomposition.depth
    honest = decomposition.split(root, level)
    near_misses = [
        list(honest),
        tuple((float(a), float(c)) for a, c in honest),  # 2.0 is not a candidate's name
        (*honest[:-1], (honest[-1][0], honest[-1][1] + 1)),
        tuple(reversed(honest)),
        (*honest[:-1], (np.nan, np.nan)),
    ]
    for junk in GARBAGE + near_misses:
        assert decomposition.valid_split(root, level, junk) is False
    assert decomposition.valid_split(root, level, honest) is True
    assert decomposition.valid_split(root, level, tuple((np.int64(a), np.int64(c)) for a, c in honest)) is True


@pytest.mark.parametrize("truth", [True, False])
def test_answer_distribution_of_the_root_is_a_point_mass(truth: bool) -> None:
    _, decomposition = primality_case(10, truth, 3)
    root, level = decomposition.root(), decomposition.depth
    z = [int(decomposition.truth(s, level - 1)) for s in decomposition.split(root, level)]
    distribution = decomposition.answer_distribution(root, level)
    expected = np.zeros(2**WIDTH)
    expected[int("".join(map(str, z)), 2)] = 1.0
    assert np.array_equal(distribution, expected)
    assert (sum(z) == WIDTH) == truth
    automaton = decomposition.automaton(root, level)
    for bits in range(2**WIDTH):
        zs = [(bits >> (WIDTH - 1 - i)) & 1 for i in range(WIDTH)]
        state = automaton.start
        for i, zi in enumerate(zs):
            state = automaton.step(state, i, zi)
        assert automaton.output(state) == decomposition.combine(root, level, tuple(zs))


class Counting:
    """An iterable of candidates that counts how many were drawn."""

    def __init__(self, candidates):
        self.candidates, self.drawn = candidates, 0

    def __iter__(self):
        for c in self.candidates:
            self.drawn += 1
            yield c


def test_trial_divide_respects_the_budget() -> None:
    n, decomposition = primality_case(16, False, 0)
    p = decomposition._factors[0]
    below = Counting(range(2, p))
    assert trial_divide(n, below, budget=DIVISION_BUDGET) is None and below.drawn == DIVISION_BUDGET
    around = Counting(range(p - 5, p + 5))
    assert trial_divide(n, around, budget=DIVISION_BUDGET) == p and around.drawn == 6
    assert trial_divide(n, Counting(range(p - 5, p + 5)), budget=5) is None
    assert trial_divide(n, Counting(range(p - 5, p + 5)), budget=6) == p
    nothing = Counting(range(2, 100))
    assert trial_divide(n, nothing, budget=0) is None and nothing.drawn == 0
    assert trial_divide(15, [1, 15, 3]) == 3  # 1 and n itself are not factors
    # the docstring's bound: DIVISION_BUDGET random b-bit candidates rarely hit p at b = 16
    rng = np.random.default_rng(0)
    hits = sum(trial_divide(n, rng.integers(2**15, 2**16, DIVISION_BUDGET).tolist()) is not None for _ in range(200))
    assert hits / 200 <= 2 * DIVISION_BUDGET / 2**15


# -- evidence-majority ----------------------------------------------------------------------


def test_kappa_and_width_follow_appendix_c() -> None:
    exact = 3 * math.log(2 * FAN_IN / EPSILON) / math.log(1 / (6 * EPSILON * (1 - 3 * EPSILON / 2)))
    assert 16 < exact < 17
    assert majority_copies(EPSILON, FAN_IN) == KAPPA == 17
    decomposition = EVIDENCE.instance(2, True, np.random.default_rng(0)).recursive_decomposition()
    assert isinstance(decomposition, EvidenceMajority)
    assert decomposition.width == FAN_IN * KAPPA == 34
    assert decomposition.epsilon == EPSILON and decomposition.support == KAPPA**2


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("truth", [True, False])
def test_evidence_instances_have_the_requested_truth_and_layout(d: int, truth: bool) -> None:
    n, s = FAN_IN**d, KAPPA**d
    for seed in range(3):
        instance = EVIDENCE.instance(d, truth, np.random.default_rng(seed))
        decomposition = instance.recursive_decomposition()
        assert isinstance(decomposition, EvidenceMajority) and decomposition.depth == d
        assert instance.x.dtype == np.uint8 and len(instance.x) == n + n * s
        x, evidence = instance.x[:n], instance.x[n:]
        assert and_or_tree(x) == truth
        assert np.array_equal(evidence, decomposition.evidence)
        assert decomposition.truth(decomposition.root(), d) == float(truth)
        # evidence mostly agrees with its judgement (noise ε/(4n) per piece)
        assert np.mean(evidence != np.repeat(x, s)) < 5 * EPSILON / (4 * n) + 0.01


def direct_c_prime(evidence: np.ndarray, d: int, w: int = FAN_IN, kappa: int = KAPPA):
    """C' by its definition: a copy of a layer-k gate is G_k of w majorities, each over κ copies
    of the gate feeding it, recursively; a layer-0 copy is one evidence bit."""
    s = kappa**d

    @cache
    def value(k: int, gate: int, path: tuple[int, ...]) -> int:
        if k == 0:
            j = 0
            for c in path:
                j = j * kappa + c
            return int(evidence[gate * s + j])
        majorities = []
        for i in range(w):
            ones = sum(value(k - 1, gate * w + i, (*path, c)) for c in range(kappa))
            majorities.append(2 * ones > kappa)
        is_and = (d - k) % 2 == 0
        return int(all(majorities) if is_and else any(majorities))

    return value


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("source", ["instance-yes", "instance-no", "uniform", "biased"])
def test_recursive_truth_equals_a_direct_evaluation_of_c_prime(d: int, source: str) -> None:
    rng = np.random.default_rng(d)
    size = (FAN_IN * KAPPA) ** d
    if source.startswith("instance"):
        evidence = EVIDENCE.instance(d, source == "instance-yes", rng).recursive_decomposition().evidence  # type: ignore[union-attr]
    else:
        # noisy enough that majorities and gates take both values somewhere in the tree
        evidence = (rng.random(size) < (0.5 if source == "uniform" else 0.6)).astype(np.uint8)
    decomposition = EvidenceMajority(evidence)
    value = direct_c_prime(evidence, d)
    seen = set()
    for level, queries in levels(decomposition).items():
        for query in queries:
            truth = decomposition.truth(query, level)
            assert truth == value(*query), (level, query)
            seen.add((level, truth))
            if level:
                answers = tuple(int(decomposition.truth(sub, level - 1)) for sub in decomposition.split(query, level))
                assert decomposition.combine(query, level, answers) == truth
    if source == "uniform":
        assert {(level, t) for level in range(d) for t in (0.0, 1.0)} <= seen


@pytest.mark.parametrize("truth", [True, False])
def test_evidence_majority_is_stable_as_theorem_8_3_promises(truth: bool) -> None:
    """Appendix C: every node is (ε, 1/2)-stable at ε = EPSILON; checked exactly through the
    automaton (q = 34) at the root and at every level-1 node of a d = 2 instance."""
    decomposition = EVIDENCE.instance(2, truth, np.random.default_rng(2)).recursive_decomposition()
    root = decomposition.root()  # type: ignore[union-attr]
    nodes = [(2, root), *((1, query) for query in decomposition.split(root, 2))]  # type: ignore[union-attr]
    for level, query in nodes:
        result = check(decomposition, query, level, EPSILON, 0.5)  # type: ignore[arg-type]
        assert result.method == "automaton" and result.stable, result


@given(st.data())
@settings(max_examples=300, deadline=None)
def test_the_automaton_is_combine_streamed(data: st.DataObject) -> None:
    decomposition = EVIDENCE.instance(2, False, np.random.default_rng(0)).recursive_decomposition()
    level = data.draw(st.sampled_from([1, 2]))  # level 2 is AND, level 1 is OR
    query = decomposition.root() if level == 2 else decomposition.split(decomposition.root(), 2)[5]  # type: ignore[union-attr]
    # group sizes near the majority threshold, so both majorities and G vary
    z = []
    for _ in range(FAN_IN):
        ones = data.draw(st.integers(KAPPA // 2 - 2, KAPPA // 2 + 3))
        group = [1] * ones + [0] * (KAPPA - ones)
        z += data.draw(st.permutations(group))
    automaton = decomposition.automaton(query, level)  # type: ignore[union-attr]
    state = automaton.start
    for i, zi in enumerate(z):
        state = automaton.step(state, i, zi)
    assert automaton.output(state) == decomposition.combine(query, level, tuple(z))  # type: ignore[union-attr]


def test_the_automaton_matches_combine_on_random_answers() -> None:
    decomposition = EvidenceMajority(np.zeros((FAN_IN * KAPPA) ** 2, dtype=np.uint8))
    rng = np.random.default_rng(7)
    for level, query in ((2, decomposition.root()), (1, (1, 1, (3,)))):
        automaton = decomposition.automaton(query, level)
        outputs = set()
        for _ in range(2000):
            z = tuple(int(v) for v in rng.random(FAN_IN * KAPPA) < rng.uniform(0.3, 0.7))
            state = automaton.start
            for i, zi in enumerate(z):
                state = automaton.step(state, i, zi)
            outputs.add(automaton.output(state))
            assert automaton.output(state) == decomposition.combine(query, level, z)
        assert outputs == {0, 1}


def test_split_sizes_order_and_garbage() -> None:
    decomposition = EVIDENCE.instance(2, True, np.random.default_rng(1)).recursive_decomposition()
    assert isinstance(decomposition, EvidenceMajority)
    root = decomposition.root()
    assert root == (2, 0, ())
    parts = decomposition.split(root, 2)
    assert len(parts) == 34
    assert parts[:KAPPA] == tuple((1, 0, (c,)) for c in range(KAPPA))  # input-major
    assert parts[KAPPA:] == tuple((1, 1, (c,)) for c in range(KAPPA))
    leaves = decomposition.split(parts[KAPPA + 4], 1)
    assert leaves[0] == (0, 2, (4, 0)) and leaves[-1] == (0, 3, (4, KAPPA - 1))
    assert decomposition.valid_split(root, 2, parts)
    near_misses = [list(parts), parts[:-1], (*parts[:-1], (1.0, 1, (KAPPA - 1,))), tuple(reversed(parts))]
    for junk in GARBAGE + near_misses:
        assert decomposition.valid_split(root, 2, junk) is False
    assert decomposition.leaf(leaves[0]) == () and decomposition.proof_length == decomposition.leaf_bound == 0
    with pytest.raises(IndexError):
        decomposition.proof(0)


def test_leaves_read_the_right_evidence_bit() -> None:
    d = 2
    instance = EVIDENCE.instance(d, True, np.random.default_rng(3))
    decomposition = instance.recursive_decomposition()
    n, s = FAN_IN**d, KAPPA**d
    evidence = np.array(instance.x[n:])
    evidence[:: KAPPA + 2] ^= 1  # plant disagreements, so a wrong index would show
    planted = EvidenceMajority(evidence)
    for source, bits in ((decomposition, instance.x[n:]), (planted, evidence)):
        for i in range(n):
            for c1 in range(KAPPA):
                for c2 in (0, 5, KAPPA - 1):
                    assert source.judge((0, i, (c1, c2)), ()) == bits[i * s + c1 * KAPPA + c2]  # type: ignore[union-attr]
                    assert source.truth((0, i, (c1, c2)), 0) == bits[i * s + c1 * KAPPA + c2]  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        planted.judge((0, 0, (0, KAPPA)), ())
