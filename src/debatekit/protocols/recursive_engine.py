"""The recursive protocols' own engine (prover-estimator and naive recursive debate), until they
are stated as :mod:`debatekit.engine.nodes` (whose :class:`~debatekit.engine.nodes.Chance`,
:class:`~debatekit.engine.nodes.Paid` and :class:`~debatekit.engine.nodes.Payoff` the engine's
interpreters already answer).

The verifier is the security boundary (:class:`Boundary`). Every message is asked once, by a
typed call of the player's method (:func:`ask`; ``what`` names it only in a forfeit's reason), and
parsed before use by :mod:`debatekit.engine.boundary`'s conversions, inside one catch-all: what
does not parse is a :class:`~debatekit.ledger.Malformed` against its sender, which the rules turn
into the forfeit they pay. So does a player that raises, or sends a mixed move whose weights are
not a distribution. Players see only parsed data.

Randomness (the trusted coins, the verifier's oracle query, mixed moves) goes through a
:class:`Chance` as a list of weighted branches: one sampled branch (:class:`Sampled`, which notes
each draw in a ledger that keeps the debate's events), the recorded one (replay and resume,
:mod:`debatekit.analysis.recursive_script`) or every outcome with its probability (:class:`Exact`,
which memoises rounds by their situation; strategies must then be functions of their arguments).
Rounds are walked with an explicit stack (:func:`walk`), so the depth d and width q are not
limited by Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from debatekit.engine import nodes
from debatekit.engine.boundary import NOT_A_BIT, as_index, commit_bit, commit_plain, mixed_branches, safe_repr, to_json
from debatekit.engine.play import describe
from debatekit.engine.trust import charge
from debatekit.ledger import Ledger, Malformed, Role
from debatekit.machine.decomposition import Decomposition, Query
from debatekit.oracle import Asker, Oracle


class Committed(Protocol):
    """What the boundary reads of A's committed proof (:class:`~debatekit.protocols.proof.CommittedProof`)."""

    def bits(self, positions: tuple[int, ...]) -> tuple[int, ...]: ...

    def reason(self, j: int) -> str: ...


Branches = list[tuple[float, Any]]
"""Outcomes with their probabilities."""


class Chance(Protocol):
    """Where the debate's randomness goes: a trusted coin, the verifier's oracle query, or a
    player's mixed move. ``ledger`` is the debate's: it counts the verifier's query and, when it
    keeps the debate's events, notes each draw."""

    memoise: bool
    """Whether a round's value may be reused for an equal situation (exact values only)."""

    def coin(self, p: float, what: str, ledger: Ledger) -> Branches:
        """A trusted coin that is 1 with probability ``p`` (``what`` names it: ``z_hat``, ``z^k_i``)."""

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        """The verifier's one query of the oracle: an answer drawn, or both with their weights."""

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        """The branches of a move (:func:`~debatekit.engine.boundary.mixed_branches`) to follow."""


@dataclass
class Sampled:
    """One debate: coins from the verifier's generator, the verifier's query through its counted
    :class:`~debatekit.oracle.Asker`, mixed moves from the mover's generator; each draw noted."""

    rngs: dict[Role, np.random.Generator]
    memoise = False

    def coin(self, p: float, what: str, ledger: Ledger) -> Branches:
        """The engine's trusted coin (:meth:`~debatekit.engine.nodes.Chance.coin`: its draw and its
        record), drawn from the verifier's generator."""
        coin = nodes.Chance.coin(what, p, int)
        z = nodes.drawn_from(coin, self.rngs[Role.VERIFIER])
        ledger.note(coin.event(z))
        return [(1.0, z)]

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        return [(1.0, int(Asker(oracle, Role.VERIFIER, ledger, self.rngs[Role.VERIFIER])(question)))]

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        """One branch, drawn with the mover's generator as :meth:`Dist.sample` draws it; the
        record notes its position among the move's outcomes."""
        if len(branches) == 1:
            return [(1.0, branches[0][1])]
        cumulative = np.cumsum([w for w, _ in branches])
        index = int(np.searchsorted(cumulative, self.rngs[role].random() * cumulative[-1], side="right"))
        index = min(index, len(branches) - 1)
        ledger.note({"chance": what, "by": role.value, "outcome": index})
        return [(1.0, branches[index][1])]


@dataclass
class Exact:
    """Expected values: every outcome weighted by its probability; rounds memoised."""

    memoise = True

    def coin(self, p: float, what: str = "", ledger: Ledger | None = None) -> Branches:
        """The engine's trusted coin's outcomes (:func:`~debatekit.engine.nodes.coin_outcomes`)."""
        return [(w, z) for z, w in nodes.coin_outcomes(p)]

    def judge(self, oracle: Oracle, question: Hashable, ledger: Ledger) -> Branches:
        p = oracle.probability(question)
        if p is None:
            raise ValueError("exact values need the oracle's probabilities; this oracle only answers samples")
        ledger.count_queries(Role.VERIFIER)
        return self.coin(p)

    def mixed(self, role: Role, what: str, branches: Branches, ledger: Ledger) -> Branches:
        return branches


