"""The process boundary (issue 20): isolated players play in worker processes and reach nothing of
the verifier's; every attack on the process loses its debate and the run goes on.

Each attack on the verifier is played twice: inline (a user's strategy as ``resolve`` loads it
today) it wins a debate it should lose, which is the hole; through a worker it loses.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests import worker_strategies

import debatekit
from debatekit.analysis.montecarlo import make_instance, run
from debatekit.engine import isolation, shared, wire
from debatekit.engine.boundary import Invalid
from debatekit.engine.events import Drawn, Queried
from debatekit.engine.isolation import Call, Limits, Pool, Seating, spec_of
from debatekit.engine.record import read_header
from debatekit.engine.trust import InternalError
from debatekit.engine.wire import WireError, decode, encode
from debatekit.ledger import Role
from debatekit.machine.turing import Config
from debatekit.mistakes import UserError
from debatekit.oracle import Question
from debatekit.players.base import Seat, Strategy, StrategyError, resolve
from debatekit.prob import Dist
from debatekit.problems import PROBLEMS
from debatekit.protocols import cross_exam
from debatekit.protocols.registry import PROTOCOLS, register, unregister
from debatekit.protocols.stochastic import batch
from debatekit.protocols.stochastic import rules as stochastic_rules
from debatekit.protocols.stochastic.params import Constants
from debatekit.runs.prepare import Isolated, prepare
from debatekit.runs.spec import RunSpec

HERE = "tests.worker_strategies"
LIMITS = Limits(timeout=10)


def children() -> list[int]:
    """This process's child processes (zombies included), read from /proc."""
    me, found = str(os.getpid()), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me:
            found.append(int(pid))
    return found


def in_a_child(play: Callable[[], Any]) -> Any:
    """``play()`` in a forked copy of this process, its result sent back pickled: the inline attacks
    poison oracles, patch modules and leave threads, and must not reach the tests that run after
    them in this (xdist worker) process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        try:
            with os.fdopen(write, "wb") as out:
                try:
                    pickle.dump(play(), out)
                except BaseException as error:
                    pickle.dump(RuntimeError(f"in the child: {error!r}"), out)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as back:
        data = back.read()
    os.waitpid(pid, 0)
    result = pickle.loads(data)
    if isinstance(result, RuntimeError):
        raise result
    return result


def both_ways(name: str, role: Role, protocol: str = "cross-exam"):
    """The strategy ``name`` inline (today's path) and isolated (a pool, to be closed)."""
    spec = PROTOCOLS[protocol]
    inline = resolve(f"{HERE}:{name}", role, spec.strategies[role])
    return inline, Pool(f"{HERE}:{name}", role, LIMITS)


# -- the wire format --

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**200), 2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
    | st.binary(max_size=8)
    | st.fractions()
    | st.builds(Config, st.integers(0, 9), st.integers(0, 9), st.lists(st.integers(0, 2), max_size=4).map(tuple))
    | st.builds(Invalid, st.text(max_size=8))
    | st.builds(lambda a: np.frombuffer(bytes(a), dtype=np.uint8), st.lists(st.integers(0, 255), max_size=8)),
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(plain)
def test_values_round_trip_through_frames_with_their_types(value) -> None:
    data = encode(value)
    back = crossed(value)
    assert encode(back) == data  # NaN is tagged, so the JSON forms compare
    assert type(back) is type(value)
    if type(value) is np.ndarray:
        assert not back.flags.writeable and back.dtype == value.dtype


def crossed(value):
    """``value`` after a trip through one frame."""
    return decode(wire.loads(b"".join(wire.dumps(encode(value)))))


def test_arrays_mixed_moves_and_questions_cross() -> None:
    rows = np.arange(12, dtype=np.float64).reshape(3, 4) / 7
    back = crossed([rows, (rows[:, 1] > 0.5, np.zeros((0, 3), dtype=np.int8))])
    assert np.array_equal(back[0], rows) and back[1][0].tolist() == [False, True, True]
    assert back[1][1].shape == (0, 3) and not back[0].flags.writeable
    mixed = crossed(Dist([((0, 1), Fraction(1, 3)), ((1, 0), Fraction(2, 3))]))
    assert type(mixed) is Dist and mixed.items() == [((0, 1), Fraction(1, 3)), ((1, 0), Fraction(2, 3))]
    assert crossed(Question("ok?", ("a", "b"))) == Question("ok?", ("a", "b"))
    assert math.isnan(crossed(float("nan"))) and crossed(-math.inf) == -math.inf


def test_a_bool_arrays_odd_bytes_read_as_true_and_1() -> None:
    payload = _frame(b'{"a":[0,4],"dtype":"bool","shape":[4]}    ', b"\x02\x00\x01\xff" + bytes(4))
    flags = wire.loads(payload)
    assert flags.view(np.uint8).tolist() == [1, 0, 1, 1] and not flags.flags.writeable


def test_an_arrays_bytes_are_read_in_place_and_aligned() -> None:
    payload = b"".join(wire.dumps(encode(["x", np.arange(5, dtype=np.int64), np.arange(3, dtype=np.uint8)])))
    (size,) = wire.HEADER.unpack_from(payload)
    assert (wire.HEADER.size + size) % wire.ALIGN == 0
    assert len(payload) == wire.HEADER.size + size + 40 + 8  # 5 int64s, then 3 bytes padded to 8
    first, second = wire.loads(payload)[1:]
    assert first.tolist() == [0, 1, 2, 3, 4] and second.tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    "data",
    [
        {"t": 3},
        {"x": []},
        {"dist": [[0, 0.5]]},
        {"dist": [[[0], 1.0]]},
        {"dc": "Seat", "v": []},
        {"dc": "Config", "v": [1]},
        {"q": [1, 0]},
        2**300,
        {"b": "!!"},
        {"f": "big"},
    ],
)
def test_malformed_values_are_wire_errors(data) -> None:
    with pytest.raises(WireError):
        decode(data)


