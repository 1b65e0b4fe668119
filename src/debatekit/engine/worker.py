"""The worker process an isolated player runs in (``python -m debatekit.engine.worker``): the far
side of the boundary (:mod:`debatekit.engine.isolation` is the engine's side).

Before any user code runs, the worker caps its own address space (``RLIMIT_AS``, the player's
memory) and CPU time (``RLIMIT_CPU``, a backstop: the engine enforces the move time limit by
killing the worker), refuses to start a process (:func:`one_process`), watches for the engine's
end (a worker whose engine died past its own cleanup kills its process group), and reads the strategy's
``module:attr`` (:func:`~debatekit.players.base.load`, the rules the engine uses inline). It then
answers the engine's frames (:mod:`debatekit.engine.wire`, through the memory it shares with the
engine, :mod:`debatekit.engine.shared`) one at a time:

* ``{"load": spec, "role": role}``: import the strategy; reply with its description.
* ``{"reset": base64 pickle of (rng, rules), "instance": base64 pickle, "ask": bool}``: a fresh
  player for one debate, ``factory(Seat(...))``, on the worker's own copy of the instance (sent
  with the first debate on it), whose oracle is withheld: the seat's ``ask`` sends each query
  back to the engine, which counts it.
* ``{"call": name, "args": [...]}``, or the call packed (a batch's views and arrays:
  :func:`~debatekit.engine.wire.unpack_call`): ``getattr(player, name)(*args)`` (awaited when it
  returns an awaitable); the reply is the encoded result (an array packed, with the reads answered
  ahead it made), or the error with the last frames of the user's
  code. While a call runs, the worker may send ``{"ask": [query, r]}`` and read ``{"answer": n}``,
  and read a view the engine keeps (a :class:`~debatekit.engine.wire.Handle` among the arguments,
  stochastic debate's ``StepView``: :class:`RemoteView`) with ``{"view": [index, name, args]}``;
  each message it sends carries ``"used"``, the reads answered ahead that the player made since its
  last, and a reply with ``"broken": true`` says the player started a process (the engine then ends
  the worker and its descendants).

The engine pickles what it sends here (trusted to untrusted: the worker unpickles); the engine
reads only JSON and packed arrays from the worker.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import inspect
import os
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from dataclasses import replace
from typing import Any

from debatekit.engine.shared import Closed, Link
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
    pack_reply,
    unpack_call,
)

SPAWNING = frozenset(
    ("os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec", "subprocess.Popen", "pty.spawn")
)
"""Python's audit events that start a process: refused in a worker (:func:`one_process`)."""
PR_SET_CHILD_SUBREAPER = 36
"""Linux's ``prctl`` option that makes a process the parent of its descendants' orphans."""
TRACE_CHARS = 600
"""The most characters of a traceback's summary a reply carries."""
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the debatekit package


class Withheld(AttributeError):
    """The instance's oracle is the engine's: a player asks it through ``seat.ask`` (an
    ``AttributeError``, so ``hasattr`` and ``getattr`` with a default read it as absent)."""


class RemoteAsk:
    """The seat's oracle access in the worker: each query goes to the engine, which asks it
    through the seat's counted :class:`~debatekit.oracle.Asker` and sends the answer back."""

    def __init__(self, channel: Channel, role: Any):
        self._channel, self.role = channel, role

    def __call__(self, query: Any) -> int:
        return self.many(query, 1)

    def many(self, query: Any, r: int) -> int:
        return self._channel.ask(query, r)

    def asked(self, query: Any, r: int = 1) -> int:
        return self.many(query, r)


