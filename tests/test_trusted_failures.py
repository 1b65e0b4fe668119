"""Trusted code that fails is loud (issue 19, item 2): an exception in the verifier, the rules, a
built-in strategy or a built-in oracle ends the run with an internal error naming the place and
the debate, and is never counted as a player's forfeit; a user's strategy that raises still
forfeits."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.cli.main import main
from debatekit.engine import nodes
from debatekit.engine.record import read_records
from debatekit.engine.trust import InternalError
from debatekit.ledger import Role
from debatekit.players.base import Strategy
from debatekit.problems import PROBLEMS
from debatekit.protocols import cross_exam, naive_recursive, prover_estimator
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.stochastic import rules as stochastic
from debatekit.reader import Reader
from test_contract import CONTRACT_INSTANCES

HERE = Path(__file__).name


class Instrumented(RuntimeError):
    """What the instrumented verifier raises."""


def instrument_verifier(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Make protocol ``name``'s verifier raise :class:`Instrumented` on its first step; the list
    counts its calls. Tree protocols: every read of the verifier's Reader. Stochastic debate: the
    verifier's test after an abort and nature's bit it draws each step. Recursive protocols: the
    verifier's coins and its oracle query."""
    calls: list[int] = []

    def raising(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise Instrumented("the instrumented verifier failed")

    spec = PROTOCOLS[name]
    if spec.debate is not None:
        for method in ("bit", "word", "input_bit", "query_input"):
            monkeypatch.setattr(Reader, method, raising)
    elif name == "stochastic":
        monkeypatch.setattr(stochastic.Rules, "accepts", raising)
        monkeypatch.setattr(stochastic, "drawn_bit", raising)  # the step (rules.debate) is the one caller
        monkeypatch.setattr(stochastic, "coin_bit", raising)
    else:
        monkeypatch.setattr(nodes.Chance, "coin", raising)  # the verifier's trusted coins
        for module in (naive_recursive, prover_estimator):
            monkeypatch.setattr(module, "Asked", raising)  # its oracle query, in the Judge's check
    return calls


CASES = [
    (name, role, strategy)
    for name, spec in PROTOCOLS.items()
    for role in (Role.ALICE, Role.BOB)
    for strategy in spec.strategies[role]
]


def opponents(name: str, role: Role, strategy: str, truth: bool) -> tuple[Any, dict[Role, Strategy]]:
    """The contract's instance and players: ``strategy`` against the honest opponent (the
    truthful one where the honest one refuses the instance)."""
    spec = PROTOCOLS[name]
    problem, size = CONTRACT_INSTANCES[name]
    instance = make_instance(PROBLEMS[problem], size, truth, 0)
    player = spec.strategies[role][strategy]
    if player.refuses is not None and player.refuses(instance):
        pytest.skip(f"{strategy} refuses this instance: {player.refuses(instance)}")
    other = spec.strategies[role.opponent]["honest"]
    if other.refuses is not None and other.refuses(instance):
        other = next(s for s in spec.strategies[role.opponent].values() if s.truthful)
    return instance, {role: player, role.opponent: other}


@pytest.mark.parametrize(("name", "role", "strategy"), CASES)
def test_a_verifier_that_raises_is_an_internal_error_never_a_forfeit(monkeypatch, tmp_path, name, role, strategy):
    """Every built-in strategy of every protocol, against the honest opponent, with the verifier
    instrumented to raise: a run in which the verifier raised never returns a result (it raises
    InternalError naming the protocol and the debate, the verifier's error inside), and no debate
    recorded before it blames anyone for the verifier's error."""
    spec = PROTOCOLS[name]
    instance, players = opponents(name, role, strategy, int(role is Role.BOB) == spec.alice_argues)
    calls = instrument_verifier(monkeypatch, name)
    record = tmp_path / "r.jsonl"
    try:
        result = run(spec, instance, players[Role.ALICE], players[Role.BOB], trials=2, seed=0, record=record)
    except InternalError as err:
        assert calls, "an internal error although the verifier was never asked"
        assert isinstance(err.error, Instrumented)
        assert err.protocol == name and err.debates.startswith("debate")
        assert err.place.startswith(f"{HERE}:")  # the innermost trusted frame: the instrument
        assert f"internal error in {HERE}:" in str(err) and "Instrumented: the instrumented verifier failed" in str(err)
    else:  # every debate ended before the verifier's first step (a malformed adversary's forfeit, say)
        assert not calls, "the verifier raised and the run still gave a result"
        assert sum(result.forfeits.values()) == result.trials
        assert not any("instrumented" in reason for reason in result.forfeit_reasons.values())
    for found in read_records(record) if record.exists() else ():
        assert "instrumented" not in str(found.get("reason", "")), found


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("built-in bob crashed")


def test_a_built_in_bob_that_raises_is_loud_and_a_users_bob_forfeits(monkeypatch):
    """Tree protocols (cross-examination): honest Bob made to raise ends the run at debate 0 with
    the place of the raise; a user's Bob that raises (``module:attr``) forfeits every debate."""
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["parity"], 16, False, 0)
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    from debatekit.runs.names import strategy as resolve

    user = resolve(spec, Role.BOB, "user_strategies:CrashingBob")
    result = run(spec, instance, alice, user, trials=4, seed=0)
    assert result.forfeits["bob"] == 4 and "user bob crashed" in result.forfeit_reasons["bob"]
    monkeypatch.setattr(cross_exam.HonestBob, "challenge", _raise)
    with pytest.raises(InternalError) as raised:
        run(spec, instance, alice, bob, trials=4, seed=0)
    err = raised.value
    assert (err.protocol, err.debates, type(err.error)) == ("cross-exam", "debate 0", RuntimeError)
    assert err.place.startswith(f"{HERE}:")