@dataclass
class Record:
    """What one sampled debate left behind, beside the query ledger."""

    forfeit: Role | None = None
    reason: str = ""
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


def raised(what: str, err: Exception) -> str:
    """A forfeit's reason for an exception a player's code raised, whatever its ``__str__`` does."""
    try:
        return f"{what} raised {describe(err)}"
    except Exception:  # even its type's name is hostile
        return f"{what} raised an exception"


def conceded(value: Any, role: Role) -> Malformed | None:
    """A fresh copy of ``value`` when it is ``role``'s own forfeit with a plain reason (a player may
    concede, sending or raising it: a replayed record does so where its sender forfeited), else
    None. Only its exact type and plain attributes are read."""
    try:
        if type(value) is Malformed and value.sender is role and type(value.reason) is str:
            return Malformed(role, value.reason)
    except Exception:  # its attributes were taken away
        pass
    return None


def ask(move: Callable[[], Any], role: Role, what: str, trusted: bool | None = None) -> Any:
    """``role``'s message, ``move()`` (a call of one of its player's methods, as
    ``lambda: alice.direction(s)``); a player that raises has sent garbage (``what`` names the
    message in the reason). Whether ``role``'s player is trusted: ``trusted``, or by default the
    debate's trusted seats (:func:`~debatekit.engine.trust.charge`)."""
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
    conversion that raises (a hostile object's method) is its sender's fault."""
    conceding = conceded(sent, role)
    if conceding is not None:
        return conceding
    try:
        return parser(sent)
    except Malformed as bad:
        return bad
    except Exception:
        return Malformed(role, f"{what} {safe_repr(sent)} cannot be read")


class Boundary:
    """Where a recursive protocol's verifier meets its players: each message is asked once
    (``move``, a call of the player's method), a mixed move resolved through ``chance``, the bits
    read counted in ``ledger``, and each outcome parsed, all inside one catch-all, so nothing a
    player sends runs code or survives unparsed. A's proof bits are read from ``prover``, her
    committed proof (:class:`~debatekit.protocols.proof.CommittedProof`).
    When the ledger keeps the debate's events, each message is noted as committed
    (``{"move", "what", "message"}``), or its forfeit (``"forfeit"``, with ``"refused"`` when a
    message came and did not parse); the leaf's proof bits as one message, the list of its bits."""

    chance: Chance
    ledger: Ledger
    prover: Committed

    def receive(
        self,
        role: Role,
        what: str,
        move: Callable[[], Any],
        bits: int,
        parser: Callable[[Any], Any],
        mixed: bool = True,
    ) -> list[tuple[float, Any]]:
        """(weight, parsed message, or the Malformed that ends the branch) for each branch followed."""
        try:
            sent = branches(move, role, what, mixed)
        except Malformed as bad:
            self.ledger.note({"move": role.value, "what": what, "forfeit": bad.reason})
            return [(1.0, bad)]
        out = []
        for weight, message in self.chance.mixed(role, what, sent, self.ledger):
            self.ledger.count_read(bits)
            parsed = parse(message, parser, role, what)
            if self.ledger.events is not None:
                self.ledger.note(
                    {"move": role.value, "what": what, "forfeit": parsed.reason, "refused": True}
                    if isinstance(parsed, Malformed)
                    else {"move": role.value, "what": what, "message": to_json(parsed)}
                )
            out.append((weight, parsed))
        return out

    def proof_bits(self, leaf: tuple[int, ...]) -> tuple[int, ...]:
        """ũ_S from A's committed proof (step 3b; nothing is noted for a leaf naming no bits);
        raises A's Malformed when a bit of it is not a bit."""
        if not leaf:
            return ()
        bits = self.prover.bits(leaf)
        self.ledger.count_read(len(leaf))
        bad = next((j for j, b in zip(leaf, bits, strict=True) if b == NOT_A_BIT), None)
        if bad is not None:
            reason = self.prover.reason(bad)
            self.ledger.note({"move": Role.ALICE.value, "what": "proof", "forfeit": reason})
            raise Malformed(Role.ALICE, reason)
        self.ledger.note({"move": Role.ALICE.value, "what": "proof", "message": list(bits)})
        return bits


def walk(root: Hashable, outcomes: Callable[[Any], list], memo: dict | None, zero: Any) -> Any:
    """The value of a chain of rounds from ``root``: ``outcomes(node)`` lists (probability, value
    paid, next node or None). Without a memo the one sampled branch is followed in a loop; with
    one, the expectation is taken by a post-order walk with an explicit stack, each node's value
    kept in ``memo``. Either way no Python recursion, so depth is unbounded."""
    if memo is None:
        total, node = zero, root
        while node is not None:
            ((_, paid, node),) = outcomes(node)
            total = total + paid
        return total
    pending: dict[Any, list] = {}
    stack = [root]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        if node not in pending:
            pending[node] = outcomes(node)
        todo = [n for _, _, n in pending[node] if n is not None and n not in memo]
        if todo:
            stack.extend(todo)
            continue
        memo[node] = sum((w * (paid + (memo[n] if n is not None else 0.0)) for w, paid, n in pending.pop(node)), zero)
        stack.pop()
    return memo[root]