def _frame(text: bytes, arrays: bytes = b"") -> bytes:
    return wire.HEADER.pack(len(text)) + text + arrays


@pytest.mark.parametrize(
    "payload",
    [
        _frame(b"NaN"),
        _frame(b"[1,"),
        _frame(b"\xff\xfe"),
        _frame(b"[" * 100_000 + b"]" * 100_000),
        _frame(b"Infinity"),
        b"\x00\x00",
        b"\x00\x00\x00\x09[1]",
        _frame(b'{"a":[0,4],"dtype":"object","shape":[1]}', bytes(8)),
        _frame(b'{"a":[0,5],"dtype":"uint8","shape":[4]}', bytes(8)),
        _frame(b'{"a":[4,8],"dtype":"uint8","shape":[8]}', bytes(8)),
        _frame(b'{"a":[-1,1],"dtype":"uint8","shape":[1]}', bytes(8)),
        _frame(b'{"a":[0,0],"dtype":"uint8","shape":[-2, 0]}', bytes(8)),
        _frame(b'{"a":"AAAA","dtype":"uint8","shape":[3]}', bytes(8)),
        _frame(b'{"a":[0,8],"dtype":"float64","shape":"x"}', bytes(8)),
    ],
)
def test_malformed_frames_are_wire_errors(payload) -> None:
    with pytest.raises(WireError):
        wire.loads(payload)


@pytest.fixture
def linked():
    """Both ends of one worker's shared memory, in this process (the engine's, the worker's)."""
    fd, (engine_in, worker_out), (worker_in, engine_out) = shared.memory(), os.pipe(), os.pipe()
    try:
        yield shared.Link(fd, engine_in, engine_out, engine=True), shared.Link(fd, worker_in, worker_out, engine=False)
    finally:
        for end in (fd, engine_in, worker_out, worker_in, engine_out):
            with contextlib.suppress(OSError):  # a test may have closed it
                os.close(end)


def test_a_frame_past_its_bound_is_refused(linked) -> None:
    engine, worker = linked
    worker.send(wire.dumps(list(range(1000))), wire.JSON, None, 0.0)
    with pytest.raises(WireError, match="at most 100"):
        engine.receive(100, None, 0.0)


def test_a_frame_longer_than_a_box_crosses_in_acknowledged_chunks(linked) -> None:
    engine, worker = linked
    data = np.random.default_rng(0).integers(0, 256, 2 * shared.CHUNK + 5, dtype=np.uint8).tobytes()
    sender = threading.Thread(target=engine.send, args=([data[:7], data[7:]], wire.JSON, time.monotonic() + 10, 0.0))
    sender.start()
    kind, got = worker.receive(len(data), time.monotonic() + 10, 0.0)
    sender.join()
    assert (kind, got) == (wire.JSON, data)
    worker.send([b"back"], wire.PACKED, None, 0.0)  # the boxes are each one way's: a reply crosses at once
    assert engine.receive(10, None, 0.0) == (wire.PACKED, b"back")


def test_a_side_gone_is_closed_and_a_side_silent_times_out(linked) -> None:
    engine, worker = linked
    start = time.monotonic()
    with pytest.raises(shared.TimedOut):
        engine.receive(10, start + 0.05, time.perf_counter() + 0.01)  # polled 10 ms, then asleep
    assert time.monotonic() - start < 1
    os.close(worker.wake_out)  # the worker's end of its pipe, closed as a dead worker's is
    with pytest.raises(shared.Closed):
        engine.receive(10, None, 0.0)


def test_a_packed_call_crosses_with_its_views_and_arrays() -> None:
    rows, estimate = np.arange(5), np.linspace(0, 1, 5)
    coins = np.array([True, False, True, True, False])
    view = wire.Handle(0, 3, 9, "oracle", rows, {"estimate": [7, estimate], "random": coins})
    kind, parts = wire.pack_call("aborts", [view, estimate, None])
    assert kind == wire.PACKED
    name, (back, claims, bits) = wire.unpack_call(b"".join(bytes(p) for p in parts))
    assert (name, back.index, back.t, back.steps, back.kind, bits) == ("aborts", 0, 3, 9, "oracle", None)
    assert back.rows.tolist() == rows.tolist() and back.ahead["estimate"][0] == 7
    assert back.ahead["estimate"][1].tolist() == estimate.tolist() and claims.tolist() == estimate.tolist()
    assert back.ahead["random"].tolist() == coins.tolist() and not claims.flags.writeable
    assert sorted(back.ahead) == ["estimate", "random"]
    _, parts = wire.pack_call("claims", [view._replace(rows=None, ahead={})])
    assert wire.unpack_call(b"".join(bytes(p) for p in parts))[1] == [wire.Handle(0, 3, 9, "oracle", None, {})]
    for other in ([view, [1, 2]], [view, np.zeros((2, 2))], [np.array([object()])], [estimate, view]):
        assert wire.pack_call("claims", other) is None  # these cross as JSON


