"""LLM players of stochastic-oracle debate: Figure 2 and Theorem 6.2 of the doubly-efficient
debate paper, in the form the constants choose (:mod:`debatekit.protocols.stochastic.rules`).

Alice claims p̂_t = P[y_t = 1 | a_{I(t)}] as she believes it: her LLM's P[yes] on the question of
a judged step (from the first token's log-probabilities), the exact value of a compute step (0 or
1) or a coin step. Bob aborts at step t when his own estimate, his LLM's P[yes] (exact on compute
and coin steps), is at least his threshold from her claim: the honest Bob's test
(:meth:`Rules.rejects <debatekit.protocols.stochastic.rules.Rules.rejects>`) with his model's estimate
in place of the mean of his samples. In the paper form each supplies its coin share z^A_t or z^B_t
from its debate's own stream (``view.random()``), as the honest players do; a witness, where the
machine takes one, is the instance's. Both play one debate at a time on numbers (``scalar``).

Departure: the honest parties estimate from samples of the judge, within the constants' errors
with high probability; these read one model's P[yes], so Theorem 6.2's promises hold of them only
where the model's P[yes] is within those errors of the judge's. Two players of one
model on one prompt give equal numbers, so such a Bob never aborts.
"""

from __future__ import annotations

from debatekit.ledger import Role
from debatekit.llm.players.base import LLM, Judgements, strategy
from debatekit.oracle import settled
from debatekit.players.base import Seat, Strategy
from debatekit.protocols.stochastic.rules import HonestAlice, HonestBob, machine_of
from debatekit.protocols.stochastic.solo import SoloView


def _believed(judgements: Judgements, seat: Seat, view: SoloView) -> float:
    """P[y_t = 1 | a_{I(t)}] at the step ``view`` shows, as the player's LLM believes it."""
    machine = machine_of(seat.instance)
    t, row = view.t, view.values[0]
    return settled(judgements.conditional(machine, t, tuple(int(row[a]) for a in machine.relevant(t))))


class Alice(HonestAlice):
    """Figure 2's Alice claiming her LLM's probability; honest coin shares and witness."""

    def __init__(self, seat: Seat, llm: LLM):
        super().__init__(seat)
        self.judgements = Judgements(llm, seat.role)

    def claims(self, view: SoloView) -> float:  # type: ignore[override]
        return _believed(self.judgements, self.seat, view)


class Bob(HonestBob):
    """Figure 2's Bob aborting by the honest test on his LLM's estimate; honest coin shares."""

    def __init__(self, seat: Seat, llm: LLM):
        super().__init__(seat)
        self.judgements = Judgements(llm, seat.role)

    def aborts(self, view: SoloView, claims: float, bits: int | None) -> bool:  # type: ignore[override]
        return bool(view.rules.rejects(claims, _believed(self.judgements, self.seat, view)))


def alice(llm: LLM) -> Strategy:
    return strategy(llm, Role.ALICE, f"{llm.name} claims each step's P[yes]", lambda s: Alice(s, llm))


def bob(llm: LLM) -> Strategy:
    return strategy(llm, Role.BOB, f"{llm.name} aborts where its P[yes] is off her claim", lambda s: Bob(s, llm))


PLAYERS = {Role.ALICE: alice, Role.BOB: bob}
"""Each role's LLM player (the protocol's ``ProtocolSpec.llm``)."""
