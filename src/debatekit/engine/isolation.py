"""Untrusted players out of process: the engine's side of the boundary (the worker's side is
:mod:`debatekit.engine.worker`, the format :mod:`debatekit.engine.wire`).

A user's strategy ``module:attr`` is loaded and played in a worker process of its own, started in
a session of its own (``python -m debatekit.engine.worker``, so killing its process group kills
whatever it started). A subprocess rather than ``multiprocessing``: frames cross through a memory
the two share, with a pipe each way to wake a side that sleeps (:mod:`debatekit.engine.shared`),
the engine never unpickles what a worker sends (a ``multiprocessing`` connection would), the user's
``print`` goes to a third pipe drained into a bounded tail, and a fresh interpreter imports none of
the engine's ``__main__``.

:class:`Pool` is one strategy at one seat for one run: a worker per debate in flight, reused
across debates with a fresh player object per debate (``reset``), replaced when it died or was
killed; closed by its context manager and, for any left open, at exit. Its :attr:`Pool.strategy`
is a :class:`~debatekit.players.base.Strategy` whose player is a :class:`Remote`: each method the
protocol calls (``Move.ask``) becomes a frame carrying its arguments as plain data, and the reply
is plain data, which the protocol's commit (:mod:`debatekit.engine.boundary`) reads as it reads an
inline player's message. The worker's oracle access is a proxy: each query comes back as a
frame and is asked through the seat's counted :class:`~debatekit.oracle.Asker`; the worker never
holds the verifier's oracle, ledger or instance (it gets a pickled copy of the seat's instance
without its oracle; the engine reads only JSON and the packed form of arrays from it). A batch's
call whose arguments are views and arrays, and a reply that is an array, cross in the packed form
(:func:`~debatekit.engine.wire.pack_call`), the rest as JSON.

Limits (:class:`Limits`) are the operating system's: a call still running at the move time limit
is ended by SIGKILL to the worker's process group (the move forfeits, naming the limit; the next
debate gets a fresh worker), memory by ``RLIMIT_AS`` and CPU time by ``RLIMIT_CPU`` set in the
worker before user code loads, a frame past :attr:`Limits.frame` bytes or one that breaks the
format is its sender's forfeit, and a worker that exits, is killed by a signal or forks loses the
debate with the reason, its output's tail and its traceback's last frames of the user's code
(:func:`~debatekit.engine.worker.summary`).

:class:`Seating` says where each seat's player runs; :mod:`debatekit.runs.prepare` chooses it
for a run: a built-in inline, a user's ``module:attr`` (or an object the API is given, by the name
:func:`spec_of` finds) in its pool, or, on the user's word (``--trust-players``; ``trust=True``
in the API), inline, for debugging a strategy with a debugger; the run's record header and result
then say the boundary was off (``boundary``).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import dataclasses
import functools
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.engine.play import Described
from debatekit.engine.shared import Closed, Link, TimedOut, memory
from debatekit.engine.trust import InternalError
from debatekit.engine.wire import (
    JSON,
    PACKED,
    Frame,
    Handle,
    WireError,
    decode,
    encode,
    framed,
    loads,
    pack_call,
    unpack_reply,
)
from debatekit.ledger import Role
from debatekit.oracle import Unanswered
from debatekit.players.base import Seat, Strategy, StrategyError

GIB = 1 << 30
SPIN = 0.001
"""Seconds each side polls the shared memory for the other's frame before it sleeps on its pipe
(:mod:`debatekit.engine.shared`): on the engine's side, one thread at a time (:data:`_POLLING`)."""
EXIT_GRACE = 0.5
"""Seconds a worker whose pipe to the engine ended has to be gone before it is killed as a breach."""
RETIRED, ENDED = "retired", "the run ended"
"""Why a pool ends a worker that did nothing wrong."""


@dataclass(frozen=True)
class Limits:
    """What one isolated player may use: seconds per move (and for sitting down), bytes of address
    space, CPU seconds per worker, the largest frame it may send, and the tail of its output kept."""

    timeout: float | None = DEFAULT_MOVE_TIMEOUT
    memory: int = 4 * GIB
    cpu: int = 3600
    """A worker past half of it is retired between debates; past all of it, the OS ends it."""
    frame: int = 16 << 20
    output: int = 2048
    start: float = 60
    """Seconds for a worker to start and import the strategy (an interpreter's start is no move)."""