def test_a_packed_reply_crosses_and_anything_else_is_json() -> None:
    _, parts = wire.pack_reply(["random", "estimate"], np.arange(6, dtype=np.int8))
    used, value = wire.unpack_reply(b"".join(bytes(p) for p in parts))
    assert used == ["random", "estimate"] and value.tolist() == [0, 1, 2, 3, 4, 5] and not value.flags.writeable
    assert wire.pack_reply([], [0.5]) is None and wire.pack_reply(["values"], np.zeros(2)) is None
    assert wire.pack_reply([], np.zeros((2, 3))) is None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80), st.data())
def test_any_packed_reply_a_worker_sends_reads_or_is_a_wire_error(junk, data) -> None:
    """Garbage, and a real reply with bytes changed or cut: each reads as a reply or is a WireError."""
    real = b"".join(bytes(p) for p in wire.pack_reply(["estimate"], np.arange(3, dtype=np.float64))[1])
    at = data.draw(st.integers(0, len(real)))
    for payload in (junk, real[:at] + junk + real[at + len(junk) :], real[:at]):
        try:
            used, value = wire.unpack_reply(payload)
        except WireError:
            continue
        assert type(value) is np.ndarray and not value.flags.writeable and set(used) <= set(wire.AHEAD)


def test_what_cannot_cross_names_itself() -> None:
    with pytest.raises(WireError, match="a object cannot be sent"):
        encode(object())


# -- attacks on the verifier: each wins inline, each loses in a worker --


@pytest.mark.parametrize(
    "name", ["OracleAlice", "ThreadAlice", "PatchingAlice", "FrameWalkingAlice", "HeapWalkingAlice"]
)
def test_an_alice_that_reaches_for_the_verifier_wins_inline_and_loses_isolated(name) -> None:
    spec, problem = PROTOCOLS["cross-exam"], PROBLEMS["approval-majority"]
    bob = spec.strategies[Role.BOB]["honest"]
    inline, pool = both_ways(name, Role.ALICE)
    with pool:
        guarded = run(spec, make_instance(problem, 8, False, 1), pool.strategy, bob, 4, 0, timeout=10)
    attacked = in_a_child(lambda: run(spec, make_instance(problem, 8, False, 1), inline, bob, 4, 0, timeout=10))
    assert attacked.accept_rate > 0  # the hole: a no-instance accepted
    assert (guarded.accept_rate, guarded.honest_win_rate, guarded.forfeits["alice"]) == (0.0, 1.0, 0)


def test_an_alice_cannot_edit_the_ledger_through_her_oracle_access() -> None:
    spec, problem = PROTOCOLS["cross-exam"], PROBLEMS["approval-majority"]
    bob = spec.strategies[Role.BOB]["honest"]
    inline, pool = both_ways("LedgerAlice", Role.ALICE)
    honest = run(spec, make_instance(problem, 8, True, 1), spec.strategies[Role.ALICE]["honest"], bob, 2, 0)
    with pool:
        attacked = in_a_child(lambda: run(spec, make_instance(problem, 8, True, 1), inline, bob, 2, 0, timeout=10))
        guarded = run(spec, make_instance(problem, 8, True, 1), pool.strategy, bob, 2, 0, timeout=10)
    assert attacked.verifier_bits_read_mean < 0
    assert guarded.verifier_bits_read_mean == honest.verifier_bits_read_mean
    assert guarded.alice_queries_mean == honest.alice_queries_mean == 8  # her queries, asked by proxy, counted


@pytest.mark.parametrize(("name", "protocol"), [("WritingBob", "cross-exam"), ("SetattrBob", "bisection")])
def test_a_bob_that_rewrites_what_he_is_handed_wins_inline_and_loses_isolated(name, protocol) -> None:
    spec = PROTOCOLS[protocol]
    alice = spec.strategies[Role.ALICE]["honest"]
    inline, pool = both_ways(name, Role.BOB, protocol)
    with pool:
        attacked = in_a_child(
            lambda: run(spec, make_instance(PROBLEMS["parity"], 6, True, 1), alice, inline, 2, 0, timeout=10)
        )
        guarded = run(spec, make_instance(PROBLEMS["parity"], 6, True, 1), alice, pool.strategy, 2, 0, timeout=10)
    assert attacked.honest_win_rate < 1
    assert (guarded.accept_rate, guarded.honest_win_rate) == (1.0, 1.0)


# -- attacks on the process: each loses its debate, the run goes on --


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("ExitingBob", "exited with status 3"),
        ("SysExitingBob", "SystemExit: 4"),
        ("SignallingBob", "killed by SIGTERM"),
        ("SleepingBob", "no move within 1 s"),
        ("AskingBob", "no move within 1 s"),
        ("HoggingBob", "MemoryError"),
        ("ForkingBob", "os.fork refused: a player runs in one process"),
        ("SpawningBob", "subprocess.Popen refused: a player runs in one process"),
        ("GarblingBob", "a chunk of 2147483647 bytes"),
        ("FloodingBob", "a frame of more than 16777216 bytes"),
        ("UnknownKindBob", "a frame of kind 9"),
        ("PipeClosingBob", "closed its pipe to the engine and went on: killed (SIGKILL)"),
        ("EmptyChunksBob", "no move within 1 s"),
        ("PackedGarbageBob", "a packed array of shape [1000] whose bytes are not in the frame"),
        ("BlockingAsyncBob", "no move within 1 s"),
        ("SwallowingAsyncBob", "no move within 1 s"),
        ("SlowAwaitBob", "no move within 1 s"),
        ("SlowStrBob", "no move within 1 s"),
        ("LoopStoppingBob", "Event loop stopped before Future completed"),
        ("CancellingBob", "CancelledError"),
    ],
)
def test_an_attack_on_the_process_loses_the_debate_and_the_run_goes_on(name, reason) -> None:
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["parity"], 6, True, 1)
    start = time.monotonic()
    honest = "debatekit.protocols.cross_exam:HonestAlice"
    with Pool(honest, Role.ALICE, LIMITS) as alice, Pool(f"{HERE}:{name}", Role.BOB, Limits(timeout=1)) as bob:
        result = run(spec, instance, alice.strategy, bob.strategy, 2, 0, timeout=10)
    assert time.monotonic() - start < 20
    assert (result.accept_rate, result.forfeits) == (1.0, {"alice": 0, "bob": 2})
    assert reason in result.forfeit_reasons["bob"]
    assert children() == []


