"""Fuzzing the verifiers: arbitrary prover messages never crash V, the verdict is always 0 or 1,
a malformed message loses for its sender, and the honest side still wins (Theorems 5.1, 5.3)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from conftest import (
    a_bit,
    a_step,
    circuit_instances,
    length_of,
    machine_instances,
    oracle_parity_machine,
    readable,
    recording,
    sent,
)
from debatekit.analysis.montecarlo import make_instance, play_one
from debatekit.ledger import Role
from debatekit.machine.turing import Config, TuringMachine, palindrome_machine, parity_machine
from debatekit.oracle import NO_ORACLE, TableOracle
from debatekit.players.base import Strategy
from debatekit.prob import Dist
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols import bisection, cross_exam
from debatekit.protocols.registry import PROTOCOLS

CROSS = PROTOCOLS["cross-exam"]
BISECT = PROTOCOLS["bisection"]
FUZZ = settings(deadline=None, max_examples=120)


def _seed(k: int = 0) -> np.random.SeedSequence:
    return np.random.SeedSequence(k)


class _Says:
    """A player that sends whatever it is given: one message, or a queue of them."""

    def __init__(self, *messages: Any):
        self.queue = list(messages)

    def _next(self) -> Any:
        return self.queue.pop(0) if len(self.queue) > 1 else self.queue[0]

    def transcript(self) -> Any:
        return self._next()

    def challenge(self, message: Any) -> Any:
        return self._next()

    def final(self) -> Any:
        return self._next()

    def middle(self, *args: Any) -> Any:
        return self._next()

    def half(self, *args: Any) -> Any:
        return self._next()


def says(role: Role, *messages: Any) -> Strategy:
    return Strategy("fuzz", role, "sends the fuzzer's messages", lambda seat: _Says(*messages))


# -- arbitrary values ----------------------------------------------------------------------------

atoms = st.one_of(
    st.integers(-3, 3),
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.text(max_size=3),
    st.binary(max_size=2),
    st.sampled_from([np.uint8(1), np.int64(0), np.int64(2), np.float64("nan"), np.bool_(True), np.float32(1.0)]),
    st.builds(object),
)
anything = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.integers(-1, 5), inner, max_size=4),
        st.sets(st.integers(0, 3), max_size=3),
    ),
    max_leaves=10,
)


def arrays(size: int) -> st.SearchStrategy[np.ndarray]:
    lengths = st.sampled_from([size, size, max(0, size - 1), size + 1, 0])
    return lengths.flatmap(
        lambda n: st.one_of(
            st.lists(st.integers(-2, 3), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=np.int64)),
            st.lists(st.integers(0, 1), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=np.uint8)),
            st.lists(st.booleans(), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=bool)),
            st.lists(st.floats(allow_nan=True), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=float)),
            st.lists(st.integers(0, 1), min_size=2 * n, max_size=2 * n).map(lambda v: np.array(v).reshape(n, 2)),
        )
    )


@st.composite
def alice_messages(draw, bits: list[int]) -> Any:
    """A message for a transcript of ``bits``' length: mostly bits (true or random) with a few
    positions corrupted, in many containers; or an arbitrary value, array or non-sequence."""
    size = len(bits)
    base = draw(st.one_of(st.just(bits), st.lists(st.integers(0, 1), min_size=size, max_size=size)))
    base = list(base)
    if draw(st.booleans()):
        base[-1] = 1  # claim M(x) = 1, as a lying Alice would
    for position in draw(st.sets(st.integers(0, size - 1), max_size=2)):
        base[position] = draw(anything)
    if draw(st.booleans()):  # flip one bit: a lie, well-formed if nothing else was corrupted
        i = draw(st.integers(0, size - 1))
        if a_bit(base[i]) is not None:
            base[i] = 1 - a_bit(base[i])
    container = draw(st.sampled_from(["list", "tuple", "array", "dict", "string", "dist"]))
    if container == "tuple":
        return tuple(base)
    if container == "array":
        return np.array(base, dtype=object)
    if container == "dict":
        return dict(enumerate(base))  # indexable like a list and of the right length
    if container == "string":
        return "".join(map(str, base))
    if container == "dist":
        return Dist.uniform([tuple(bits), tuple(base)]) if all(_hashable(v) for v in base) else base
    return base


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def messages_for(bits: list[int]) -> st.SearchStrategy[Any]:
    return st.one_of(alice_messages(bits), arrays(len(bits)), anything, st.lists(anything, max_size=len(bits) + 2))


def true_run(instance: Instance, witness: list[int]) -> list[int]:
    machine = instance.machine
    inputs = np.array([*instance.x.tolist(), *witness], dtype=np.uint8)
    ask = lambda query: int(instance.oracle.probability(query))  # noqa: E731  (deterministic oracles)
    return machine.run(inputs, ask, np.random.default_rng(0)).tolist()


def honest_message(instance: Instance) -> list[int]:
    witness = instance.witness.tolist() if instance.witness is not None else []
    return [*witness, *true_run(instance, witness)]


instances = st.one_of(circuit_instances(), machine_instances())


# -- cross-examination: arbitrary Alice against honest Bob ----------------------------------------


@FUZZ
@given(instance=instances, data=st.data())
def test_cross_exam_arbitrary_alice_against_honest_bob(instance, data):
    machine = instance.machine
    m, size = machine.n_witness, machine.n_witness + machine.length
    message = data.draw(messages_for(honest_message(instance)))
    log: list = []
    alice = recording(says(Role.ALICE, message), log)
    outcome = play_one(CROSS, instance, alice, CROSS.strategies[Role.BOB]["honest"], _seed())
    assert outcome.verdict in (0, 1)
    assert outcome.ledger.bits_read <= cross_exam.bits_bound(machine)
    assert outcome.ledger.queries[Role.VERIFIER] <= 1
    if not instance.truth:
        assert outcome.verdict == 0  # soundness: honest Bob beats every message
    (sent_message,) = sent(log, Role.ALICE)
    if length_of(sent_message) != size:  # framing: lost before any bit is read
        event("wrong length or no length")
        assert (outcome.verdict, outcome.forfeit, outcome.ledger.bits_read) == (0, Role.ALICE, 0)
        return
    bits = readable(sent_message, size)
    if bits is None:
        event("right length, some position not a bit")
        unreadable = {p for p in range(size) if a_bit(_at(sent_message, p)) is None}
        read_by_some_step = {a - machine.n_inputs for t in range(machine.length) for a in machine.relevant(t)}
        if unreadable - set(range(m)) or unreadable & read_by_some_step:
            # honest Bob points at a step whose check V cannot read: Alice loses by forfeit
            assert (outcome.verdict, outcome.forfeit) == (0, Role.ALICE)
        return
    # a well-formed message wins exactly when it is the true run on its own witness and says 1
    correct = bits[m:] == true_run(instance, bits[:m])
    event(f"well-formed, {'the true run' if correct else 'a lie'}, says {bits[-1]}")
    assert outcome.verdict == int(correct and bits[-1] == 1)
    assert outcome.forfeit is None


@pytest.mark.parametrize("truth", [True, False])
@pytest.mark.parametrize("garbage", [None, 2, float("nan"), "1", [1]])
def test_cross_exam_garbage_in_a_witness_bit_that_a_step_reads_loses(truth, garbage):
    """Theorem 7.1's witness is part of Alice's message: a witness position some step reads must
    hold a bit, and honest Bob challenges that step even when the rest is the true run."""
    instance = make_instance(PROBLEMS["sat-witness"], 5, truth, 0)
    machine = instance.machine
    message: list[Any] = honest_message(instance)
    message[-1] = 1
    # a witness bit that is 0 and that some step reads: reading the garbage as 0 would hide it
    read = {a - machine.n_inputs for t in range(machine.length) for a in machine.relevant(t)}
    position = next(p for p in range(machine.n_witness) if p in read and message[p] == 0)
    message[position] = garbage
    outcome = play_one(CROSS, instance, says(Role.ALICE, message), CROSS.strategies[Role.BOB]["honest"], _seed())
    assert (outcome.verdict, outcome.forfeit) == (0, Role.ALICE)


def _at(message: Any, position: int) -> Any:
    try:
        return message[position]
    except Exception:
        return object()


class _Indexable:
    """A sequence-like object: only ``len`` and ``[]``, as V uses them."""

    def __init__(self, bits: list[int]):
        self.bits = bits

    def __len__(self) -> int:
        return len(self.bits)

    def __getitem__(self, i: int) -> int:
        return self.bits[i]


ENCODINGS = {
    "list": list,
    "tuple": tuple,
    "uint8 array": lambda b: np.array(b, dtype=np.uint8),
    "int64 array": lambda b: np.array(b, dtype=np.int64),
    "bool array": lambda b: np.array(b, dtype=bool),
    "object array": lambda b: np.array(b, dtype=object),
    "bools": lambda b: [bool(v) for v in b],
    "dict by position": lambda b: dict(enumerate(b)),
    "indexable object": _Indexable,
}


@settings(deadline=None, max_examples=60)
@given(instance=instances, data=st.data())
def test_cross_exam_every_encoding_of_the_same_bits_gets_the_same_verdict(instance, data):
    """V reads a message by position; honest Bob must judge it by the very same reading, so a
    message's container cannot change the verdict (a dict iterates over its keys, for one)."""
    bits = honest_message(instance)
    for i in data.draw(st.sets(st.integers(0, len(bits) - 1), max_size=3)):
        bits[i] ^= 1
    if data.draw(st.booleans()):
        bits[-1] = 1
    honest_bob = CROSS.strategies[Role.BOB]["honest"]
    verdicts = {
        name: play_one(CROSS, instance, says(Role.ALICE, encode(bits)), honest_bob, _seed()).verdict
        for name, encode in ENCODINGS.items()
    }
    correct = bits[instance.machine.n_witness :] == true_run(instance, bits[: instance.machine.n_witness])
    assert set(verdicts.values()) == {int(correct and bits[-1] == 1)}, verdicts