class PlayerFailed(Described):
    """An isolated player's failure as the worker or the engine described it: its sender's forfeit."""


class Tail:
    """The last ``size`` bytes of a worker's stdout and stderr, drained on a thread of its own, so
    a worker printing megabytes never waits on the engine."""

    def __init__(self, size: int):
        self.size, self.data = size, bytearray()

    def drain(self, stream: Any) -> None:
        """Read ``stream`` to its end (the worker's, and its children's, when they are killed)."""
        with contextlib.suppress(OSError, ValueError), stream:
            while chunk := stream.read1(1 << 16):
                self.data += chunk
                del self.data[: -self.size]

    def text(self) -> str:
        text = bytes(self.data).decode(errors="replace").strip()
        return f"; its output ended: {text[-300:]!r}" if text else ""


class Worker:
    """One worker process, the memory it shares with the engine and its wake pipes, spoken to by
    one debate at a time."""

    def __init__(self, limits: Limits, lost: Callable[[], None] | None = None):
        self.limits, self._lost = limits, lost
        into_r, self._into = os.pipe()  # the wake pipes: the worker sleeps on one, the engine on the other
        self._from, from_w = os.pipe()
        shared = memory()
        # The engine's pipe ends close when the last thread holding this worker lets it go, never
        # in kill(): a thread still waiting must not find the number reused by another pipe.
        weakref.finalize(self, _close, self._into, self._from)
        path = os.pathsep.join(p for p in sys.path if p)
        threads = {
            key: "1" for key in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONUNBUFFERED")
        }
        command = [sys.executable, "-m", "debatekit.engine.worker"]
        numbers = (shared, into_r, from_w, limits.memory, limits.cpu, limits.frame, SPIN)
        try:
            self.link = Link(shared, self._from, self._into, engine=True)
            self.process = subprocess.Popen(
                [*command, *map(str, numbers)],
                pass_fds=(shared, into_r, from_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=os.environ | threads | {"PYTHONPATH": path},
            )
        finally:
            _close(shared, into_r, from_w)
        self.output = Tail(limits.output)
        threading.Thread(target=self.output.drain, args=(self.process.stdout,), daemon=True).start()
        self.instance: Any = None
        """The instance object the worker holds a copy of (None before the first debate)."""
        self.cpu = 0.0
        self.rows: tuple | None = None
        """The dtype, shape and bytes of stochastic debate's live rows the worker was sent last
        (:meth:`Call.handle`)."""
        self.description: Any = None
        self.gone: str | None = None
        """Why the worker is no more, once it is not."""
        self._ending = threading.Lock()
        """Held while the worker is signalled or reaped (:meth:`kill`, :meth:`_died`)."""

    def request(
        self,
        frame: Frame,
        timeout: float | None,
        ask: Any = None,
        call: Call | None = None,
        meanwhile: Callable[[], None] | None = None,
    ) -> Any:
        """Send ``frame`` and return the decoded ``ok`` of the reply, answering the worker's oracle
        queries through ``ask`` and its reads of the ``call``'s views meanwhile; :class:`PlayerFailed`
        when the player's code failed, and (the worker then killed) when it ran past ``timeout``,
        died, or broke the format. ``meanwhile`` (the engine's own work, which needs nothing of the
        reply) runs once the frame is sent, while the worker thinks; its time counts towards the
        move's limit, and its failure is the engine's (the worker, its reply unread, ends)."""
        if self.gone is not None:
            raise PlayerFailed(f"the player's worker is gone ({self.gone})")
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._send(frame, deadline)
            if meanwhile is not None:
                self._meanwhile(meanwhile)
            while True:
                kind, payload = self._receive(deadline)
                if kind == PACKED:
                    if call is None:
                        raise WireError("a packed reply, where no call was made")
                    used, value = unpack_reply(payload)
                    call.took(used)
                    return value
                if kind != JSON:
                    raise WireError(f"a frame of kind {kind}")
                reply = loads(payload)
                if type(reply) is not dict:
                    raise WireError("a reply that is not one tagged object")
                if "used" in reply:
                    if call is None:
                        raise WireError("reads answered ahead, where none were sent")
                    call.took(reply.pop("used"))
                if len(reply) != 1 and not (len(reply) == 2 and "error" in reply and "broken" in reply):
                    raise WireError("a reply that is not one tagged object")
                if "ok" in reply:
                    return decode(reply["ok"])
                if "error" in reply:
                    error = reply["error"]
                    if reply.get("broken") is True:  # it started a process: it and its descendants end
                        self.kill("it started a process")
                    raise PlayerFailed(error[:1000] if type(error) is str else "an error that is not text")
                if "view" in reply:
                    if call is None:
                        raise WireError("a read of a view, where none was sent")
                    self._send(framed(call.read(reply["view"], self)), deadline)
                    continue
                if "ask" not in reply:
                    raise WireError(f"an unknown reply {sorted(reply)}")
                self._send(framed(self._answer(reply["ask"], ask)), deadline)
        except WireError as err:
            self.kill(f"it sent a malformed frame: {err}")
            raise PlayerFailed(f"the player's worker broke the format: {err}") from None
        except TimedOut:
            self.kill("it ran past the move time limit")
            raise PlayerFailed(f"no move within {timeout:g} s: the player's worker was killed (SIGKILL)") from None
        except Closed:
            raise PlayerFailed(self._died()) from None
        except Unanswered:  # the seat's oracle could not be consulted: the debate is undecided
            self.kill("its oracle query was left unanswered")
            raise

    def _meanwhile(self, work: Callable[[], None]) -> None:
        """The engine's ``work`` while the worker thinks; the worker, its reply left unread, ends
        when the work fails (the engine's bug, never the player's forfeit)."""
        try:
            work()
        except BaseException as err:
            self.kill("the engine failed while it thought")
            if isinstance(err, Exception):
                raise InternalError.of(err) from err
            raise

    def _answer(self, asked: Any, ask: Any) -> dict:
        if ask is None:
            return {"refused": "this seat has no oracle access"}
        if type(asked) is not list or len(asked) != 2:
            raise WireError("an oracle query that is not [query, r]")
        query, r = decode(asked[0]), decode(asked[1])
        if type(r) is not int or not 1 <= r <= 1 << 31:
            return {"refused": f"r = {r!r} is not a count of queries"}
        try:
            return {"answer": int(ask.many(query, r))}
        except Exception as err:  # the provers' oracle refused the player's question, as inline
            return {"refused": f"{type(err).__name__}: {err}"[:500]}

    def _send(self, frame: Frame, deadline: float | None) -> None:
        """Write ``frame`` to the worker; a frame longer than a box (an instance's copy) waits asleep
        for each chunk's acknowledgement, never polling."""
        self.link.send(frame[1], frame[0], deadline, 0.0)

    def _receive(self, deadline: float | None) -> tuple[int, bytes]:
        """The next frame from the worker: for :data:`SPIN` seconds the engine polls for it, giving
        its CPU away between polls (a worker woken on the engine's core runs at once, where one
        waiting for a core takes a scheduler's tick), then sleeps on its pipe; one thread polls at
        a time (:data:`_POLLING`), the others of a run with debates in flight sleep at once. A
        worker never silent still has its limit: the deadline is checked while polling."""
        if deadline is not None and time.monotonic() > deadline:  # frame after frame, and past the limit
            raise TimedOut
        polling = _POLLING.acquire(blocking=False)
        try:
            return self.link.receive(self.limits.frame, deadline, time.perf_counter() + SPIN if polling else 0.0)
        finally:
            if polling:
                _POLLING.release()

    def _died(self) -> str:
        """Why the worker's pipe to the engine ended: its exit, or (a worker that closed it and went
        on, still there after :data:`EXIT_GRACE` seconds) its breach of the format, and it is killed."""
        with self._ending:  # reaped here or in kill(), never in between
            try:
                code = self.process.wait(EXIT_GRACE)
            except subprocess.TimeoutExpired:
                code = None
        if code is None:
            how = "closed its pipe to the engine and went on: killed (SIGKILL)"
        else:
            how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
        self.kill(how)
        return f"the player's worker {how}{self.output.text()}"

    def kill(self, why: str) -> None:
        """End the worker and everything it started (its process group, and its descendants in
        other sessions: the worker is their subreaper), and reap it. Once it is reaped nothing is
        signalled: its pid, and its group's, may be another process's by then."""
        if self.gone is None:
            self.gone = why
            if self._lost is not None and why not in (RETIRED, ENDED):
                threading.Thread(target=self._lost, daemon=True).start()  # its replacement starts now
        with self._ending:
            if self.process.returncode is not None:
                return
            pid = self.process.pid  # not reaped: its pid is still its own, and so are its children
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGSTOP)  # frozen, it starts nothing while its descendants are found
            for descendant in descendants(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(descendant, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            self.process.wait()


class Remote:
    """An isolated player for one debate, as the protocol sees it: each method call is a call in
    the worker, its arguments and its result plain data. An interpreter may pass ``meanwhile=``
    to a call: its own work, done while the worker thinks (:meth:`Worker.request`)."""

    def __init__(self, worker: Worker, seat: Seat, release: Callable[[Worker], None]):
        self._worker, self._ask = worker, seat.ask
        self._made: dict[str, dict[str, Any]] = {}
        """The reads each method's last call made (:class:`Call`)."""
        weakref.finalize(self, release, worker)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):  # Python's own protocols (copy, pickle) are not moves
            raise AttributeError(name)

        worker, ask, made = self._worker, self._ask, self._made  # not self: the method it keeps must not hold it

        def method(*args: Any, meanwhile: Callable[[], None] | None = None) -> Any:
            call = Call(worker, made.get(name, {}))
            try:
                handled = [call.handle(a) for a in args]
                frame = pack_call(name, handled) or framed({"call": name, "args": encode(handled)})
            except BaseException as err:
                worker.rows = None  # the rows were not sent after all
                if isinstance(err, WireError):  # the rules' own arguments: never the player's forfeit
                    raise InternalError.of(err) from err
                raise
            try:
                return worker.request(frame, worker.limits.timeout, ask, call, meanwhile)
            finally:
                made[name] = call.made

        self.__dict__[name] = method  # found at once from the next call on
        return method


class Call:
    """One call of an isolated player's method and the views among its arguments (stochastic
    debate's ``StepView``, or a debate played alone's ``SoloView``, each sent as a :class:`Handle`):
    the worker's reads of them (``[index, "values" | "probabilities" | "estimate" | "random",
    args]``) are answered here as the view answers a player inline, its estimates counted for the
    player's role. The reads the method's last call made are answered ahead and sent with the
    call (a batch view's :class:`~debatekit.protocols.stochastic.rules.Advance`); one is taken when
    the worker says it made it (``used``, before its next message), and dropped when the worker
    reads that kind anew, so a player that reads the same each step saves a round trip per read
    and what it reads and what is counted are as inline."""

    def __init__(self, worker: Worker, last: dict[str, Any]):
        self.worker, self.last = worker, last
        self.views: list[Any] = []
        self.made: dict[str, Any] = {}
        """The reads this call made, the first of each kind, with its arguments."""
        self.pending: dict[str, Any] = {}
        """The reads answered ahead and not yet taken or dropped."""

    def handle(self, arg: Any) -> Any:
        """An argument as it crosses: a view as a :class:`Handle` (its step, kind and live rows sent
        at once, the rows only when they are not those the worker was sent last; the reads answered
        ahead; the rest read through the handle, so the worker never holds the engine's table or
        sampler); anything else as it is."""
        if type(arg) not in _view_types():
            return arg
        worker = self.worker
        self.views.append(arg)
        rows = arg.rows
        sent = (rows.dtype, rows.shape, rows.tobytes())  # bytes compared: a third of an elementwise test's time
        same = sent == worker.rows
        if not same:
            worker.rows = sent
        ahead = self._ahead(arg) if len(self.views) == 1 and getattr(arg, "ahead", None) is not None else {}
        return Handle(len(self.views) - 1, arg.t, arg.steps, arg.kind.value, None if same else rows, ahead)

    def _ahead(self, view: Any) -> dict:
        last, sent = self.last, {}
        if "estimate" in last:
            estimate = view.ahead.estimate(view, last["estimate"])
            if estimate is not None:
                self.pending["estimate"] = estimate
                sent["estimate"] = [last["estimate"], estimate.value]
        if "random" in last and view.draw is not None:
            self.pending["random"] = coins = view.ahead.random(view)
            sent["random"] = coins.value
        if "probabilities" in last:
            from debatekit.protocols.stochastic.rules import Advance, no_take

            self.pending["probabilities"] = Advance(view.probabilities, no_take)
            sent["probabilities"] = view.probabilities
        return sent

    def took(self, used: Any) -> None:
        """Take the reads the worker made of those answered ahead, in order."""
        if type(used) is not list or not all(type(name) is str for name in used):
            raise WireError("reads answered ahead that are not a list of names")
        for name in used:
            advance = self.pending.pop(name, None)
            if advance is None:
                raise WireError(f"a read {name!r} taken that was not answered ahead")
            advance.take()
            self.made.setdefault(name, self.last.get(name))

    def read(self, asked: Any, worker: Worker) -> dict:
        """The worker's read of a view it holds a handle to, answered as the view answers the player
        inline (a read the view refuses, a draw where none may be made, refused); the view's own
        failure is the engine's."""
        from debatekit.protocols.stochastic.rules import SampleOnlyError

        views = self.views
        if type(asked) is not list or len(asked) != 3 or type(asked[0]) is not int or not 0 <= asked[0] < len(views):
            raise WireError("a view's read that is not [index, name, args]")
        view, name, args = views[asked[0]], asked[1], decode(asked[2])
        if name == "estimate":
            if type(args) is not list or len(args) != 1 or type(args[0]) is not int or not 0 <= args[0] < 1 << 62:
                return {"refused": f"estimate takes a count of samples, not {args!r}"[:500]}
            call = lambda: view.estimate(args[0])  # noqa: E731
        elif name in ("values", "probabilities", "random") and args == []:
            call = view.random if name == "random" else lambda: getattr(view, name)
        else:
            raise WireError(f"a view has no read {name!r}")
        self.pending.pop(name, None)  # read anew: what was answered ahead is dropped
        self.made.setdefault(name, args[0] if name == "estimate" else None)
        try:
            return {"answer": encode(call())}
        except SampleOnlyError as err:
            return {"refused": str(err)}
        except Exception as err:  # the engine's own view failed: a bug, never the player's forfeit
            worker.kill("the engine failed answering it")
            raise InternalError.of(err) from err


class Pool:
    """The workers of one strategy at one seat for one run (:class:`Remote` players for its
    debates); a context manager that ends them all."""

    def __init__(self, spec: str, role: Role, limits: Limits = Limits()):
        self.spec, self.role, self.limits = spec, role, limits
        self._lock = threading.Condition()
        self._starting = 0
        """Replacements of lost workers under way."""
        self._idle: list[Worker] = []
        self._workers: set[Worker] = set()
        self._views: dict[int, tuple[Any, str]] = {}
        self.closed = False
        _POOLS.add(self)
        try:
            worker = self._start()
        except PlayerFailed as err:
            self.close()
            raise StrategyError(f"cannot load {role.value} strategy {spec!r} in its worker: {err}") from None
        self.description = worker.description
        self._idle.append(worker)

    @property
    def strategy(self) -> Strategy:
        """The strategy whose players are this pool's."""
        return Strategy(self.spec, self.role, str(self.description), self.seat, isolated=True)

    def _start(self) -> Worker:
        """A new worker with the strategy loaded (its description returned by the load)."""
        worker = Worker(self.limits, self._replace)
        with self._lock:
            self._workers = {w for w in self._workers if w.gone is None} | {worker}
            closed = self.closed
        if closed:  # a replacement that finished starting after the pool closed
            worker.kill(ENDED)
            raise PlayerFailed("the run's players are closed")
        try:
            load = framed({"load": self.spec, "role": self.role.value})
            worker.description = worker.request(load, self.limits.start)
        except BaseException:
            worker.kill("its strategy did not load")
            raise
        return worker

    def _checkout(self) -> Worker:
        with self._lock:
            if self.closed:
                raise PlayerFailed("the run's players are closed")
            while self._idle or self._starting:
                if not self._idle:  # a lost worker's replacement is starting: wait for it
                    self._lock.wait()
                    continue
                worker = self._idle.pop()
                if worker.gone is None:
                    return worker
        return self._start()

    def _replace(self) -> None:
        """Start a worker in place of a lost one, so that the next debate need not wait for it."""
        with self._lock:
            if self.closed:
                return
            self._starting += 1
        try:
            worker = self._start()
        except BaseException:
            worker = None
        with self._lock:
            self._starting -= 1
            if worker is not None:
                self._idle.append(worker)
            self._lock.notify_all()

    def _release(self, worker: Worker) -> None:
        with self._lock:
            if worker.gone is None and not self.closed and worker.cpu < self.limits.cpu / 2:
                self._idle.append(worker)
                return
        worker.kill(RETIRED)

    def seat(self, seat: Seat) -> Remote:
        """A fresh player for one debate (the strategy's factory): a worker, reset with the seat."""
        worker = self._checkout()
        message: dict[str, Any] = {"reset": _pickled((seat.rng, seat.rules)), "ask": seat.ask is not None}
        if worker.instance is not seat.instance:
            message["instance"] = self._view(seat.instance)
        try:
            worker.cpu = float(worker.request(framed(message), self.limits.timeout, seat.ask))
        except BaseException:
            self._release(worker)
            raise
        worker.instance = seat.instance
        return Remote(worker, seat, self._release)

    def _view(self, instance: Any) -> str:
        """The instance as the worker gets it, pickled once per instance: its forms (the recursive
        protocols' decomposition D, which the provers know, included), not its oracle or memo; a
        form that cannot be pickled (made of local functions) is left out."""
        kept = self._views.get(id(instance))
        if kept is not None and kept[0] is instance:
            return kept[1]
        levelled = instance.levelled_circuit() if instance.levelled is not None else None
        decomposition = instance.recursive_decomposition() if instance.decomposition is not None else None
        view = dataclasses.replace(instance, oracle=None, levelled=levelled, decomposition=decomposition)
        for form in ("machine", "turing", "levelled", "decomposition"):
            try:
                pickle.dumps(getattr(view, form))
            except Exception:
                view = dataclasses.replace(view, **{form: None})
        self._views[id(instance)] = (instance, data := _pickled(view))
        return data

    def close(self) -> None:
        """End every worker of the pool (idempotent)."""
        with self._lock:
            self.closed = True
            workers, self._idle = list(self._workers), []
        for worker in workers:
            worker.kill(ENDED)
        with self._lock:  # replacements under way see the pool closed and end their workers
            while self._starting:
                self._lock.wait()
            self._workers = set()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Seating(StrEnum):
    """Where a seat's player runs, as a run's record header and result say it (``boundary``)."""

    BUILT_IN = "built-in"
    """The protocol's own strategy: trusted reference code, inline."""
    WORKER = "worker"
    """A user's strategy, out of process (:class:`Pool`): the boundary holds."""
    CLIENT = "client"
    """A model's client, in process: it sends text, parsed to plain data at commit, and holds
    nothing of the verifier's."""
    TRUSTED = "inline: --trust-players, boundary off"
    """A user's strategy inline on the user's word (``--trust-players``, ``trust=True``), to debug it."""
    NOT_YET = "inline: this protocol's players are not isolated yet, boundary off"
    """A user's strategy inline because its protocol's players are not yet played through a worker
    (it does not declare ``ProtocolSpec.isolated``: a protocol of the user's own, registered)."""

    @property
    def off(self) -> bool:
        """Whether a user's code runs in the engine's process."""
        return self in (Seating.TRUSTED, Seating.NOT_YET)


@functools.cache
def _view_types() -> tuple[type, ...]:
    """Stochastic debate's view types, imported once, when a player is first called."""
    from debatekit.protocols.stochastic.rules import StepView
    from debatekit.protocols.stochastic.solo import SoloView

    return StepView, SoloView


def spec_of(factory: Any) -> str:
    """``module:attr`` for a strategy object passed through the API, which a worker imports by that
    name; :class:`~debatekit.players.base.StrategyError` when it cannot (a lambda, a local function,
    a class defined in ``__main__``): pass ``trust=True`` to play it inline."""
    module, name = getattr(factory, "__module__", None), getattr(factory, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or module == "__main__" or "." in name:
        raise StrategyError(f"{factory!r} cannot be imported by name in a worker; define it in a module, or trust it")
    return f"{module}:{name}"


def descendants(pid: int) -> list[int]:
    """The processes descended from ``pid``, read from Linux's ``/proc`` (none elsewhere; every
    process's parent is read only when ``pid`` has a child)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        if not any(Path(f"/proc/{pid}/task/{task}/children").read_bytes().strip() for task in tasks):
            return []
    except OSError:  # gone, or a kernel without the children lists: look at every process
        pass
    parents: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat", "rb") as stat:
                        parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                parents.setdefault(parent, []).append(int(entry.name))
    found, frontier = [], [pid]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found += children
        frontier += children
    return found


def _close(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _pickled(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value)).decode()


_POOLS: weakref.WeakSet[Pool] = weakref.WeakSet()
_POLLING = threading.Lock()
"""Held by the one thread polling a worker's memory (:meth:`Worker._receive`)."""


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS):
        pool.close()