class _UserStochasticBob:
    """A user's stochastic Bob whose every abort decision raises."""

    def __init__(self, seat: Any):
        pass

    def aborts(self, view: Any, claims: Any, bits: Any) -> Any:
        raise RuntimeError("user bob crashed")


class _UserEstimator:
    """A user's prover-estimator B whose first estimate raises."""

    def __init__(self, seat: Any):
        pass

    def initial(self) -> float:
        raise RuntimeError("user bob crashed")


@pytest.mark.parametrize(
    ("name", "problem", "size", "builtin", "target", "method", "user"),
    [
        ("stochastic", "noisy-majority", 8, "honest", stochastic.HonestBob, "aborts", _UserStochasticBob),
        ("prover-estimator", "evidence-majority", 1, "omniscient", prover_estimator.TruthfulBob, "initial",
         _UserEstimator),
    ],
)  # fmt: skip
def test_the_batch_engines_tell_a_built_in_bob_from_a_users(
    monkeypatch, name, problem, size, builtin, target, method, user
):
    """Stochastic and prover-estimator debate: the same rule on their own engines."""
    spec = PROTOCOLS[name]
    instance = make_instance(PROBLEMS[problem], size, True, 0)
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB][builtin]
    mine = Strategy("tests:user", Role.BOB, "raises", user)  # an API object: untrusted
    result = run(spec, instance, alice, mine, trials=3, seed=0)
    assert result.forfeits["bob"] == 3 and "user bob crashed" in result.forfeit_reasons["bob"]
    monkeypatch.setattr(target, method, _raise)
    with pytest.raises(InternalError) as raised:
        run(spec, instance, alice, bob, trials=3, seed=0)
    assert raised.value.protocol == name and raised.value.debates == "debates 0-2"
    assert raised.value.place.startswith(f"{HERE}:")


