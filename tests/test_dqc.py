"""Debate query complexity: Corollary 4's readable set (explored against the circuit's wiring, and
whole-debate bit counts for the KW walk), exact DQC of tiny functions against hand-derived values
and an independent brute force over every verifier tree, and the ``dqc`` command."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from tests.test_cli import assert_usage_error, cli, one_json

from debatekit.analysis.dqc import (
    FUNCTIONS,
    BudgetExceeded,
    circuit_inputs,
    debate_functions,
    decision_tree_depth,
    exact_dqc,
    game_table,
    readable_inputs,
    table_dqc,
    truth_table,
)
from debatekit.analysis.montecarlo import make_instance
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS

SPEC = PROTOCOLS["circuit-cross-exam"]


@pytest.mark.parametrize("problem", ["parity", "majority"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_explored_readable_set_is_the_circuit_wiring_and_all_of_x(problem: str, n: int) -> None:
    """Corollary 4: f depends on all n bits, so the verifier must be able to read every x_i;
    exploring every message on every x finds exactly the inputs the gates read, and the most
    bits read stays within Theorem 6's bound and above log2 n."""
    instance = make_instance(PROBLEMS[problem], n, False, 0)
    explored = readable_inputs(SPEC, instance)
    assert explored.readable == circuit_inputs(instance.machine) == frozenset(range(n))  # type: ignore[arg-type]
    assert explored.log2_n <= explored.max_bits_read <= SPEC.guarantee(instance).bits_read


@pytest.mark.parametrize(("problem", "n"), [("parity", 4), ("majority", 3), ("equality", 4)])
def test_kw_exploration_counts_the_whole_walk(problem: str, n: int) -> None:
    """Theorem 5: the walk reads one prover bit per level and then one bit of x, so the most bits
    any debate reads is depth + 1 (not just the final check's 1)."""
    instance = make_instance(PROBLEMS[problem], n, False, 0)
    explored = readable_inputs(PROTOCOLS["kw"], instance)
    assert explored.max_bits_read == instance.levelled_circuit().depth + 1  # type: ignore[union-attr]
    assert explored.readable == frozenset(range(n))


def test_exploration_budget_is_an_error() -> None:
    with pytest.raises(BudgetExceeded):
        readable_inputs(SPEC, make_instance(PROBLEMS["majority"], 3, False, 0), budget=100)


# Hand-derived: a depth-ℓ tree has at most 2^ℓ - 1 internal nodes, so depending on m bits needs
# 2^ℓ - 1 >= m. n = 1: x or not x needs 1. n = 2: both bits need ℓ >= 2 = D(f). n = 3: ℓ = 2
# leaves room for exactly the three x variables and no transcript bit, so DQC = 2 iff f has a
# depth-2 decision tree: the selector x1 ? x3 : x2 does; parity, majority, AND, OR and
# equality (on the all-equal inputs both cofactors below the root must read two more bits) do
# not. n = 4: AND is the KW walk on a depth-2 AND tree (Prover 0 names a 0 in two bits, V reads
# it), OR the same for Prover 1; parity and majority need D(f) = 4 (the brute force below).
HAND = {
    ("parity", 1): 1,
    ("and", 1): 1,
    ("equality", 1): 0,
    ("parity", 2): 2,
    ("and", 2): 2,
    ("or", 2): 2,
    ("first", 2): 1,
    ("equality", 2): 2,
    ("parity", 3): 3,
    ("majority", 3): 3,
    ("and", 3): 3,
    ("or", 3): 3,
    ("equality", 3): 3,
    ("selector", 3): 2,
    ("first", 3): 1,
    ("first", 4): 1,
    ("selector", 4): 2,
    ("and", 4): 3,
    ("or", 4): 3,
}


@pytest.mark.parametrize(("name", "n"), list(HAND))
def test_exact_dqc_matches_hand_derived_values(name: str, n: int) -> None:
    result = exact_dqc(name, n)
    assert result.dqc == HAND[name, n]
    assert result.lower <= result.dqc <= result.decision_tree_depth


# -- an independent brute force: every decision tree, every transcript pattern ------------------

WORD = (1 << 64) - 1


def brute_decided(m: int, ell: int, pattern: tuple[bool, ...]) -> set[int]:
    """Every f on m bits equal to Q_pattern V for V any decision tree of depth ≤ ell over m + r
    variables (r = len(pattern) ≤ 7 - m): all trees, ordered children, built level by level, the
    last level in numpy over 128-bit tables (two words, variable 6 picking the word)."""
    count, r = m + len(pattern), len(pattern)
    full = (1 << 2**count) - 1
    var = [sum(1 << k for k in range(2**count) if (k >> i) & 1) for i in range(count)]
    level = {0, full}
    for _ in range(ell - 1):
        level |= {(v & g) | (~v & full & h) for v in var for g in level for h in level}
    subs = sorted(level)
    lo = np.array([s & WORD for s in subs], dtype=np.uint64)
    hi = np.array([s >> 64 for s in subs], dtype=np.uint64)
    g, h = (a.ravel() for a in np.meshgrid(np.arange(len(subs)), np.arange(len(subs))))
    out: set[int] = set()
    for v in var:
        vlo, vhi = np.uint64(v & WORD), np.uint64(v >> 64)
        table = (vlo & lo[g]) | (~vlo & lo[h])
        top = (vhi & hi[g]) | (~vhi & hi[h])
        for j in reversed(range(r)):
            if m + j == 6:
                table = table & top if pattern[j] else table | top
            else:
                half = 1 << (m + j)
                low, high = table & np.uint64((1 << half) - 1), table >> np.uint64(half)
                table = low & high if pattern[j] else low | high
        out |= set(np.unique(table).tolist())
    return out


