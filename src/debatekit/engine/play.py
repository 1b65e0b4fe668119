"""Play one debate: the async interpreter over a protocol's nodes.

A built-in programmed strategy (``Strategy.trusted``) is called inline, and what it raises is an
:class:`~debatekit.engine.trust.InternalError`, as is what the rules and the verifier raise: trusted
code that fails ends the run, never counted as a forfeit. Any other player (a user's
``module:attr``, an LLM, a person) is called in a worker thread, or awaited when its method is a
coroutine, under the move's time limit, and its message is committed
(:mod:`debatekit.engine.boundary`) under the same limit. Whatever goes wrong on a player's side
(it raises, it sends what does not commit, it is still thinking when time is up) is that
player's forfeit; the verifier never waits past the limit and never sees anything but committed
data.

A mixed move (a :class:`~debatekit.prob.Dist`) is drawn with the mover's generator. A move named
by ``Move.what`` (the recursive protocols') is recorded under its name, each mixed draw noted
(a :class:`~debatekit.engine.events.Drawn` by the mover, its outcome the index drawn) and a forfeit
of a message that came and did not commit marked ``refused``; ``Move.bits`` are counted as read
whenever a message came.

Every oracle query goes through a counted :class:`~debatekit.oracle.Asker` tagged with its role:
the provers' through their seats, the verifier's through the answer function of the debate.

A player's code that raises ``SystemExit``, ``KeyboardInterrupt`` or any other exception that is
not an ``Exception`` is charged the same way (:class:`Exited`), except while sitting down, where
it is the user's mistake (:class:`SeatingExit`). With :func:`debug_players` on (``--debug``), an
error raised by a player's own code is let through (:class:`LetThrough`) to the command line,
which prints its traceback, instead of becoming a forfeit.

A player's move that meets :class:`~debatekit.oracle.Unanswered` (its model, or its oracle, could
not be consulted) is no move and no forfeit: the debate ends undecided (``End.verdict`` None).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import functools
import inspect
import os
import sysconfig
import threading
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from debatekit.engine import DEFAULT_MOVE_TIMEOUT
from debatekit.engine.boundary import mixed_branches, safe_repr, safe_str, to_json, type_name
from debatekit.engine.events import Drawn, Event
from debatekit.engine.interrupts import stop_if_asked
from debatekit.engine.nodes import (
    NOTHING,
    REFUSED,
    Chance,
    End,
    Judge,
    Move,
    Node,
    Paid,
    Payoff,
    added,
    advance,
    checking,
    drawn,
    drawn_from,
    ended,
    lost,
    moved,
    settled,
)
from debatekit.engine.record import Given, resuming
from debatekit.engine.trust import InternalError, charge
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.oracle import Asker, Oracle, Unanswered
from debatekit.players.base import Strategy
from debatekit.prob import Dist

Answer = Callable[[Hashable], int | Awaitable[int]]
_PLAIN = frozenset({int, float, bool, str, tuple, list, np.ndarray, Dist})
"""Types of message that are never awaitable (what most moves are: no ``isawaitable`` check)."""
_POLL = 0.1
"""Seconds between a waiting thread's looks at the stop flag."""


@dataclass(frozen=True)
class Seated:
    """A player at one debate: the object whose methods the protocol calls, its generator (for
    mixed moves), and whether it is a trusted built-in that runs inline."""

    player: Any
    rng: np.random.Generator
    trusted: bool = False


class Exited(Exception):
    """A player's code raised what is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``):
    charged to its sender like any failure; it never ends the run."""


class Described(Exception):
    """A player's failure already described where it happened (an isolated player's worker:
    :mod:`debatekit.engine.isolation`, its traceback's summary bounded there): kept as it is."""


class SeatingExit(BaseException):
    """A user's strategy tried to end the process while sitting down: a usage mistake that ends
    the run (no forfeit handler catches it), one line at the command line."""


class LetThrough(BaseException):
    """``--debug``: a player's own error, carried past every forfeit handler (none catches a
    ``BaseException``) to the command line, which prints the traceback of its ``__cause__``."""


_debugging = False


def debug_players(on: bool) -> None:
    """Let errors raised by players' own code through (``--debug``) instead of forfeiting."""
    global _debugging
    _debugging = on


