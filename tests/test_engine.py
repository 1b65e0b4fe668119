"""The engine's boundary, records and seeds, on every protocol written as nodes.

Each class of hostile message the verifier must survive (issue: "the verifier is the security
boundary") is thrown at each role of each node protocol: the sender of a message that cannot be
read loses; a value that changes when read, or a write into a committed message or into the
seat's instance, changes nothing the verifier or the other side sees; a player that never answers
forfeits at the time limit. Then: records replay, debate i depends only on the seed and i, and
summaries of shards merge into the summary of the whole run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from debatekit.analysis.montecarlo import Oracles, Table, debate_seed, make_instance, play_one, run
from debatekit.cli.main import main
from debatekit.engine.boundary import NOT_A_BIT, commit_bits, commit_plain, frozen, mixed_branches, plain_int, safe_repr
from debatekit.engine.record import read_records, replay
from debatekit.engine.summary import Summary
from debatekit.ledger import Ledger, Malformed, Role, loser_verdict
from debatekit.machine.transcript import MachineBuilder
from debatekit.oracle import SampleOnly, TableOracle
from debatekit.players.base import Strategy
from debatekit.prob import Dist
from debatekit.problems import PROBLEMS, Instance
from debatekit.protocols import prover_estimator as pe
from debatekit.protocols.payoffs import BoundKind
from debatekit.protocols.registry import PROTOCOLS

# (protocol, problem, size): every protocol written as nodes, on an instance where each side can
# be the honest one.
NODE_PROTOCOLS = [
    ("cross-exam", "approval-majority", 6),
    ("bisection", "parity", 2),
    ("kw", "majority", 4),
    ("circuit-cross-exam", "tqbf", 4),
]


def _instance(problem: str, size: int, truth: bool, seed: int = 3):
    return make_instance(PROBLEMS[problem], size, truth, seed)


class _Raises(Exception):
    pass


class Hostile:
    """Every dunder a verifier might touch raises."""

    def _boom(self, *args: Any, **kwargs: Any) -> Any:
        raise _Raises("boom")

    __len__ = __getitem__ = __iter__ = __int__ = __index__ = __eq__ = __ne__ = __lt__ = __le__ = _boom
    __gt__ = __ge__ = __hash__ = __bool__ = __float__ = __repr__ = __str__ = __format__ = _boom

    def __getattr__(self, name: str) -> Any:
        raise _Raises(name)


class LyingInt(int):
    """An int that says it equals everything and raises when converted."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __int__(self) -> int:
        raise _Raises("int")

    __index__ = __int__


class Sends:
    """A player whose every move is ``make()`` (protocol methods are found through __getattr__)."""

    def __init__(self, make: Any):
        self.make = make

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.make()


def sends(role: Role, make: Any) -> Strategy:
    return Strategy("sends", role, "sends what it is given", lambda seat: Sends(make))


HOSTILE_MESSAGES = {
    "hostile object": Hostile,
    "lying int": lambda: LyingInt(1),
    "huge number": lambda: 10**100,
    "nan": lambda: float("nan"),
    "nested list": lambda: [[[[0]]]] * 3,
    "raises": lambda: (_ for _ in ()).throw(_Raises("player raised")),
}


@pytest.mark.parametrize(("name", "problem", "size"), NODE_PROTOCOLS)
@pytest.mark.parametrize("role", [Role.ALICE, Role.BOB])
@pytest.mark.parametrize("attack", list(HOSTILE_MESSAGES))
def test_a_hostile_message_loses_for_its_sender_and_never_crashes(name, problem, size, role, attack) -> None:
    spec = PROTOCOLS[name]
    # The hostile side argues against the truth, so the honest side must win: the verdict is the
    # truth whatever the hostile side sent.
    truth = bool(spec.alice_argues) if role is Role.BOB else not spec.alice_argues
    instance = _instance(problem, size, truth)
    honest = spec.strategies[role.opponent]["honest"]
    hostile = sends(role, HOSTILE_MESSAGES[attack])
    players = {role: hostile, role.opponent: honest}
    outcome = play_one(spec, instance, players[Role.ALICE], players[Role.BOB], debate_seed(0, 0))
    assert outcome.verdict == instance.answer == loser_verdict(role, spec.alice_argues)
    if attack != "lying int":  # read through int's own slot, it is a plain number: no forfeit needed
        assert outcome.forfeit is role


