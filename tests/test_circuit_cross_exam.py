"""Circuit cross-examination (Theorem 6) and the cross-examination lemma (Lemma 8) of the debate
query complexity paper: the honest side beats every built-in adversary on random circuits and
inputs, the verifier reads at most ceil(log2(size+1)) + 3 bits, exact search over every
adversary move on every input of small parity and majority circuits, fuzzed messages, and the
tqbf problem's truth checked by plain recursion over the quantifiers."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import bit_arrays, circuit_values, circuits
from debatekit.analysis.exact import accept_probability, solve
from debatekit.analysis.montecarlo import make_instance, play_one
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.machine.circuit import Circuit, majority_circuit, parity_circuit
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS, Instance
from debatekit.problems.dqc_tqbf import clause_structure
from debatekit.protocols.circuit_cross_exam import bits_bound, speaker
from debatekit.protocols.registry import PROTOCOLS

SPEC = PROTOCOLS["circuit-cross-exam"]


def game_value(circuit: Circuit, x: np.ndarray, history: tuple[int, ...] = ()) -> int:
    """∀α_1 ∃β_1 … C(x, α, β) by plain recursion (Alice, Prover 0, minimises)."""
    if len(history) == circuit.n_witness:
        return circuit_values(circuit, np.concatenate([x, np.array(history, dtype=np.uint8)]))[-1]
    values = [game_value(circuit, x, (*history, b)) for b in (0, 1)]
    return min(values) if speaker(len(history)) is Role.ALICE else max(values)


def debate_instance(circuit: Circuit, x: np.ndarray) -> Instance:
    return Instance("circuit", len(x), bool(game_value(circuit, x)), x, machine=circuit)


def check_every_adversary(instance: Instance, seed: int) -> None:
    honest = Role.ALICE if instance.answer == 0 else Role.BOB  # Alice argues 0 (Theorem 6)
    bound = bits_bound(instance.machine)  # type: ignore[arg-type]
    for adversary in SPEC.strategies[honest.opponent].values():
        players = {honest: SPEC.strategies[honest]["honest"], honest.opponent: adversary}
        outcome = play_one(SPEC, instance, players[Role.ALICE], players[Role.BOB], np.random.SeedSequence(seed))
        assert outcome.verdict == instance.answer, (adversary.name, outcome.reason)
        assert outcome.ledger.bits_read <= bound
        assert outcome.ledger.queries[Role.VERIFIER] == 0


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(0, 2**16))
def test_theorem_6_honest_side_wins_on_random_circuits(data: st.DataObject, seed: int) -> None:
    circuit = data.draw(circuits(max_witness=0))
    check_every_adversary(debate_instance(circuit, data.draw(bit_arrays(circuit.n_inputs))), seed)


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(0, 2**16))
def test_lemma_8_honest_side_wins_on_random_circuit_verified_debates(data: st.DataObject, seed: int) -> None:
    """The verifier's witness bits are the transcript α_1, β_1, …: the honest side plays the
    original debate optimally and then wins the cross-examination."""
    circuit = data.draw(circuits(max_witness=4))
    check_every_adversary(debate_instance(circuit, data.draw(bit_arrays(circuit.n_inputs))), seed)


@pytest.mark.parametrize("make", [parity_circuit, majority_circuit])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_exact_solve_on_every_input(make: Any, n: int) -> None:
    """The honest side wins with probability exactly 1 against every adversary move, on every x."""
    circuit = make(n)
    for bits in itertools.product((0, 1), repeat=n):
        instance = debate_instance(circuit, np.array(bits, dtype=np.uint8))
        assert solve(SPEC, instance).exact == "1"


def test_mixed_pointer_is_enumerated_exactly() -> None:
    """On a parity no-instance every gate is right, so a uniformly random pointer never wins."""
    instance = make_instance(PROBLEMS["parity"], 5, False, 0)
    honest, adversary = SPEC.strategies[Role.ALICE]["honest"], SPEC.strategies[Role.BOB]["point-random"]
    assert accept_probability(SPEC, instance, honest, adversary) == 0


@pytest.mark.parametrize("problem", ["parity", "majority", "tqbf"])
@pytest.mark.parametrize("truth", [True, False])
def test_builtin_problems_every_adversary(problem: str, truth: bool) -> None:
    for seed in range(3):
        check_every_adversary(make_instance(PROBLEMS[problem], 9, truth, seed), seed)


def test_paper_bound_for_large_parity() -> None:
    """Theorem 6's ceil(log2 size) + 3 for parity of 2^16 bits (size 2^16 - 1 is no power of 2)."""
    instance = make_instance(PROBLEMS["parity"], 2**16, True, 0)
    size = instance.machine.length  # type: ignore[union-attr]
    assert SPEC.guarantee(instance).bits_read == math.ceil(math.log2(size)) + 3 == 19
    check_every_adversary(instance, 0)


