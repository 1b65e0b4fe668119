"""The contract every registered protocol and every built-in strategy keeps, walked over the
registries (so a new protocol or adversary is tested from its first commit):

* every protocol names a small instance here to be tested on;
* every built-in strategy of every role seats a player that has the methods, with their arity, of
  the player interface (a ``typing.Protocol``) its protocol declares for the role (``players``);
* every built-in strategy of every role plays a few debates against the opponent defending the
  truth (declared ``truthful`` or ``honest``) without crashing the verifier: the rates, forfeits and
  maxima are the counts of its records, which replay; the defender wins as often as the guarantee
  promises; the verifier's queries and reads stay within it; on the decomposition protocols, A's
  mean payoff meets the payoff bound wherever it is promised;
* on every protocol written as nodes, honest against honest on both truths, the rate of played
  debates is the exact P[V = 1] of enumerating the same nodes, which keeps the guarantee.
"""

from __future__ import annotations

import copy
import inspect
import math
from typing import Any, Protocol

import numpy as np
import pytest

from debatekit.analysis.exact import accept_probability
from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine.record import read_records, replay
from debatekit.ledger import Ledger, Role
from debatekit.oracle import Asker
from debatekit.players.base import Seat, Strategy
from debatekit.problems import PROBLEMS
from debatekit.problems.registry import Instance
from debatekit.protocols import bisection, cross_exam
from debatekit.protocols.payoffs import BoundKind, Payoffs
from debatekit.protocols.registry import PROTOCOLS, protocols_of
from debatekit.protocols.spec import Guarantee, ProtocolSpec

CONTRACT_INSTANCES = {
    "cross-exam": ("approval-majority", 6),
    "bisection": ("parity", 2),
    "kw": ("majority", 4),
    "circuit-cross-exam": ("tqbf", 4),
    "stochastic": ("noisy-majority", 8),
    "prover-estimator": ("evidence-majority", 1),
    "naive-recursive": ("evidence-majority", 1),
}
"""(problem, size) per protocol: small enough for a few debates of every strategy in seconds."""


def test_every_protocol_has_a_contract_instance() -> None:
    assert set(CONTRACT_INSTANCES) == set(PROTOCOLS)
    for name, (problem, _) in CONTRACT_INSTANCES.items():
        assert name in protocols_of(PROBLEMS[problem])


def test_every_role_declares_one_honest_strategy() -> None:
    """Analysis and the demo find the theorem's honest player by its declaration, never its name."""
    for name, spec in PROTOCOLS.items():
        for role in (Role.ALICE, Role.BOB):
            declared = [s for s in spec.strategies[role].values() if s.honest]
            assert len(declared) == 1, (name, role)
            assert spec.honest(role) is declared[0]


CASES = [
    (name, role, strategy)
    for name, spec in PROTOCOLS.items()
    for role in (Role.ALICE, Role.BOB)
    for strategy in spec.strategies[role]
]


def contract_instance(spec: ProtocolSpec, role: Role) -> Instance:
    """The protocol's contract instance, with the truth ``role``'s adversaries play against (the
    opponent defends the truth)."""
    problem, size = CONTRACT_INSTANCES[spec.name]
    return make_instance(PROBLEMS[problem], size, int(role is Role.BOB) == spec.alice_argues, 0)


def interface_methods(interface: type) -> dict[str, inspect.Signature]:
    """The methods a player ``Protocol`` declares, its own and its ``Protocol`` bases', by name."""
    bases = [b for b in reversed(interface.__mro__) if getattr(b, "_is_protocol", False) and b is not Protocol]
    return {
        name: inspect.signature(member)
        for base in bases
        for name, member in vars(base).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }


def player_class(spec: ProtocolSpec, role: Role, strategy: Strategy) -> type:
    """The class of the players ``strategy`` seats: the factory itself when it is a class, else the
    type of a player it seats on the contract instance."""
    if isinstance(strategy.factory, type):
        return strategy.factory
    instance, rng = contract_instance(spec, role), np.random.default_rng(0)
    ask = Asker(instance.oracle, role, Ledger(), rng)
    opponent = defender(spec, role.opponent, instance)
    return type(strategy.factory(Seat(copy.deepcopy(instance), role, rng, ask, None, opponent)))