# -- cross-examination: arbitrary Bob against honest Alice ----------------------------------------

challenges = st.one_of(
    st.none(),
    st.integers(-3, 40),
    st.integers(),
    anything,
    st.sampled_from([np.int64(0), np.uint8(1), np.int32(-1), np.float64(0.0), np.bool_(False), float("nan")]),
)


@FUZZ
@given(instance=instances, data=st.data())
def test_cross_exam_arbitrary_bob_against_honest_alice(instance, data):
    steps = instance.machine.length
    challenge = data.draw(st.one_of(challenges, st.integers(0, steps - 1)))
    log: list = []
    bob = recording(says(Role.BOB, challenge), log)
    outcome = play_one(CROSS, instance, CROSS.strategies[Role.ALICE]["honest"], bob, _seed())
    valid = challenge is cross_exam.ACCEPT or a_step(challenge, steps) is not None
    # honest Alice's transcript is true: a valid challenge finds nothing and V outputs the true
    # answer; any other challenge loses for Bob
    assert outcome.verdict == (instance.answer if valid else 1)
    assert outcome.forfeit is (None if valid else Role.BOB)
    width = math.ceil(math.log2(steps + 1))
    assert outcome.ledger.bits_read <= width + (0 if not valid else instance.machine.max_relevant + 2)