class Flipping:
    """A sequence whose bits change every time they are read: the first read sees the honest
    bit, every later read its negation."""

    def __init__(self, bits: np.ndarray):
        self.bits, self.reads = [int(b) for b in bits], [0] * len(bits)

    def __len__(self) -> int:
        return len(self.bits)

    def __getitem__(self, i: int) -> int:
        self.reads[i] += 1
        return self.bits[i] ^ (self.reads[i] > 1)


BIT_MESSAGES = [("cross-exam", "parity", 16), ("circuit-cross-exam", "parity", 16)]


@pytest.mark.parametrize(("name", "problem", "size"), BIT_MESSAGES)
def test_a_message_that_changes_when_read_is_read_once(name, problem, size) -> None:
    """Alice's message is committed once; Bob and the verifier read the same copy, so a lying
    transcript that shows Bob one thing and the verifier another cannot win."""
    spec = PROTOCOLS[name]
    truth = not spec.alice_argues  # Alice lies
    instance = _instance(problem, size, truth)
    liar = spec.strategies[Role.ALICE]["lie-output"]
    honest_bob = spec.strategies[Role.BOB]["honest"]

    class Shifty:
        def __init__(self, seat):
            self.inner = liar.factory(seat)

        def __getattr__(self, method: str) -> Any:
            inner = getattr(self.inner, method)
            if method in ("transcript", "gates"):
                return lambda *args: Flipping(np.asarray(inner(*args)))
            return inner

    for seed in range(5):
        outcome = play_one(spec, instance, Strategy("shifty", Role.ALICE, "", Shifty), honest_bob, debate_seed(seed, 0))
        assert outcome.verdict == instance.answer


@pytest.mark.parametrize(("name", "problem", "size"), BIT_MESSAGES)
def test_bob_cannot_write_into_alices_committed_message_or_the_instance(name, problem, size) -> None:
    spec = PROTOCOLS[name]
    instance = _instance(problem, size, bool(spec.alice_argues))
    x_before = instance.x.copy()

    class Vandal:
        def __init__(self, seat):
            self.seat = seat

        def _vandalise(self, message: Any) -> None:
            for attempt in (
                lambda: setattr(message.flags, "writeable", True),
                lambda: message.__setitem__(-1, 1 - message[-1]),
                lambda: np.copyto(message, 1 - message),
                lambda: setattr(self.seat.instance.x.flags, "writeable", True),
                lambda: self.seat.instance.x.__setitem__(0, 1 - self.seat.instance.x[0]),
            ):
                with contextlib.suppress(Exception):
                    attempt()

        def challenge(self, message: Any) -> None:
            self._vandalise(message)

        def point(self, transcript: Any, gates: Any) -> None:
            self._vandalise(gates)

        def move(self, history: Any) -> int:
            return 0

    outcome = play_one(
        spec, instance, spec.strategies[Role.ALICE]["honest"], Strategy("v", Role.BOB, "", Vandal), debate_seed(0, 0)
    )
    assert outcome.verdict == instance.answer
    assert np.array_equal(instance.x, x_before)


def test_committed_bits_are_plain_frozen_data() -> None:
    bits = commit_bits([0, 1, True, np.int8(1), 2, "1", 1.0, None, LyingInt(1), Hostile()], 10, Role.ALICE)
    assert bits.tolist() == [0, 1, 1, 1] + [NOT_A_BIT] * 4 + [1, NOT_A_BIT]  # the lying int reads as int
    with pytest.raises(ValueError):
        bits.flags.writeable = True
    source = np.array([0, 1, 1], dtype=np.uint8)
    copy = frozen(source)
    source[0] = 1
    assert copy.tolist() == [0, 1, 1]
    assert plain_int(LyingInt(7)) == 7 and type(plain_int(LyingInt(7))) is int
    assert safe_repr(Hostile()).startswith("<")


