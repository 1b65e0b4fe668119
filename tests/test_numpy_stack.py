"""The code does not lean on behaviour a newer numpy removed.

NumPy 2.5 (the release users install today; the package index CI reaches stops at 2.4) raises
``OverflowError`` where a Python integer does not fit the array's dtype, as in
``np.where(uint8_array <= 1, uint8_array, -1)``; 2.4 silently wrapped it to 255. On 2.5 that
made honest Bob's own parsing raise in every cross-examination debate. These tests run the
protocols with :func:`numpy.where` made as strict as 2.5 is, so CI on 2.4 sees the difference;
the suite itself is also run on a numpy 2.5 / scipy 1.18 stack before a release (README).
"""

from __future__ import annotations

import numpy as np
import pytest

import debatekit
from debatekit.engine.boundary import NOT_A_BIT, commit_bits
from debatekit.ledger import Role
from debatekit.protocols.cross_exam import parse_bits

_where = np.where


def strict_where(condition, *values):
    """``np.where`` refusing a Python int its result's dtype cannot hold, as numpy 2.5 does. The
    result's dtype is NEP 50's (the arrays' alone, a Python int being "weak"), on numpy 1.x too,
    whose value-based promotion would widen it instead."""
    arrays = [np.asarray(v).dtype for v in values if type(v) is not int]
    dtype = np.result_type(*arrays) if arrays else None
    if dtype is not None and dtype.kind in "iu":
        info = np.iinfo(dtype)
        for value in values:
            if type(value) is int and not info.min <= value <= info.max:
                raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return _where(condition, *values)


@pytest.fixture
def numpy_2_5(monkeypatch):
    monkeypatch.setattr(np, "where", strict_where)


def test_the_strict_where_refuses_what_numpy_2_5_refuses(numpy_2_5):
    with pytest.raises(OverflowError):
        np.where(np.array([0, 5], dtype=np.uint8) <= 1, np.array([0, 5], dtype=np.uint8), -1)
    assert np.where(np.array([True, False]), np.array([1, 2], dtype=np.uint8), 0).tolist() == [1, 0]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int64, np.bool_])
def test_bits_commit_in_every_integer_dtype(numpy_2_5, dtype):
    values = [0, 1, 1, 0] if dtype is np.bool_ else [0, 1, 5, -3 if np.dtype(dtype).kind == "i" else 7]
    committed = commit_bits(np.array(values).astype(dtype), 4, Role.ALICE)
    expected = [v if v in (0, 1) else NOT_A_BIT for v in values]
    assert committed.tolist() == expected
    assert parse_bits(committed).tolist() == [v if v in (0, 1) else -1 for v in values]


@pytest.mark.parametrize("protocol", ["cross-exam", "circuit-cross-exam"])
def test_honest_bob_wins_every_debate_on_a_false_claim(numpy_2_5, protocol):
    """On numpy 2.5 this printed accept_rate 1.0 and honest_win_rate 0.0 (Bob forfeited)."""
    result = debatekit.run(protocol, problem="parity", size=16, truth="no", alice="lie-output", trials=20)
    assert result.accept_rate == 0.0
    assert result.honest_win_rate == 1.0
    assert not result.forfeit_reasons


def test_stochastic_witness_rows_parse_on_the_strict_stack(numpy_2_5):
    result = debatekit.run("stochastic", problem="ma-witness", truth="yes", trials=8)
    assert not result.forfeit_reasons
