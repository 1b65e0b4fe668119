"""Protocol properties: the honest side beats every built-in adversary (Theorems 5.1, 5.3, 7.1),
the verifier reads within the theorems' bounds (exactly what Figure 1 / Figure 4 say it reads),
and makes at most one oracle query per debate."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from conftest import (
    a_step,
    circuit_instances,
    length_of,
    machine_instances,
    oracle_parity_machine,
    readable,
    recording,
    sent,
)
from debatekit.analysis.montecarlo import make_instance, play_one, run
from debatekit.engine.boundary import as_bit, as_index
from debatekit.ledger import Role
from debatekit.machine.circuit import parity_circuit
from debatekit.machine.transcript import MachineBuilder, StepKind
from debatekit.machine.turing import Config, TuringMachine, palindrome_machine, parity_machine
from debatekit.oracle import NO_ORACLE, TableOracle
from debatekit.players.base import Strategy, StrategyError, resolve
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols import bisection, cross_exam
from debatekit.protocols.registry import PROTOCOLS
from debatekit.protocols.spec import honest_role
from debatekit.reader import word_width

CROSS = PROTOCOLS["cross-exam"]
BISECT = PROTOCOLS["bisection"]
SEEDS = range(3)


# -- helpers -------------------------------------------------------------------------------------


def user(role: Role, make: Any) -> Strategy:
    return Strategy("user", role, "a user-defined strategy", make)


def _seed(k: int = 0) -> np.random.SeedSequence:
    return np.random.SeedSequence(k)


# -- cross-examination ---------------------------------------------------------------------------


def check_cross_exam_debate(instance: Instance, alice: Strategy, bob: Strategy, seed: int) -> Any:
    """Play one debate and check it against Figure 1 read literally: verdict, forfeit, every bit
    V reads and every oracle query it makes."""
    log: list = []
    outcome = play_one(CROSS, instance, recording(alice, log), recording(bob, log), _seed(seed))
    alice_log, bob_log = sent(log, Role.ALICE), sent(log, Role.BOB)
    ledger = outcome.ledger
    machine = instance.machine
    steps, n, m = machine.length, machine.n_inputs, machine.n_witness
    width = math.ceil(math.log2(steps + 1))  # Bob's word names one of T steps or ACCEPT
    assert width == word_width(steps + 1)
    most = max(len(machine.relevant(t)) for t in range(steps))
    assert cross_exam.bits_bound(machine) == (most + 1) * width + 2
    assert ledger.bits_read <= cross_exam.bits_bound(machine)
    assert ledger.queries[Role.VERIFIER] <= 1
    assert outcome.verdict in (0, 1)

    if not alice_log or length_of(alice_log[0]) != m + steps:  # Alice failed, or bad framing
        assert (outcome.verdict, outcome.forfeit, ledger.bits_read, ledger.input_bits_read) == (0, Role.ALICE, 0, 0)
        return outcome
    message = alice_log[0]
    if not bob_log:  # Bob raised: he forfeits before V reads anything
        assert (outcome.verdict, outcome.forfeit, ledger.bits_read) == (1, Role.BOB, 0)
        return outcome
    challenge, bits = bob_log[0], readable(message, m + steps)
    if challenge is cross_exam.ACCEPT:
        assert ledger.bits_read == width + 1  # Bob's word and a_T
        assert ledger.input_bits_read == 0
        if bits is not None:
            assert (outcome.verdict, outcome.forfeit) == (bits[-1], None)
        return outcome
    t = a_step(challenge, steps)
    if t is None:  # not ACCEPT and not a step: Bob loses, having been read but nothing of Alice's
        assert (outcome.verdict, outcome.forfeit, ledger.bits_read) == (1, Role.BOB, width)
        return outcome
    prover = [a for a in machine.relevant(t) if a >= n]
    assert ledger.bits_read <= width + len(prover) + 2
    if bits is None:  # V may stop at an unreadable bit of Alice's, and then she loses
        assert outcome.forfeit in (None, Role.ALICE)
        return outcome
    values = [*instance.x.tolist(), *bits]
    rule = machine.rule(t, tuple(values[a] for a in machine.relevant(t)))
    oracle_step = machine.kind(t) is StepKind.ORACLE
    expected = int(instance.oracle.probability(rule)) if oracle_step else int(rule)
    consistent = bits[m + t] == expected
    # a_{I(t)} (prover part), a_t, and a_T unless the check failed or t is the last step
    assert ledger.bits_read == width + len(prover) + 1 + int(consistent and t != steps - 1)
    assert ledger.input_bits_read == len(machine.relevant(t)) - len(prover)
    assert ledger.queries[Role.VERIFIER] == int(oracle_step)
    assert (outcome.verdict, outcome.forfeit) == (bits[-1] if consistent else 0, None)
    return outcome


def check_honest_wins(spec, check_debate, instance: Instance, seeds=SEEDS) -> None:
    """The honest side beats every built-in adversary of ``spec``; ``check_debate`` plays and
    checks one debate."""
    honest = honest_role(spec, instance.truth)
    adversary = honest.opponent
    for name, strategy in spec.strategies[adversary].items():
        players = {honest: spec.strategies[honest]["honest"], adversary: strategy}
        for seed in seeds:
            outcome = check_debate(instance, players[Role.ALICE], players[Role.BOB], seed)
            assert outcome.verdict == instance.answer, (name, seed, outcome.reason)
            assert outcome.forfeit is not honest


def check_honest_wins_cross_exam(instance: Instance, seeds=SEEDS) -> None:
    check_honest_wins(CROSS, check_cross_exam_debate, instance, seeds)


@settings(deadline=None, max_examples=100)
@given(instance=circuit_instances())
def test_cross_exam_honest_side_beats_every_adversary_on_random_circuits(instance):
    event(f"truth={instance.truth}, witness bits={instance.machine.n_witness}")
    check_honest_wins_cross_exam(instance)


@settings(deadline=None, max_examples=100)
@given(instance=machine_instances())
def test_cross_exam_honest_side_beats_every_adversary_on_random_oracle_machines(instance):
    event(f"truth={instance.truth}, witness bits={instance.machine.n_witness}")
    check_honest_wins_cross_exam(instance)


BUILT_IN_CROSS_EXAM = [("parity", 1), ("parity", 9), ("majority", 5), ("sat-witness", 4), ("approval-majority", 5)]


@pytest.mark.parametrize(("name", "size"), BUILT_IN_CROSS_EXAM)
@pytest.mark.parametrize("truth", [True, False])
def test_cross_exam_honest_side_beats_every_adversary_on_built_in_problems(name, size, truth):
    for seed in range(2):
        check_honest_wins_cross_exam(make_instance(PROBLEMS[name], size, truth, seed), seeds=range(4))


@settings(deadline=None, max_examples=30)
@given(instance=st.one_of(circuit_instances(), machine_instances()))
def test_cross_exam_every_pairing_stays_within_the_read_bounds(instance):
    """Whoever plays (honest or not, either truth), V reads what Figure 1 says and no more."""
    for alice in CROSS.strategies[Role.ALICE].values():
        for bob in CROSS.strategies[Role.BOB].values():
            check_cross_exam_debate(instance, alice, bob, seed=0)


def test_cross_exam_bound_matches_the_guarantee():
    instance = make_instance(PROBLEMS["majority"], 9, True, 0)
    machine = instance.machine
    guarantee = CROSS.guarantee(instance)
    assert guarantee.bits_read == cross_exam.bits_bound(machine) == 3 * math.ceil(math.log2(machine.length + 1)) + 2
    assert (guarantee.completeness, guarantee.soundness, guarantee.verifier_queries) == (1.0, 0.0, 1)
    assert CROSS.length(instance) == machine.length


def test_cross_exam_needs_a_deterministic_machine():
    b = MachineBuilder(inputs=1)
    b.coin(0.5)
    with pytest.raises(ValueError):
        cross_exam.machine_of(Instance("coin", 1, True, np.array([1], dtype=np.uint8), machine=b.build()))
    with pytest.raises(ValueError):
        cross_exam.machine_of(Instance("tm-only", 1, True, np.array([1], dtype=np.uint8), turing=parity_machine(1)))


# -- user-defined strategies ---------------------------------------------------------------------


class ChallengeStep:
    """A user's Bob: always names one fixed step."""

    def __init__(self, step: int):
        self.step = step

    def challenge(self, message: Any) -> int:
        return self.step