def test_committed_bits_read_a_sequence_once_and_exact_ints_only() -> None:
    """The fast path of plain tuples and lists of 0/1 ints gives the same buffer as the
    position-by-position reading, and leaves anything else to it: bools, ints past a byte, an int
    subclass (its methods never called); a bytes-backed buffer, never writable."""
    plain = commit_bits((0, 1, 1, 0), 4, Role.ALICE)
    assert plain.tolist() == [0, 1, 1, 0] and not plain.flags.writeable
    assert commit_bits([0, 1, 1, 0], 4, Role.ALICE).tolist() == plain.tolist()
    assert commit_bits((0, 300, -1, 1), 4, Role.ALICE).tolist() == [0, NOT_A_BIT, NOT_A_BIT, 1]
    assert commit_bits((True, 0, LyingInt(1), 2), 4, Role.ALICE).tolist() == [1, 0, 1, NOT_A_BIT]
    with pytest.raises(ValueError):
        plain.flags.writeable = True


class Slow:
    """Never answers within the time limit: sync (a blocking call) or async (an await)."""

    def __init__(self, seat, asynchronous: bool):
        self.asynchronous = asynchronous

    def __getattr__(self, name: str) -> Any:
        async def later(*args: Any) -> None:
            await asyncio.sleep(30)

        def blocking(*args: Any) -> None:
            time.sleep(2)

        return later if self.asynchronous else blocking


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize("role", [Role.ALICE, Role.BOB])
def test_a_player_past_its_time_limit_forfeits(role, asynchronous) -> None:
    spec = PROTOCOLS["cross-exam"]
    instance = _instance("parity", 8, role is Role.BOB)
    slow = Strategy("slow", role, "", lambda seat: Slow(seat, asynchronous))
    players = {role: slow, role.opponent: spec.strategies[role.opponent]["honest"]}
    start = time.monotonic()
    outcome = play_one(spec, instance, players[Role.ALICE], players[Role.BOB], debate_seed(0, 0), timeout=0.2)
    assert time.monotonic() - start < 5
    assert (outcome.forfeit, outcome.verdict) == (role, instance.answer)
    assert "within 0.2 s" in outcome.reason


class AsyncHonest:
    """Honest cross-examination players behind coroutines: the same debates as the sync ones."""

    def __init__(self, seat, inner):
        self.inner = inner.factory(seat)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def call(*args: Any) -> Any:
            await asyncio.sleep(0)
            return method(*args)

        return call


@pytest.mark.parametrize(("name", "problem", "size"), NODE_PROTOCOLS)
def test_async_players_play_the_same_debates(name, problem, size) -> None:
    spec = PROTOCOLS[name]
    instance = _instance(problem, size, True)
    alice, bob = spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["honest"]
    wrapped = [Strategy(s.name, s.role, "", lambda seat, s=s: AsyncHonest(seat, s)) for s in (alice, bob)]
    sync = run(spec, instance, alice, bob, trials=6, seed=4)
    asynchronous = run(spec, instance, *wrapped, trials=6, seed=4, concurrency=3)
    assert sync.to_json() == asynchronous.to_json()


@pytest.mark.parametrize(("name", "problem", "size"), NODE_PROTOCOLS)
def test_records_replay_and_a_tampered_record_does_not(tmp_path, name, problem, size) -> None:
    spec = PROTOCOLS[name]
    instance = _instance(problem, size, False, seed=2)
    adversary = {"cross-exam": "lie-step", "bisection": "lie-final", "kw": "random", "circuit-cross-exam": "random"}
    alice = spec.strategies[Role.ALICE].get(adversary[name], spec.strategies[Role.ALICE]["honest"])
    path = tmp_path / "debates.jsonl"
    result = run(spec, instance, alice, spec.strategies[Role.BOB]["honest"], trials=8, seed=2, record=path)
    records = list(read_records(path))
    assert [r["debate"] for r in records] == list(range(8))
    assert sum(r["verdict"] for r in records) == round(result.accept_rate * 8)
    assert all(replay(r, spec, instance).reproduced for r in records)
    assert main(["replay", str(path)]) == 0
    tampered = json.loads(json.dumps(records[0]))
    tampered["verdict"] = 1 - tampered["verdict"]
    found = replay(tampered, spec, instance)
    assert not found.reproduced and "verdict" in found.differences[0]
    other = replay(records[0], spec, _instance(problem, size, False, seed=5))
    assert not other.reproduced and "instance" in other.differences[0]


