"""What the recursive protocols (prover-estimator and naive recursive debate) share at the
verifier's boundary, now that their rules are :mod:`debatekit.engine.nodes` played, replayed and
valued by the engine's interpreters: the parsers of their messages, each converting what a player
sent to plain data or raising :class:`~debatekit.ledger.Malformed` against its sender
(:func:`bit_of`, :func:`index_of`, :func:`split_of`, made a node's ``commit`` by :func:`commit_of`),
and the calls through which trusted parts outside a debate (A's committed proof, Lemma A.4's
estimator asking A) ask a player and read its answer (:func:`ask`, :func:`branches`, :func:`parse`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from debatekit.engine.boundary import as_index, commit_bit, commit_plain, mixed_branches, safe_repr
from debatekit.engine.play import conceded, raised
from debatekit.engine.trust import charge
from debatekit.ledger import Malformed, Role
from debatekit.machine.decomposition import Decomposition, Query

Branches = list[tuple[float, Any]]
"""Outcomes with their probabilities."""


@dataclass
class Seen:
    """What one debate's nodes saw on the way that its payoff does not say: A's claim (None until
    she commits one), which the run's verdicts and P[A(x) = L(x)] read."""

    claim: int | None = None


def bit_of(what: str) -> Callable[[Any], int]:
    """The parser of one of A's bits (her claim, an answer, a proof bit)."""
    return lambda sent: commit_bit(sent, Role.ALICE, what)


def index_of(sent: Any, size: int, sender: Role, what: str) -> int:
    """An index in [0, size), else ``sender``'s forfeit."""
    index = as_index(sent, size)
    if index is None:
        raise Malformed(sender, f"{what} {safe_repr(sent)} is not in [0, {size})")
    return index


def split_of(decomposition: Decomposition, query: Query, level: int, sent: Any) -> tuple[Query, ...]:
    """A's split of ``query`` as plain data (a fresh tuple of q queries) M_D is defined on, else
    her forfeit."""
    ys = commit_plain(sent, Role.ALICE, "the split")
    if not (type(ys) is tuple and len(ys) == decomposition.width and decomposition.valid_split(query, level, ys)):
        raise Malformed(Role.ALICE, f"queries {safe_repr(ys)} are not a split of {safe_repr(query)}")
    return ys


def commit_of(parser: Callable[[Any], Any], role: Role, what: str) -> Callable[[Any], Any]:
    """A node's ``commit`` for ``role``'s message ``what``: :func:`parse` raising the Malformed it
    comes to."""

    def commit(sent: Any) -> Any:
        parsed = parse(sent, parser, role, what)
        if isinstance(parsed, Malformed):
            raise parsed
        return parsed

    return commit


def ask(move: Callable[[], Any], role: Role, what: str, trusted: bool | None = None) -> Any:
    """``role``'s message, ``move()`` (a call of one of its player's methods, as
    ``lambda: alice.answer(level, y)``), outside a debate's nodes; a player that raises has sent
    garbage (``what`` names the message in the reason). Whether ``role``'s player is trusted:
    ``trusted``, or by default the debate's trusted seats (:func:`~debatekit.engine.trust.charge`)."""
    try:
        return move()
    except Exception as err:  # untrusted code: an LLM, a person, a user's strategy
        charge(role, err, trusted)  # a trusted built-in's: an internal error (engine.trust)
        raise conceded(err, role) or Malformed(role, raised(what, err)) from None


def branches(move: Callable[[], Any], role: Role, what: str, mixed: bool = True) -> Branches:
    """``role``'s message (:func:`ask`) as weighted outcomes, unread (a mixed move's, when
    ``mixed``, else the message itself, a Dist included); a player that raises or a mixed move
    that is no distribution is ``role``'s forfeit."""
    message = ask(move, role, what)
    if not mixed:
        return [(1.0, message)]
    try:
        return mixed_branches(message)
    except Exception as err:
        raise Malformed(role, f"{what} sent {safe_repr(message)}: {raised('its weights', err)}") from None


def parse(sent: Any, parser: Callable[[Any], Any], role: Role, what: str) -> Any:
    """``parser(sent)``, or the Malformed against ``role`` that reading ``sent`` came to: a
    conversion that raises (a hostile object's method) is its sender's fault; a Malformed of
    ``role``'s own sent as the message is its concession."""
    conceding = conceded(sent, role)
    if conceding is not None:
        return conceding
    try:
        return parser(sent)
    except Malformed as bad:
        return bad
    except Exception:
        return Malformed(role, f"{what} {safe_repr(sent)} cannot be read")
