"""Levelled alternating circuits (Theorem 5's form): structure, evaluation, conversion blow-up."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debatekit.machine.circuit import majority_circuit, parity_circuit
from debatekit.machine.levelled import (
    LevelledCircuit,
    equality_circuit,
    expression_circuit,
    from_expression,
    levelled,
    overflow_circuit,
    parity_levelled,
    random_circuit,
    random_levelled,
)


def every_input(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.uint8)


def python_eval(circuit: LevelledCircuit, x: np.ndarray) -> list[list[int]]:
    """Every node value by a plain loop over gates, the definition read literally."""
    values = [[int(x[v]) ^ int(s) for v, s in zip(circuit.literal_var, circuit.literal_neg, strict=True)]]
    for j in range(circuit.depth):
        below = values[-1]
        pick = (lambda a, b: a & b) if circuit.is_and(j) else (lambda a, b: a | b)
        values.append([pick(below[a], below[b]) for a, b in zip(circuit.left[j], circuit.right[j], strict=True)])
    return values


def assert_levelled_shape(circuit: LevelledCircuit) -> None:
    assert circuit.left[-1].size == 1 and circuit.is_and(circuit.depth - 1)
    assert all(circuit.is_and(j) != circuit.is_and(j + 1) for j in range(circuit.depth - 1))
    assert circuit.size == sum(a.size for a in circuit.left)


def number(bits: np.ndarray) -> int:
    return sum(int(bit) << i for i, bit in enumerate(bits))


def overflow(x: np.ndarray) -> int:
    m = (len(x) + 1) // 2
    return int(number(x[:m]) + number(x[m:]) >= 2**m)


def equality(x: np.ndarray) -> int:
    m = (len(x) + 1) // 2
    return int(number(x[:m]) == number(x[m:]))


FAMILIES = {
    "parity": (lambda n: parity_circuit(n), lambda x: int(x.sum() % 2), range(1, 9)),
    "majority": (majority_circuit, lambda x: int(2 * x.sum() > len(x)), range(1, 10)),
    "equality": (equality_circuit, equality, range(2, 10)),
    "addition-overflow": (overflow_circuit, overflow, range(2, 11)),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_families_on_every_input(family: str) -> None:
    build, f, sizes = FAMILIES[family]
    for n in sizes:
        circuit = build(n)
        form = levelled(circuit)
        assert_levelled_shape(form)
        xs = every_input(n)
        expected = np.array([f(x) for x in xs])
        assert np.array_equal(form.evaluate(xs), expected), (family, n)
        assert [form.evaluate(x) for x in xs] == [int(circuit.evaluate(x)[-1]) for x in xs]
        assert form.depth <= 2 * circuit.depth + 1


@pytest.mark.parametrize("n", range(1, 12))
def test_direct_parity_matches_the_converted_one(n: int) -> None:
    direct, converted = parity_levelled(n), levelled(parity_circuit(n))
    assert (direct.size, direct.depth) == (converted.size, converted.depth)
    assert direct.depth == 2 * int(np.ceil(np.log2(n))) + 1
    xs = every_input(n)
    assert np.array_equal(direct.evaluate(xs), xs.sum(axis=1) % 2)


@pytest.mark.parametrize("k", range(1, 9))
def test_parity_on_powers_of_two_carries_nothing(k: int) -> None:
    form = levelled(parity_circuit(2**k))
    assert (form.size, form.depth) == (6 * (2**k - 1) - 2, 2 * k + 1)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 7), gates=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_conversion_of_random_circuits(n: int, gates: int, seed: int) -> None:
    """Same function on every input; the documented depth and size bounds hold."""
    circuit = random_circuit(n, gates, np.random.default_rng(seed))
    form = levelled(circuit)
    assert_levelled_shape(form)
    xs = every_input(n)
    assert np.array_equal(form.evaluate(xs), np.array([circuit.evaluate(x)[-1] for x in xs]))
    s, d = circuit.length, circuit.depth
    assert form.depth <= 2 * d + 1
    assert form.size <= 6 * s + 1 + (2 * n + 6 * s) * max(form.depth - 2, 0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_vectorised_matches_python_on_random_inputs(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    form = random_levelled(n, [int(w) for w in rng.integers(1, 30, int(rng.integers(2, 8)))], rng)
    xs = rng.integers(0, 2, (int(rng.integers(1, 150)), n)).astype(np.uint8)
    batch = form.node_values(xs)
    for row, x in enumerate(xs):
        plain = python_eval(form, x)
        single = form.node_values(x)
        assert [list(level) for level in single] == plain
        assert [list(level[row]) for level in batch] == plain


@settings(max_examples=30, deadline=None)
@given(n=st.integers(16, 200), seed=st.integers(0, 2**32 - 1))
def test_families_on_random_inputs_at_larger_n(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    xs = rng.integers(0, 2, (64, n)).astype(np.uint8)
    for family in ("majority", "equality", "addition-overflow"):
        build, f, _ = FAMILIES[family]
        form = levelled(build(xs.shape[1]))
        assert np.array_equal(form.evaluate(xs), [f(x) for x in xs]), family
    equal = np.concatenate([xs[:, : n // 2], xs[:, : n // 2]], axis=1)  # random x rarely has equal halves
    assert equal.shape[1] == 2 * (n // 2)
    assert np.all(levelled(equality_circuit(equal.shape[1])).evaluate(equal) == 1)
    assert np.array_equal(parity_levelled(xs.shape[1]).evaluate(xs), xs.sum(axis=1) % 2)


def test_expressions() -> None:
    cases = {
        "(x0 & ~x1) | x2": lambda x: (x[0] & (1 - x[1])) | x[2],
        "x0 ^ x1 ^ x2": lambda x: x[0] ^ x[1] ^ x[2],
        "x0 | x1 & x2": lambda x: x[0] | (x[1] & x[2]),
        "!(x0 | x1)": lambda x: 1 - (x[0] | x[1]),
        "x1": lambda x: x[1],
        "~~x0": lambda x: x[0],
    }
    for text, f in cases.items():
        form = from_expression(text, 3)
        assert_levelled_shape(form)
        for x in every_input(3):
            assert form.evaluate(x) == f(x), text
    assert expression_circuit("x0 & x4").n_inputs == 5


@pytest.mark.parametrize("text", ["", "x0 &", "(x0", "x0 x1", "x0 + x1", "y0", "x0)", "~"])
def test_bad_expressions_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError):
        from_expression(text)


def test_expression_variable_beyond_n() -> None:
    with pytest.raises(ValueError):
        expression_circuit("x3", 2)


def test_malformed_circuits_are_refused() -> None:
    ok = (np.array([0]), np.array([False]), (np.array([0]),), (np.array([0]),))
    LevelledCircuit(1, *ok)
    for bad in [
        (np.array([1]), np.array([False]), (np.array([0]),), (np.array([0]),)),  # literal names x1 of 1 input
        (np.array([0]), np.array([False]), (np.array([1]),), (np.array([0]),)),  # reads a missing node
        (np.array([0, 0]), np.array([False, True]), (np.array([0, 1]),), (np.array([0, 1]),)),  # two outputs
        (np.array([0]), np.array([False]), (), ()),  # no gates
    ]:
        with pytest.raises(ValueError):
            LevelledCircuit(1, *bad)
    form = LevelledCircuit(1, *ok)
    for x in (np.array([2]), np.array([0, 1]), np.array([0.5])):
        with pytest.raises(ValueError):
            form.evaluate(x)