class _Sends:
    def __init__(self, bits: Any, gates: Any, pointer: Any):
        self.bits, self.gates_message, self.pointer = bits, gates, pointer

    def move(self, history: tuple[int, ...]) -> Any:
        return self.bits[len(history) % len(self.bits)]

    def gates(self, transcript: tuple[int, ...]) -> Any:
        return self.gates_message

    def point(self, transcript: tuple[int, ...], gates: Any) -> Any:
        return self.pointer


junk = st.one_of(
    st.none(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3), st.lists(st.integers(-1, 2))
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fuzzed_messages_never_crash_and_honest_side_wins(data: st.DataObject) -> None:
    """Arbitrary transcript bits, gate messages and pointers from the dishonest side: the debate
    ends with a verdict, and it is the honest side's."""
    circuit = data.draw(circuits(max_witness=2))
    instance = debate_instance(circuit, data.draw(bit_arrays(circuit.n_inputs)))
    bits = data.draw(st.lists(st.one_of(st.integers(0, 1), junk), min_size=1, max_size=3))
    gates = data.draw(st.one_of(junk, st.lists(st.one_of(st.integers(0, 1), junk), max_size=circuit.length + 1)))
    pointer = data.draw(st.one_of(junk, st.integers(-1, circuit.length)))
    honest = Role.ALICE if instance.answer == 0 else Role.BOB
    fuzzer = Strategy("fuzz", honest.opponent, "fixed messages", lambda seat: _Sends(bits, gates, pointer))
    players = {honest: SPEC.strategies[honest]["honest"], honest.opponent: fuzzer}
    outcome = play_one(SPEC, instance, players[Role.ALICE], players[Role.BOB], np.random.SeedSequence(0))
    assert outcome.verdict == instance.answer


@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("truth", [True, False])
def test_tqbf_truth_by_exhaustive_evaluation(n: int, truth: bool) -> None:
    """∀v1 ∃v2 … over the clauses themselves (not the circuit): the instance's truth is real."""
    clauses = clause_structure(n)
    for seed in range(3):
        x = make_instance(PROBLEMS["tqbf"], n, truth, seed).x

        def phi(v: tuple[int, ...], x: np.ndarray = x) -> bool:
            return all(any(v[u] ^ x[3 * j + k] for k, u in enumerate(c)) for j, c in enumerate(clauses))

        def value(prefix: tuple[int, ...], phi: Any = phi) -> bool:
            if len(prefix) == n:
                return phi(prefix)
            branches = [value((*prefix, b)) for b in (0, 1)]
            return all(branches) if len(prefix) % 2 == 0 else any(branches)

        assert value(()) == truth


def test_tqbf_reads_logarithmically_many_bits() -> None:
    for n in (4, 8, 16):
        instance = make_instance(PROBLEMS["tqbf"], n, True, 0)
        assert SPEC.guarantee(instance).bits_read == math.ceil(math.log2(instance.machine.length + 1)) + 3
        check_every_adversary(instance, n)


def test_players_lists_at_least_four_adversaries_per_role(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["players", "circuit-cross-exam"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for role in ("alice", "bob"):
        names = [line.split()[1] for line in lines if line.startswith(role)]
        assert "honest" in names and len(names) >= 5


def test_run_json_reports_the_circuit(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "circuit-cross-exam", "--problem", "majority", "--size", "64", "--trials", "3", "--json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    circuit = majority_circuit(64)
    assert (data["circuit_size"], data["circuit_depth"]) == (circuit.length, circuit.depth)
    assert data["honest_win_rate"] == 1.0 and data["verifier_bits_read_max"] <= data["guarantee"]["bits_read"]
