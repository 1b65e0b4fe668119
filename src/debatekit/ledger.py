"""Who did what in one debate: oracle queries by party and transcript bits read by the verifier.

Mirrors the Lean formalization, where every query is tagged ``AliceId``, ``BobId`` or ``VeraId``
and cost is a property of the run (Debate/Cost.lean).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np


class Role(Enum):
    """The three parties of a debate (Definition 4.1): provers Alice and Bob, and the verifier."""

    ALICE = "alice"
    BOB = "bob"
    VERIFIER = "verifier"

    __hash__ = object.__hash__
    """Members are singletons compared by identity, so they hash by identity, in C (Enum's own
    hash is Python code hashing the name, paid on each of the engine's dict lookups by role)."""

    @property
    def opponent(self) -> Role:
        if self is Role.VERIFIER:
            raise ValueError("the verifier has no opponent")
        return Role.BOB if self is Role.ALICE else Role.ALICE


class Concession(Exception):
    """A built-in strategy declares it cannot play here (say, it needs the oracle's probabilities
    and the oracle only samples): its forfeit by design, never an internal error."""


class Malformed(Exception):
    """A party sent a message the protocol cannot parse; that party loses the debate."""

    def __init__(self, sender: Role, reason: str):
        super().__init__(f"{sender.value}: {reason}")
        self.sender = sender
        self.reason = reason


def loser_verdict(loser: Role, alice_argues: int = 1) -> int:
    """The verifier's output when ``loser`` forfeits: the answer the other side argues for. Alice
    argues for 1 in the doubly-efficient debate papers; in the query-complexity paper Alice is
    Prover 0 and argues for 0."""
    return 1 - alice_argues if loser is Role.ALICE else alice_argues


_NONE_ASKED = dict.fromkeys(Role, 0)
"""No queries by any role (a new ledger's count, copied)."""


@dataclass
class Ledger:
    """Counts for one debate. ``bits_read`` are prover-message bits the verifier read;
    ``input_bits_read`` are bits of the common input x it read (x is not a prover message).
    ``events``, when kept, is the debate's record in order: committed moves, oracle queries with
    their answers, draws and the verifier's reads, each an event of :mod:`debatekit.engine.events`
    (which imports this module, so the list is not typed here)."""

    queries: dict[Role, int] = field(default_factory=_NONE_ASKED.copy)
    bits_read: int = 0
    input_bits_read: int = 0
    events: list[Any] | None = None
    journaled: dict[Role, int] = field(default_factory=dict)
    """A resumed debate's events that its journal holds and it makes again
    (:func:`~debatekit.engine.record.resuming`): per prover its queries, under ``Role.VERIFIER``
    the reads of its check; each is counted as it is made again, and not noted again."""

    def note(self, event: Any) -> None:
        if self.events is not None:
            self.events.append(event)

    def made_again(self, role: Role) -> bool:
        """Whether ``role``'s event made now (a prover's query, the verifier's read) is one the
        journal holds: then it is not noted again."""
        left = self.journaled.get(role, 0)
        if left:
            self.journaled[role] = left - 1
        return left > 0

    def count_queries(self, role: Role, k: int = 1) -> None:
        self.queries[role] += k

    def count_read(self, bits: int) -> None:
        self.bits_read += bits


@dataclass(frozen=True)
class Rewarded:
    """A payoff game's debates (the recursive protocols: Figure 2 of prover-estimator debate,
    Section 7's naive recursion), one entry each: A's payoff, her reward vector, her claim A(x)."""

    payoffs: np.ndarray
    rewards: np.ndarray
    """One row per debate (prover-estimator: the initial reward, then one per round)."""
    claims: np.ndarray
    """-1 where she made none."""
    estimator_delta: float | None
    """The δ of the estimator B played, where the engine computed it (Lemma A.4)."""


@dataclass(frozen=True)
class Tally:
    """The ledgers and verdicts of many debates, as arrays (one entry per debate)."""

    verdicts: np.ndarray
    queries: dict[Role, np.ndarray]
    bits_read: np.ndarray
    input_bits_read: np.ndarray
    forfeits: dict[Role, int]
    reasons: dict[Role, str]
    """The first reason each role forfeited, if it did."""
    rewarded: Rewarded | None = None
    """A payoff game's outcomes (the recursive protocols); None for verdict-only protocols."""
    records: list[dict] | None = None
    """When kept: each debate's record body, in order (its events, :mod:`debatekit.engine.events`,
    verdict, forfeit and reason, counts by role, payoff), which the run completes with its header
    (:func:`debatekit.analysis.montecarlo.record_of`)."""

    @classmethod
    def concatenate(cls, tallies: list[Tally]) -> Tally:
        """Consecutive debates' tallies as one (payoffs not kept: stochastic debate's)."""
        reasons: dict[Role, str] = {}
        for tally in tallies:
            for role, reason in tally.reasons.items():
                reasons.setdefault(role, reason)
        kept = [t.records for t in tallies]
        return cls(
            np.concatenate([t.verdicts for t in tallies]),
            {role: np.concatenate([t.queries[role] for t in tallies]) for role in Role},
            np.concatenate([t.bits_read for t in tallies]),
            np.concatenate([t.input_bits_read for t in tallies]),
            {role: sum(t.forfeits.get(role, 0) for t in tallies) for role in (Role.ALICE, Role.BOB)},
            reasons,
            records=None if any(r is None for r in kept) else [r for rs in kept for r in rs],  # type: ignore[union-attr]
        )