def played(function: Callable[[], Any]) -> Callable[[], Any]:
    """``function`` (a player's own code) with its failures made chargeable: anything not an
    ``Exception`` becomes :class:`Exited`, and with :func:`debug_players` on, any error becomes
    :class:`LetThrough`."""

    def call() -> Any:
        try:
            return function()
        except Exception as err:
            if _debugging:
                raise LetThrough(describe(err)) from err
            raise
        except Unanswered:  # a model that could not be consulted: no move of the player's
            raise
        except BaseException as err:
            raise Exited(describe(err)) from err

    return call


_STDLIB = sysconfig.get_paths()["stdlib"]
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the debatekit package


def describe(err: BaseException) -> str:
    """``Type: message (file:line)`` for an exception a player raised, without trusting its
    ``__str__``; the place is the innermost frame of the player's own code, when there is one."""
    if issubclass(type(err), Exited | Described) and err.args:  # type(): isinstance reads a hostile __class__
        return str(err.args[0])
    text = safe_str(err)
    return f"{type_name(err)}: {safe_repr(text) if len(text) > 200 else text}{_place(err)}"


def _place(err: BaseException) -> str:
    """`` (file.py:LINE)`` of the innermost frame outside debatekit and the standard library."""
    place = ""
    tb = err.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith((_HERE + os.sep, _STDLIB + os.sep, "<")):
            place = f" ({os.path.basename(name)}:{tb.tb_lineno})"
        tb = tb.tb_next
    return place


def raised(what: str, err: BaseException) -> str:
    """A forfeit's reason for an exception a player's code raised in its move ``what``, whatever
    the exception's ``__str__`` does."""
    try:
        return f"{what} raised {describe(err)}"
    except Exception:  # even its type's name is hostile
        return f"{what} raised an exception"


def conceded(value: Any, role: Role) -> Malformed | None:
    """A fresh copy of ``value`` when it is ``role``'s own forfeit with a plain reason (a player may
    concede, sending or raising it), else None. Only its exact type and plain attributes are read."""
    try:
        if type(value) is Malformed and value.sender is role and type(value.reason) is str:
            return Malformed(role, value.reason)
    except Exception:  # its attributes were taken away
        pass
    return None


def failure(node: Move, err: BaseException) -> str:
    """Why ``node``'s sender forfeits for ``err``, raised by its side: for a named move
    (``Move.what``) its own concession's reason or ``what raised ...``, else :func:`describe`."""
    if not node.what:
        return describe(err)
    conceding = conceded(err, node.role)
    return conceding.reason if conceding is not None else raised(node.what, err)


def mixed(node: Move, message: Any, rng: np.random.Generator) -> tuple[Any, int | None]:
    """A mixed move's outcome drawn with the mover's generator (draw for draw as
    :meth:`~debatekit.prob.Dist.sample`, without calling the Dist's methods) and its position among
    the outcomes (None: a plain message, or a Dist of one outcome); a Dist whose weights are no
    distribution is its sender's forfeit."""
    if type(message) is not Dist:  # a plain message: nothing to draw
        return message, None
    try:
        pairs = mixed_branches(message)
    except Exception as err:
        what = node.what or "the move"
        raise Malformed(node.role, f"{what} sent {safe_repr(message)}: {raised('its weights', err)}") from None
    if len(pairs) == 1:
        return pairs[0][1], None
    cumulative = np.cumsum([w for w, _ in pairs])
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    index = min(index, len(pairs) - 1)
    return pairs[index][1], index


Moved = tuple[Any, Node, int | None]
"""A move's committed message (:data:`NOTHING`: none came; :data:`REFUSED`: it did not commit),
the node after it, and the position drawn when the message was mixed."""