def test_replay_exits_1_on_a_tampered_file_and_2_on_garbage(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    assert (
        main(
            [
                "run",
                "cross-exam",
                "--problem",
                "approval-majority",
                "--size",
                "6",
                "--bob",
                "point-random",
                "--trials",
                "4",
                "--record",
                str(path),
            ]
        )
        == 0
    )
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["bits_read"] += 1
    path.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    assert main(["replay", str(path)]) == 1
    path.write_text("not json\n")
    assert main(["replay", str(path)]) == 2
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2


@pytest.mark.parametrize(("name", "problem", "size"), NODE_PROTOCOLS)
def test_debate_i_depends_only_on_the_seed_and_i(tmp_path, name, problem, size) -> None:
    """The first k records of a run of n debates are the records of a run of k, whatever the
    number of debates in flight."""
    spec = PROTOCOLS[name]
    instance = _instance(problem, size, True)
    bob = next(s for n, s in spec.strategies[Role.BOB].items() if n != "honest")
    alice = spec.strategies[Role.ALICE]["honest"]
    paths = [tmp_path / f"{k}.jsonl" for k in range(3)]
    run(spec, instance, alice, bob, trials=12, seed=7, record=paths[0])
    run(spec, instance, alice, bob, trials=5, seed=7, record=paths[1])
    run(spec, instance, alice, bob, trials=12, seed=7, record=paths[2], concurrency=5)
    long, short, parallel = (paths[k].read_text().splitlines() for k in range(3))
    assert long[: 1 + 5] == short  # the header, then debates 0..4
    assert long == parallel


def test_summaries_of_shards_merge_into_the_summary_of_the_run() -> None:
    rng = np.random.default_rng(0)
    debates = []
    for index in range(40):
        ledger = Ledger()
        ledger.queries[Role.VERIFIER] = int(rng.integers(3))
        ledger.queries[Role.ALICE] = int(rng.integers(10))
        ledger.bits_read = int(rng.integers(20))
        loser = [None, Role.ALICE, Role.BOB][int(rng.integers(3))]
        debates.append((index, int(rng.integers(2)), 1, ledger, loser, f"reason {index}"))
    whole, shards = Summary(), [Summary(), Summary(), Summary()]
    for d in debates:
        whole.add(*d)
        shards[d[0] % 3].add(*d)
    merged = shards[2].merge(shards[0]).merge(shards[1])
    assert merged == whole


def test_records_are_json_lines_with_every_event(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    spec = PROTOCOLS["cross-exam"]
    instance = _instance("approval-majority", 6, True)
    table = Table.set(spec, instance, spec.strategies[Role.ALICE]["honest"], spec.strategies[Role.BOB]["point-random"])
    assert table.seats[Role.ALICE] is not instance and table.seats[Role.ALICE] is not table.seats[Role.BOB]
    run(spec, instance, table.strategies[Role.ALICE], table.strategies[Role.BOB], trials=20, seed=1, record=path)
    records = list(read_records(path))
    kinds = {next(iter(e)) for r in records for e in r["events"]}
    assert kinds == {"query", "move", "read"}
    for r in records:
        verifier = [e for e in r["events"] if e.get("query") == "verifier"]
        assert sum(e["n"] for e in verifier) == r["queries"]["verifier"] <= 1
        assert sum(e.get("bits", 1) for e in r["events"] if e.get("read") in ("alice", "bob")) == r["bits_read"]


@pytest.mark.parametrize(("name", "problem", "size"), NODE_PROTOCOLS)
@pytest.mark.parametrize("truth", [True, False])
def test_a_sample_only_oracle_keeps_every_guarantee(name, problem, size, truth) -> None:
    """``--oracle sample``: the built-in oracle with its probabilities hidden from players and
    engine; the honest side still wins against every built-in adversary."""
    spec = PROTOCOLS[name]
    instance = _instance(problem, size, truth)
    hidden = SampleOnly(instance.oracle)
    honest = Role.ALICE if int(truth) == spec.alice_argues else Role.BOB
    for adversary in spec.strategies[honest.opponent].values():
        players = {honest: spec.strategies[honest]["honest"], honest.opponent: adversary}
        result = run(
            spec, instance, players[Role.ALICE], players[Role.BOB], trials=4, seed=1, oracles=Oracles(hidden, hidden)
        )
        assert result.honest_win_rate == 1.0, adversary.name
        assert result.guarantee.completeness == 1.0 and result.guarantee.soundness == 0.0


def test_a_theorem_that_assumes_a_deterministic_oracle_promises_nothing_with_a_stochastic_one() -> None:
    """Theorems 5.1 and 5.3 assume P[O(z)=1] in {0, 1}. With a noisy judge a lying Alice can win
    cross-examination, so the run must not print c = 1, s = 0."""
    b = MachineBuilder(inputs=1)
    (x0,) = b.inputs
    b.ask(lambda a: ("is the claim true?", a), x0)
    machine = b.build()
    noisy = Instance(
        "noisy",
        1,
        truth=False,
        x=np.array([1], dtype=np.uint8),
        oracle=TableOracle({("is the claim true?", 1): 0.3}),
        machine=machine,
    )
    spec = PROTOCOLS["cross-exam"]
    result = run(
        spec, noisy, spec.strategies[Role.ALICE]["lie-output"], spec.strategies[Role.BOB]["honest"], trials=400, seed=0
    )
    assert (result.guarantee.completeness, result.guarantee.soundness) == (0.0, 1.0)
    assert "no guarantee" in result.guarantee.statement
    assert result.accept_ci[0] > 0.2  # the liar wins about 30% of debates: the theorem's s = 0 fails
    certain = replace(noisy, oracle=TableOracle({("is the claim true?", 1): 0.0}))
    assert run(spec, certain, *result_strategies(spec), trials=5, seed=0).guarantee.soundness == 0.0


def result_strategies(spec) -> tuple[Strategy, Strategy]:
    return spec.strategies[Role.ALICE]["lie-output"], spec.strategies[Role.BOB]["honest"]


# The protocols on their own batch engines: stochastic debate, and the recursive protocols with the
# honest B named (prover-estimator's Algorithm 1 estimator needs q <= 10: obfuscated primality).
BATCH_PROTOCOLS = [
    ("stochastic", "noisy-majority", 8, "honest"),
    ("naive-recursive", "evidence-majority", 1, "honest"),
    ("naive-recursive", "obfuscated-primality", 8, "honest"),
    ("prover-estimator", "evidence-majority", 1, "omniscient"),
    ("prover-estimator", "obfuscated-primality", 8, "honest"),
]


def _rewritten_mixed_move() -> Dist:
    """A mixed move whose weights were rewritten after the Dist checked them."""
    move = Dist.uniform([0, 1])
    move._weights = {1: float("nan"), 0: 3}
    return move


BATCH_ATTACKS = HOSTILE_MESSAGES | {"rewritten mixed move": _rewritten_mixed_move}


@pytest.mark.parametrize(("name", "problem", "size", "honest_bob"), BATCH_PROTOCOLS)
@pytest.mark.parametrize("role", [Role.ALICE, Role.BOB])
@pytest.mark.parametrize("attack", list(BATCH_ATTACKS))
def test_a_hostile_message_loses_for_its_sender_on_the_batch_engines(
    name, problem, size, honest_bob, role, attack
) -> None:
    """The same hostile messages against stochastic debate and the recursive protocols: the run
    finishes, the honest side wins every debate (its payoff keeps Lemma A.5's promise), and only
    the hostile side forfeits (B's construction from A's garbage is never B's fault)."""
    spec = PROTOCOLS[name]
    truth = bool(spec.alice_argues) if role is Role.BOB else not spec.alice_argues
    instance = _instance(problem, size, truth)
    honest = spec.strategies[role.opponent][honest_bob if role is Role.ALICE else "honest"]
    players = {role: sends(role, BATCH_ATTACKS[attack]), role.opponent: honest}
    result = run(spec, instance, players[Role.ALICE], players[Role.BOB], trials=3, seed=0)
    assert result.honest_win_rate == 1.0
    assert result.forfeits[role.opponent.value] == 0
    if attack != "lying int":  # read through int's own slot, it is a plain number: no forfeit needed
        assert result.forfeits[role.value] == 3
    if name == "prover-estimator" and role is Role.BOB:
        assert result.payoffs.conclusions.bound.kind is BoundKind.COMPLETENESS
        assert result.payoffs.mean >= result.payoffs.conclusions.bound.value


class LyingSplit(tuple):
    """Equal to the honest split (tuple's own ``==`` and iteration), but indexing it gives a true
    subclaim: a split that changes when read, to steer the recursion away from the flaw."""

    true: Any = None

    def __getitem__(self, i: Any) -> Any:
        return self.true


class Spy:
    """An honest player that records the type of every argument it is shown."""

    def __init__(self, inner: Any, seen: list):
        self.inner, self.seen = inner, seen

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any) -> Any:
            self.seen += [type(a) for a in args]
            return getattr(self.inner, method)(*args)

        return call


def _steering(name: str, seat: Any) -> Any:
    """The built-in liar of ``name`` whose splits are :class:`LyingSplit` pointing at a true subclaim."""
    liar = PROTOCOLS[name].strategies[Role.ALICE]["wrong-answer"].factory(seat)
    D = liar.D

    def lying(level: int, ys: tuple) -> tuple:
        true = [y for y in ys if D.truth(y, level - 1) >= 0.5]
        if not true:
            return ys
        split = LyingSplit(ys)
        split.true = true[0]
        return split

    class Steering:
        def __getattr__(self, method: str) -> Any:
            return getattr(liar, method)

        def queries(self, s: Any) -> tuple:  # prover-estimator
            return lying(s.level, liar.queries(s))

        def decompose(self, level: int, query: Any, claimed: int) -> tuple:  # naive recursive
            ys, answers = liar.decompose(level, query, claimed)
            return lying(level, ys), answers

    return Steering()


@pytest.mark.parametrize("name", ["naive-recursive", "prover-estimator"])
@pytest.mark.parametrize("bob", ["honest", "omniscient"])
def test_a_split_that_changes_when_read_is_read_once_and_b_sees_plain_data(name, bob) -> None:
    """Without a plain copy of the split, a lying A who passes the split check and then names a
    true subclaim wins every debate, even against the omniscient B. Read once, her split is the
    honest one and she loses; B is shown only exact tuples, ints, floats and the situation. A few
    debates do: each shows B her split every round."""
    spec = PROTOCOLS[name]
    instance = _instance("obfuscated-primality", 8, False)
    seen: list = []
    honest = spec.strategies[Role.BOB][bob]
    spy = Strategy(bob, Role.BOB, "", lambda seat: Spy(honest.factory(seat), seen))
    steering = Strategy("wrong-answer", Role.ALICE, "", lambda seat: _steering(name, seat))
    result = run(spec, instance, steering, spy, trials=3, seed=0)
    assert result.honest_win_rate == 1.0
    if name == "prover-estimator" or bob == "omniscient":  # the bounds that cover this B
        assert result.payoffs.mean <= result.payoffs.conclusions.bound.value + 1e-12
    assert seen and set(seen) <= {int, float, tuple, pe.Situation}


class Vandal:
    """The built-in liar, who first tries to write into everything she is shown."""

    def __init__(self, seat: Any, name: str):
        self.inner = PROTOCOLS[name].strategies[Role.ALICE]["wrong-answer"].factory(seat)

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any) -> Any:
            for arg in args:
                for field in ("p", "level", "query", "claim", "p_root"):
                    with contextlib.suppress(Exception):
                        object.__setattr__(arg, field, 1e6 if field == "p" else -1e6)
            return getattr(self.inner, method)(*args)

        return call


