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

Liars (``llm-liar:PROVIDER/MODEL``) argue the answer opposite to their model's most likely
transcript. Alice finds the lie her model finds most plausible that flips that transcript's
output (:meth:`~debatekit.llm.players.base.Judgements.lie`) and, at the steps it falsifies, moves
her claim towards the false bit by ``bob_margin``, as far as honest Bob still lets a claim stand
(the built-in ``under-threshold``'s size), claiming her model's probability elsewhere. Bob,
whose model's transcript says yes, argues no with the honest test (an abort only catches a
claim); where it says no he argues yes: he aborts at the first claim he believes, which the
verifier then upholds, and never at one he doubts. Each notes its plan in the aside (``lied``).

Departure: the honest parties estimate from samples of the judge, within the constants' errors
with high probability; these read one model's P[yes], so Theorem 6.2's promises hold of them only
where the model's P[yes] is within those errors of the judge's. Two players of one
model on one prompt give equal numbers, so such a Bob never aborts.
"""

from __future__ import annotations

import numpy as np

from debatekit.ledger import Role
from debatekit.llm.players.base import LLM, Judgements, strategy
from debatekit.oracle import aside, settled
from debatekit.players.base import Seat, Side, Strategy
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


def _inputs(seat: Seat) -> np.ndarray:
    """x, then the instance's witness (the honest players'), where the machine takes one."""
    instance = seat.instance
    witness = instance.witness if instance.witness is not None else np.zeros(0, dtype=np.uint8)
    return np.concatenate([instance.x, witness]).astype(np.uint8)


class LiarAlice(Alice):
    """Alice moving her claims towards the lie her model finds most plausible (module docstring)."""

    def __init__(self, seat: Seat, llm: LLM):
        super().__init__(seat, llm)
        self._lies: dict[int, int] | None = None

    def claims(self, view: SoloView) -> float:  # type: ignore[override]
        if self._lies is None:
            written, steps, why = settled(self.judgements.lie(machine_of(self.seat.instance), _inputs(self.seat)))
            self._lies = {t: int(written[t]) for t in steps}
            why += f"; at those steps her claim moves by {view.rules.bob_margin:.3g} towards the lie"
            aside({"lied": self.seat.role.value, "model": self.judgements.llm.name, "steps": steps, "why": why})
        p = super().claims(view)
        if view.t not in self._lies:
            return p
        return min(1.0, p + view.rules.bob_margin) if self._lies[view.t] else max(0.0, p - view.rules.bob_margin)


class LiarBob(Bob):
    """Bob arguing the answer his model's transcript does not give (module docstring)."""

    def __init__(self, seat: Seat, llm: LLM):
        super().__init__(seat, llm)
        self._believes: int | None = None

    def aborts(self, view: SoloView, claims: float, bits: int | None) -> bool:  # type: ignore[override]
        if self._believes is None:
            written = settled(self.judgements.transcript(machine_of(self.seat.instance), _inputs(self.seat)))
            self._believes = int(written[-1])
            plan = ("he argues no: he aborts only where her claim is off his estimate" if self._believes else
                    "he argues yes: he aborts at the first claim he believes, which the verifier upholds")  # fmt: skip
            aside({"lied": self.seat.role.value, "model": self.judgements.llm.name,
                   "why": f"his model's transcript gives {self._believes}; {plan}"})  # fmt: skip
        doubted = bool(view.rules.rejects(claims, _believed(self.judgements, self.seat, view)))
        return doubted if self._believes else not doubted


def alice(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.ALICE, f"{llm.name} moves its claims towards its most plausible lie, under Bob's threshold",
            lambda s: LiarAlice(s, llm), side=side,
        )  # fmt: skip
    return strategy(llm, Role.ALICE, f"{llm.name} claims each step's P[yes]", lambda s: Alice(s, llm))


def bob(llm: LLM, side: Side = Side.HONEST) -> Strategy:
    if side is Side.LIAR:
        return strategy(
            llm, Role.BOB, f"{llm.name} argues against its own transcript's answer",
            lambda s: LiarBob(s, llm), side=side,
        )  # fmt: skip
    return strategy(llm, Role.BOB, f"{llm.name} aborts where its P[yes] is off her claim", lambda s: Bob(s, llm))


PLAYERS = {Role.ALICE: alice, Role.BOB: bob}
"""Each role's LLM player (the protocol's ``ProtocolSpec.llm``)."""
