"""Debate query complexity: Corollary 4's readable set (explored against the circuit's wiring),
exact DQC of tiny functions against hand-derived values, and the ``dqc`` command."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from debatekit.analysis.dqc import circuit_inputs, decision_tree_depth, exact_dqc, game_table, readable_inputs
from debatekit.analysis.montecarlo import make_instance
from debatekit.catalog import PROTOCOLS
from debatekit.cli.dqc_cmd import dqc
from debatekit.problems import PROBLEMS

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


# Hand-derived: a depth-ℓ tree has at most 2^ℓ - 1 internal nodes, so depending on m bits needs
# 2^ℓ - 1 >= m. n = 1: x or not x needs 1. n = 2: both bits need ℓ >= 2 = D(f). n = 3: ℓ = 2
# leaves room for exactly the three x variables and no transcript bit, so DQC = 2 iff f has a
# depth-2 decision tree: the selector x1 ? x3 : x2 does; parity, majority, AND, OR and
# equality (on the all-equal inputs both cofactors below the root must read two more bits) do not.
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
}


@pytest.mark.parametrize(("name", "n"), list(HAND))
def test_exact_dqc_matches_hand_derived_values(name: str, n: int) -> None:
    result = exact_dqc(name, n)
    assert result.dqc == HAND[name, n]
    assert result.lower <= result.dqc <= result.decision_tree_depth


def test_n_4_functions_of_all_bits_get_bounds() -> None:
    result = exact_dqc("parity", 4)
    assert (result.lower, result.upper) == (3, 4)


def test_game_table_quantifies_transcript_variables() -> None:
    """V(x, t) = t XOR x on one x bit: ∀t gives 0 everywhere, ∃t gives 1 everywhere."""
    table = 0b0110  # index = x + 2 t
    assert game_table(table, 1, (True,)) == 0b00
    assert game_table(table, 1, (False,)) == 0b11
    assert decision_tree_depth(0b0110, 2) == 2


def test_dqc_command(capsys: pytest.CaptureFixture[str]) -> None:
    app = typer.Typer()
    app.command()(dqc)
    result = CliRunner().invoke(app, ["--function", "parity", "--n", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["dqc"] == 3 and data["circuit_cross_exam"]["readable_inputs"] == [0, 1, 2]
    text = CliRunner().invoke(app, ["--function", "selector", "--n", "3"])
    assert text.exit_code == 0 and "DQC = 2" in text.output