async def _move(node: Move, seat: Seated, timeout: float | None, alice_argues: int) -> Moved:
    """One committed move, or the mover's forfeit: inline for a trusted built-in (no time limit),
    otherwise in a worker thread or as an awaited coroutine within ``timeout`` seconds."""

    def committed(message: Any) -> Moved:
        message, index = mixed(node, message, seat.rng)
        return (*advance(node, message, alice_argues), index)

    async def attempt() -> Moved:
        message = await off_loop(played(lambda: node.ask(seat.player)))
        if inspect.isawaitable(message):
            message = await awaited_move(message)
        return await off_loop(contained(lambda: committed(message)))

    if seat.trusted:  # a built-in: its failure is a bug, never its forfeit (unless it concedes)
        try:
            message = node.ask(seat.player)
            if type(message) not in _PLAIN and inspect.isawaitable(message):
                message = await message
            message, index = mixed(node, message, seat.rng)
        except Unanswered as err:  # its model oracle (--prover-oracle llm:...) could not be consulted
            return NOTHING, undecided(node, err), None
        except Exception as err:
            charge(node.role, err, True)  # a concession (Malformed, Concession) is its forfeit; else a bug
            return NOTHING, lost(node, node.role, failure(node, err), alice_argues), None
        return (*advance(node, message, alice_argues), index)
    try:
        return await asyncio.wait_for(attempt(), timeout)
    except TimeoutError as err:
        # no limit here: the player's own (a batch engine's Limited player) ran out
        reason = failure(node, err) if timeout is None else f"no move within {timeout:g} s"
        return NOTHING, lost(node, node.role, reason, alice_argues), None
    except Exception as err:  # untrusted code failed to answer
        return NOTHING, lost(node, node.role, failure(node, err), alice_argues), None
    except Unanswered as err:  # the player's model or oracle could not be consulted: undecided
        return NOTHING, undecided(node, err), None


def undecided(node: Move, err: Unanswered) -> End:
    """The debate's end when the mover's model could not be consulted: no verdict, no forfeit."""
    return End(None, None, f"{node.role.value}: {err}")


async def play(
    node: Node,
    seats: dict[Role, Seated],
    answer: Answer,
    ledger: Ledger,
    alice_argues: int = 1,
    timeout: float | None = DEFAULT_MOVE_TIMEOUT,
    prefix: list[Event] | None = None,
    rng: np.random.Generator | None = None,
) -> End | Payoff:
    """Play the nodes to the end; ``answer`` answers the verifier's oracle queries (counted and
    recorded by it), ``rng`` (the verifier's generator) draws nature's :class:`Chance` outcomes,
    and what the debate was :class:`Paid` on the way is added to its :class:`Payoff`. Each
    committed message and each draw is recorded in ``ledger`` when it keeps events.

    ``prefix`` holds the events a stopped debate had journaled (already in ``ledger``'s events):
    its moves are committed again without asking the players, its draws and verifier answers are
    given again without drawing or asking the oracle, and play goes on live from where they end;
    what it makes again is not noted twice (:func:`~debatekit.engine.record.resuming`)."""
    given = Given(prefix, ledger, again=False) if prefix else None
    if prefix:
        resuming(ledger, prefix)
    paid: list[float] | None = None
    while not isinstance(node, Judge | End | Payoff):
        if isinstance(node, Paid):
            paid, node = added(paid, node.rewards), node.then
            continue
        journaled = NOTHING if given is None else given.step(node, alice_argues)
        if journaled is not NOTHING:
            node = journaled
            continue
        if isinstance(node, Chance):
            outcome = drawn_from(node, rng)
            if ledger.events is not None:
                ledger.note(node.event(to_json(outcome)))
            node = drawn(node, outcome, alice_argues)
            continue
        moving = node
        committed, node, index = await _move(moving, seats[moving.role], timeout, alice_argues)
        if committed is not NOTHING:  # a message came
            ledger.count_read(moving.bits)
        if ledger.events is None:
            continue
        if index is not None and moving.what:
            ledger.note(Drawn(what=moving.what, by=moving.role, outcome=index))
        if committed is NOTHING or committed is REFUSED:
            if not (isinstance(node, End) and node.verdict is None):  # an undecided move is no event
                ledger.note(moved(moving, forfeit=ended(node).reason, refused=committed is REFUSED))
        else:
            ledger.note(moved(moving, to_json(committed)))
    if isinstance(node, Judge):
        steps = checking(node, alice_argues)
        try:
            query = next(steps)
            while True:
                reply = None if given is None else given.answer(query.question)
                if reply is None:
                    reply = answer(query.question)
                query = steps.send(await reply if inspect.isawaitable(reply) else reply)
        except StopIteration as stop:
            node = stop.value
    return settled(node, paid)