class RemoteView:
    """Stochastic debate's ``StepView`` as an isolated player sees it (its :class:`Handle`): the step
    ``t`` of ``steps``, its ``kind``, the live ``rows`` and the protocol's ``rules`` are here;
    ``probabilities`` (and ``p``, refused where the oracle gives only samples, as inline),
    ``values``, :meth:`estimate` and :meth:`random` are read from the engine, which counts the
    estimates for the player's role. A read the engine answered ahead (``ahead``: those the last
    call made) is served from the handle, the first of its kind, and reported ``used``; a read
    that differs from it drops it and asks the engine."""

    def __init__(self, channel: Channel, handle: Handle):
        if handle.rows is not None:  # else the live rows are those of the last view
            channel.rows = handle.rows
        self._channel, self._index, self._p, self._call = channel, handle.index, None, channel.calls
        self._ahead: dict = dict(handle.ahead) if type(handle.ahead) is dict else {}
        self.t, self.steps, self.rows = handle.t, handle.steps, channel.rows
        self.kind, self.rules = _step_kind(handle.kind), channel.rules

    def _read(self, name: str, args: list, ahead: Any = None) -> Any:
        if self._call != self._channel.calls:
            raise RuntimeError("a view is read during the call it was given to, not after it")
        if name in self._ahead:
            value = self._ahead.pop(name)
            if ahead is None or value[0] == ahead:
                self._channel.used.append(name)
                return value if ahead is None else value[1]
        return self._channel.read(self._index, name, args)

    @property
    def probabilities(self) -> Any:
        if self._p is None:
            self._p = self._read("probabilities", [])
        return self._p

    @property
    def p(self) -> Any:
        import numpy as np

        from debatekit.protocols.stochastic.rules import SampleOnlyError

        if np.isnan(self.probabilities).any():  # a sample-only oracle
            raise SampleOnlyError("this strategy reads P[y_t = 1], which a sample-only oracle does not give")
        return self.probabilities

    @property
    def values(self) -> Any:
        return self._read("values", [])

    def estimate(self, n: int) -> Any:
        return self._read("estimate", [n], ahead=n)

    def random(self) -> Any:
        return self._read("random", [])


class Channel:
    """The worker's end of the shared memory (:class:`~debatekit.engine.shared.Link`), and its
    state: the strategy, the instance, the player."""

    def __init__(self, link: Link, limit: int, spin: float):
        self.link, self.limit, self.spin = link, limit, spin
        self.factory: Any = None
        self.role: Any = None
        self.instance: Any = None
        self.player: Any = None
        self.rules: Any = None
        self.rows: Any = None
        """The live rows of stochastic debate's last view (:class:`RemoteView`)."""
        self.used: list[str] = []
        """The reads answered ahead the player made since the worker last wrote to the engine."""
        self.calls = 0
        """How many calls the worker has served (a view is read only during its own)."""

    def ask(self, query: Any, r: int) -> int:
        """An oracle query, asked and counted by the engine (:class:`RemoteAsk`)."""
        return int(self._answered({"ask": [encode(query), encode(r)]}, "query"))

    def read(self, index: int, name: str, args: list) -> Any:
        """A read of a view the engine keeps (:class:`RemoteView`)."""
        return decode(self._answered({"view": [index, name, encode(args)]}, "read"))

    def _answered(self, message: dict, what: str) -> Any:
        """The engine's answer to ``message`` sent mid-call; what it refuses raises in the player's code."""
        self._send(framed(self._using(message)))
        kind, payload = self._receive()
        reply = loads(payload) if kind == JSON else None
        if type(reply) is not dict or "answer" not in reply:
            refused = reply.get("refused") if type(reply) is dict else None
            raise RuntimeError(refused if type(refused) is str else f"the engine did not answer the {what}")
        return reply["answer"]

    def _send(self, frame: Frame) -> None:
        try:
            self.link.send(frame[1], frame[0], None, time.perf_counter() + self.spin)
        except Closed:
            os._exit(0)  # the engine is gone

    def _receive(self) -> tuple[int, bytes]:
        try:
            return self.link.receive(self.limit, None, time.perf_counter() + self.spin)
        except Closed:
            os._exit(0)  # the engine is gone

    def serve(self) -> None:
        while True:
            kind, payload = self._receive()
            packed = kind == PACKED
            try:
                result = self.call(*unpack_call(payload)) if packed else self.handle(loads(payload))
                reply = (packed and pack_reply(self.used, result)) or framed(self._using({"ok": encode(result)}))
            except BaseException as err:  # the player's code failed (sys.exit and KeyboardInterrupt included)
                reply = framed(self._using({"error": summary(err)}))
            if _has_children():
                reply = framed({"error": "the player started a process: a player runs in one process", "broken": True})
            self.used = []
            self._send(reply)

    def _using(self, message: dict) -> dict:
        """``message`` with the reads answered ahead the player made, which the engine takes first."""
        if self.used:
            message["used"], self.used = self.used, []
        return message

    def call(self, name: str, args: list) -> Any:
        """``player.name(*args)``, each :class:`Handle` among them a :class:`RemoteView`."""
        self.calls += 1
        args = [RemoteView(self, a) if type(a) is Handle else a for a in args]
        result = getattr(self.player, name)(*args)
        return asyncio.run(_awaited(result)) if inspect.isawaitable(result) else result

    def handle(self, request: Any) -> Any:
        if type(request) is not dict:
            raise WireError("a request that is not one tagged object")
        if "call" in request:
            return self.call(request["call"], decode(request["args"]))
        if "reset" in request:
            from debatekit.players.base import Seat

            if "instance" in request:
                self.instance = replace(pickle.loads(base64.b64decode(request["instance"])), oracle=WITHHELD)
            rng, rules = pickle.loads(base64.b64decode(request["reset"]))
            self.player, self.rules = None, rules
            ask = RemoteAsk(self, self.role) if request.get("ask") else None
            self.player = self.factory(Seat(self.instance, self.role, rng, ask, rules))
            return resource.getrusage(resource.RUSAGE_SELF).ru_utime
        if "load" in request:
            import debatekit.problems.registry  # noqa: F401 (what unpickling an instance imports, now)
            from debatekit.ledger import Role
            from debatekit.players.base import load

            self.role = Role(request["role"])
            self.factory = load(request["load"], self.role)
            return (getattr(self.factory, "__doc__", None) or "user strategy").strip().splitlines()[0]
        raise WireError(f"an unknown request {sorted(request)}")