@pytest.mark.parametrize("name", ["naive-recursive", "prover-estimator"])
def test_a_prover_cannot_write_into_the_situation_she_is_shown(name) -> None:
    """The verifier's situation is a tuple: a lying A cannot rewrite p_k under her reward
    r^k·A^k·(M_D - p_k) (a frozen dataclass would yield to ``object.__setattr__``)."""
    spec = PROTOCOLS[name]
    instance = _instance("obfuscated-primality", 8, False)
    vandal = Strategy("wrong-answer", Role.ALICE, "", lambda seat: Vandal(seat, name))
    result = run(spec, instance, vandal, spec.strategies[Role.BOB]["omniscient"], trials=5, seed=0)
    assert result.honest_win_rate == 1.0
    assert result.payoffs.mean <= result.payoffs.conclusions.bound.value + 1e-12


def test_plain_data_and_mixed_moves_are_rebuilt_without_their_methods() -> None:
    split = LyingSplit(((2, 4), (4, 6)))
    split.true = (0, 100)
    plain = commit_plain((split, np.int64(3), np.bool_(True), LyingInt(5), None, "s"), Role.ALICE, "m")
    assert plain == (((2, 4), (4, 6)), 3, True, 5, None, "s") and type(plain[0]) is tuple
    assert plain[0][1] == (4, 6) and type(plain[3]) is int
    for junk in ([1], Hostile(), ((1,),) * 3 + ([0],), np.array([1]), 1j):
        with pytest.raises(Malformed):
            commit_plain(junk, Role.BOB, "m")
    nested: Any = 0
    for _ in range(100):
        nested = (nested,)
    with pytest.raises(Malformed):
        commit_plain(nested, Role.BOB, "m")
    assert mixed_branches(Dist.uniform([-1, 1])) == [(0.5, -1), (0.5, 1)]
    assert mixed_branches(Hostile) == [(1.0, Hostile)]
    with pytest.raises(ValueError):
        mixed_branches(_rewritten_mixed_move())
    liar = Dist.pure(1)
    liar._weights = {1: LyingInt(1), 0: LyingInt(0)}
    assert mixed_branches(liar) == [(1.0, 1)]