def seat_copies(instance: Any, roles: tuple[Role, ...] = (Role.ALICE, Role.BOB)) -> dict[Role, Any]:
    """Each role's own deep copy of the instance: nothing a player can reach through its seat is
    what the verifier or the other player reads."""
    return {role: copy.deepcopy(instance) for role in roles}


def verifier_answer(oracle: Oracle, ledger: Ledger, rng: np.random.Generator) -> Answer:
    """The verifier's oracle access: each query counted and recorded for the verifier; a built-in
    oracle (one that does not wait on a person or a model) that raises is an :class:`InternalError`."""
    asked = Asker(oracle, Role.VERIFIER, ledger, rng).asked
    if oracle.waits:
        return asked

    def answer(question: Hashable) -> int | Awaitable[int]:
        try:
            return asked(question)
        except Exception as err:
            raise InternalError.of(err) from err

    return answer


async def off_loop(function: Callable[[], Any]) -> Any:
    """``function()`` on a daemon thread of its own (carrying this context: the debate it plays),
    awaited without holding the event loop. Unlike ``asyncio.to_thread``, a call abandoned at its
    time limit is never waited for, not even when the run's event loop closes."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if done.done():  # abandoned at its time limit
            return
        if error is None:
            done.set_result(result)
        else:
            done.set_exception(error)

    def target() -> None:
        try:
            result, error = function(), None
        except BaseException as err:  # handed to the awaiting debate, which charges its sender
            result, error = None, err
        with contextlib.suppress(RuntimeError):  # the loop closed while this call ran: nobody waits
            loop.call_soon_threadsafe(settle, result, error)

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(target,), daemon=True).start()
    return await done


def call_within(timeout: float | None, function: Callable[[], Any]) -> Any:
    """``function()`` (awaited when it returns an awaitable) in a daemon thread, for at most
    ``timeout`` seconds: its result, its exception, or TimeoutError. A call still running at the
    limit, or when a signal stops the run (:class:`~debatekit.engine.interrupts.Interrupted`), is
    abandoned, never waited for."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            result = function()
            if inspect.isawaitable(result):
                result = asyncio.run(_awaited(result))
            box["result"] = result
        except BaseException as err:  # handed to the caller, who charges its sender
            box["error"] = err

    stop_if_asked()
    context = contextvars.copy_context()  # the debate it plays: asking(), aside()
    thread = threading.Thread(target=context.run, args=(target,), daemon=True)
    thread.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    while thread.is_alive() and (deadline is None or time.monotonic() < deadline):
        stop_if_asked()  # a signal stops the run: the move is abandoned, never waited for
        thread.join(_POLL if deadline is None else max(0.0, min(_POLL, deadline - time.monotonic())))
    if thread.is_alive():
        raise TimeoutError(f"no move within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["result"]


def calls_within(timeout: float | None, functions: Sequence[Callable[[], Any]]) -> list[Callable[[], Any]]:
    """Each of ``functions`` called as :func:`call_within` calls one, each for at most ``timeout``
    seconds, but one after another in one daemon thread: a batch of moves costs one thread, not
    one each. Returned in order, each as a function giving that call's result or raising its
    exception (TimeoutError for a call still running at its limit; the calls after it go on in a
    fresh thread, as if each had had its own)."""
    settled: list[Callable[[], Any]] = []
    while len(settled) < len(functions):
        settled += _calls_in_one_thread(timeout, functions[len(settled) :])
    return settled


def _calls_in_one_thread(timeout: float | None, functions: Sequence[Callable[[], Any]]) -> list[Callable[[], Any]]:
    """The leading calls of ``functions`` that one thread settles before one of them runs past its
    limit (that one settled as TimeoutError, and abandoned)."""
    done: list[Callable[[], Any]] = []
    started = [time.monotonic()]  # when the call under way began

    def target() -> None:
        for function in functions:
            started[0] = time.monotonic()
            try:
                result = function()
                if inspect.isawaitable(result):
                    result = asyncio.run(_awaited(result))
                done.append(_returning(result))
            except BaseException as err:  # handed to the caller, who charges its sender
                done.append(_raising(err))

    stop_if_asked()
    context = contextvars.copy_context()  # the debate it plays: asking(), aside()
    thread = threading.Thread(target=context.run, args=(target,), daemon=True)
    thread.start()
    while thread.is_alive():
        stop_if_asked()  # a signal stops the run: the moves are abandoned, never waited for
        if timeout is None:
            thread.join(_POLL)
            continue
        at, deadline = len(done), started[0] + timeout
        if time.monotonic() >= deadline and len(done) == at:  # the call under way ran past its limit
            return [*done[:at], _raising(TimeoutError(f"no move within {timeout:g} s"))]
        thread.join(max(0.0, min(_POLL, deadline - time.monotonic())))
    return done


def _returning(result: Any) -> Callable[[], Any]:
    return lambda: result


def _raising(error: BaseException) -> Callable[[], Any]:
    def settled() -> Any:
        raise error

    return settled


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


async def awaited_move(awaitable: Awaitable[Any]) -> Any:
    """An async player's move awaited, its failures made chargeable as :func:`played` does."""
    try:
        return await awaitable
    except Exception as err:
        if _debugging:
            raise LetThrough(describe(err)) from err
        raise
    except (SystemExit, KeyboardInterrupt, GeneratorExit) as err:
        raise Exited(describe(err)) from err


def contained(function: Callable[[], Any]) -> Callable[[], Any]:
    """``function`` (reading an untrusted message) with anything not an ``Exception`` that a
    hostile object raises while being read made :class:`Exited`, the sender's forfeit."""

    def call() -> Any:
        try:
            return function()
        except Exception:
            raise
        except BaseException as err:
            raise Exited(describe(err)) from err

    return call


class Limited:
    """A player for the batch engines (stochastic and recursive debate): every method call, the
    attribute lookup included, runs through :func:`call_within`, so a player that never answers
    raises TimeoutError, which those engines charge to it as a forfeit."""

    def __init__(self, player: Any, timeout: float | None):
        self._player, self._timeout = player, timeout

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):  # Python's own protocols (copy, pickle) are not moves
            raise AttributeError(name)

        def method(*args: Any, **kwargs: Any) -> Any:
            return call_within(self._timeout, played(lambda: getattr(self._player, name)(*args, **kwargs)))

        return method


