"""The Karchmer-Wigderson walk after rounds (Theorem 9's route with Theorem 5's walk): the rounds of
an original debate α_1, β_1, … are played first, then the provers walk the levelled form of the
verifier C(x, α, β). The levelled form of circuits with witness inputs, the honest side against
every adversary on tqbf and on random circuit-verified debates (exactly), the depth + 1 bits
bound, malformed round bits, and the command line."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.test_cli import cli, one_json, run_json

from conftest import bit_arrays, circuit_values, circuits
from debatekit.analysis.exact import accept_probability, solve
from debatekit.analysis.montecarlo import make_instance, play_one
from debatekit.engine.nodes import End, Move, advance
from debatekit.ledger import Ledger, Role
from debatekit.machine.circuit import Circuit
from debatekit.machine.levelled import levelled
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols.circuit_cross_exam import speaker
from debatekit.protocols.kw import bits_bound, rounds_of
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.spec import honest_role
from debatekit.reader import Reader

KW = PROTOCOLS["kw"]


def game_value(circuit: Circuit, x: np.ndarray, history: tuple[int, ...] = ()) -> int:
    """∀α_1 ∃β_1 … C(x, α, β) by plain recursion (Alice, Prover 0, minimises)."""
    if len(history) == circuit.n_witness:
        return circuit_values(circuit, np.concatenate([x, np.array(history, dtype=np.uint8)]))[-1]
    values = [game_value(circuit, x, (*history, b)) for b in (0, 1)]
    return min(values) if speaker(len(history)) is Role.ALICE else max(values)


def debate_instance(circuit: Circuit, x: np.ndarray) -> Instance:
    truth = bool(game_value(circuit, x))
    return Instance("circuit", len(x), truth, x, machine=circuit, levelled=levelled(circuit))


def check_exactly(instance: Instance) -> None:
    """P[verdict = truth] = 1 against every built-in adversary (mixed moves enumerated) and
    against the best adversary found by exhaustive search."""
    honest = honest_role(KW, instance.truth)
    for adversary in KW.strategies[honest.opponent].values():
        players = {honest: KW.strategies[honest]["honest"], honest.opponent: adversary}
        assert accept_probability(KW, instance, players[Role.ALICE], players[Role.BOB]) == instance.answer, (
            adversary.name
        )
    assert solve(KW, instance).exact == "1"


@settings(max_examples=150, deadline=None)
@given(circuits(max_inputs=4, max_witness=4, max_gates=14))
def test_levelled_form_with_witness_inputs_agrees_on_every_input(circuit: Circuit) -> None:
    """w_i becomes variable n_inputs + i: the levelled form equals C on every (x, w)."""
    form = levelled(circuit)
    assert form.n == circuit.offset == circuit.n_inputs + circuit.n_witness
    inputs = np.array(list(itertools.product((0, 1), repeat=form.n)), dtype=np.uint8)
    expected = [circuit_values(circuit, row)[-1] for row in inputs]
    assert form.evaluate(inputs).tolist() == expected
    assert [form.evaluate(row) for row in inputs[:8]] == expected[:8]


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("truth", [True, False])
def test_tqbf_honest_side_wins_exactly(n: int, truth: bool) -> None:
    for seed in range(2):
        instance = make_instance(PROBLEMS["tqbf"], n, truth, seed)
        assert rounds_of(instance) == n
        check_exactly(instance)


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("truth", [True, False])
def test_tqbf_bits_read_is_depth_plus_one(n: int, truth: bool) -> None:
    """Every pair of built-in strategies: honest wins when it plays, at most depth + 1 bits read,
    exactly depth + 1 unless a walk bit is malformed; some walks end on a transcript bit."""
    instance = make_instance(PROBLEMS["tqbf"], n, truth, 0)
    depth = instance.levelled_circuit().depth  # type: ignore[union-attr]
    honest = honest_role(KW, truth)
    ends_on_transcript = False
    for seed, (alice, bob) in enumerate(
        itertools.product(KW.strategies[Role.ALICE].values(), KW.strategies[Role.BOB].values())
    ):
        outcome = play_one(KW, instance, alice, bob, np.random.SeedSequence(seed))
        assert outcome.ledger.bits_read <= depth + 1 == bits_bound(instance.levelled_circuit())  # type: ignore[arg-type]
        assert outcome.ledger.queries[Role.VERIFIER] == 0
        if {alice.name, bob.name}.isdisjoint({"malformed"}):
            assert outcome.ledger.bits_read == depth + 1
            ends_on_transcript |= outcome.ledger.input_bits_read == 0
        if (alice, bob)[honest is Role.BOB].name == "honest":
            assert outcome.verdict == instance.answer, (alice.name, bob.name, outcome.reason)
    assert ends_on_transcript


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_random_circuit_verified_debates_exactly(data: st.DataObject) -> None:
    """Any circuit C(x, α, β): rounds played optimally by the honest side, then the walk."""
    circuit = data.draw(circuits(max_inputs=4, max_witness=4, max_gates=12))
    check_exactly(debate_instance(circuit, data.draw(bit_arrays(circuit.n_inputs))))


class _Script:
    """Sends ``bits`` as round bits (cycling) and 0 at every gate."""

    def __init__(self, bits: list[Any]):
        self.bits = bits

    def move(self, history: tuple[int, ...]) -> Any:
        return self.bits[len(history) % len(self.bits)]

    def point(self, transcript: tuple[int, ...], level: int, gate: int) -> Any:
        return 0


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 6),
    st.booleans(),
    st.lists(st.one_of(st.integers(-1, 2), st.none(), st.floats(allow_nan=True), st.text(max_size=2)), min_size=1),
)
def test_malformed_round_bits_lose_for_their_sender(n: int, truth: bool, bits: list[Any]) -> None:
    instance = make_instance(PROBLEMS["tqbf"], n, truth, 0)
    ledger = Ledger()
    node = KW.debate(instance, Reader(ledger))
    player = _Script(bits)
    for i in itertools.count():
        assert isinstance(node, Move)
        if i == n:
            break
        sent = node.ask(player)
        _, node = advance(node, sent, KW.alice_argues)
        if isinstance(node, End):
            assert sent not in (0, 1) or isinstance(sent, float)
            assert node.forfeit is speaker(i) and node.verdict == (0 if speaker(i) is Role.BOB else 1)
            assert ledger.bits_read == 0
            return
        assert sent in (0, 1)


def test_catalog_describes_the_rounds() -> None:
    instance = make_instance(PROBLEMS["tqbf"], 5, True, 0)
    described = KW.describe(instance)  # type: ignore[misc]
    form = instance.levelled_circuit()
    assert form is not None and form.n == len(instance.x) + 5
    assert described == {"circuit_size": form.size, "circuit_depth": form.depth, "rounds": 5}
    assert KW.guarantee(instance).bits_read == form.depth + 1
    parity = make_instance(PROBLEMS["parity"], 8, True, 0)
    assert KW.describe(parity)["rounds"] == 0  # type: ignore[misc]


@pytest.mark.parametrize("truth", ["yes", "no"])
def test_cli_run_tqbf_json(capsys: pytest.CaptureFixture[str], truth: str) -> None:
    data = run_json(capsys, "kw", "--problem", "tqbf", "--size", "8", "--truth", truth, "--trials", "20")
    case = PROBLEMS["tqbf"].instance(8, truth == "yes", np.random.default_rng(0))
    form = case.levelled_circuit()
    assert form is not None
    assert (data["circuit_size"], data["circuit_depth"], data["rounds"]) == (form.size, form.depth, 8)
    assert data["verifier_bits_read_max"] <= data["guarantee"]["bits_read"] == form.depth + 1
    assert data["honest_win_rate"] == 1.0 and data["verifier_queries_max"] == 0
    assert data["accept_rate"] == (1.0 if truth == "yes" else 0.0)


def test_cli_run_tqbf_default_trials(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", "kw", "--problem", "tqbf", "--size", "8", "--truth", "no", "--json")
    assert code == 0, err
    data = one_json(out)
    assert {"circuit_size", "circuit_depth"} <= data.keys()
    assert data["verifier_bits_read_max"] <= data["guarantee"]["bits_read"] == data["circuit_depth"] + 1


@pytest.mark.parametrize("truth", ["yes", "no"])
def test_cli_solve_tqbf(capsys: pytest.CaptureFixture[str], truth: str) -> None:
    code, out, err = cli(capsys, "solve", "kw", "--problem", "tqbf", "--size", "2", "--truth", truth, "--json")
    assert code == 0, err
    data = one_json(out)
    assert (data["exact"], data["honest"]) == ("1", "bob" if truth == "yes" else "alice")