class SendList:
    """A user's Alice: sends a plain Python list."""

    def __init__(self, bits: list[int]):
        self.bits = bits

    def transcript(self) -> list[int]:
        return list(self.bits)


def test_user_strategy_objects_play_cross_exam():
    x = np.array([1, 0, 1, 1], dtype=np.uint8)  # parity 1: gates x0^x1=1, x2^x3=0, out 1
    instance = Instance("parity", 4, True, x, machine=parity_circuit(4))
    honest_alice = CROSS.strategies[Role.ALICE]["honest"]
    for t in range(3):
        outcome = play_one(CROSS, instance, honest_alice, user(Role.BOB, lambda seat, t=t: ChallengeStep(t)), _seed())
        assert (outcome.verdict, outcome.forfeit) == (1, None)
    liar = user(Role.ALICE, lambda seat: SendList([1, 0, 0]))  # gate 2 claims 0 but 1 ^ 0 = 1
    assert play_one(CROSS, instance, liar, user(Role.BOB, lambda seat: ChallengeStep(2)), _seed()).verdict == 0
    assert play_one(CROSS, instance, liar, user(Role.BOB, lambda seat: ChallengeStep(0)), _seed()).verdict == 0
    # a class taking the Seat is itself a factory
    outcome = play_one(CROSS, instance, liar, user(Role.BOB, cross_exam.HonestBob), _seed())
    assert outcome.verdict == 0