@FUZZ
@given(instance=instances, data=st.data())
def test_cross_exam_arbitrary_alice_against_arbitrary_bob(instance, data):
    machine = instance.machine
    size = machine.n_witness + machine.length
    message = data.draw(messages_for(honest_message(instance)))
    challenge = data.draw(st.one_of(challenges, st.integers(0, machine.length - 1)))
    log: list = []
    outcome = play_one(
        CROSS, instance, recording(says(Role.ALICE, message), log), recording(says(Role.BOB, challenge), log), _seed()
    )
    assert outcome.verdict in (0, 1)
    assert outcome.ledger.bits_read <= cross_exam.bits_bound(machine)
    assert outcome.ledger.queries[Role.VERIFIER] <= 1
    (sent_message,) = sent(log, Role.ALICE)
    if length_of(sent_message) != size:
        assert outcome.forfeit is Role.ALICE and outcome.verdict == 0
    elif challenge is not cross_exam.ACCEPT and a_step(challenge, machine.length) is None:
        assert outcome.forfeit is Role.BOB and outcome.verdict == 1
    elif readable(sent_message, size) is not None:
        assert outcome.forfeit is None
    else:
        assert outcome.forfeit in (None, Role.ALICE)
        assert outcome.verdict == 0 or outcome.forfeit is None


# -- bisection -----------------------------------------------------------------------------------


@st.composite
def turing_instances(draw) -> Instance:
    kind = draw(st.sampled_from(["parity", "palindrome", "oracle-parity"]))
    n = draw(st.integers(0, 5))
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


BAD_FIELDS = [-1, 10**6, 1.0, float("nan"), None, "1", True, [1], np.float64(0.0)]


