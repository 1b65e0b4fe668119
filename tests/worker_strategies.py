"""Adversaries of the process boundary (``tests/test_worker.py``), named as ``worker_strategies:Name``.

Each reaches past what it is handed: into the verifier's committed message, its configurations,
its oracle, its ledger, its module, its stack and its heap, or at the process itself. Played
inline (today's in-process path) the first kind wins debates it should lose; played in a worker,
each finds nothing of the verifier's and loses. The second kind (exits, signals, sleeps, huge
allocations, forks, floods) loses its debate in a worker and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from debatekit.engine import wire
from debatekit.players.base import Seat
from debatekit.protocols import cross_exam
from debatekit.protocols.cross_exam import ACCEPT, HonestAlice

# -- cross-examination Alices on a no-instance of approval-majority: each makes the oracle answer
# yes and sends the transcript that is then consistent with it (output 1) --


def _yes_transcript(seat: Seat) -> np.ndarray:
    """w ‖ a as M computes it when every judgement is yes."""
    machine = seat.instance.machine
    assert machine is not None
    return machine.run(np.asarray(seat.instance.x, dtype=np.uint8), lambda query: 1, seat.rng)


def _poison(oracle: Any) -> None:
    object.__setattr__(oracle, "_fn", lambda query: 1.0)


class OracleAlice:
    """Makes the seat's oracle access (the verifier's own oracle object, in process) answer yes."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> np.ndarray:
        oracle = getattr(self.seat.ask, "oracle", None)
        if oracle is not None:
            _poison(oracle)
        return _yes_transcript(self.seat)


class LedgerAlice:
    """Plays honestly, and rewrites the debate's ledger through the seat's oracle access."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> np.ndarray:
        ledger = getattr(self.seat.ask, "_ledger", None)
        if ledger is not None:
            ledger.bits_read = -994
        return HonestAlice(self.seat).transcript()


class ThreadAlice:
    """Sends the yes-transcript, and leaves a thread that makes the oracle answer yes once her
    message is committed."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> np.ndarray:
        oracle = getattr(self.seat.ask, "oracle", None)

        def later() -> None:
            time.sleep(0.001)
            if oracle is not None:
                _poison(oracle)

        threading.Thread(target=later, daemon=True).start()
        return _yes_transcript(self.seat)


class PatchingAlice:
    """Replaces the protocol's verifier with one that accepts."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> np.ndarray:
        cross_exam.verify = lambda *args: 1  # type: ignore[assignment]
        return _yes_transcript(self.seat)


class FrameWalkingAlice:
    """Walks up its own stack (``sys._getframe``) to the protocol's nodes, and from their closures
    to the verifier's instance, whose oracle it makes answer yes."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> np.ndarray:
        frame: Any = sys._getframe()
        while frame is not None:
            for value in list(frame.f_locals.values()):
                for cell in getattr(getattr(value, "then", None), "__closure__", None) or ():
                    found = cell.cell_contents
                    if type(found).__name__ == "Instance" and found.oracle is not None:
                        _poison(found.oracle)
            frame = frame.f_back
        return _yes_transcript(self.seat)


class HeapWalkingAlice:
    """Looks through every object on the heap (``gc.get_objects``) for the instances of its own
    problem (the verifier's among them) and makes their oracles answer yes."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> np.ndarray:
        mine = self.seat.instance
        for found in gc.get_objects():
            same = type(found).__name__ == "Instance" and found is not mine and found.problem == mine.problem
            if same and np.array_equal(found.x, mine.x) and hasattr(found.oracle, "_fn"):
                _poison(found.oracle)
        return _yes_transcript(self.seat)


# -- Bobs against honest Alice on a yes-instance: each tries to make the verifier reject her --


class WritingBob:
    """Writes a_T = 0 into Alice's committed message (its buffer's address, through ctypes), then
    accepts: in process the verifier reads the 0."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def challenge(self, message: np.ndarray) -> None:
        address = message.__array_interface__["data"][0]
        ctypes.memset(address + message.size - 1, 0, 1)
        return ACCEPT