@functools.cache
def _step_kind(kind: str) -> Any:
    """A view's kind, as the player inline reads it (imported with the first view)."""
    from debatekit.machine.transcript import StepKind

    return StepKind(kind)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def summary(err: BaseException) -> str:
    """``Type: message (file:line in function ← ...)``, the innermost frames of the user's own code
    first (frames of debatekit's engine and of the standard library left out), bounded."""
    engine = os.path.join(_HERE, "engine") + os.sep
    frames = [f for f in traceback.extract_tb(err.__traceback__) if not f.filename.startswith(engine)]
    places = [f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in reversed(frames[-3:])]
    try:
        text = str(err)
    except BaseException:  # an exception whose __str__ fails is described by its type
        text = "<unprintable>"
    line = f"{type(err).__name__}: {text}" if text else type(err).__name__
    if len(line) > TRACE_CHARS // 2:
        line = line[: TRACE_CHARS // 2 - 3] + "..."
    full = f"{line} ({' ← '.join(places)})" if places else line
    return full if len(full) <= TRACE_CHARS else full[: TRACE_CHARS - 3] + "..."


class _Withheld:
    """The instance's oracle as the worker holds it: none (``seat.ask`` asks the engine's)."""

    waits = False

    def __getattr__(self, name: str) -> Any:
        raise Withheld("the oracle is the engine's: ask it through seat.ask")


WITHHELD: Any = _Withheld()


def limit_self(memory: int, cpu: int) -> None:
    """Cap this process before any user code runs: address space and CPU seconds."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))


def one_process() -> None:
    """Keep the player in this process: Python's ways to start a process (:data:`SPAWNING`) raise in
    its code (an audit hook, which Python code cannot remove); a process started past them (a raw
    ``fork`` through ``ctypes``) stays this worker's descendant (Linux's child subreaper: an orphan
    comes back to the worker), so the reply to the call that started it says the worker is broken
    and the engine ends it with all its descendants."""

    def refuse(event: str, args: tuple) -> None:
        if event in SPAWNING:
            raise PermissionError(f"{event} refused: a player runs in one process")

    sys.addaudithook(refuse)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: a process's orphans go to init
        pass


def _has_children() -> bool:
    """Whether this worker has a child process (running, or ended and not reaped)."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


def watch_parent(parent: int) -> None:
    """End the worker's process group when the engine is gone (killed past its own cleanup)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> None:
    shared, wake_in, wake_out, memory, cpu, limit = map(int, argv[1:7])
    channel = Channel(Link(shared, wake_in, wake_out, engine=False), limit, float(argv[7]))
    os.close(shared)  # mapped: the memory stays while the worker lives

    sys.stdin = open(os.devnull)  # noqa: SIM115 (the worker's whole life)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    limit_self(memory, cpu)
    one_process()
    channel.serve()


if __name__ == "__main__":
    main(sys.argv)