def test_a_worker_reaped_is_never_signalled_again(monkeypatch) -> None:
    """Once a worker is reaped its pid, and its process group's, may be another process's (pids
    wrap at 32,768 on some systems): ending it again, as a pool's close does, signals nothing."""
    pool = Pool(f"{HERE}:CountingBob", Role.BOB, LIMITS)
    worker = pool._idle[0]
    pool.close()
    assert worker.gone == isolation.ENDED and worker.process.returncode is not None
    signalled: list[tuple] = []

    def noting(send: Callable[[int, int], None]) -> Callable[[int, int], None]:
        def sent(pid: int, signum: int) -> None:
            if pid == worker.process.pid:
                signalled.append((pid, signum))
            else:  # another process (another test's thread's) is signalled as ever
                send(pid, signum)

        return sent

    monkeypatch.setattr(os, "killpg", noting(os.killpg))
    monkeypatch.setattr(os, "kill", noting(os.kill))
    worker.kill("again")
    pool.close()
    assert signalled == [] and worker.gone == isolation.ENDED


def test_a_worker_never_silent_still_loses_at_the_move_time_limit(monkeypatch) -> None:
    """A move asking the oracle in an endless loop keeps its worker's pipe busy, so the engine,
    polling for each reply (here for as long as it likes), never waits in ``select``: the limit is
    checked at every frame, and the move loses at 1 s, not at the run's 10 s."""
    monkeypatch.setattr(isolation, "SPIN", 1000.0)
    spec, instance = PROTOCOLS["cross-exam"], make_instance(PROBLEMS["parity"], 6, True, 1)
    honest = "debatekit.protocols.cross_exam:HonestAlice"
    with Pool(honest, Role.ALICE, LIMITS) as alice, Pool(f"{HERE}:AskingBob", Role.BOB, Limits(timeout=1)) as bob:
        result = run(spec, instance, alice.strategy, bob.strategy, 1, 0, timeout=10)
    assert result.forfeits == {"alice": 0, "bob": 1}
    assert "no move within 1 s" in result.forfeit_reasons["bob"]