@st.composite
def configurations(draw, tm: TuringMachine, state: int | None = None) -> tuple[Any, bool]:
    """A configuration message and whether it is valid: a valid one in one of several encodings,
    or one broken in a known way, or an arbitrary value."""
    state = draw(st.integers(0, len(tm.states) - 1)) if state is None else state
    head = draw(st.integers(0, tm.space - 1))
    tape = draw(st.lists(st.integers(0, tm.symbols - 1), min_size=tm.space, max_size=tm.space))
    fields: list[Any] = [state, head, tape]
    flaw = draw(st.sampled_from(["none"] * 8 + ["state", "head", "symbol", "length", "shape", "value"]))
    if flaw == "state":
        fields[0] = draw(st.sampled_from([len(tm.states), *BAD_FIELDS]))
    elif flaw == "head":
        fields[1] = draw(st.sampled_from([tm.space, *BAD_FIELDS]))
    elif flaw == "symbol":
        tape[draw(st.integers(0, tm.space - 1))] = draw(st.sampled_from([tm.symbols, *BAD_FIELDS]))
    elif flaw == "length":
        fields[2] = tape[:-1] if draw(st.booleans()) else [*tape, 0]
    elif flaw == "shape":
        return draw(st.sampled_from([(state, head), (state, head, tape, 0), (state, head, 7), (state,)])), False
    elif flaw == "value":
        return draw(st.one_of(atoms, st.text(max_size=4), st.none())), False
    if type(fields[0]) is int and draw(st.booleans()):
        fields[0] = np.int64(fields[0])  # numpy integers are integers too
    encoding = draw(st.sampled_from(["config", "tuple", "list", "array-tape"]))
    if encoding == "config":
        message: Any = Config(fields[0], fields[1], tuple(fields[2]) if isinstance(fields[2], list) else fields[2])
    elif encoding == "tuple":
        message = tuple(fields)
    elif encoding == "list":
        message = list(fields)
    else:
        message = (fields[0], fields[1], np.array(fields[2], dtype=object))
    return message, flaw == "none"


def check_forfeits(log: list, outcome: Any, alice_ok: list[bool], bob_ok: list[bool]) -> None:
    """The first malformed message in the order sent is the last one sent, and its sender lost.
    ``alice_ok[i]`` says whether Alice's i-th message is valid (a player repeats its last one)."""
    ok, count = {Role.ALICE: alice_ok, Role.BOB: bob_ok}, {Role.ALICE: 0, Role.BOB: 0}
    valid = []
    for role, _ in log:
        valid.append(ok[role][min(count[role], len(ok[role]) - 1)])
        count[role] += 1
    if False in valid:
        assert valid.index(False) == len(log) - 1
        loser = log[-1][0]
        assert outcome.forfeit is loser
        assert outcome.verdict == (0 if loser is Role.ALICE else 1)
    else:
        assert outcome.forfeit is None


@FUZZ
@given(instance=turing_instances(), data=st.data())
def test_bisection_arbitrary_alice_against_honest_bob(instance, data):
    tm = instance.turing
    final_state = data.draw(st.sampled_from([tm.accept, None]))
    labelled = [data.draw(configurations(tm, final_state))]
    labelled += data.draw(st.lists(configurations(tm), min_size=1, max_size=bisection.rounds(tm) + 1))
    log: list = []
    alice = recording(says(Role.ALICE, *(message for message, _ in labelled)), log)
    outcome = play_one(BISECT, instance, alice, recording(BISECT.strategies[Role.BOB]["honest"], log), _seed())
    assert outcome.verdict in (0, 1)
    assert outcome.ledger.bits_read <= bisection.bits_bound(tm)
    assert outcome.ledger.queries[Role.VERIFIER] <= 1
    if not instance.truth:
        assert outcome.verdict == 0  # soundness against arbitrary configurations
    check_forfeits(log, outcome, [ok for _, ok in labelled], [True])


bob_bits = st.one_of(st.integers(0, 1), st.booleans(), st.sampled_from([np.int64(1), np.uint8(0)]), anything)