def test_resolve_finds_built_in_and_importable_strategies():
    builtins = CROSS.strategies[Role.BOB]
    assert resolve("accept", Role.BOB, builtins) is builtins["accept"]
    found = resolve("debatekit.players.cross_exam:point_output", Role.BOB, builtins)
    assert found.description == "Name the output step T."
    with pytest.raises(StrategyError):
        resolve("no-such-strategy", Role.BOB, builtins)
    with pytest.raises(StrategyError):
        resolve("debatekit.no_such_module:thing", Role.BOB, builtins)


# -- bisection -----------------------------------------------------------------------------------


@st.composite
def turing_instances(draw) -> Instance:
    kind = draw(st.sampled_from(["parity", "palindrome", "oracle-parity"]))
    n = draw(st.integers(0, 7))
    x = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    oracle = NO_ORACLE
    if kind == "parity":
        tm, truth = parity_machine(n), sum(x) % 2 == 1
    elif kind == "palindrome":
        tm, truth = palindrome_machine(n), x == x[::-1]
    else:
        answers = draw(st.tuples(st.integers(0, 1), st.integers(0, 1)))
        oracle = TableOracle({(1,): float(answers[0]), (2,): float(answers[1])})
        tm, truth = oracle_parity_machine(n), sum(answers[b] for b in x) % 2 == 1
    return Instance(kind, n, truth, np.array(x, dtype=np.uint8), oracle, turing=tm)


def check_bisection_debate(instance: Instance, alice: Strategy, bob: Strategy, seed: int) -> Any:
    log: list = []
    outcome = play_one(BISECT, instance, recording(alice, log), recording(bob, log), _seed(seed))
    alice_log, bob_log = sent(log, Role.ALICE), sent(log, Role.BOB)
    tm, ledger = instance.turing, outcome.ledger
    rounds = math.ceil(math.log2(tm.time)) if tm.time > 1 else 0
    assert bisection.rounds(tm) == rounds
    assert bisection.bits_bound(tm) == rounds * (tm.config_bits + 1) + tm.config_bits
    # V reads each configuration Alice sends in full and each of Bob's bits, as it arrives
    assert ledger.bits_read == tm.config_bits * len(alice_log) + len(bob_log)
    assert ledger.bits_read <= bisection.bits_bound(tm)
    assert len(bob_log) <= rounds and len(alice_log) <= rounds + 1
    assert ledger.queries[Role.VERIFIER] <= 1
    assert ledger.input_bits_read == 0
    assert outcome.verdict in (0, 1)
    return outcome


def check_honest_wins_bisection(instance: Instance, seeds=SEEDS) -> None:
    check_honest_wins(BISECT, check_bisection_debate, instance, seeds)