@pytest.mark.parametrize(
    ("m", "ell", "r"), [(4, 3, 3), (4, 3, 1), (3, 2, 0), (2, 2, 1), (3, 3, 1), (2, 3, 2), (1, 2, 2)]
)
def test_search_decides_exactly_what_every_tree_decides(m: int, ell: int, r: int) -> None:
    """The root-split search (:func:`debate_functions`) finds exactly the functions the brute
    force finds, for every pattern; (4, 3, 3) is the n = 4 case itself."""
    for pattern in itertools.product((True, False), repeat=r):
        found = set(np.flatnonzero(debate_functions(m, ell, pattern, 10**9).decided).tolist())
        assert found == brute_decided(m, ell, pattern), pattern


@functools.cache
def brute_levels(n: int) -> dict[int, set[int]]:
    """ℓ → every f on n ≤ 3 bits some depth-ℓ verifier decides with any r ≤ 2^ℓ - 1 transcript
    bits in any pattern (no relevant-variable reduction)."""
    return {
        ell: set().union(
            *(
                brute_decided(n, ell, pattern) if ell else {0, 2**2**n - 1}
                for r in range(2**ell)
                for pattern in itertools.product((True, False), repeat=r)
            )
        )
        for ell in range(n)
    }


@pytest.mark.parametrize("n", [1, 2, 3])
def test_every_function_on_three_bits_matches_the_brute_force(n: int) -> None:
    """DQC of all 2^(2^n) functions; ℓ = n is always enough (a decision tree)."""
    levels = brute_levels(n)
    for table in range(2**2**n):
        brute = next((ell for ell in range(n) if table in levels[ell]), n)
        assert table_dqc(table, n).dqc == brute, table


def has_depth_at_most(table: int, count: int, depth: int) -> bool:
    """Whether a decision tree of depth ≤ ``depth`` over ``count`` variables computes ``table``."""

    def fits(points: tuple[int, ...], d: int) -> bool:
        if len({(table >> p) & 1 for p in points}) <= 1:
            return True
        return d > 0 and any(
            all(fits(tuple(p for p in points if (p >> i) & 1 == b), d - 1) for b in (0, 1)) for i in range(count)
        )

    return fits(tuple(range(2**count)), depth)


def game_value(table: int, n: int, x: int, pattern: tuple[bool, ...], t: int = 0, j: int = 0) -> int:
    """Q_1 t_1 … V(x, t) at one x by playing the game: Prover 0 (∀) wants 0, Prover 1 (∃) wants 1."""
    if j == len(pattern):
        return (table >> (x + (t << n))) & 1
    values = [game_value(table, n, x, pattern, t | (b << j), j + 1) for b in (0, 1)]
    return min(values) if pattern[j] else max(values)


@pytest.mark.parametrize("name", ["and", "or", "equality"])
def test_witness_is_a_shallow_verifier_that_decides_f(name: str) -> None:
    result = exact_dqc(name, 4)
    w = result.witness
    assert w is not None and result.dqc == 3 < result.decision_tree_depth
    assert has_depth_at_most(w.table, w.variables, 3)
    assert all(
        game_value(w.table, 4, x, w.pattern) == FUNCTIONS[name](tuple((x >> i) & 1 for i in range(4)))
        for x in range(16)
    )


def test_search_budget_is_an_error() -> None:
    with pytest.raises(BudgetExceeded):
        exact_dqc("parity", 4, budget=1000)


def test_game_table_quantifies_transcript_variables() -> None:
    """V(x, t) = t XOR x on one x bit: ∀t gives 0 everywhere, ∃t gives 1 everywhere."""
    table = 0b0110  # index = x + 2 t
    assert game_table(table, 1, (True,)) == 0b00
    assert game_table(table, 1, (False,)) == 0b11
    assert decision_tree_depth(0b0110, 2) == 2
    assert truth_table(FUNCTIONS["selector"], 3) == 0b11100100


# -- the command ---------------------------------------------------------------------------------


def test_dqc_command_settles_every_function_on_four_bits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "dqc", "--n", "4", "--json")
    assert code == 0, err
    rows = {row["function"]: row for row in one_json(out)["functions"]}
    assert {name: row["dqc"] for name, row in rows.items()} == {
        "parity": 4, "majority": 4, "and": 3, "or": 3, "first": 1, "selector": 2, "equality": 3,
    }  # fmt: skip
    assert rows["parity"]["positions"] > 0 and rows["majority"]["circuit_cross_exam"]["bound"] == 7
    assert rows["and"]["randomised_lower"] == -1.0


def test_dqc_command_majority_on_four_bits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "dqc", "--function", "majority", "--n", "4")
    assert code == 0, err
    assert out.startswith("majority on 4 bits: DQC = 4 ")


def test_dqc_command_explores(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "dqc", "--function", "parity", "--n", "3", "--explore", "--json")
    assert code == 0, err
    data = one_json(out)
    assert data["dqc"] == 3 and data["circuit_cross_exam"]["readable_inputs"] == [0, 1, 2]
    code, out, err = cli(capsys, "dqc", "--function", "selector", "--n", "3")
    assert code == 0 and "DQC = 2" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--n", "5"],
        ["--n", "3", "--function", "xor"],
        ["--n", "4", "--function", "parity", "--budget", "1000"],
        ["--n", "4", "--function", "majority", "--explore", "--explore-budget", "1000"],
    ],
)
def test_dqc_command_mistakes_and_budgets_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert_usage_error(*cli(capsys, "dqc", *argv))