@FUZZ
@given(instance=turing_instances(), data=st.data())
def test_bisection_arbitrary_bob_against_honest_alice(instance, data):
    tm = instance.turing
    bits = data.draw(st.lists(bob_bits, min_size=1, max_size=bisection.rounds(tm) + 1))
    log: list = []
    bob = recording(says(Role.BOB, *bits), log)
    outcome = play_one(BISECT, instance, recording(BISECT.strategies[Role.ALICE]["honest"], log), bob, _seed())
    assert outcome.verdict == instance.answer  # honest Alice's claim holds up, or she concedes
    assert outcome.ledger.bits_read <= bisection.bits_bound(tm)
    assert outcome.ledger.queries[Role.VERIFIER] <= 1
    check_forfeits(log, outcome, [True], [a_bit(b) is not None for b in bits])


@FUZZ
@given(instance=turing_instances(), data=st.data())
def test_bisection_arbitrary_alice_against_arbitrary_bob(instance, data):
    tm = instance.turing
    labelled = data.draw(st.lists(configurations(tm, tm.accept), min_size=1, max_size=bisection.rounds(tm) + 1))
    bits = data.draw(st.lists(bob_bits, min_size=1, max_size=bisection.rounds(tm) + 1))
    log: list = []
    alice = recording(says(Role.ALICE, *(message for message, _ in labelled)), log)
    outcome = play_one(BISECT, instance, alice, recording(says(Role.BOB, *bits), log), _seed())
    assert outcome.verdict in (0, 1)
    assert outcome.ledger.bits_read <= bisection.bits_bound(tm)
    assert outcome.ledger.queries[Role.VERIFIER] <= 1
    check_forfeits(log, outcome, [ok for _, ok in labelled], [a_bit(b) is not None for b in bits])
    event(f"forfeit: {outcome.forfeit}, messages: {len(log)}")


# -- players that fail -----------------------------------------------------------------------------


class Boom(Exception):
    pass


class _Raises:
    def __init__(self, seat: Any):
        raise Boom("cannot sit down")


class _FailsAt:
    """An honest player whose method ``method`` raises."""

    def __init__(self, player: Any, method: str):
        self.player, self.method = player, method

    def __getattr__(self, name: str) -> Any:
        if name != self.method:
            return getattr(self.player, name)

        def fail(*args: Any) -> Any:
            raise Boom(f"{name} failed")

        return fail


FAILURES = {
    ("cross-exam", Role.ALICE): ["transcript"],
    ("cross-exam", Role.BOB): ["challenge"],
    ("bisection", Role.ALICE): ["final", "middle"],
    ("bisection", Role.BOB): ["half"],
}


def failing_strategies(spec: Any, role: Role) -> list[Strategy]:
    """Players of ``role`` that fail: a factory that raises, a player without the methods, an honest
    player one of whose methods raises, and a mixed move over malformed messages."""
    honest = spec.strategies[role]["honest"].factory
    failing = [Strategy("boom", role, "", _Raises), Strategy("silent", role, "", lambda seat: object())]
    for method in FAILURES[(spec.name, role)]:
        failing.append(Strategy(method, role, "", lambda seat, method=method: _FailsAt(honest(seat), method)))
    failing.append(Strategy("bad-dist", role, "", lambda seat: _Says(Dist.uniform(["garbage", -1]))))
    return failing


@pytest.mark.parametrize("protocol", ["cross-exam", "bisection"])
@pytest.mark.parametrize("role", [Role.ALICE, Role.BOB])
@pytest.mark.parametrize("truth", [True, False])
def test_a_strategy_that_raises_forfeits(protocol, role, truth):
    """Whether the failing player is the honest side or the dishonest one, it loses by forfeit."""
    spec = PROTOCOLS[protocol]
    instance = make_instance(PROBLEMS["parity"], 5, truth, 0)
    for strategy in failing_strategies(spec, role):
        players = {role: strategy, role.opponent: spec.strategies[role.opponent]["honest"]}
        outcome = play_one(spec, instance, players[Role.ALICE], players[Role.BOB], _seed())
        assert outcome.ledger.queries[Role.VERIFIER] == 0
        # In bisection honest Alice concedes a no-instance with her (rejecting) final configuration,
        # before a middle or a bit is asked for; only failing to sit down is a failure then.
        never_asked = protocol == "bisection" and not truth and (role is Role.BOB or strategy.name == "middle")
        if never_asked and strategy.name != "boom":
            assert (outcome.verdict, outcome.forfeit) == (0, None), strategy.name
            continue
        assert outcome.forfeit is role, (strategy.name, outcome.reason)
        assert outcome.verdict == (0 if role is Role.ALICE else 1)