@settings(deadline=None, max_examples=100)
@given(instance=turing_instances())
def test_bisection_honest_side_beats_every_adversary(instance):
    event(f"{instance.problem}, truth={instance.truth}")
    check_honest_wins_bisection(instance)


@pytest.mark.parametrize(("name", "size"), [("parity", 1), ("parity", 12), ("palindrome", 2), ("palindrome", 9)])
@pytest.mark.parametrize("truth", [True, False])
def test_bisection_honest_side_beats_every_adversary_on_built_in_problems(name, size, truth):
    for seed in range(2):
        check_honest_wins_bisection(make_instance(PROBLEMS[name], size, truth, seed), seeds=range(4))


@settings(deadline=None, max_examples=25)
@given(instance=turing_instances())
def test_bisection_every_pairing_stays_within_the_read_bounds(instance):
    for alice in BISECT.strategies[Role.ALICE].values():
        for bob in BISECT.strategies[Role.BOB].values():
            check_bisection_debate(instance, alice, bob, seed=1)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_bisection_takes_ceil_log2_t_rounds_down_the_longer_half(n):
    instance = make_instance(PROBLEMS["palindrome"], n, True, 0)
    log: list = []
    honest = BISECT.strategies[Role.ALICE]["honest"]
    outcome = play_one(BISECT, instance, honest, recording(BISECT.strategies[Role.BOB]["second"], log), _seed())
    assert outcome.verdict == 1
    assert len(log) == math.ceil(math.log2(instance.turing.time))  # the second half is never the shorter
    assert outcome.ledger.bits_read == bisection.bits_bound(instance.turing)


class TargetStep:
    """A user's Bob for bisection: steer the dispute to the single step ``target``."""

    def __init__(self, target: int):
        self.target = target

    def half(self, start: Config, middle: Config, end: Config, begin: int, steps: int) -> int:
        return 0 if self.target < begin + steps // 2 else 1