def test_a_process_forked_past_python_ends_with_its_worker(tmp_path, monkeypatch) -> None:
    """A raw ``fork`` through libc, whose child leaves for a session of its own: the move loses (the
    worker has a child), and the child dies with the worker, whose descendant it stayed."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("DEBATEKIT_TEST_PIDS", str(pids))
    spec = PROTOCOLS["cross-exam"]
    instance = make_instance(PROBLEMS["parity"], 6, True, 1)
    honest = "debatekit.protocols.cross_exam:HonestAlice"
    with Pool(honest, Role.ALICE, LIMITS) as alice, Pool(f"{HERE}:RawForkingBob", Role.BOB, LIMITS) as bob:
        result = run(spec, instance, alice.strategy, bob.strategy, 2, 0, timeout=10)
    assert (result.accept_rate, result.forfeits) == (1.0, {"alice": 0, "bob": 2})
    assert "the player started a process" in result.forfeit_reasons["bob"]
    forked = [int(line) for line in pids.read_text().split()]
    assert len(forked) == 2
    deadline = time.monotonic() + 5  # SIGKILL is sent: the kernel ends them at once, or nearly
    while any(running(pid) for pid in forked) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(pid) for pid in forked)


@pytest.mark.parametrize(("name", "status"), [("ExitingBob", 3), ("SignallingBob", 143)])
def test_inline_an_attack_on_the_process_ends_the_whole_run(name, status) -> None:
    """The hole the worker closes: a player trusted inline (``--trust-players``) ends the command
    (no result); in its workers (the default) it loses its debates."""
    argv = ["run", "cross-exam", "--problem", "parity", "--size", "6", "--bob", f"{HERE}:{name}", "--json"]
    argv += ["--trust-players"]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    command = [sys.executable, "-c", "from debatekit.cli.main import entry; entry()", *argv]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == status  # the run cut short by one player: nothing, or a partial result
    assert done.stdout == "" or '"interrupted": true' in done.stdout


def test_a_player_printing_megabytes_stalls_nothing() -> None:
    spec = PROTOCOLS["cross-exam"]
    alice = spec.strategies[Role.ALICE]["lie-output"]
    with Pool(f"{HERE}:PrintingBob", Role.BOB, LIMITS) as bob:
        result = run(spec, make_instance(PROBLEMS["parity"], 6, False, 1), alice, bob.strategy, 2, 0, timeout=10)
    assert (result.accept_rate, result.forfeits["bob"]) == (0.0, 0)


def test_the_forfeit_reason_carries_the_users_traceback() -> None:
    spec = PROTOCOLS["cross-exam"]
    with Pool(f"{HERE}:CrashingAlice", Role.ALICE, LIMITS) as alice:
        result = run(spec, make_instance(PROBLEMS["parity"], 6, True, 1), alice.strategy,
                     spec.strategies[Role.BOB]["honest"], 1, 0, timeout=10)  # fmt: skip
    reason = result.forfeit_reasons["alice"]
    assert reason.startswith("ZeroDivisionError: integer division or modulo by zero (worker_strategies.py:")
    assert "in _helper ← worker_strategies.py:" in reason and "in transcript" in reason


# -- the pool --


def test_one_worker_serves_a_seat_across_debates_with_a_fresh_player_each() -> None:
    instance = make_instance(PROBLEMS["parity"], 6, True, 1)
    with Pool(f"{HERE}:CountingBob", Role.BOB, LIMITS) as pool:
        counts = []
        for i in range(3):
            player = pool.seat(Seat(instance, Role.BOB, np.random.default_rng(i), None))
            player.challenge(np.zeros(3, dtype=np.uint8))
            counts.append(player.count())
            del player  # the debate ends: its worker goes back to the pool
    assert [c[:2] for c in counts] == [(1, 1), (2, 1), (3, 1)]
    assert len({c[2] for c in counts}) == 1 and counts[0][2] != os.getpid()
    assert children() == []


def test_a_strategy_that_does_not_load_is_a_usage_error() -> None:
    with pytest.raises(StrategyError, match="cannot import bob strategy"):
        Pool(f"{HERE}:Missing", Role.BOB, LIMITS)
    assert children() == []


def test_a_run_seats_a_users_strategy_in_workers_unless_trusted() -> None:
    """The switch of :func:`debatekit.runs.prepare.prepare`: built-ins inline, a user's strategy (by
    name or as an object its module names) in workers, inline only on the user's word or where the
    protocol's players are not isolated yet; what cannot be named for a worker is a usage error."""
    name = f"{HERE}:CountingBob"
    ready = prepare(RunSpec("cross-exam", "parity", size=8, bob=name))
    assert ready.seating == {Role.ALICE: Seating.BUILT_IN, Role.BOB: Seating.WORKER}
    assert ready.bob == Isolated(name, name) and ready.alice.trusted
    by_object = prepare(RunSpec("cross-exam", "parity", size=8, bob=worker_strategies.CountingBob))
    assert by_object.bob == Isolated(name, name)
    trusted = prepare(RunSpec("cross-exam", "parity", size=8, bob=name, trust_players=True))
    assert trusted.seating[Role.BOB] is Seating.TRUSTED and trusted.bob.factory is worker_strategies.CountingBob
    assert prepare(RunSpec("stochastic", "noisy-majority", bob=name)).seating[Role.BOB] is Seating.WORKER
    assert prepare(RunSpec("naive-recursive", "obfuscated-primality", bob=name)).seating[Role.BOB] is Seating.WORKER
    register("cross-exam-undeclared", replace(PROTOCOLS["cross-exam"], name="cross-exam-undeclared", isolated=False))
    try:
        not_yet = prepare(RunSpec("cross-exam-undeclared", "parity", size=8, bob=name))
    finally:
        unregister("cross-exam-undeclared")
    assert not_yet.seating[Role.BOB] is Seating.NOT_YET and Seating.NOT_YET.off and not Seating.WORKER.off
    with pytest.raises(UserError, match=r"cannot be imported by name in a worker.*trust=True"):
        prepare(RunSpec("cross-exam", "parity", size=8, bob=lambda seat: None))
    assert spec_of(cross_exam.HonestBob) == "debatekit.protocols.cross_exam:HonestBob"
    for unnamed in (lambda seat: None, type("Local", (), {"__module__": "__main__"})):
        with pytest.raises(StrategyError, match="cannot be imported by name"):
            spec_of(unnamed)


def test_the_record_header_says_where_each_player_ran(tmp_path) -> None:
    for trust, bob in ((False, "worker"), (True, "inline: --trust-players, boundary off")):
        record = tmp_path / f"{trust}.jsonl"
        debatekit.run("cross-exam", problem="parity", size=6, bob=f"{HERE}:CountingBob", trials=2, record=record,
                      trust=trust)  # fmt: skip
        assert read_header(record)["boundary"] == {"alice": "built-in", "bob": bob}


@pytest.mark.parametrize(
    "name", ["OracleAlice", "ThreadAlice", "PatchingAlice", "FrameWalkingAlice", "HeapWalkingAlice", "LedgerAlice"]
)
def test_through_the_api_every_attack_on_the_verifier_loses_by_default(name) -> None:
    """``debatekit.run`` plays a user's strategy in workers unless told to trust it: each attack
    loses, and the result says where each player ran."""
    result = debatekit.run("cross-exam", problem="approval-majority", size=8, truth=False,
                           alice=f"{HERE}:{name}", trials=3, move_timeout=10)  # fmt: skip
    assert (result.accept_rate, result.honest_win_rate, result.forfeits["alice"]) == (0.0, 1.0, 0)
    assert result.verifier_bits_read_mean >= 0
    assert result.boundary == {"alice": "worker", "bob": "built-in"}
    assert children() == []


def test_workers_left_open_end_with_the_engine(tmp_path) -> None:
    script = textwrap.dedent(
        f"""
        from debatekit.engine.isolation import Call, Pool
        from debatekit.ledger import Role
        pool = Pool("{HERE}:CountingBob", Role.BOB)
        print(*(w.process.pid for w in pool._idle))
        """
    )
    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    pid = int(out.stdout.split()[0])
    assert not running(pid)


# -- the tree protocols, wired --