def mistakes(player: type, interface: type) -> list[str]:
    """How ``player`` fails ``interface``: each declared method it lacks, or that cannot be called
    with the declared number of arguments."""
    found = []
    for name, declared in interface_methods(interface).items():
        method: Any = getattr(player, name, None)
        if not callable(method):
            found.append(f"{player.__name__} has no method {name}")
            continue
        arity = len(declared.parameters) - 1  # without self
        try:
            inspect.signature(method).bind(player, *[None] * arity)
        except TypeError:
            found.append(f"{player.__name__}.{name}{inspect.signature(method)} does not take {arity} arguments")
    return found


def test_every_tree_protocol_declares_its_players() -> None:
    """A protocol written as nodes (``debate``) calls its players' methods: it declares them, one
    ``Protocol`` with at least one method per role."""
    for name, spec in PROTOCOLS.items():
        if spec.debate is None and spec.players is None:
            continue  # batch protocols: declared through the same field, once written
        assert spec.players is not None and set(spec.players) == {Role.ALICE, Role.BOB}, name
        for interface in spec.players.values():
            assert getattr(interface, "_is_protocol", False) and interface_methods(interface), (name, interface)


@pytest.mark.parametrize(("name", "role", "strategy"), CASES)
def test_every_strategy_implements_its_player_interface(name, role, strategy) -> None:
    spec = PROTOCOLS[name]
    if spec.players is None:
        pytest.skip(f"{name} declares no player interface yet (ProtocolSpec.players)")
    player = player_class(spec, role, spec.strategies[role][strategy])
    assert mistakes(player, spec.players[role]) == []


class _NoChallenge:
    """Cross-examination's Bob without ``challenge``."""

    def __init__(self, seat: Seat):
        self.seat = seat


class _ShortMiddle:
    """Bisection's Alice whose ``middle`` takes two of its four arguments."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def final(self) -> Any:
        return None

    def middle(self, start: Any, end: Any) -> Any:
        return None


def _returns_incomplete(seat: Seat) -> _NoChallenge:
    return _NoChallenge(seat)


def test_the_player_check_fails_for_an_incomplete_strategy() -> None:
    """The check can fail: a missing method and a wrong arity, whether the factory is the class or
    a function seating one; the complete honest players pass."""
    exam, bis = PROTOCOLS["cross-exam"], PROTOCOLS["bisection"]
    for factory in (_NoChallenge, _returns_incomplete):
        incomplete = Strategy("incomplete", Role.BOB, "no challenge", factory)
        assert mistakes(player_class(exam, Role.BOB, incomplete), cross_exam.Bob) == [
            "_NoChallenge has no method challenge"
        ]
    short = Strategy("short", Role.ALICE, "middle takes two arguments", _ShortMiddle)
    (found,) = mistakes(player_class(bis, Role.ALICE, short), bisection.Alice)
    assert found.startswith("_ShortMiddle.middle(self, start: 'Any', end: 'Any')") and "take 4 arguments" in found
    assert mistakes(cross_exam.HonestBob, cross_exam.Bob) == mistakes(bisection.HonestAlice, bisection.Alice) == []
    assert not isinstance(_NoChallenge(None), cross_exam.Bob)  # type: ignore[arg-type]


ALPHA = 1e-6
"""The level at which a run may contradict a guarantee that is a probability."""


def defender(spec: ProtocolSpec, role: Role, instance: Instance) -> Strategy:
    """``role``'s player defending the truth, by declaration, never by name: the one declared
    ``truthful`` (Lemma A.4's δ = 0 estimator, naive recursion's challenger) where the role has one,
    else the theorem's ``honest`` player; one that refuses ``instance`` is passed over."""
    declared = [s for s in spec.strategies[role].values() if s.truthful] + [spec.honest(role)]
    return next(s for s in declared if s.refuses is None or not s.refuses(instance))


def promised_win_rate(g: Guarantee, answer: int) -> float:
    """The least P[V = L(x)] the guarantee promises the side defending the truth: completeness
    on a yes-instance, 1 - soundness on a no-instance."""
    return g.completeness if answer else 1 - g.soundness