class CompareBob:
    """Honest Bob written the natural way, returning a bool: True (1) when the first half holds."""

    def __init__(self, seat: Any):
        self.seat, self.tm = seat, seat.instance.turing

    def half(self, start: Config, middle: Config, end: Config, begin: int, steps: int) -> bool:
        return self.tm.advance(start, steps // 2, self.seat.ask) == middle


def test_bisection_verifier_queries_once_when_the_last_step_is_a_query():
    n = 3
    tm = oracle_parity_machine(n)
    oracle = TableOracle({(1,): 0.0, (2,): 1.0})
    x = np.array([1, 0, 0], dtype=np.uint8)  # O says 1 once: odd, so M accepts
    instance = Instance("oracle-parity", n, True, x, oracle, turing=tm)
    honest_alice = BISECT.strategies[Role.ALICE]["honest"]
    trajectory = tm.run(x.tolist(), lambda q: int(oracle.probability(q)))
    for target in range(tm.time):
        log: list = []
        bob = recording(user(Role.BOB, lambda seat, target=target: TargetStep(target)), log)
        outcome = play_one(BISECT, instance, honest_alice, bob, _seed())
        # honest Alice's claim is true, so Bob's steering cannot help him; the claim ends on step target
        assert (outcome.verdict, outcome.forfeit) == (1, None)
        assert len(log) <= bisection.rounds(tm)
        queried = int(trajectory.states[target]) in tm.queries
        assert outcome.ledger.queries[Role.VERIFIER] == int(queried)
        assert outcome.ledger.queries[Role.ALICE] == n  # she ran M once: one query per cell


@pytest.mark.parametrize("truth", [True, False])
def test_a_bob_returning_bools_plays_like_honest_bob(truth):
    instance = make_instance(PROBLEMS["palindrome"], 5, truth, 3)
    alices = BISECT.strategies[Role.ALICE]
    for name in alices if not truth else ["honest"]:  # soundness: every Alice; completeness: honest Alice
        for seed in range(3):
            outcome = play_one(BISECT, instance, alices[name], user(Role.BOB, CompareBob), _seed(seed))
            assert outcome.verdict == int(truth), (name, outcome.reason)
            assert outcome.forfeit is not Role.BOB


@pytest.mark.parametrize("accepts", [True, False])
def test_bisection_with_time_zero_compares_the_two_ends(accepts):
    """T = 0: the claim is z_0 = z'_0; nothing is bisected and the debate must still end."""
    tm = TuringMachine(
        "instant", ["accept", "reject"], 3, {}, start=0 if accepts else 1, accept=0, reject=1, space=2, time=0
    )
    instance = Instance("instant", 0, accepts, np.zeros(0, dtype=np.uint8), turing=tm)
    assert bisection.rounds(tm) == 0 and bisection.bits_bound(tm) == tm.config_bits
    check_honest_wins_bisection(instance)


def test_bisection_guarantee_and_machine_of():
    instance = make_instance(PROBLEMS["palindrome"], 6, True, 0)
    guarantee = BISECT.guarantee(instance)
    assert guarantee.bits_read == bisection.bits_bound(instance.turing)
    assert BISECT.length(instance) == instance.turing.time
    with pytest.raises(ValueError):
        bisection.machine_of(make_instance(PROBLEMS["majority"], 3, True, 0))


# -- the reader ----------------------------------------------------------------------------------


def test_word_width_is_ceil_log2():
    assert [word_width(v) for v in range(1, 10)] == [0, 1, 2, 2, 3, 3, 3, 3, 4]
    for v in range(2, 300):
        assert word_width(v) == math.ceil(math.log2(v)) and 2 ** word_width(v) >= v > 2 ** (word_width(v) - 1)


BITS = [(0, 0), (1, 1), (True, 1), (False, 0), (np.uint8(1), 1), (np.int64(0), 0), (np.bool_(True), 1)]
NOT_BITS = [2, -1, 1.0, float("nan"), "1", None, [1], np.float64(1.0)]


@pytest.mark.parametrize(("value", "bit"), [*BITS, *((v, None) for v in NOT_BITS)])
def test_as_bit(value, bit):
    assert as_bit(value) == bit


def test_as_index():
    assert [as_index(v, 3) for v in (0, 2, np.int32(1))] == [0, 2, 1]
    assert [as_index(v, 3) for v in (3, -1, True, 1.0, "1", None, float("inf"))] == [None] * 7


# -- Monte Carlo runner --------------------------------------------------------------------------


def test_run_summarises_debates():
    instance = make_instance(PROBLEMS["parity"], 16, False, 5)
    alice, bob = CROSS.strategies[Role.ALICE]["lie-step"], CROSS.strategies[Role.BOB]["honest"]
    result = run(CROSS, instance, alice, bob, trials=30, seed=9)
    assert (result.accept_rate, result.honest_win_rate, result.trials, result.T) == (0.0, 1.0, 30, 15)
    assert result.verifier_queries_max == 0  # parity has no oracle steps
    assert result.verifier_bits_read_max <= result.guarantee.bits_read
    z2 = norm.ppf(0.975) ** 2  # Wilson's interval for 0 successes in n trials is [0, z^2 / (n + z^2)]
    assert result.accept_ci == pytest.approx((0.0, z2 / (30 + z2)))
    again = run(CROSS, instance, alice, bob, trials=30, seed=9)
    assert again.to_json() == result.to_json()
    with pytest.raises(ValueError):
        run(CROSS, instance, alice, bob, trials=0, seed=9)


def test_bob_cannot_rewrite_alice_message_after_it_is_sent() -> None:
    """The verifier reads Alice's committed message, not the object a player can still change."""

    class Vandal:
        def __init__(self, seat):
            self.seat = seat

        def challenge(self, message):
            with contextlib.suppress(TypeError, ValueError):
                message[-1] ^= 1  # flip the output bit in place, then accept
            with contextlib.suppress(ValueError):
                self.seat.instance.x[0] ^= 1
            return None

    instance = make_instance(PROBLEMS["parity"], 16, True, 0)
    vandal = Strategy("vandal", Role.BOB, "rewrites the message", Vandal)
    outcome = play_one(CROSS, instance, CROSS.strategies[Role.ALICE]["honest"], vandal, np.random.SeedSequence(0))
    assert outcome.verdict == 1
    assert int(instance.x.sum() % 2) == 1  # the instance is unchanged too