def test_the_command_line_names_the_place_exits_1_and_counts_no_forfeit(monkeypatch, capsys):
    """A built-in strategy made to raise: exit 1, one line on stderr naming the place and the
    debate, nothing on stdout (no result, no forfeit counted); ``--debug`` adds the traceback."""
    monkeypatch.setattr(cross_exam.HonestBob, "challenge", _raise)
    args = ["run", "cross-exam", "--problem", "parity", "--size", "16", "--truth", "no", "--trials", "5", "--no-log"]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"debatekit: internal error in {HERE}:")
    assert "(cross-exam, debate 0): RuntimeError: built-in bob crashed" in line
    assert "forfeit" not in err
    assert main(["--debug", *args]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" in err and f"{HERE}" in err and err.strip().splitlines()[-1].startswith("debatekit: internal")


def test_a_built_in_oracle_that_raises_for_the_verifier_is_loud():
    """The verifier's built-in oracle raising is an internal error too, not a forfeit."""
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["approval-majority"], 6, True, 0)
    players = [spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["point-random"]]
    assert run(spec, instance, *players, trials=8, seed=0).verifier_queries_max > 0  # the verifier asks it here

    class Broken(type(instance.oracle)):  # type: ignore[misc]
        sample = sample_count = staticmethod(_raise)

    broken = copy.copy(instance.oracle)
    broken.__class__ = Broken
    with pytest.raises(InternalError) as raised:
        run(spec, instance, *players, trials=8, seed=0, oracles=Oracles(instance.oracle, broken))
    assert raised.value.debates.startswith("debate ") and raised.value.place.startswith(f"{HERE}:")


def test_exact_analysis_tells_a_built_in_that_raises_from_a_users(monkeypatch, capsys):
    """``solve`` and ``accept_probability`` (analysis/exact): a user's Alice that raises forfeits
    (P[V=1] = 0); the built-in honest Alice made to raise is an internal error, never a forfeit
    (the value 0 it would give), and ``debatekit solve`` exits 1 with one line."""
    from debatekit.analysis.exact import accept_probability, solve
    from debatekit.runs.names import strategy as resolve

    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["parity"], 4, True, 0)
    honest_alice, honest_bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    user = resolve(spec, Role.ALICE, "user_strategies:CrashingAlice")
    assert accept_probability(spec, instance, user, honest_bob) == 0
    assert solve(spec, instance).value == 1
    monkeypatch.setattr(cross_exam.HonestAlice, "transcript", _raise)
    with pytest.raises(InternalError) as raised:
        solve(spec, instance)
    assert raised.value.place.startswith(f"{HERE}:") and isinstance(raised.value.error, RuntimeError)
    with pytest.raises(InternalError):
        accept_probability(spec, instance, honest_alice, honest_bob)
    args = ["solve", "cross-exam", "--problem", "parity", "--size", "4", "--truth", "yes", "--no-log"]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"debatekit: internal error in {HERE}:") and "built-in bob crashed" in line


class _UserProofRaises:
    """A user's prover-estimator A: the built-in bad-proof A whose proof requests raise."""

    def __init__(self, seat: Any):
        from debatekit.players.prover_estimator import BadProof

        self._inner = BadProof(seat)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def proof(self, leaves: tuple[int, ...]) -> Any:
        raise RuntimeError("user proof crashed")


@pytest.mark.parametrize("bob", ["honest", "omniscient"])
def test_a_built_in_as_proof_that_raises_is_loud_whoever_asks_first(monkeypatch, bob):
    """Prover-estimator: A's committed proof is first asked while B trains on it (or while the
    truthful estimator reads its truth), outside any debate's moves. A built-in A whose proof
    request raises is an internal error there too; a user's A that does so forfeits at the leaf."""
    from debatekit.players.prover_estimator import BadProof

    spec = PROTOCOLS["prover-estimator"]
    instance = make_instance(PROBLEMS["obfuscated-primality"], 10, False, 0)
    estimator = spec.strategies[Role.BOB][bob]
    mine = Strategy("tests:user", Role.ALICE, "proof raises", _UserProofRaises)  # an API object: untrusted
    result = run(spec, instance, mine, estimator, trials=3, seed=0)
    assert result.accept_rate == 0.0 and result.forfeits["alice"] == 3
    assert "user proof crashed" in result.forfeit_reasons["alice"]
    monkeypatch.setattr(BadProof, "proof", _raise)
    fresh = make_instance(PROBLEMS["obfuscated-primality"], 10, False, 0)  # no proof kept from the user's run
    with pytest.raises(InternalError) as raised:
        run(spec, fresh, spec.strategies[Role.ALICE]["bad-proof"], estimator, trials=3, seed=0)
    assert type(raised.value.error) is RuntimeError and raised.value.place.startswith(f"{HERE}:")