def each_move(player: Any, moves: Sequence[Callable[[Any], Any]]) -> list[Callable[[], Any]]:
    """``move(player)`` for each of ``moves``, settled (a function giving its result or raising its
    exception): a :class:`Limited` player's in one worker thread under its time limit, each move
    under its own (:func:`calls_within`); a trusted player's inline. For a trusted estimator that
    asks its opponent many questions at once (Algorithm 1's tests)."""
    if isinstance(player, Limited):
        inner = player._player
        return calls_within(player._timeout, [played(functools.partial(move, inner)) for move in moves])
    settled: list[Callable[[], Any]] = []
    for move in moves:
        try:
            settled.append(_returning(move(player)))
        except Exception as err:  # charged by the caller when it reads it
            settled.append(_raising(err))
    return settled


def limited(strategy: Strategy, timeout: float | None) -> Strategy:
    """``strategy`` with its seating and every move under the time limit, unless it is a trusted
    built-in (the batch engines' path; the node engine limits moves itself)."""
    if strategy.trusted:
        return strategy

    def seated(seat: Any) -> Limited:
        try:
            return Limited(call_within(timeout, played(lambda: strategy.factory(seat))), timeout)
        except Exited as err:
            raise SeatingExit(ended_while_seated(strategy, err)) from None

    return replace(strategy, factory=seated)


def ended_while_seated(strategy: Strategy, err: Exited) -> str:
    return f"{strategy.role.value} strategy {strategy.name!r} tried to end the process while sitting down ({err})"


async def seat_player(strategy: Strategy, seat: Any, timeout: float | None) -> Any:
    """The player ``strategy`` makes for ``seat``: inline for a trusted built-in, otherwise in a
    worker thread within ``timeout`` seconds (:class:`SeatingExit` when its code tries to end the
    process; any other failure is the caller's to charge)."""
    if strategy.trusted:
        return strategy.factory(seat)
    try:
        return await asyncio.wait_for(off_loop(played(lambda: strategy.factory(seat))), timeout)
    except Exited as err:
        raise SeatingExit(ended_while_seated(strategy, err)) from None