@pytest.mark.parametrize(
    ("protocol", "problem", "size"),
    [("cross-exam", "sat-witness", 6), ("bisection", "palindrome", 4), ("kw", "parity", 8),
     ("circuit-cross-exam", "equality", 4)],
)  # fmt: skip
def test_isolated_honest_players_play_every_tree_protocol_as_inline(protocol, problem, size) -> None:
    spec = PROTOCOLS[protocol]
    inline = {role: spec.strategies[role]["honest"] for role in (Role.ALICE, Role.BOB)}
    names = {role: f"{s.factory.__module__}:{s.factory.__qualname__}" for role, s in inline.items()}
    for truth in (True, False):
        instance = make_instance(PROBLEMS[problem], size, truth, 2)
        expected = run(spec, instance, inline[Role.ALICE], inline[Role.BOB], 2, 0)
        with Pool(names[Role.ALICE], Role.ALICE, LIMITS) as alice, Pool(names[Role.BOB], Role.BOB, LIMITS) as bob:
            played = run(spec, instance, alice.strategy, bob.strategy, 2, 0, timeout=10)
        assert (played.accept_rate, played.forfeits) == (expected.accept_rate, expected.forfeits)
        assert played.verifier_bits_read_mean == expected.verifier_bits_read_mean
    assert children() == []


def test_a_worker_whose_engine_was_killed_ends_itself() -> None:
    script = textwrap.dedent(
        f"""
        import os, signal
        from debatekit.engine.isolation import Call, Pool
        from debatekit.ledger import Role
        pool = Pool("{HERE}:CountingBob", Role.BOB)
        print(*(w.process.pid for w in pool._idle), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup runs
        """
    )
    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 5
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(pid)


def running(pid: int) -> bool:
    """Whether process ``pid`` is alive (a zombie, dead but not yet reaped, is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# -- stochastic debate: batched players through a view the engine keeps --

STOCHASTIC_HONEST = "debatekit.protocols.stochastic.rules:HonestAlice", "debatekit.protocols.stochastic.rules:HonestBob"


@pytest.mark.parametrize("truth", [True, False])
def test_isolated_stochastic_players_play_batches_as_inline(truth) -> None:
    """Honest players by ``module:attr`` in workers play the same debates as the built-ins inline:
    their views' estimates are read from the engine, counted for their roles, in the same order."""
    spec = PROTOCOLS["stochastic"]
    instance = make_instance(PROBLEMS["noisy-majority"], 12, truth, 1)
    builtin = {role: spec.strategies[role]["honest"] for role in (Role.ALICE, Role.BOB)}
    expected = run(spec, instance, builtin[Role.ALICE], builtin[Role.BOB], 300, 5)
    with Pool(STOCHASTIC_HONEST[0], Role.ALICE, LIMITS) as alice, Pool(STOCHASTIC_HONEST[1], Role.BOB, LIMITS) as bob:
        played = run(spec, instance, alice.strategy, bob.strategy, 300, 5)
    same = ("accept_rate", "alice_queries_mean", "bob_queries_mean", "verifier_queries_mean", "verifier_bits_read_mean")
    assert [getattr(played, f) for f in same] == [getattr(expected, f) for f in same]
    assert played.forfeits == {"alice": 0, "bob": 0}
    assert children() == []


def test_a_batchs_workers_serve_the_next_block_as_they_are_let_go() -> None:
    """Blocks of a run, and runs after it, reuse each seat's one worker: a block lets its players go
    as it ends, not at a garbage collection (a worker started per block cost its start each time)."""
    spec = PROTOCOLS["stochastic"]
    spec = replace(spec, batch=replace(spec.batch, block=50))
    instance = make_instance(PROBLEMS["noisy-majority"], 8, True, 1)
    builtin = spec.strategies[Role.BOB]["honest"]
    with Pool(STOCHASTIC_HONEST[0], Role.ALICE, LIMITS) as alice:
        first = list(alice._workers)
        for _ in range(2):
            played = run(spec, instance, alice.strategy, builtin, 200, 5)  # four blocks each
            assert played.forfeits == {"alice": 0, "bob": 0}
        assert list(alice._workers) == first and alice._idle == first


def test_reads_answered_ahead_are_taken_only_when_made() -> None:
    """An Alice whose reads change from step to step (estimates of other sizes, two estimates, none,
    the probabilities and her coins) plays every debate, event for event, and is counted as inline:
    what the engine answered ahead of her call is taken only when she makes that read."""
    spec = PROTOCOLS["stochastic"]
    instance = make_instance(PROBLEMS["noisy-majority"], 12, False, 1)
    name = f"{HERE}:AdaptiveStochasticAlice"
    inline = resolve(name, Role.ALICE, {})
    bob = spec.strategies[Role.BOB]["honest"]
    expected = spec.batch.simulate(instance, inline, bob, 5, range(64), None, True)
    with Pool(name, Role.ALICE, LIMITS) as alice, Pool(STOCHASTIC_HONEST[1], Role.BOB, LIMITS) as honest_bob:
        played = spec.batch.simulate(instance, alice.strategy, honest_bob.strategy, 5, range(64), None, True)
    assert played.records == expected.records
    asked = [e for r in played.records for e in r["events"] if isinstance(e, Queried) and e.role is Role.ALICE]
    assert len(asked) > 64  # she did read


def test_a_worker_that_takes_a_read_not_answered_ahead_breaks_the_format() -> None:
    call = Call(None, {})  # type: ignore[arg-type]
    for used in (["estimate"], "estimate", [1]):
        with pytest.raises(WireError):
            call.took(used)


