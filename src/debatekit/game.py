"""A debate as a game tree, shared by Monte Carlo play and exact search.

Following OpenSpiel's Python games, a protocol exposes its rules as explicit nodes, so the same
object serves sampling (play it with players) and exact analysis (enumerate the adversary's
moves, bind mixed strategies, fork on oracle answers):

* :class:`Move`: ``role`` sends a message. ``ask(player)`` gets it from a player (a message, or a
  :class:`~debatekit.prob.Dist` of messages for a mixed move); ``then(message)`` continues, or
  raises :class:`~debatekit.ledger.Malformed` when the message cannot be parsed. ``options``
  lists a finite move space for exhaustive search and ``key`` names the subgame when its value
  depends on nothing else (a memo key for the solver).
* :class:`Judge`: the verifier's final check, which reads and queries through the debate's
  :class:`~debatekit.reader.Reader` and returns 0 or 1.
* :class:`End`: the debate is decided without a check (a forfeit or a conceded claim).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from debatekit.ledger import Malformed, Role, loser_verdict
from debatekit.prob import Dist


@dataclass(frozen=True)
class Move:
    role: Role
    ask: Callable[[Any], Any]
    then: Callable[[Any], Node]
    options: Callable[[], Iterable[Any]] | None = None
    key: Hashable | None = None


@dataclass(frozen=True)
class Judge:
    check: Callable[[], int]


@dataclass(frozen=True)
class End:
    verdict: int
    forfeit: Role | None = None
    reason: str = ""


Node = Move | Judge | End


def forfeit(loser: Role, reason: str, alice_argues: int = 1) -> End:
    return End(loser_verdict(loser, alice_argues), loser, reason)


def advance(node: Move, message: Any, alice_argues: int = 1) -> Node:
    """``node.then(message)``, with an unparseable message losing for its sender."""
    try:
        return node.then(message)
    except Malformed as bad:
        return forfeit(bad.sender, bad.reason, alice_argues)


def judge(node: Judge, alice_argues: int = 1) -> End:
    """Run the verifier's check; a malformed message met while reading loses for its sender."""
    try:
        verdict = node.check()
    except Malformed as bad:
        return forfeit(bad.sender, bad.reason, alice_argues)
    return End(verdict)


def play(node: Node, players: dict[Role, Any], rngs: dict[Role, np.random.Generator], alice_argues: int = 1) -> End:
    """Play the tree to the end. A player that raises forfeits: it is untrusted code."""
    while isinstance(node, Move):
        try:
            message = node.ask(players[node.role])
            if isinstance(message, Dist):
                message = message.sample(rngs[node.role])
        except Exception as err:  # an LLM, a person or a user's strategy failed to answer
            return forfeit(node.role, f"{type(err).__name__}: {err}", alice_argues)
        node = advance(node, message, alice_argues)
    return judge(node, alice_argues) if isinstance(node, Judge) else node