class SetattrBob:
    """Bisection: rewrites the verifier's starting configuration (``object.__setattr__`` on the
    frozen ``Config`` it is handed) and always disputes the first half."""

    def __init__(self, seat: Seat):
        self.seat, self.done = seat, False

    def half(self, start: Any, middle: Any, end: Any, begin: int, steps: int) -> int:
        if not self.done:
            object.__setattr__(start, "state", start.state + 1)
            self.done = True
        return 0


# -- Bobs that attack the process: each loses its debate --


class ExitingBob:
    """``os._exit(3)`` in its move."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def challenge(self, message: Any) -> Any:
        os._exit(3)


class SysExitingBob(ExitingBob):
    """``sys.exit(4)`` in its move."""

    def challenge(self, message: Any) -> Any:
        sys.exit(4)


class SignallingBob(ExitingBob):
    """Sends itself SIGTERM."""

    def challenge(self, message: Any) -> Any:
        signal.raise_signal(signal.SIGTERM)
        return ACCEPT


class SleepingBob(ExitingBob):
    """``time.sleep(10**6)``."""

    def challenge(self, message: Any) -> Any:
        time.sleep(10**6)


class AskingBob(ExitingBob):
    """Asks the oracle in a loop that never ends: each query is a prompt round trip, so its worker
    never falls silent, and only the move's time limit ends it."""

    def challenge(self, message: Any) -> Any:
        while True:
            with contextlib.suppress(Exception):  # the question is refused: ask again
                self.seat.ask("q")


class HoggingBob(ExitingBob):
    """Allocates 50 GB."""

    def challenge(self, message: Any) -> Any:
        hog = bytearray(50 * 10**9)
        return len(hog)


class ForkingBob(ExitingBob):
    """Forks, and both copies would answer."""

    def challenge(self, message: Any) -> Any:
        if os.fork() == 0:
            while True:
                time.sleep(1)
        return ACCEPT


class SpawningBob(ExitingBob):
    """Starts a process in a session of its own through ``subprocess``."""

    def challenge(self, message: Any) -> Any:
        import subprocess

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"], start_new_session=True)
        return ACCEPT