def lower_tail(n: int, p: float, k: int) -> float:
    """P[Bin(n, p) <= k]."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def trials_for(spec: ProtocolSpec, instance: Instance) -> int:
    """3 debates where the promise is certain (or vacuous); where it is a probability b, enough
    that losing them all contradicts it at level ALPHA."""
    b = promised_win_rate(spec.guarantee(instance), instance.answer)
    return 3 if b in (0.0, 1.0) else max(3, math.ceil(math.log(ALPHA) / math.log(1 - b)))


def keeps_the_payoff_bound(payoffs: Payoffs) -> None:
    """The decomposition protocols promise A's mean payoff, not verdicts: where the theorem's bound
    is promised here and covers the B that played, the mean's confidence interval reaches it
    (completeness: E[payoff] >= bound; soundness: E[payoff] <= bound)."""
    bound = payoffs.conclusions.bound
    if not bound.covers_bob or not payoffs.conclusions.promised:
        return
    low, high = payoffs.ci
    if bound.kind is BoundKind.COMPLETENESS:
        assert high >= bound.value, payoffs
    else:
        assert low <= bound.value, payoffs


@pytest.mark.parametrize(("name", "role", "strategy"), CASES)
def test_every_strategy_keeps_the_contract(tmp_path, name, role, strategy) -> None:
    spec = PROTOCOLS[name]
    instance = contract_instance(spec, role)  # the opponent defends the truth
    player = spec.strategies[role][strategy]
    if player.refuses is not None and player.refuses(instance):
        pytest.skip(f"{strategy} refuses this instance: {player.refuses(instance)}")
    players = {role: player, role.opponent: defender(spec, role.opponent, instance)}
    trials = trials_for(spec, instance)
    record = tmp_path / "r.jsonl"
    result = run(spec, instance, players[Role.ALICE], players[Role.BOB], trials=trials, seed=0, record=record)
    g, answer = result.guarantee, instance.answer
    assert (result.trials, result.undecided) == (trials, 0)
    # The rates and maxima are the records' counts.
    records = list(read_records(record))
    assert [r["debate"] for r in records] == list(range(trials))
    verdicts = [r["verdict"] for r in records]
    assert result.accept_rate == verdicts.count(1) / trials
    assert result.honest_win_rate == verdicts.count(answer) / trials
    assert set(verdicts) <= {0, 1}
    for side in (Role.ALICE, Role.BOB):
        assert result.forfeits[side.value] == sum(r["forfeit"] == side.value for r in records)
    assert result.verifier_queries_max == max(r["queries"][Role.VERIFIER.value] for r in records) <= g.verifier_queries
    assert result.verifier_bits_read_max == max(r["bits_read"] for r in records) <= g.bits_read
    assert all(replay(r, spec, instance).reproduced for r in records)
    # The side defending the truth wins as often as the guarantee promises (at level ALPHA).
    wins = verdicts.count(answer)
    assert lower_tail(trials, promised_win_rate(g, answer), wins) >= ALPHA, (wins, trials, g)
    if spec.conclude is not None:
        assert result.payoffs is not None
        payoffs = [r["payoff"] for r in records]
        assert result.payoffs.mean == pytest.approx(sum(payoffs) / trials)
        keeps_the_payoff_bound(result.payoffs)
    else:
        assert result.payoffs is None


NODE_PROTOCOLS = [name for name, spec in PROTOCOLS.items() if spec.debate is not None]


@pytest.mark.parametrize("truth", [True, False], ids=["yes", "no"])
@pytest.mark.parametrize("name", NODE_PROTOCOLS)
def test_honest_play_is_its_exact_value(name, truth) -> None:
    """Honest against honest, the acceptance rate of played debates is P[V = 1] computed by
    enumeration of the same nodes (:func:`~debatekit.analysis.exact.accept_probability`), and
    that value keeps the guarantee: at least the completeness on a yes-instance, at most the
    soundness on a no-instance."""
    spec = PROTOCOLS[name]
    problem, size = CONTRACT_INSTANCES[name]
    instance = make_instance(PROBLEMS[problem], size, truth, 0)
    alice, bob = spec.honest(Role.ALICE), spec.honest(Role.BOB)
    exact = float(accept_probability(spec, instance, alice, bob))
    g = spec.guarantee(instance)
    assert exact >= g.completeness if truth else exact <= g.soundness
    trials = 20
    result = run(spec, instance, alice, bob, trials=trials, seed=0)
    accepted = round(result.accept_rate * trials)
    if exact in (0.0, 1.0):
        assert accepted == exact * trials
    else:  # a two-sided test at level ALPHA
        assert lower_tail(trials, exact, accepted) >= ALPHA / 2
        assert lower_tail(trials, 1 - exact, trials - accepted) >= ALPHA / 2
