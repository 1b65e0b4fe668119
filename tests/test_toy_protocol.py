"""A new protocol is one module plus one registration line (issue 21): the toy protocol of
tests/toy_protocol.py, registered by ``register``, is played by ``debatekit run`` and the API, writes
a record that replays, resumes a stopped run and a debate stopped while it waited on the judge, is
solved exactly, is supported by every problem whose features meet its needs, is offered by shell
completion, and keeps the contract every registered protocol keeps, with no other change to src."""

from __future__ import annotations

import json

import pytest

import debatekit
import test_contract as contract
import toy_protocol
from debatekit.analysis.exact import accept_probability, solve
from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.cli.main import main
from debatekit.cli.options import ProtocolArgument
from debatekit.engine.record import journal_path, read_records, replay
from debatekit.ledger import Role
from debatekit.oracle import SampleOracle
from debatekit.problems import PROBLEMS
from debatekit.protocols.registry import PROTOCOLS, protocols_of, register, unregister


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    """The toy registered (the one line) for each test, and gone after it; its contract instance
    set as the contract table sets the built-ins'."""
    register("toy", "toy_protocol:SPEC")
    monkeypatch.setitem(contract.CONTRACT_INSTANCES, "toy", ("approval-majority", 4))
    yield PROTOCOLS["toy"]
    unregister("toy")


def cut(path, whole: int) -> None:
    """Keep ``whole`` records and half of the next line, as a process killed mid-write leaves it."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:whole]) + lines[whole][: len(lines[whole]) // 2])


def test_it_is_registered_where_every_protocol_is(toy) -> None:
    assert toy is toy_protocol.SPEC and "toy" in PROTOCOLS and list(PROTOCOLS)[-1] == "toy"
    assert {"parity", "sat-witness", "approval-majority", "caffeine"} <= {
        name for name, problem in PROBLEMS.items() if "toy" in protocols_of(problem)
    }
    assert "toy" not in protocols_of(PROBLEMS["noisy-majority"])  # its judge is not deterministic
    (argument,) = ProtocolArgument.__metadata__
    assert "toy" in argument.autocompletion()
    with pytest.raises(ValueError, match="registered already"):
        register("toy", toy)


def test_it_is_gone_once_unregistered() -> None:
    unregister("toy")
    assert "toy" not in PROTOCOLS and "toy" not in protocols_of(PROBLEMS["parity"])
    register("toy", "toy_protocol:SPEC")  # for the fixture's unregister
    with pytest.raises(ValueError, match="built in"):
        unregister("cross-exam")


def test_it_runs_records_replays_and_resumes_on_the_command_line(tmp_path, capsys) -> None:
    path = tmp_path / "toy.jsonl"
    base = ["run", "toy", "--problem", "parity", "--size", "8", "--truth", "no", "--alice", "liar", "--trials", "12",
            "--record", str(path), "--json", "--no-log"]  # fmt: skip
    assert main(base) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["protocol"], first["trials"], first["accept_rate"]) == ("toy", 12, 0.0)
    cut(path, 5)
    assert main([*base, "--resume"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert main(["replay", str(path)]) == 0


def test_the_api_plays_it(tmp_path) -> None:
    result = debatekit.run("toy", problem="sat-witness", size=6, truth="yes", bob="dispute", trials=4)
    assert (result.accept_rate, result.honest_win_rate, result.verifier_bits_read_max) == (1.0, 1.0, 1 + 6)


class Died(BaseException):
    """The process dying under the run."""


def test_a_debate_stopped_waiting_on_the_judge_resumes_from_its_journal(toy, tmp_path) -> None:
    instance = make_instance(PROBLEMS["approval-majority"], 4, True, seed=3)
    alice, bob = toy.honest(Role.ALICE), toy.strategies[Role.BOB]["dispute"]
    asked = 0

    def person(question, rng) -> int:
        nonlocal asked
        asked += 1
        if asked == 6:  # the second debate's second query
            raise Died
        return instance.oracle.sample(question, rng)

    path = tmp_path / "d.jsonl"
    with pytest.raises(Died):
        run(toy, instance, alice, bob, 3, 1, record=path, oracles=Oracles(instance.oracle, SampleOracle(person)))
    assert len(list(read_records(path))) == 1 and journal_path(path).exists()
    again = run(toy, instance, alice, bob, 3, 1, record=path, resume=True)
    assert (again.trials, again.accept_rate) == (3, 1.0) and not journal_path(path).exists()
    assert all(replay(r, toy, instance).reproduced for r in read_records(path))


@pytest.mark.parametrize("truth", [True, False])
def test_it_is_solved_exactly(toy, truth, capsys) -> None:
    instance = make_instance(PROBLEMS["approval-majority"], 4, truth, seed=0)
    solution = solve(toy, instance)
    assert solution.value == 1.0  # the honest side wins against every adversary
    liar, dispute = toy.strategies[Role.ALICE]["liar"], toy.strategies[Role.BOB]["dispute"]
    honest, accept = toy.honest(Role.BOB), toy.strategies[Role.BOB]["accept"]
    assert accept_probability(toy, instance, liar, honest) == int(truth)  # disputed: M decides
    assert accept_probability(toy, instance, liar, dispute) == int(truth)
    assert accept_probability(toy, instance, liar, accept) == 1 - int(truth)  # unchecked, the lie stands
    assert main(["solve", "toy", "--problem", "parity", "--size", "3", "--json", "--no-log"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 1.0


@pytest.mark.parametrize("role", [Role.ALICE, Role.BOB])
def test_every_toy_strategy_keeps_the_contract(toy, tmp_path, role) -> None:
    for strategy in toy.strategies[role]:
        (tmp_path / strategy).mkdir()
        contract.test_every_strategy_implements_its_player_interface("toy", role, strategy)
        contract.test_every_strategy_keeps_the_contract(tmp_path / strategy, "toy", role, strategy)


@pytest.mark.parametrize("truth", [True, False], ids=["yes", "no"])
def test_honest_toy_play_is_its_exact_value(truth) -> None:
    contract.test_honest_play_is_its_exact_value("toy", truth)