def test_moves_asked_at_once_keep_their_own_time_limits_and_failures():
    """calls_within: one thread for a batch, each call under its own limit. A call that stalls is
    a TimeoutError and the calls after it are still made; each call's exception stays its own."""
    from debatekit.engine.play import Limited, calls_within, each_move

    release = threading.Event()

    def stalls():
        release.wait(30)
        return "late"

    def raises():
        raise ValueError("garbage")

    try:
        settled = calls_within(0.2, [lambda: 1, stalls, lambda: 3, raises, lambda: 5])
        assert settled[0]() == 1 and settled[2]() == 3 and settled[4]() == 5
        with pytest.raises(TimeoutError):
            settled[1]()
        with pytest.raises(ValueError, match="garbage"):
            settled[3]()
    finally:
        release.set()

    class Player:
        def double(self, x):
            if x == 2:
                raise SystemExit(0)  # a player's exit is its own failure, never the run's
            return 2 * x

    limited = each_move(Limited(Player(), 5.0), [lambda p, x=x: p.double(x) for x in range(4)])
    assert [limited[x]() for x in (0, 1, 3)] == [0, 2, 6]
    with pytest.raises(Exception, match="SystemExit"):
        limited[2]()
    inline = each_move(Player(), [lambda p, x=x: p.double(x) for x in (0, 1, 3)])
    assert [f() for f in inline] == [0, 2, 6]
