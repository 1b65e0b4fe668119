"""The Karchmer-Wigderson walk (Theorem 5 of debate query complexity): the honest side wins
against every adversary, the verifier reads exactly depth + 1 bits, exact search over every x."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.test_cli import assert_usage_error, cli, one_json, run_json

from debatekit.analysis.exact import accept_probability, solve, solve_every_input
from debatekit.analysis.montecarlo import play_one
from debatekit.engine.nodes import End, Move, advance, judge
from debatekit.ledger import Ledger, Role
from debatekit.machine.levelled import levelled, random_circuit
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.spec import honest_role
from debatekit.reader import Reader

KW = PROTOCOLS["kw"]


def random_instance(n: int, gates: int, seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    circuit = random_circuit(n, gates, rng)
    x = rng.integers(0, 2, n).astype(np.uint8)
    return Instance("random", n, bool(circuit.evaluate(x)[-1]), x, machine=circuit, levelled=levelled(circuit))


def test_every_role_has_honest_and_at_least_four_adversaries() -> None:
    for role in (Role.ALICE, Role.BOB):
        names = set(KW.strategies[role])
        assert "honest" in names and len(names - {"honest"}) >= 4
    assert KW.alice_argues == 0


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), gates=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_honest_side_wins_against_every_adversary_exactly(n: int, gates: int, seed: int) -> None:
    """On random circuits and inputs: P[verdict = f(x)] = 1 against every built-in adversary
    (mixed ones enumerated) and against the best adversary found by search."""
    case = random_instance(n, gates, seed)
    honest = honest_role(KW, case.truth)
    for adversary in KW.strategies[honest.opponent].values():
        players = {honest: KW.strategies[honest]["honest"], honest.opponent: adversary}
        p_accept = accept_probability(KW, case, players[Role.ALICE], players[Role.BOB])
        assert p_accept == case.answer, adversary.name
    assert solve(KW, case).exact == "1"


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), gates=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_bits_read_is_depth_plus_one(n: int, gates: int, seed: int) -> None:
    """Exactly depth + 1 for any two well-formed players; never more with malformed ones."""
    case = random_instance(n, gates, seed)
    depth = case.levelled_circuit().depth  # type: ignore[union-attr]
    for alice, bob in itertools.product(KW.strategies[Role.ALICE].values(), KW.strategies[Role.BOB].values()):
        outcome = play_one(KW, case, alice, bob, np.random.SeedSequence(seed))
        if "malformed" in (alice.name, bob.name):
            assert outcome.ledger.bits_read <= depth + 1
        else:
            assert outcome.ledger.bits_read == depth + 1
            assert outcome.ledger.input_bits_read == 1


@pytest.mark.parametrize("problem", ["parity", "majority"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_exhaustive_solve_on_every_input(problem: str, n: int) -> None:
    results = solve_every_input(KW, PROBLEMS[problem], n)
    assert [x for x, _ in results] == ["".join(map(str, b)) for b in itertools.product((0, 1), repeat=n)]
    for x, solution in results:
        ones = x.count("1")
        truth = ones % 2 == 1 if problem == "parity" else 2 * ones > n
        assert solution.truth == ("yes" if truth else "no"), x
        assert solution.exact == "1", x


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 5),
    gates=st.integers(1, 20),
    seed=st.integers(0, 2**32 - 1),
    messages=st.lists(
        st.one_of(
            st.integers(-3, 3),
            st.none(),
            st.floats(allow_nan=True),
            st.text(max_size=3),
            st.booleans(),
            st.lists(st.integers(0, 1), max_size=2),
        ),
        min_size=1,
        max_size=40,
    ),
)
def test_fuzzed_messages_never_crash_the_verifier(n: int, gates: int, seed: int, messages: list[Any]) -> None:
    """Any messages, from both sides: the walk ends in a verdict, a bad bit loses for its sender."""
    case = random_instance(n, gates, seed)
    ledger = Ledger()
    node = KW.debate(case, Reader(ledger))
    sent = iter(itertools.cycle(messages))
    while isinstance(node, Move):
        message, role = next(sent), node.role
        _, node = advance(node, message, KW.alice_argues)
        if message in (0, 1) and not isinstance(message, float):
            assert not isinstance(node, End) or node.forfeit is None
        elif isinstance(node, End):
            assert node.forfeit is role and node.verdict == (0 if role is Role.BOB else 1)
    end = node if isinstance(node, End) else judge(node, lambda question: 0, KW.alice_argues)
    assert end.verdict in (0, 1)
    assert ledger.bits_read <= case.levelled_circuit().depth + 1  # type: ignore[union-attr]


def test_a_strategy_that_raises_forfeits() -> None:
    def broken(seat: Any) -> Any:
        raise RuntimeError("no")

    case = PROBLEMS["parity"].instance(8, False, np.random.default_rng(0))
    bad = Strategy("broken", Role.BOB, "raises", broken)
    outcome = play_one(KW, case, KW.strategies[Role.ALICE]["honest"], bad, np.random.SeedSequence(0))
    assert (outcome.verdict, outcome.forfeit) == (0, Role.BOB)


@pytest.mark.parametrize("problem", ["parity", "majority", "equality", "addition-overflow"])
@pytest.mark.parametrize("truth", ["yes", "no"])
def test_cli_run_json(capsys: pytest.CaptureFixture[str], problem: str, truth: str) -> None:
    data = run_json(capsys, "kw", "--problem", problem, "--size", "64", "--truth", truth, "--trials", "3")
    case = PROBLEMS[problem].instance(64, truth == "yes", np.random.default_rng(0))
    circuit = case.levelled_circuit()
    assert circuit is not None
    assert (data["circuit_size"], data["circuit_depth"]) == (circuit.size, circuit.depth)
    assert data["verifier_bits_read_max"] == data["guarantee"]["bits_read"] == circuit.depth + 1
    assert data["verifier_queries_max"] == 0 and data["honest_win_rate"] == 1.0
    assert data["accept_rate"] == (1.0 if truth == "yes" else 0.0)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "kw", "--problem", "palindrome"],
        ["run", "kw", "--problem", "equality", "--size", "1"],
        ["run", "kw", "--problem", "parity", "--size", "0"],
        ["run", "kw", "--problem", "parity", "--alice", "nobody"],
        ["solve", "kw", "--problem", "parity", "--size", "30", "--all-inputs"],
        ["solve", "kw", "--problem", "equality", "--size", "1", "--all-inputs"],
    ],
)
def test_cli_bad_input_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert_usage_error(*cli(capsys, *argv))


def test_cli_solve_all_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "solve", "kw", "--problem", "majority", "--size", "3", "--all-inputs", "--json")
    assert code == 0, err
    data = one_json(out)
    assert (data["inputs"], data["min_value"], data["all_hold"]) == (8, 1.0, True)
    assert [c["truth"] for c in data["cases"]] == ["yes" if c["x"].count("1") >= 2 else "no" for c in data["cases"]]


def test_instance_levelled_form_is_built_once() -> None:
    case = PROBLEMS["majority"].instance(16, True, np.random.default_rng(0))
    assert callable(case.levelled)
    first = case.levelled_circuit()
    assert first is case.levelled_circuit() is case.levelled
    assert replace(case, x=case.x.copy()).levelled_circuit() is first