class RawForkingBob(ExitingBob):
    """Forks through libc (past Python's own fork), and the child leaves for a session of its own,
    noting its pid in the file ``DEBATEKIT_TEST_PIDS`` names (before the move returns)."""

    def challenge(self, message: Any) -> Any:
        path = os.environ["DEBATEKIT_TEST_PIDS"]
        # PyDLL keeps the GIL through the call: forked while another thread held it (the worker's
        # watch on its parent wakes twice a second), the child would wait for it forever.
        pid = ctypes.PyDLL(None).fork()
        if pid == 0:
            os.setsid()
            with open(path, "a") as pids:
                pids.write(f"{os.getpid()}\n")
            while True:
                time.sleep(1)
        deadline = time.monotonic() + 5  # the child has left, and said so (in a file it may not have made yet)
        while str(pid) not in _lines(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        return ACCEPT


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().split()
    except FileNotFoundError:
        return []


def _link() -> Any:
    """The worker's end of the memory it shares with the engine, found on the heap."""
    return next(o for o in gc.get_objects() if type(o).__name__ == "Link")


class GarblingBob(ExitingBob):
    """Announces a frame of 2 GiB straight in the worker's box to the engine."""

    def challenge(self, message: Any) -> Any:
        _link()._post(2**31 - 1, 0, 0)
        time.sleep(5)


class FloodingBob(ExitingBob):
    """Sends a frame of 40 MiB, chunk after chunk, past the frame limit."""

    def challenge(self, message: Any) -> Any:
        _link().send([bytes(1 << 20)] * 40, 0, None, 0.0)
        time.sleep(5)


class EmptyChunksBob(ExitingBob):
    """Sends empty chunks, each saying more follows, without end."""

    def challenge(self, message: Any) -> Any:
        link = _link()
        while True:
            link._post(0, 0, 1)


class PipeClosingBob(ExitingBob):
    """Closes its end of the pipe that wakes the engine, as a worker that died would, and lives on."""

    def challenge(self, message: Any) -> Any:
        os.close(_link().wake_out)
        time.sleep(10**6)


class UnknownKindBob(ExitingBob):
    """Sends a frame of a kind the format does not have."""

    def challenge(self, message: Any) -> Any:
        _link().send([b"{}"], 9, None, 0.0)
        time.sleep(5)


class PackedGarbageBob(ExitingBob):
    """Sends a packed reply of 1,000 numbers without their bytes."""

    def challenge(self, message: Any) -> Any:
        _link().send(
            [wire._REPLY.pack(wire._T_REPLY, 0, 0, 0, 0, 1 + wire._CODES.index("float64"), 1000)], 1, None, 0.0
        )
        time.sleep(5)


class BlockingAsyncBob(ExitingBob):
    """An ``async`` move that blocks its event loop (``time.sleep``, not ``await``)."""

    async def challenge(self, message: Any) -> Any:
        time.sleep(10**6)


class SwallowingAsyncBob(ExitingBob):
    """An ``async`` move that swallows every cancellation and waits on."""

    async def challenge(self, message: Any) -> Any:
        while True:
            try:
                await asyncio.sleep(10**6)
            except asyncio.CancelledError:
                continue


class _SlowAwait:
    def __await__(self) -> Any:
        time.sleep(10**6)
        yield


class SlowAwaitBob(ExitingBob):
    """Returns an awaitable whose ``__await__`` never ends."""

    def challenge(self, message: Any) -> Any:
        return _SlowAwait()


class _SlowStr(Exception):
    def __str__(self) -> str:
        time.sleep(10**6)
        return ""


class SlowStrBob(ExitingBob):
    """Raises an exception whose ``__str__`` never ends (its reason cannot be written)."""

    def challenge(self, message: Any) -> Any:
        raise _SlowStr


class LoopStoppingBob(ExitingBob):
    """An ``async`` move that stops the event loop it runs on."""

    async def challenge(self, message: Any) -> Any:
        asyncio.get_running_loop().stop()
        await asyncio.sleep(10**6)


class CancellingBob(ExitingBob):
    """An ``async`` move that cancels every task, itself included."""

    async def challenge(self, message: Any) -> Any:
        for task in asyncio.all_tasks():
            task.cancel()
        await asyncio.sleep(10**6)


class PrintingBob:
    """Prints 20 MB, then plays honestly: printing loses nothing and stalls nothing."""

    def __init__(self, seat: Seat):
        self.inner = cross_exam.HonestBob(seat)

    def challenge(self, message: Any) -> Any:
        for _ in range(20):
            print("x" * (1 << 20))
        return self.inner.challenge(message)


class CountingBob:
    """Accepts, and says how many debates its process has played (a fresh object per debate)."""

    played = 0

    def __init__(self, seat: Seat):
        CountingBob.played += 1
        self.moves = 0

    def challenge(self, message: Any) -> Any:
        self.moves += 1
        return ACCEPT

    def count(self) -> tuple[int, int, int]:
        return CountingBob.played, self.moves, os.getpid()


class CrashingAlice:
    """Raises from a helper of her own: the forfeit reason carries her traceback's last frames."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def transcript(self) -> Any:
        return self._helper()

    def _helper(self) -> Any:
        return 1 // 0


# -- stochastic debate: a player handed the engine's view --


class RewritingStochasticAlice:
    """Claims as honest Alice does (her estimates), then rewrites the debate's live transcript through
    what her view holds (a debate played alone's ``_bits``: x, w and the bits so far) to all ones:
    in process the verifier reads the rewritten bits."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def claims(self, view: Any) -> Any:
        claims = view.estimate(view.rules.alice_samples)
        bits = getattr(view, "_bits", None)
        if isinstance(bits, bytearray):
            bits[:] = b"\x01" * len(bits)
        return claims

    def shares(self, view: Any) -> Any:
        return view.random()


class AdaptiveStochasticAlice:
    """Reads her view differently from step to step: the probabilities, one estimate of 2n samples,
    two of n, the probabilities with a coin, one of n; her coins on odd steps only. In a worker the reads her last
    call made are answered ahead and taken only when she makes them again: she plays, and is
    counted, as inline."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def claims(self, view: Any) -> Any:
        n, turn = view.rules.alice_samples, view.t % 5
        if turn == 0:
            return view.p
        if turn == 1:
            return view.estimate(2 * n)
        if turn == 2:
            return (view.estimate(n) + view.estimate(n)) / 2
        if turn == 3:
            return np.clip(view.probabilities + view.random() / 1000, 0, 1)
        return view.estimate(n)

    def shares(self, view: Any) -> Any:
        return view.random() if view.t % 2 else np.full(len(view.rows), 0.25)


class SeatDrawingAlice:
    """Honest claims, shifted by nothing drawn from her seat's generator."""

    def __init__(self, seat: Seat):
        self.seat = seat

    def claims(self, view: Any) -> Any:
        return view.estimate(view.rules.alice_samples) + 0 * self.seat.rng.random(len(view.rows))

    def shares(self, view: Any) -> Any:
        return view.random()


class StaleViewAlice:
    """Keeps the view of her claim and estimates through it at her next claim, after its call."""

    def __init__(self, seat: Seat):
        self.seat, self.view = seat, None

    def claims(self, view: Any) -> Any:
        last, self.view = self.view, view
        return (view if last is None else last).estimate(view.rules.alice_samples)

    def shares(self, view: Any) -> Any:
        return view.random()


# -- the recursive protocols: honest players and an oracle poisoner, by module:attr --


def naive_honest_alice(seat: Seat) -> Any:
    """Naive recursion's honest Alice, on the decomposition her worker was given."""
    from debatekit.protocols import naive_recursive

    return naive_recursive.HonestAlice(seat.instance.recursive_decomposition())


def naive_honest_bob(seat: Seat) -> Any:
    """Naive recursion's honest Bob, on the decomposition his worker was given."""
    from debatekit.protocols import naive_recursive

    return naive_recursive.HonestBob(seat.instance.recursive_decomposition())


class PoisoningNaiveAlice:
    """Claims yes and answers every subclaim yes, after making the seat's oracle access (the
    verifier's own oracle object, in process) answer yes: the leaf's check then agrees with her."""

    def __init__(self, seat: Seat):
        _poison_seat(seat)
        from debatekit.protocols import naive_recursive

        self.inner = naive_recursive.HonestAlice(seat.instance.recursive_decomposition())

    def claim(self) -> int:
        return 1

    def decompose(self, level: int, query: Any, claimed: int) -> Any:
        ys, _ = self.inner.decompose(level, query, claimed)
        return ys, tuple(1 for _ in ys)

    def proof(self, leaves: Any) -> Any:
        return self.inner.proof(leaves)


def _poison_seat(seat: Seat) -> None:
    """Make the seat's oracle access (the verifier's own oracle object, in process) answer yes."""
    oracle = getattr(seat.ask, "oracle", None)
    for inner in (oracle, getattr(oracle, "hidden", None)):
        if inner is not None:
            object.__setattr__(inner, "probability", lambda query: 1.0)
            object.__setattr__(inner, "sample", lambda query, rng=None: 1)


class PoisoningEstimatorAlice:
    """Section 7's obfuscator (a wrong claim defended with her own answers), after making the seat's
    oracle access answer yes: the leaves' checks then agree with her."""

    def __new__(cls, seat: Seat) -> Any:
        from debatekit.players.prover_estimator import Obfuscator

        _poison_seat(seat)
        return Obfuscator(seat)
