"""A debate as explicit nodes, the one statement of a protocol's rules that every interpreter reads.

Following OpenSpiel's Python games, a protocol writes its rules as nodes, so the same object
serves playing one debate (:mod:`debatekit.engine.play`, async), recording and replaying it
(:mod:`debatekit.engine.record`) and exact analysis (:mod:`debatekit.analysis.exact`):

* :class:`Move`: ``role`` sends a message. ``ask(player)`` gets it from a player (a message, a
  :class:`~debatekit.prob.Dist` of messages for a mixed move, or an awaitable of either);
  ``commit(message)`` turns it into plain canonical data (:mod:`debatekit.engine.boundary`) or
  raises :class:`~debatekit.ledger.Malformed`; ``then(committed)`` continues. ``options`` lists
  a finite move space for exhaustive search and ``key`` names the subgame when its value depends
  on nothing else (a memo key for the solver).
* :class:`Judge`: the verifier's final check. ``check()`` reads through the debate's
  :class:`~debatekit.reader.Reader` and returns 0 or 1; a check that consults the oracle is a
  generator that yields one :class:`Query` per oracle query and receives the answer, so the
  interpreter decides how a query is answered (a counted sample, an awaited person, every
  outcome with its probability, or the answer a record holds).
* :class:`End`: the debate is decided without a check (a forfeit or a conceded claim), or is
  undecided (``verdict`` None): a player's model could not be consulted
  (:class:`~debatekit.oracle.Unanswered`), which is no party's argument.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from debatekit.engine.trust import InternalError, charge
from debatekit.ledger import Malformed, Role, loser_verdict


@dataclass(frozen=True)
class Move:
    role: Role
    ask: Callable[[Any], Any]
    commit: Callable[[Any], Any]
    then: Callable[[Any], Node]
    options: Callable[[], Iterable[Any]] | None = None
    key: Hashable | None = None


@dataclass(frozen=True)
class Query:
    """One query of the verifier's oracle on ``question``."""

    question: Hashable


Check = Generator[Query, int, int]


@dataclass(frozen=True)
class Judge:
    check: Callable[[], int | Check]


@dataclass(frozen=True)
class End:
    verdict: int | None
    """0 or 1; None for an undecided debate, ``reason`` saying why."""
    forfeit: Role | None = None
    reason: str = ""


Node = Move | Judge | End


def forfeit(loser: Role, reason: str, alice_argues: int = 1) -> End:
    return End(loser_verdict(loser, alice_argues), loser, reason)


class _Nothing:
    def __repr__(self) -> str:
        return "NOTHING"


NOTHING: Any = _Nothing()
"""What :func:`advance` reports as committed when a message did not commit."""


def advance(node: Move, message: Any, alice_argues: int = 1) -> tuple[Any, Node]:
    """Commit ``message`` and continue: (the committed message, the next node). A message that
    does not commit, for any reason, loses for its sender, and :data:`NOTHING` was committed,
    unless its sender is a trusted seat (:mod:`debatekit.engine.trust`); the rules' continuation
    that raises is an :class:`~debatekit.engine.trust.InternalError`."""
    try:
        committed = node.commit(message)
    except Malformed as bad:
        return NOTHING, forfeit(bad.sender, bad.reason, alice_argues)
    except Exception as err:  # a hostile object raised while being read: its sender's fault
        charge(node.role, err)  # unless its sender is trusted: then the rules failed
        return NOTHING, forfeit(node.role, f"unreadable message ({type(err).__name__})", alice_argues)
    try:
        return committed, node.then(committed)
    except Malformed as bad:
        return committed, forfeit(bad.sender, bad.reason, alice_argues)
    except Exception as err:  # the rules' own code, on committed data
        raise InternalError.of(err) from err


def checking(node: Judge, alice_argues: int = 1) -> Generator[Query, int, End]:
    """The verifier's check as a generator of its oracle queries, ending in the debate's end; a
    malformed message met while reading loses for its sender."""
    try:
        result = node.check()
        if isinstance(result, Generator):
            result = yield from result
    except Malformed as bad:
        return forfeit(bad.sender, bad.reason, alice_argues)
    except Exception as err:  # the verifier's own code (its reader included)
        raise InternalError.of(err) from err
    return End(result)


def judge(node: Judge, answer: Callable[[Hashable], int], alice_argues: int = 1) -> End:
    """Run the verifier's check, answering each of its oracle queries with ``answer(question)``."""
    steps = checking(node, alice_argues)
    try:
        query = next(steps)
        while True:
            query = steps.send(answer(query.question))
    except StopIteration as stop:
        return stop.value