def test_a_batched_player_draws_from_its_view_never_from_its_seats_generator() -> None:
    """In a batch a seat's generator would tie debate i to its batch (the batch size, the run's
    split): a draw from it is the player's failure, named; one debate a call, it is debate i's own."""
    spec = PROTOCOLS["stochastic"]
    instance = make_instance(PROBLEMS["noisy-majority"], 12, True, 1)
    bob = spec.strategies[Role.BOB]["honest"]
    with Pool(f"{HERE}:SeatDrawingAlice", Role.ALICE, LIMITS) as pool:
        batched = run(spec, instance, pool.strategy, bob, 20, 2)
        alone = spec.batch.simulate(instance, pool.strategy, bob, 2, range(3, 4))
    assert batched.forfeits == {"alice": 20, "bob": 0}
    assert "a batched player draws from view.random()" in batched.forfeit_reasons["alice"]
    assert alone.forfeits[Role.ALICE] == 0 and alone.verdicts.tolist() == [1]


def test_a_view_read_after_its_call_is_the_players_failure() -> None:
    spec = PROTOCOLS["stochastic"]
    instance = make_instance(PROBLEMS["noisy-majority"], 12, True, 1)
    with Pool(f"{HERE}:StaleViewAlice", Role.ALICE, LIMITS) as pool:
        played = run(spec, instance, pool.strategy, spec.strategies[Role.BOB]["honest"], 20, 2)
    assert played.forfeits == {"alice": 20, "bob": 0}
    assert "a view is read during the call it was given to" in played.forfeit_reasons["alice"]


def test_a_stochastic_alice_that_rewrites_the_live_transcript_wins_inline_and_loses_isolated() -> None:
    spec = PROTOCOLS["stochastic"]
    instance = make_instance(PROBLEMS["noisy-majority"], 12, False, 1)
    bob = spec.strategies[Role.BOB]["honest"]
    honest = run(spec, instance, spec.strategies[Role.ALICE]["honest"], bob, 200, 2)
    inline = resolve(f"{HERE}:RewritingStochasticAlice", Role.ALICE, {})
    attacked = in_a_child(lambda: run(spec, instance, inline, bob, 200, 2))
    with Pool(f"{HERE}:RewritingStochasticAlice", Role.ALICE, LIMITS) as pool:
        guarded = run(spec, instance, pool.strategy, bob, 200, 2)
    assert attacked.accept_rate > honest.accept_rate + 0.5  # the hole: the verifier read her rewrite
    assert guarded.accept_rate == honest.accept_rate  # her moves are honest Alice's; her rewrite reached nothing
    assert guarded.forfeits == {"alice": 0, "bob": 0}


# -- the recursive protocols: their situations cross as named tuples, their decomposition with the instance --


@pytest.mark.parametrize("truth", [True, False])
def test_isolated_naive_recursion_plays_as_inline(truth) -> None:
    spec = PROTOCOLS["naive-recursive"]
    instance = make_instance(PROBLEMS["obfuscated-primality"], 10, truth, 0)
    expected = run(spec, instance, spec.honest(Role.ALICE), spec.honest(Role.BOB), 40, 3)
    with Pool(f"{HERE}:naive_honest_alice", Role.ALICE, LIMITS) as alice, Pool(f"{HERE}:naive_honest_bob", Role.BOB,
                                                                                LIMITS) as bob:  # fmt: skip
        played = run(spec, instance, alice.strategy, bob.strategy, 40, 3)
    same = ("accept_rate", "honest_win_rate", "verifier_queries_mean", "verifier_bits_read_mean", "alice_queries_mean")
    assert [getattr(played, f) for f in same] == [getattr(expected, f) for f in same]
    assert played.forfeits == {"alice": 0, "bob": 0}
    assert children() == []


def test_a_naive_alice_that_poisons_the_verifiers_oracle_wins_inline_and_loses_isolated() -> None:
    spec = PROTOCOLS["naive-recursive"]
    instance = make_instance(PROBLEMS["obfuscated-primality"], 10, False, 0)
    bob = spec.honest(Role.BOB)
    inline = resolve(f"{HERE}:PoisoningNaiveAlice", Role.ALICE, {})
    attacked = in_a_child(lambda: run(spec, instance, inline, bob, 20, 3))
    with Pool(f"{HERE}:PoisoningNaiveAlice", Role.ALICE, LIMITS) as pool:
        guarded = run(spec, instance, pool.strategy, bob, 20, 3)
    assert attacked.accept_rate == 1.0  # the hole: the leaf's check asked the oracle she made answer yes
    assert (guarded.accept_rate, guarded.honest_win_rate) == (0.0, 1.0)


def test_an_isolated_prover_estimator_alice_plays_as_inline() -> None:
    """Her situations cross as named tuples, her proof is asked of a context-free copy in its own
    worker and committed once: the obfuscator's debates against Algorithm 1's estimator are the
    same (the payoff's sum is taken over blocks in another order: equal to rounding)."""
    spec = PROTOCOLS["prover-estimator"]
    instance = make_instance(PROBLEMS["obfuscated-primality"], 10, False, 0)
    name = "debatekit.players.prover_estimator:Obfuscator"
    expected = run(spec, instance, resolve(name, Role.ALICE, {}), spec.honest(Role.BOB), 30, 3)
    with Pool(name, Role.ALICE, LIMITS) as alice:
        played = run(spec, instance, alice.strategy, spec.honest(Role.BOB), 30, 3)
    assert (played.accept_rate, played.forfeits) == (expected.accept_rate, expected.forfeits)
    assert played.payoffs.mean == pytest.approx(expected.payoffs.mean, rel=1e-12, abs=1e-18)


def test_a_prover_estimator_alice_that_poisons_the_verifiers_oracle_wins_inline_and_loses_isolated() -> None:
    spec = PROTOCOLS["prover-estimator"]
    instance = make_instance(PROBLEMS["obfuscated-primality"], 10, False, 0)
    bob = spec.honest(Role.BOB)
    plain = run(spec, instance, resolve("debatekit.players.prover_estimator:Obfuscator", Role.ALICE, {}), bob, 30, 3)
    inline = resolve(f"{HERE}:PoisoningEstimatorAlice", Role.ALICE, {})
    attacked = in_a_child(lambda: run(spec, instance, inline, bob, 30, 3))
    with Pool(f"{HERE}:PoisoningEstimatorAlice", Role.ALICE, LIMITS) as pool:
        guarded = run(spec, instance, pool.strategy, bob, 30, 3)
    assert attacked.payoffs.mean > plain.payoffs.mean + 0.5  # the hole: the leaves agree with her
    assert guarded.accept_rate == plain.accept_rate  # her poison reached nothing: she is the obfuscator
    assert guarded.payoffs.mean == pytest.approx(plain.payoffs.mean, rel=1e-12, abs=1e-18)


def test_an_isolated_strategy_object_still_refuses_an_instance_it_cannot_play() -> None:
    picky = Strategy("picky", Role.BOB, "refuses every instance", worker_strategies.CountingBob,
                     refuses=lambda instance: "too picky")  # fmt: skip
    with pytest.raises(UserError, match="bob strategy '<strategy object: picky>' cannot play this instance: too picky"):
        prepare(RunSpec("cross-exam", "parity", size=8, bob=picky))


def test_an_argument_of_the_rules_that_cannot_cross_is_the_engines_failure_not_a_forfeit() -> None:
    instance = make_instance(PROBLEMS["parity"], 6, True, 1)
    rng = np.random.default_rng(0)
    with Pool(f"{HERE}:CountingBob", Role.BOB, LIMITS) as pool:
        remote = pool.seat(Seat(instance, Role.BOB, rng, None))
        with pytest.raises(InternalError, match="cannot be sent"):
            remote.challenge(object())
        assert remote.count()[1] == 0  # nothing reached the player
    assert children() == []


def test_the_engines_own_work_while_a_worker_thinks_runs_once_and_its_failure_is_loud() -> None:
    """An interpreter's ``meanwhile`` runs once the call is sent, before its reply is read; when it
    fails, that is the engine's bug (InternalError, never a forfeit) and the worker, its reply left
    unread, ends: the next debate gets a fresh one."""
    instance = make_instance(PROBLEMS["parity"], 6, True, 1)
    rng = np.random.default_rng(0)
    done: list[int] = []
    with Pool(f"{HERE}:CountingBob", Role.BOB, LIMITS) as pool:
        remote = pool.seat(Seat(instance, Role.BOB, rng, None))
        assert remote.challenge(1, meanwhile=lambda: done.append(1)) == cross_exam.ACCEPT
        assert done == [1] and remote.count()[1] == 1

        def fail() -> None:
            raise ValueError("a bug of the engine's")

        worker = remote._worker
        with pytest.raises(InternalError, match="a bug of the engine's"):
            remote.challenge(2, meanwhile=fail)
        assert worker.gone == "the engine failed while it thought" and not running(worker.process.pid)
        del remote
        fresh = pool.seat(Seat(instance, Role.BOB, rng, None))
        assert fresh._worker is not worker and fresh.challenge(3) == cross_exam.ACCEPT


@pytest.mark.parametrize(
    ("constants", "problem"),
    [(Constants.lean, "noisy-majority"), (Constants.paper, "noisy-majority"), (Constants.lean, "ma-witness")],
)
def test_nature_is_drawn_while_an_isolated_alice_thinks_and_is_the_same_draw(constants, problem) -> None:
    """With Alice in a worker, each step's nature draw (the Lean form's bit) is made while she
    thinks and is exactly the one drawn on demand: every debate's record, nature's bits included, is
    as inline. Her witness comes before any step, and the paper form draws its bit from the players'
    shares: then nothing is drawn ahead."""
    instance = make_instance(PROBLEMS[problem], 12 if problem == "noisy-majority" else 4, True, 1)
    steps = stochastic_rules.machine_of(instance).length
    rules = stochastic_rules.rules_for(constants, float(instance.lipschitz), steps)
    builtin = {role: PROTOCOLS["stochastic"].strategies[role]["honest"] for role in (Role.ALICE, Role.BOB)}
    expected = batch.simulate(instance, rules, builtin[Role.ALICE], builtin[Role.BOB], 5, range(64), None, True)
    drawn: list[int] = []
    original = batch._Batch.draw_ahead

    def counted(self) -> None:
        before = self.nature_ahead
        original(self)
        if self.nature_ahead is not before:
            drawn.append(self.t)

    with pytest.MonkeyPatch.context() as patch, Pool(STOCHASTIC_HONEST[0], Role.ALICE, LIMITS) as alice:
        patch.setattr(batch._Batch, "draw_ahead", counted)
        played = batch.simulate(instance, rules, alice.strategy, builtin[Role.BOB], 5, range(64), None, True)
    assert played.records == expected.records
    bits = [e for r in played.records for e in r["events"] if isinstance(e, Drawn)]
    if constants is Constants.lean:
        assert drawn == list(range(steps)) and len(bits) == 64 * steps  # once a step, however many calls
    else:
        assert drawn == [] and bits == []
